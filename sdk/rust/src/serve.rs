//! The engine: one connection served by its reader thread, replies written by a writer.

use std::any::Any;
use std::collections::HashMap;
use std::future::Future;
use std::io::{Read, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};
use std::time::Duration;

use tokio::sync::{mpsc as tmpsc, Notify};

use crate::errors::{Code, ServeError};
use crate::log::{Logger, TARGET};
use crate::spin::Spinner;
use crate::wire::{
    decode_host, error_frame, looks_like_text, result_frame, HostMessage, INITIALIZE, MAX_FRAME, MAX_IN_FLIGHT,
    TEXT_HINT,
};
use crate::writer::Writer;
use crate::{Adapter, BoxFuture, CallError, HandlerFn, InitFn, RequestContext};

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

/// The input buffer a connection starts with; it grows to hold the largest frame.
const READ_CHUNK: usize = 1 << 16;

/// Requests in flight past their first poll (initialize excluded), and whether the
/// connection is shutting down: nothing more is started then.
#[derive(Default)]
struct Calls {
    map: HashMap<u64, RequestContext>,
    closed: bool,
}

struct Shared {
    writer: Arc<Writer>,
    logger: Logger,
    state: AtomicU8,
    calls: Mutex<Calls>,
    init: Mutex<Option<RequestContext>>,
    running: AtomicUsize,
    idle: Notify,
}

impl Shared {
    fn finished(&self) {
        if self.running.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.idle.notify_waiters();
        }
    }

    /// Cancels every handler, waits for them and flushes the replies, boundedly;
    /// returns whether everything finished in time.
    async fn shutdown(self: &Arc<Self>) -> bool {
        let ctxs: Vec<RequestContext> = {
            let mut calls = self.calls.lock().unwrap();
            calls.closed = true;
            calls.map.values().cloned().collect()
        };
        for c in ctxs.iter().chain(self.init.lock().unwrap().iter()) {
            c.cancel(DISCONNECTED);
        }
        let mut complete = true;
        let wait = async {
            loop {
                let idle = self.idle.notified();
                if self.running.load(Ordering::Acquire) == 0 {
                    return;
                }
                idle.await;
            }
        };
        if tokio::time::timeout(HANDLER_WAIT, wait).await.is_err() {
            complete = false;
            log::warn!(target: TARGET, "handlers did not return after the connection ended; abandoning them");
        }
        let writer = self.writer.clone();
        let flushed = tokio::task::spawn_blocking(move || writer.close(FLUSH_WAIT)).await.unwrap_or(false);
        if !flushed {
            complete = false;
            log::warn!(target: TARGET, "replies could not be written after the connection ended; abandoning them");
        }
        complete
    }
}

/// A waker that does nothing: a handler's first poll runs on the reader thread, and a
/// handler still pending after it is polled again by its tokio task, with that task's
/// waker, which is then the one a future must wake (only the last poll's waker counts).
fn noop_waker() -> Waker {
    fn clone(_: *const ()) -> RawWaker {
        RawWaker::new(std::ptr::null(), &VTABLE)
    }
    fn noop(_: *const ()) {}
    static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, noop, noop, noop);
    // SAFETY: the vtable's functions ignore the data pointer.
    unsafe { Waker::from_raw(RawWaker::new(std::ptr::null(), &VTABLE)) }
}

/// A caught panic's payload.
type Panic = Box<dyn Any + Send>;

/// Polls a future once; a panic is returned as `Err`.
fn poll_once<T>(fut: &mut BoxFuture<T>) -> Result<Poll<T>, Panic> {
    let waker = noop_waker();
    let mut cx = Context::from_waker(&waker);
    catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(&mut cx)))
}

/// A future whose panic is its output's `Err`: a handler's panic answers `failed`.
struct CatchPanic<T>(BoxFuture<T>);

impl<T> Future for CatchPanic<T> {
    type Output = Result<T, Panic>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match catch_unwind(AssertUnwindSafe(|| self.0.as_mut().poll(cx))) {
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(p) => Poll::Ready(Err(p)),
        }
    }
}

/// The `failed` error a panic is answered with: "`what` panicked: MESSAGE" for a panic
/// with a message (`panic!("...")`: a `&str` or a `String` payload), else "`what`
/// panicked".
fn panic_error(what: &str, payload: &(dyn Any + Send)) -> CallError {
    let message =
        payload.downcast_ref::<&str>().copied().or_else(|| payload.downcast_ref::<String>().map(String::as_str));
    match message {
        Some(m) => CallError::new(Code::Failed, format!("{} panicked: {}", what, m)),
        None => CallError::new(Code::Failed, format!("{} panicked", what)),
    }
}

