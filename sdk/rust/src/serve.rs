//! The engine: one connection served over a reader and a writer.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use tokio::sync::{mpsc as tmpsc, Notify};

use crate::errors::ServeError;
use crate::log::Logger;
use crate::wire::{decode_host, error_frame, looks_like_text, result_frame, HostMessage, INITIALIZE, MAX_FRAME, MAX_IN_FLIGHT, TEXT_HINT};
use crate::{Adapter, HandlerFn, InitFn, RequestContext};

/// How long handlers get to return after the connection ended, then how long their
/// replies get to be written: together well inside the 2 s of R49.
const HANDLER_WAIT: Duration = Duration::from_millis(1000);
const FLUSH_WAIT: Duration = Duration::from_millis(500);

const CANCELED_BY_HOST: &str = "canceled by the host";
const DISCONNECTED: &str = "host disconnected";

const NEW: u8 = 0;
const INITIALIZING: u8 = 1;
const READY: u8 = 2;
const FAILED: u8 = 3;

enum Event {
    Frames(Vec<Vec<u8>>),
    End(Option<ServeError>),
}

/// Reads frames on its own thread and hands them to the engine in batches, so stdin is
/// read promptly whatever the handlers do (R46).
fn reader<R: Read + Send + 'static>(mut input: R, events: tmpsc::UnboundedSender<Event>) {
    std::thread::spawn(move || {
        let end = read_frames(&mut input, &events);
        let _ = events.send(Event::End(end));
    });
}

fn read_frames<R: Read>(input: &mut R, events: &tmpsc::UnboundedSender<Event>) -> Option<ServeError> {
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 16);
    let mut chunk = vec![0u8; 1 << 16];
    loop {
        let n = match input.read(&mut chunk) {
            Ok(0) => {
                return if buf.is_empty() { None } else { Some(ServeError::Violation("the input ended inside a frame".into())) };
            }
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Some(ServeError::Violation(format!("reading from the host: {}", e))),
        };
        buf.extend_from_slice(&chunk[..n]);
        let mut frames = Vec::new();
        let mut pos = 0;
        while buf.len() - pos >= 4 {
            let head = &buf[pos..pos + 4];
            let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
            if len == 0 || len > MAX_FRAME {
                // R4, R5: the body is never waited for.
                let what = if len == 0 { "a zero-length frame".to_string() } else { format!("a frame of {} bytes exceeds the limit", len) };
                let hint = if looks_like_text(head) { format!("; {}", TEXT_HINT) } else { String::new() };
                return Some(ServeError::Violation(what + &hint));
            }
            if buf.len() - pos - 4 < len {
                break;
            }
            frames.push(buf[pos + 4..pos + 4 + len].to_vec());
            pos += 4 + len;
        }
        if pos > 0 {
            buf.drain(..pos);
        }
        if !frames.is_empty() && events.send(Event::Frames(frames)).is_err() {
            return None;
        }
    }
}

/// The single writer of the frames' output, on its own thread: writes whatever is queued
/// with as few writes as possible, never blocking the engine on a full pipe.
struct Writer {
    tx: mpsc::Sender<Option<Vec<u8>>>,
    done: Mutex<Option<mpsc::Receiver<()>>>,
}

impl Writer {
    fn start<W: Write + Send + 'static>(mut out: W, events: tmpsc::UnboundedSender<Event>) -> Writer {
        let (tx, rx) = mpsc::channel::<Option<Vec<u8>>>();
        let (done_tx, done_rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut batch = Vec::new();
            'outer: while let Ok(first) = rx.recv() {
                let mut stop = first.is_none();
                batch.clear();
                if let Some(f) = first {
                    batch.extend_from_slice(&f);
                }
                while !stop {
                    match rx.try_recv() {
                        Ok(Some(f)) => batch.extend_from_slice(&f),
                        Ok(None) => stop = true,
                        Err(_) => break,
                    }
                }
                if !batch.is_empty() {
                    if let Err(e) = out.write_all(&batch).and_then(|_| out.flush()) {
                        let _ = events.send(Event::End(Some(ServeError::Output(e.to_string()))));
                        break 'outer;
                    }
                }
                if stop {
                    break;
                }
            }
            let _ = done_tx.send(());
        });
        Writer { tx, done: Mutex::new(Some(done_rx)) }
    }

    fn put(&self, frame: Vec<u8>) {
        let _ = self.tx.send(Some(frame));
    }

    /// Writes what is queued, then stops; returns whether that finished within `wait`.
    fn close(&self, wait: Duration) -> bool {
        let _ = self.tx.send(None);
        match self.done.lock().unwrap().take() {
            Some(rx) => rx.recv_timeout(wait).is_ok(),
            None => true,
        }
    }
}

