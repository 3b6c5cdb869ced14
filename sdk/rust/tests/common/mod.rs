//! A host for tests: serves an adapter in process over real pipes and speaks frames to it.
#![allow(dead_code)] // each test file uses its part

use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::io::{AsRawFd, FromRawFd};
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
    pub fn start_with<W: Write + Send + 'static>(
        adapter: Adapter, wrap: impl FnOnce(File) -> W + Send + 'static,
    ) -> Host {
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

    /// The next frame, which must begin within `wait`: a test that expects a reply fails
    /// instead of hanging when none comes.
    pub fn recv_within(&mut self, wait: Duration) -> Value {
        let mut p = libc::pollfd { fd: self.from.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: p is one valid pollfd for the call's duration.
        let n = unsafe { libc::poll(&mut p, 1, wait.as_millis() as libc::c_int) };
        assert!(n > 0, "no reply within {:?}", wait);
        self.recv()
    }

    pub fn initialize(&mut self, id: u64, configuration: &str) -> Value {
        self.request(
            id,
            "system.adapter.initialize",
            &format!(r#"{{"protocol":1,"configuration":{}}}"#, configuration),
        );
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

/// A number literal in one canonical form: 1e21, 1000000000000000000000 and 1.0e21 are
/// the same; 2^53 and 2^53+1 are not.
pub fn canonical(lit: &str) -> String {
    let (neg, rest) = match lit.strip_prefix('-') {
        Some(r) => ("-", r),
        None => ("", lit),
    };
    let (mantissa, exp) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], rest[i + 1..].parse::<i64>().unwrap()),
        None => (rest, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all = format!("{}{}", int, frac);
    let digits = all.trim_start_matches('0');
    let trimmed = digits.trim_end_matches('0');
    if trimmed.is_empty() {
        return "0".into();
    }
    let exp = exp - frac.len() as i64 + (digits.len() - trimmed.len()) as i64;
    format!("{}{}e{}", neg, trimmed, exp)
}

/// A JSON value with every number exact (as the string "#<canonical>") and its objects'
/// members in no order.
pub fn exact(text: &str) -> Value {
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'"' {
            let start = i;
            i += 1;
            while b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str(&text[start..i]);
        } else if c == b'-' || c.is_ascii_digit() {
            let start = i;
            while i < b.len() && matches!(b[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') {
                i += 1;
            }
            out.push_str(&format!("\"#{}\"", canonical(&text[start..i])));
        } else {
            let start = i;
            i += text[i..].chars().next().unwrap().len_utf8();
            out.push_str(&text[start..i]);
        }
    }
    serde_json::from_str(&out).unwrap()
}