/// The reply frame of the outcome of request `id` to `method` (`Err`: it panicked).
fn handler_reply(id: u64, method: &str, outcome: Result<Result<String, CallError>, Panic>) -> Vec<u8> {
    match outcome {
        Ok(Ok(text)) => {
            let f = result_frame(id, &text);
            if f.len() - 4 > MAX_FRAME {
                error_frame(id, Code::Failed.as_str(), "Result exceeds the adapter frame limit")
            } else {
                f
            }
        }
        Ok(Err(e)) => error_frame(id, &e.code, &e.message),
        Err(p) => {
            let e = panic_error("handler", &*p);
            log::error!(target: TARGET, "{} (method {}, request {})", e.message, method, id);
            error_frame(id, &e.code, &e.message)
        }
    }
}

/// What the reader thread owns: everything a frame is dispatched with.
struct Connection {
    shared: Arc<Shared>,
    rt: tokio::runtime::Handle,
    handlers: HashMap<String, HandlerFn>,
    on_initialize: Option<InitFn>,
    catalog: Arc<str>,
    last_id: u64,
    /// Replies made while dispatching the frames of one read, written together after.
    out: Vec<u8>,
}

impl Connection {
    /// Reads and dispatches frames until the input ends (`None`) or the host violates the
    /// protocol.
    ///
    /// Requests are served on this thread: a handler is called and polled once here, so
    /// one that completes without waiting (most do) is answered with no thread hand-off,
    /// and the replies to one read's frames leave in one write. A handler still pending
    /// continues as a tokio task, and the thread reads on at once (R46).
    fn read_loop<R: Read>(&mut self, input: &mut R, spinner: Option<&Spinner>) -> Option<ServeError> {
        let mut buf = vec![0u8; READ_CHUNK];
        let (mut start, mut end) = (0, 0);
        loop {
            if end == buf.len() {
                buf.copy_within(start..end, 0);
                end -= start;
                start = 0;
                if end == buf.len() {
                    // A frame larger than the buffer: room for all of it (its length was
                    // checked against the limit below).
                    let len = u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]) as usize;
                    buf.resize(4 + len, 0);
                }
            }
            let n = match input.read(&mut buf[end..]) {
                Ok(0) => {
                    return if start == end {
                        None
                    } else {
                        Some(ServeError::Violation("the input ended inside a frame".into()))
                    };
                }
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Some(ServeError::Violation(format!("reading from the host: {}", e))),
            };
            end += n;
            if self.shared.calls.lock().unwrap().closed {
                return None;
            }
            let mut err = None;
            let mut frames = 0;
            while end - start >= 4 {
                let head = &buf[start..start + 4];
                let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
                if len == 0 || len > MAX_FRAME {
                    // R4, R5: the body is never waited for.
                    let what = if len == 0 {
                        "a zero-length frame".to_string()
                    } else {
                        format!("a frame of {} bytes exceeds the limit", len)
                    };
                    let hint = if looks_like_text(head) { format!("; {}", TEXT_HINT) } else { String::new() };
                    err = Some(ServeError::Violation(what + &hint));
                    break;
                }
                if end - start - 4 < len {
                    break;
                }
                if let Err(e) = self.dispatch(&buf[start + 4..start + 4 + len]) {
                    err = Some(e);
                    break;
                }
                start += 4 + len;
                frames += 1;
            }
            if let Some(s) = spinner {
                s.read(frames);
            }
            self.shared.writer.reader_batch(&mut self.out);
            if err.is_some() {
                return err;
            }
            if start == end {
                start = 0;
                end = 0;
                if buf.len() > READ_CHUNK {
                    buf.truncate(READ_CHUNK);
                    buf.shrink_to_fit();
                }
            }
        }
    }

    fn reply_error(&mut self, id: u64, code: &str, message: &str) {
        self.out.extend_from_slice(&error_frame(id, code, message));
    }

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
                self.reply_error(id, Code::Invalid.as_str(), &format!("Invalid request envelope: {}", problem)); // R12
                return Ok(());
            }
            HostMessage::Request { id, method, params } => (id, method, params),
        };
        self.order(id)?;
        if method == INITIALIZE {
            self.initialize(id, params);
            return Ok(());
        }
        if self.shared.state.load(Ordering::Acquire) != READY {
            self.reply_error(id, Code::Invalid.as_str(), "Adapter is not initialized"); // R27
            return Ok(());
        }
        let h = match self.handlers.get(method.as_str()) {
            Some(h) => h.clone(),
            None => {
                self.reply_error(id, Code::Unavailable.as_str(), "Unknown method"); // R42
                return Ok(());
            }
        };
        {
            let calls = self.shared.calls.lock().unwrap();
            if calls.closed {
                return Ok(());
            }
            if calls.map.len() >= MAX_IN_FLIGHT {
                drop(calls);
                self.reply_error(id, Code::Busy.as_str(), "Too many requests in flight"); // R40
                return Ok(());
            }
        }
        let ctx = RequestContext::new(id, &method, self.shared.logger.clone());
        // A handler that returns at its first poll was never in flight past this frame:
        // no cancel can reach it, and it takes no slot.
        let mut fut = match catch_unwind(AssertUnwindSafe(|| h(params, ctx.clone()))) {
            Ok(fut) => fut,
            Err(p) => {
                let f = handler_reply(id, &method, Err(p));
                self.out.extend_from_slice(&f);
                return Ok(());
            }
        };
        match poll_once(&mut fut) {
            Ok(Poll::Ready(r)) => {
                let f = handler_reply(id, &method, Ok(r));
                self.out.extend_from_slice(&f);
                return Ok(());
            }
            Ok(Poll::Pending) => {}
            Err(p) => {
                let f = handler_reply(id, &method, Err(p));
                self.out.extend_from_slice(&f);
                return Ok(());
            }
        }
        let method = ctx.method.clone();
        self.shared.calls.lock().unwrap().map.insert(id, ctx);
        self.shared.running.fetch_add(1, Ordering::AcqRel);
        let shared = self.shared.clone();
        self.rt.spawn(async move {
            let outcome = CatchPanic(fut).await;
            let frame = handler_reply(id, &method, outcome);
            // The slot is free before the reply can reach the host (R40).
            shared.calls.lock().unwrap().map.remove(&id);
            shared.writer.reply(&frame);
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
        let ctx = self.shared.calls.lock().unwrap().map.get(&id).cloned();
        let ctx = ctx.or_else(|| self.shared.init.lock().unwrap().as_ref().filter(|c| c.id() == id).cloned());
        if let Some(ctx) = ctx {
            ctx.cancel(CANCELED_BY_HOST); // unknown and finished ids are ignored (R37)
        }
    }

    fn initialize(&mut self, id: u64, params: &serde_json::value::RawValue) {
        let sh = self.shared.clone();
        if sh.state.compare_exchange(NEW, INITIALIZING, Ordering::AcqRel, Ordering::Acquire).is_err() {
            self.reply_error(id, Code::Invalid.as_str(), "Adapter is already initialized"); // A7
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
            Ok(p)
                if p.protocol.as_ref().and_then(|v| v.as_i64()) == Some(1)
                    && p.protocol.as_ref().map(|v| v.is_i64() || v.is_u64()).unwrap_or(false) =>
            {
                match p.configuration {
                    Some(c) if c.get().starts_with('{') => match &self.on_initialize {
                        Some(f) => match catch_unwind(AssertUnwindSafe(|| f(c, ctx.clone()))) {
                            Ok(fut) => Some(fut),
                            Err(p) => return self.initialized(id, Err(panic_error("initialize", &*p))),
                        },
                        None => None,
                    },
                    _ => {
                        return self.refuse_initialize(id, "Invalid initialize params: configuration is not an object");
                    }
                }
            }
            _ => return self.refuse_initialize(id, "Invalid initialize params: protocol is not 1"),
        };
        let mut fut = match fut {
            Some(fut) => fut,
            None => return self.initialized(id, Ok(())),
        };
        match poll_once(&mut fut) {
            Ok(Poll::Ready(r)) => return self.initialized(id, r),
            Ok(Poll::Pending) => {}
            Err(p) => return self.initialized(id, Err(panic_error("initialize", &*p))),
        }
        *sh.init.lock().unwrap() = Some(ctx);
        sh.running.fetch_add(1, Ordering::AcqRel);
        let catalog = self.catalog.clone();
        self.rt.spawn(async move {
            let outcome = CatchPanic(fut).await.unwrap_or_else(|p| Err(panic_error("initialize", &*p)));
            *sh.init.lock().unwrap() = None;
            let mut out = Vec::new();
            init_outcome(&sh, &catalog, id, outcome, &mut out);
            sh.writer.reply(&out);
            sh.finished();
        });
    }

    /// Answers initialize on the reader thread.
    fn initialized(&mut self, id: u64, outcome: Result<(), CallError>) {
        init_outcome(&self.shared, &self.catalog, id, outcome, &mut self.out);
    }

    fn refuse_initialize(&mut self, id: u64, message: &str) {
        self.shared.state.store(FAILED, Ordering::Release);
        self.reply_error(id, Code::Invalid.as_str(), message);
    }
}