struct Shared {
    writer: Writer,
    logger: Logger,
    state: AtomicU8,
    calls: Mutex<HashMap<u64, RequestContext>>,
    init: Mutex<Option<RequestContext>>,
    running: AtomicUsize,
    idle: Notify,
}

impl Shared {
    fn reply_error(&self, id: u64, code: &str, message: &str) {
        self.writer.put(error_frame(id, code, message));
    }

    fn finished(&self) {
        if self.running.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.idle.notify_waiters();
        }
    }
}

struct Connection {
    shared: Arc<Shared>,
    handlers: HashMap<String, HandlerFn>,
    on_initialize: Option<InitFn>,
    catalog: Arc<str>,
    last_id: u64,
}

impl Connection {
    fn dispatch(&mut self, payload: &[u8]) -> Result<(), ServeError> {
        let msg = decode_host(payload).map_err(ServeError::Violation)?;
        let (id, method, params) = match msg {
            HostMessage::BadCancel => return Ok(()), // ignored (A4)
            HostMessage::Cancel { id } => {
                self.cancel(id);
                return Ok(());
            }
            HostMessage::BadRequest { id, problem } => {
                self.order(id)?;
                self.shared.reply_error(id, "invalid", &format!("Invalid request envelope: {}", problem)); // R12
                return Ok(());
            }
            HostMessage::Request { id, method, params } => (id, method, params),
        };
        self.order(id)?;
        let sh = &self.shared;
        if method == INITIALIZE {
            self.initialize(id, params);
            return Ok(());
        }
        if sh.state.load(Ordering::Acquire) != READY {
            sh.reply_error(id, "invalid", "Adapter is not initialized"); // R27
            return Ok(());
        }
        let h = match self.handlers.get(&method) {
            Some(h) => h.clone(),
            None => {
                sh.reply_error(id, "unavailable", "Unknown method"); // R42
                return Ok(());
            }
        };
        let ctx = RequestContext::new(id, &method, sh.logger.clone());
        {
            let mut calls = sh.calls.lock().unwrap();
            if calls.len() >= MAX_IN_FLIGHT {
                drop(calls);
                sh.reply_error(id, "busy", "Too many requests in flight"); // R40
                return Ok(());
            }
            calls.insert(id, ctx.clone());
        }
        sh.running.fetch_add(1, Ordering::AcqRel);
        let fut = h(params, ctx);
        let shared = self.shared.clone();
        tokio::spawn(async move {
            let frame = match tokio::spawn(fut).await {
                Ok(Ok(text)) => {
                    let f = result_frame(id, &text);
                    if f.len() - 4 > MAX_FRAME {
                        error_frame(id, "failed", "Result exceeds the adapter frame limit")
                    } else {
                        f
                    }
                }
                Ok(Err(e)) => error_frame(id, &e.code, &e.message),
                Err(e) => {
                    let what = if e.is_panic() { "handler panicked" } else { "handler was cancelled" };
                    shared.logger.error(what, &[("id", id.into())]);
                    error_frame(id, "failed", what)
                }
            };
            // The slot is free before the reply can reach the host (R40).
            shared.calls.lock().unwrap().remove(&id);
            shared.writer.put(frame);
            shared.finished();
        });
        Ok(())
    }

    /// Request ids must increase strictly (A14).
    fn order(&mut self, id: u64) -> Result<(), ServeError> {
        if id <= self.last_id {
            return Err(ServeError::Violation(format!("request id {} after {} (A14)", id, self.last_id)));
        }
        self.last_id = id;
        Ok(())
    }

    fn cancel(&self, id: u64) {
        let ctx = self.shared.calls.lock().unwrap().get(&id).cloned();
        let ctx = ctx.or_else(|| self.shared.init.lock().unwrap().as_ref().filter(|c| c.id() == id).cloned());
        if let Some(ctx) = ctx {
            ctx.cancel(CANCELED_BY_HOST); // unknown and finished ids are ignored (R37)
        }
    }

