//! A host for tests: serves an adapter in process over real pipes and speaks frames to it.
#![allow(dead_code)] // each test file uses its part

use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::io::FromRawFd;
use std::time::{Duration, Instant};

use adapterkit::{serve, Adapter, ServeError};
use serde_json::Value;

fn pipe() -> (File, File) {
    let mut fds = [0; 2];
    // SAFETY: pipe fills the array; each descriptor is owned by one File.
    unsafe {
        assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
        (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1]))
    }
}

pub struct Host {
    to: Option<File>,
    from: File,
    pub done: std::sync::mpsc::Receiver<Result<(), ServeError>>,
}

impl Host {
    pub fn start(adapter: Adapter) -> Host {
        Host::start_with(adapter, |f| f)
    }

    /// Serves `adapter` with its output pipe wrapped by `wrap`: a writer that is not a
    /// `File` takes the engine's path for outputs it cannot poll.
    pub fn start_with<W: Write + Send + 'static>(adapter: Adapter, wrap: impl FnOnce(File) -> W + Send + 'static) -> Host {
        let (in_r, in_w) = pipe();
        let (out_r, out_w) = pipe();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
            let _ = tx.send(rt.block_on(serve(adapter, in_r, wrap(out_w))));
            rt.shutdown_background();
        });
        Host { to: Some(in_w), from: out_r, done: rx }
    }

    /// Takes the host's end of the adapter's stdin, to write from another thread.
    pub fn take_input(&mut self) -> File {
        self.to.take().unwrap()
    }

    pub fn send_raw(&mut self, b: &[u8]) {
        self.to.as_mut().unwrap().write_all(b).unwrap();
    }

    pub fn send(&mut self, payload: &str) {
        let mut b = (payload.len() as u32).to_be_bytes().to_vec();
        b.extend_from_slice(payload.as_bytes());
        self.send_raw(&b);
    }

    pub fn request(&mut self, id: u64, method: &str, params: &str) {
        self.send(&format!(r#"{{"type":"request","v":1,"id":{},"method":"{}","params":{}}}"#, id, method, params));
    }

    pub fn cancel(&mut self, id: u64) {
        self.send(&format!(r#"{{"type":"cancel","v":1,"id":{}}}"#, id));
    }

    /// The next frame's payload text.
    pub fn recv_text(&mut self) -> String {
        let mut h = [0u8; 4];
        self.from.read_exact(&mut h).expect("a reply");
        let mut b = vec![0u8; u32::from_be_bytes(h) as usize];
        self.from.read_exact(&mut b).unwrap();
        String::from_utf8(b).unwrap()
    }

    pub fn recv(&mut self) -> Value {
        serde_json::from_str(&self.recv_text()).unwrap()
    }

    pub fn initialize(&mut self, id: u64, configuration: &str) -> Value {
        self.request(id, "system.adapter.initialize", &format!(r#"{{"protocol":1,"configuration":{}}}"#, configuration));
        self.recv()
    }

    /// Closes stdin and returns how serve ended and how long that took.
    pub fn close(&mut self) -> (Result<(), ServeError>, Duration) {
        self.to = None;
        let t = Instant::now();
        let r = self.done.recv_timeout(Duration::from_secs(30)).expect("serve returned");
        (r, t.elapsed())
    }
}