/// Settles the handshake and appends its reply to `out`.
fn init_outcome(sh: &Shared, catalog: &str, id: u64, outcome: Result<(), CallError>, out: &mut Vec<u8>) {
    match outcome {
        Ok(()) => {
            // Ready before the reply is queued: a request sent on seeing it is served.
            sh.state.store(READY, Ordering::Release);
            out.extend_from_slice(&result_frame(id, catalog));
        }
        Err(e) => {
            sh.state.store(FAILED, Ordering::Release);
            log::warn!(target: TARGET, "initialize refused: {}", e);
            out.extend_from_slice(&error_frame(id, &e.code, &e.message));
        }
    }
}

/// Serves `adapter` over one connection: frames are read from `input` and requests
/// served on a thread of its own, replies written to `output` (by that thread, by the
/// handlers' tasks, or by a writer thread when a write could block the reader), until
/// the input ends (`Ok`) or the host violates the protocol or the output fails (`Err`).
///
/// The catalog is validated first: an invalid adapter returns
/// [`ServeError::InvalidAdapter`] before anything is read (R19-R25). Each handler is
/// called and first polled on the reader thread, so its code up to its first `.await`
/// should be as short as tokio asks of any task; a handler still pending after that
/// continues as a tokio task. At the end every request's context is cancelled; handlers
/// get about a second to return, their replies are flushed, and `serve` returns within
/// 2 s of the end of input (R49). Handlers that did not return are abandoned. Must run
/// inside a tokio runtime.
pub async fn serve<R, W>(adapter: Adapter, input: R, output: W) -> Result<(), ServeError>
where
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    let services = adapter.catalog()?;
    let catalog = serde_json::to_string(&serde_json::json!({ "protocol": 1, "services": services }))
        .map_err(|e| ServeError::InvalidAdapter(e.to_string()))?;
    let (tx, mut rx) = tmpsc::unbounded_channel::<Option<ServeError>>();
    let failed = tx.clone();
    let writer = Arc::new(Writer::new(
        output,
        Box::new(move |e| {
            let _ = failed.send(Some(ServeError::Output(e)));
        }),
    ));
    Writer::spawn(writer.clone());
    let shared = Arc::new(Shared {
        writer,
        logger: adapter.logger.clone(),
        state: AtomicU8::new(NEW),
        calls: Mutex::new(Calls::default()),
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
    let mut conn = Connection {
        shared: shared.clone(),
        rt: tokio::runtime::Handle::current(),
        handlers,
        on_initialize: adapter.on_initialize.clone(),
        catalog: Arc::from(catalog.as_str()),
        last_id: 0,
        out: Vec::with_capacity(READ_CHUNK),
    };
    let mut input = input;
    // Without its thread the adapter only loses the spin's latency: nothing to report.
    let spinner = if adapter.spin { Spinner::start().ok() } else { None };
    std::thread::spawn(move || {
        // Handlers' first polls run here: inside the runtime, as tokio's timers and
        // spawn require.
        let _rt = conn.rt.clone();
        let _guard = _rt.enter();
        let end = conn.read_loop(&mut input, spinner.as_ref());
        drop(spinner); // stops its thread and waits for it
        let _ = tx.send(end);
    });
    let cause = rx.recv().await.flatten();
    shared.shutdown().await;
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
    // The adapter's logger receives the `log` records of the SDK and of the handlers,
    // unless the adapter installed a logger of its own before.
    let _ = adapter.logger.clone().install();
    let out = match protect_stdout() {
        Ok(f) => f,
        Err(e) => {
            log::error!(target: TARGET, "protecting stdout: {}", e);
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
            log::error!(target: TARGET, "starting the runtime: {}", e);
            std::process::exit(1);
        }
    };
    let status = match rt.block_on(serve(adapter, input, out)) {
        Ok(()) => 0,
        Err(e) => {
            log::error!(target: TARGET, "ending the connection: {}", e);
            1
        }
    };
    std::process::exit(status);
}