    fn initialize(&mut self, id: u64, params: &serde_json::value::RawValue) {
        let sh = self.shared.clone();
        if sh.state.compare_exchange(NEW, INITIALIZING, Ordering::AcqRel, Ordering::Acquire).is_err() {
            sh.reply_error(id, "invalid", "Adapter is already initialized"); // A7
            return;
        }
        #[derive(serde::Deserialize)]
        struct InitParams<'a> {
            protocol: Option<serde_json::Value>,
            #[serde(borrow)]
            configuration: Option<&'a serde_json::value::RawValue>,
        }
        let ctx = RequestContext::new(id, INITIALIZE, sh.logger.clone());
        let fut = match serde_json::from_str::<InitParams>(params.get()) {
            Ok(p) if p.protocol.as_ref().and_then(|v| v.as_i64()) == Some(1) && p.protocol.as_ref().map(|v| v.is_i64() || v.is_u64()).unwrap_or(false) => {
                match p.configuration {
                    Some(c) if c.get().starts_with('{') => match &self.on_initialize {
                        Some(f) => Some(f(c, ctx.clone())),
                        None => None,
                    },
                    _ => {
                        return self.refuse_initialize(id, "Invalid initialize params: configuration is not an object");
                    }
                }
            }
            _ => return self.refuse_initialize(id, "Invalid initialize params: protocol is not 1"),
        };
        *sh.init.lock().unwrap() = Some(ctx);
        sh.running.fetch_add(1, Ordering::AcqRel);
        let catalog = self.catalog.clone();
        tokio::spawn(async move {
            let outcome = match fut {
                Some(fut) => match tokio::spawn(fut).await {
                    Ok(r) => r,
                    Err(_) => Err(crate::CallError::new("failed", "initialize panicked")),
                },
                None => Ok(()),
            };
            *sh.init.lock().unwrap() = None;
            match outcome {
                Ok(()) => {
                    // Ready before the reply is queued: a request sent on seeing it is served.
                    sh.state.store(READY, Ordering::Release);
                    sh.writer.put(result_frame(id, &catalog));
                }
                Err(e) => {
                    sh.state.store(FAILED, Ordering::Release);
                    sh.logger.warn("initialize refused", &[("error", e.message.clone().into()), ("code", e.code.clone().into())]);
                    sh.reply_error(id, &e.code, &e.message);
                }
            }
            sh.finished();
        });
    }

    fn refuse_initialize(&self, id: u64, message: &str) {
        self.shared.state.store(FAILED, Ordering::Release);
        self.shared.reply_error(id, "invalid", message);
    }

    /// Cancels every handler, waits for them and flushes the replies, boundedly;
    /// returns whether everything finished in time.
    async fn shutdown(&self) -> bool {
        let sh = &self.shared;
        let ctxs: Vec<RequestContext> = sh.calls.lock().unwrap().values().cloned().collect();
        for c in ctxs.iter().chain(sh.init.lock().unwrap().iter()) {
            c.cancel(DISCONNECTED);
        }
        let mut complete = true;
        let wait = async {
            loop {
                let idle = sh.idle.notified();
                if sh.running.load(Ordering::Acquire) == 0 {
                    return;
                }
                idle.await;
            }
        };
        if tokio::time::timeout(HANDLER_WAIT, wait).await.is_err() {
            complete = false;
            sh.logger.warn("handlers did not return after the connection ended; abandoning them", &[]);
        }
        let shared = sh.clone();
        let flushed = tokio::task::spawn_blocking(move || shared.writer.close(FLUSH_WAIT)).await.unwrap_or(false);
        if !flushed {
            complete = false;
            sh.logger.warn("replies could not be written after the connection ended; abandoning them", &[]);
        }
        complete
    }
}

/// Serves `adapter` over one connection: frames are read from `input` (on a thread of
/// its own) and replies written to `output` (on another), until the input ends (`Ok`) or
/// the host violates the protocol or the output fails (`Err`).
///
/// The catalog is validated first: an invalid adapter returns
/// [`ServeError::InvalidAdapter`] before anything is read (R19-R25). At the end every
/// request's context is cancelled; handlers get about a second to return, their replies
/// are flushed, and `serve` returns within 2 s of the end of input (R49). Handlers that
/// did not return are abandoned. Must run inside a tokio runtime.
pub async fn serve<R, W>(adapter: Adapter, input: R, output: W) -> Result<(), ServeError>
where
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    let services = adapter.catalog()?;
    let catalog = serde_json::to_string(&serde_json::json!({ "protocol": 1, "services": services }))
        .map_err(|e| ServeError::InvalidAdapter(e.to_string()))?;
    let (tx, mut rx) = tmpsc::unbounded_channel();
    let shared = Arc::new(Shared {
        writer: Writer::start(output, tx.clone()),
        logger: adapter.logger.clone(),
        state: AtomicU8::new(NEW),
        calls: Mutex::new(HashMap::new()),
        init: Mutex::new(None),
        running: AtomicUsize::new(0),
        idle: Notify::new(),
    });
    let mut handlers = HashMap::new();
    for s in &adapter.services {
        for (name, h) in &s.handlers {
            handlers.insert(name.clone(), h.clone());
        }
    }
    let mut conn = Connection { shared, handlers, on_initialize: adapter.on_initialize.clone(), catalog: Arc::from(catalog.as_str()), last_id: 0 };
    reader(input, tx);
    let cause = loop {
        match rx.recv().await {
            Some(Event::Frames(frames)) => {
                let mut err = None;
                for f in &frames {
                    if let Err(e) = conn.dispatch(f) {
                        err = Some(e);
                        break;
                    }
                }
                if err.is_some() {
                    break err;
                }
            }
            Some(Event::End(cause)) => break cause,
            None => break None,
        }
    };
    conn.shutdown().await;
    match cause {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Moves stdout out of everyone's reach and returns the file frames must be written to.
///
/// The original descriptor 1 is duplicated to a private close-on-exec descriptor used
/// only for frames; then stderr is duplicated onto descriptor 1, so anything written to
/// fd 1 (`println!`, a C library, a child process) lands on stderr and cannot corrupt the
/// frames (R6). Call it once, first thing.
pub fn protect_stdout() -> std::io::Result<std::fs::File> {
    use std::os::unix::io::FromRawFd;
    let _ = std::io::stdout().flush();
    // SAFETY: plain descriptor calls; the new descriptor is owned by the File returned.
    unsafe {
        let fd = libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 3);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::dup2(2, 1) < 0 {
            let e = std::io::Error::last_os_error();
            libc::close(fd);
            return Err(e);
        }
        Ok(std::fs::File::from_raw_fd(fd))
    }
}

fn terminal_message(prog: &str) -> String {
    format!(
        "{p} is an adapter: a host starts it and speaks the Adapter process protocol v1 with it\n\
         over stdin and stdout (length-prefixed JSON frames), so it is not meant to be run by hand.\n\
         To try it, run it through a host, e.g.:\n  adapterctl check {p}\n  adapterctl call {p} METHOD '{{...}}'\n",
        p = prog
    )
}

/// Serves `adapter` over stdin and stdout and exits the process: the whole of `main`.
///
/// Its first action protects stdout ([`protect_stdout`]). Run in a terminal (stdin is a
/// TTY) it explains what an adapter is and exits with status 2. Otherwise it serves on a
/// tokio runtime until the host disconnects and exits with status 0 (R49), or with status
/// 1 after logging the cause to stderr: an invalid adapter definition (checked before
/// anything is read), a host protocol violation, or a failed output. It exits within 2 s
/// of the end of stdin whatever the handlers do.
pub fn run(adapter: Adapter) -> ! {
    use std::os::unix::io::FromRawFd;
    let logger = adapter.logger.clone();
    let out = match protect_stdout() {
        Ok(f) => f,
        Err(e) => {
            logger.error("protecting stdout", &[("error", e.to_string().into())]);
            std::process::exit(1);
        }
    };
    // SAFETY: isatty only inspects descriptor 0.
    if unsafe { libc::isatty(0) } == 1 {
        let prog = std::env::args().next().unwrap_or_else(|| "this adapter".into());
        eprint!("{}", terminal_message(&prog));
        std::process::exit(2);
    }
    // SAFETY: descriptor 0 is the process's stdin, read only by the reader thread.
    let input = unsafe { std::fs::File::from_raw_fd(0) };
    let rt = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            logger.error("starting the runtime", &[("error", e.to_string().into())]);
            std::process::exit(1);
        }
    };
    let status = match rt.block_on(serve(adapter, input, out)) {
        Ok(()) => 0,
        Err(e) => {
            logger.error("ending the connection", &[("error", e.to_string().into())]);
            1
        }
    };
    std::process::exit(status);
}
