//! The recipe of docs/contracts.md "Streams" for a Rust adapter: the adapter's side of
//! an upload method (contract.NewUpload on the Go side, sent by registry.Upload) and of
//! a download method (contract.NewDownload, read by registry.Download). The SDK has no
//! stream helper; an adapter copies this module (it uses only the SDK, serde and tokio)
//! and registers one instance per method:
//!
//! ```ignore
//! let put = Upload::new(|p: PutParams, mut r: Reader, _c: Cancel| async move {
//!     let mut buf = vec![0; 64 << 10];
//!     let mut n = 0;
//!     loop {
//!         let k = r.read(&mut buf).await?; // 0 at the end
//!         if k == 0 { return Ok(PutResult { bytes: n }); }
//!         n += k;
//!     }
//! });
//! put.register(&mut svc, "example.files.put");
//! let get = Download::new(|p: GetParams, w: Writer, _c: Cancel| async move {
//!     w.write(&bytes).await // waits while the host is behind
//! });
//! get.register(&mut svc, "example.files.get");
//! ```
//!
//! Upload: the host sends chunks {"stream", "seq", "offset", "data" (base64), "eof"?,
//! "params"? (chunk 0), "abort"?}, up to two in flight, so chunk K+1 may arrive first:
//! `chunk` hands the data to the handler in order of seq, answers {} once the handler's
//! reader took it, and the last chunk {"result": R} once the handler returned; the
//! handler's error is the reply of the first chunk whose bytes it did not take.
//!
//! Download: the host makes waiting reads {"stream", "max_bytes", "wait_ms", "params"?
//! (the first read), "close"?}; the first starts the handler, each returns
//! {"data": base64, "eof"} with what the handler wrote so far (nothing after wait_ms),
//! and the handler's error is the reply of the read after its last bytes. The handler's
//! write waits while about two chunks wait for the host.
//!
//! Unlike the Go SDK's helpers, this recipe does not give up a stream that the host
//! abandons without a word (no chunk or read for 30 s): a host that goes away ends the
//! connection, which ends the adapter.
#![allow(dead_code)] // a recipe: each user takes what it needs

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use adapterkit::{Bytes, CallError, Code, RequestContext, Service, MAX_FRAME};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, oneshot, Notify};

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// The most bytes one chunk carries through the method named `method`: base64 of a
/// frame less 1 KiB for the envelope, a multiple of 3 (as the Go host and SDK count).
pub fn chunk_bytes(method: &str) -> usize {
    (MAX_FRAME - 1024 - method.len()) / 4 * 3
}

/// A stream's cancellation: set once, with the reason, when the host gives the stream
/// up (or the handler returned).
#[derive(Clone, Default)]
pub struct Cancel(Arc<CancelState>);

#[derive(Default)]
struct CancelState {
    reason: Mutex<Option<CallError>>,
    notify: Notify,
}

impl Cancel {
    /// Cancels with `reason`, unless cancelled already.
    pub fn cancel(&self, reason: CallError) {
        let mut r = self.0.reason.lock().unwrap();
        if r.is_none() {
            *r = Some(reason);
            self.0.notify.notify_waiters();
        }
    }

    /// The reason, once cancelled.
    pub fn reason(&self) -> Option<CallError> {
        self.0.reason.lock().unwrap().clone()
    }

    /// Completes with the reason once cancelled.
    pub async fn canceled(&self) -> CallError {
        loop {
            let notified = self.0.notify.notified();
            if let Some(r) = self.reason() {
                return r;
            }
            notified.await;
        }
    }
}

/// The error of a chunk or read whose call the host cancelled.
fn call_canceled(ctx: &RequestContext) -> CallError {
    CallError::new(Code::Aborted, format!("Request {}", ctx.reason().unwrap_or("canceled")))
}

/// The params of one call of an upload method.
#[derive(Deserialize)]
pub struct UploadChunk<P> {
    pub stream: String,
    pub seq: i64,
    pub offset: i64,
    pub data: Bytes,
    pub eof: bool,
    pub abort: String,
    pub params: Option<P>,
}

/// The reply to one chunk: the handler's result on the last.
#[derive(Serialize)]
pub struct UploadReply<R> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<R>,
}

/// A chunk's bytes, and how the reader says it took them.
type Offer = (Vec<u8>, oneshot::Sender<()>);

/// What an upload's handler reads: the stream's bytes in order.
pub struct Reader {
    rx: mpsc::Receiver<Offer>,
    buf: Vec<u8>,
    pos: usize,
    eof: bool,
    cancel: Cancel,
}

impl Reader {
    /// Reads the next bytes of the stream into `buf`; 0 at its end. Fails with the
    /// reason once the stream was given up.
    pub async fn read(&mut self, buf: &mut [u8]) -> Result<usize, CallError> {
        while self.pos == self.buf.len() && !self.eof {
            if let Some(r) = self.cancel.reason() {
                return Err(r);
            }
            tokio::select! {
                m = self.rx.recv() => match m {
                    Some((data, taken)) => {
                        self.buf = data;
                        self.pos = 0;
                        let _ = taken.send(());
                    }
                    None => self.eof = true,
                },
                r = self.cancel.canceled() => return Err(r),
            }
        }
        let n = buf.len().min(self.buf.len() - self.pos);
        buf[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

type UploadFn<P, R> = Arc<dyn Fn(P, Reader, Cancel) -> BoxFuture<Result<R, CallError>> + Send + Sync>;

/// One upload under way.
struct UpStream<R> {
    next: Mutex<i64>,                         // the seq whose turn it is
    turn: Notify,                             // notified when next moves
    tx: Mutex<Option<mpsc::Sender<Offer>>>,   // None after the last chunk
    rx: Mutex<Option<mpsc::Receiver<Offer>>>, // the reader's, until chunk 0 starts the handler
    cancel: Cancel,
    done: Cancel, // set once the handler returned, with outcome
    outcome: Mutex<Option<Result<R, CallError>>>,
}

/// The adapter's side of one upload method.
pub struct Upload<P, R> {
    handler: UploadFn<P, R>,
    streams: Mutex<HashMap<String, Arc<UpStream<R>>>>,
}

impl<P, R> Upload<P, R>
where
    P: DeserializeOwned + Default + Send + 'static,
    R: Serialize + Send + 'static,
{
    /// The upload method served by `handler`: the method's params, the stream's reader,
    /// and the stream's cancellation. Its result is the last chunk's reply.
    pub fn new<F, Fut>(handler: F) -> Arc<Self>
    where
        F: Fn(P, Reader, Cancel) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, CallError>> + Send + 'static,
    {
        Arc::new(Upload { handler: Arc::new(move |p, r, c| Box::pin(handler(p, r, c))), streams: Mutex::default() })
    }

    /// Registers the method `name` on `svc`.
    pub fn register(self: &Arc<Self>, svc: &mut Service, name: &str) {
        let up = self.clone();
        svc.method(name, move |c: UploadChunk<P>, ctx: RequestContext| {
            let up = up.clone();
            async move { up.chunk(c, ctx).await }
        });
    }

    /// How many streams are under way.
    pub fn len(&self) -> usize {
        self.streams.lock().unwrap().len()
    }

    /// The handler of one chunk's call.
    pub async fn chunk(&self, c: UploadChunk<P>, ctx: RequestContext) -> Result<UploadReply<R>, CallError> {
        let none = UploadReply { result: None };
        let st = {
            let mut streams = self.streams.lock().unwrap();
            if !c.abort.is_empty() {
                if let Some(st) = streams.remove(&c.stream) {
                    st.cancel
                        .cancel(CallError::new(Code::Aborted, format!("the host gave the upload up: {}", c.abort)));
                }
                return Ok(none);
            }
            streams
                .entry(c.stream.clone())
                .or_insert_with(|| {
                    let (tx, rx) = mpsc::channel(1);
                    Arc::new(UpStream {
                        next: Mutex::new(0),
                        turn: Notify::new(),
                        tx: Mutex::new(Some(tx)),
                        rx: Mutex::new(Some(rx)),
                        cancel: Cancel::default(),
                        done: Cancel::default(),
                        outcome: Mutex::new(None),
                    })
                })
                .clone()
        };
        // Wait for this chunk's turn: the host sends every chunk (or cancels its call),
        // so the turn comes even after the handler returned.
        loop {
            let turn = st.turn.notified();
            let next = *st.next.lock().unwrap();
            if next == c.seq {
                break;
            }
            if next > c.seq {
                return Err(CallError::new(Code::Invalid, format!("chunk {} of the stream was sent twice", c.seq)));
            }
            tokio::select! {
                _ = turn => {}
                _ = ctx.canceled() => return Err(self.abort(&c.stream, &st, call_canceled(&ctx))),
            }
        }
        if c.seq == 0 {
            self.start(&st, c.params.unwrap_or_default());
        }
        let mut taken = false; // the handler took the chunk's bytes: its call succeeded
        let data = c.data.0;
        let empty = data.is_empty();
        if !empty {
            let tx = st.tx.lock().unwrap().clone();
            if let Some(tx) = tx {
                let (taken_tx, taken_rx) = oneshot::channel();
                // Room for one offer, and a chunk offers only on its turn: no wait here.
                // An offer the reader cannot take (the handler dropped it, as it does
                // when it returns) waits for the handler's outcome, the chunk's answer.
                let _ = tx.try_send((data, taken_tx));
                tokio::select! {
                    biased;
                    Ok(()) = taken_rx => taken = true, // on Err (the reader is gone), waits for done
                    _ = st.done.canceled() => {}       // the handler returned without reading
                    _ = ctx.canceled() => return Err(self.abort(&c.stream, &st, call_canceled(&ctx))),
                }
            }
        }
        if c.eof {
            st.tx.lock().unwrap().take(); // the reader sees the end once it read the rest
        }
        *st.next.lock().unwrap() += 1;
        st.turn.notify_waiters();
        if !c.eof {
            return if taken || empty { Ok(none) } else { self.failed(&c.stream, &st) };
        }
        tokio::select! {
            _ = st.done.canceled() => {}
            _ = ctx.canceled() => return Err(self.abort(&c.stream, &st, call_canceled(&ctx))),
        }
        self.drop_stream(&c.stream, &st);
        let outcome = st.outcome.lock().unwrap().take();
        match outcome {
            Some(Ok(r)) => Ok(UploadReply { result: Some(r) }),
            Some(Err(e)) => Err(e),
            None => Err(CallError::new(Code::Failed, "the stream's handler has no outcome")),
        }
    }

    /// Runs the handler of `st`, on chunk 0's turn.
    fn start(&self, st: &Arc<UpStream<R>>, params: P) {
        let rx = match st.rx.lock().unwrap().take() {
            Some(rx) => rx,
            None => return,
        };
        let reader = Reader { rx, buf: Vec::new(), pos: 0, eof: false, cancel: st.cancel.clone() };
        let run = (self.handler)(params, reader, st.cancel.clone());
        let st = st.clone();
        tokio::spawn(async move {
            let outcome = match tokio::spawn(run).await {
                Ok(r) => r,
                Err(e) => Err(CallError::new(Code::Failed, format!("panic: {}", e))),
            };
            *st.outcome.lock().unwrap() = Some(outcome);
            st.cancel.cancel(CallError::new(Code::Aborted, "the stream's handler returned"));
            st.done.cancel(CallError::new(Code::Aborted, "done"));
        });
    }

    /// The reply to a chunk of a stream whose handler returned before the end: its
    /// error, which ends the stream, or {} (the chunk is dropped).
    fn failed(&self, name: &str, st: &Arc<UpStream<R>>) -> Result<UploadReply<R>, CallError> {
        let err = match &*st.outcome.lock().unwrap() {
            Some(Err(e)) => e.clone(),
            _ => return Ok(UploadReply { result: None }),
        };
        self.drop_stream(name, st);
        Err(err)
    }

    /// Gives up the stream of a chunk whose call was cancelled; returns the call's error.
    fn abort(&self, name: &str, st: &Arc<UpStream<R>>, err: CallError) -> CallError {
        st.cancel.cancel(err.clone());
        self.drop_stream(name, st);
        err
    }

    fn drop_stream(&self, name: &str, st: &Arc<UpStream<R>>) {
        let mut streams = self.streams.lock().unwrap();
        if streams.get(name).map_or(false, |s| Arc::ptr_eq(s, st)) {
            streams.remove(name);
        }
    }
}

/// The params of one waiting read of a download method.
#[derive(Deserialize)]
pub struct DownloadRead<P> {
    pub stream: String,
    pub max_bytes: i64,
    pub wait_ms: i64,
    pub close: bool,
    pub params: Option<P>,
}

/// The reply to one read: at most max_bytes of the stream, and whether it ended.
#[derive(Serialize)]
pub struct DownloadChunk {
    pub data: Bytes,
    pub eof: bool,
}

/// One download under way: the bytes its handler wrote that no read took yet.
struct DownStream {
    state: Mutex<DownState>,
    change: Notify, // notified when the bytes or done changed
    cancel: Cancel,
    limit: usize, // write waits while this much waits for the host
}

#[derive(Default)]
struct DownState {
    buf: Vec<u8>,
    done: bool, // the handler returned
    err: Option<CallError>,
}

/// What a download's handler writes to.
#[derive(Clone)]
pub struct Writer(Arc<DownStream>);

impl Writer {
    /// Adds `data` to what the host's reads return, waiting while about two chunks wait
    /// for the host. Fails with the reason once the stream was given up.
    pub async fn write(&self, mut data: &[u8]) -> Result<(), CallError> {
        let st = &self.0;
        while !data.is_empty() {
            if let Some(r) = st.cancel.reason() {
                return Err(r);
            }
            let change = st.change.notified();
            {
                let mut s = st.state.lock().unwrap();
                let room = st.limit.saturating_sub(s.buf.len());
                if room > 0 {
                    let k = room.min(data.len());
                    s.buf.extend_from_slice(&data[..k]);
                    data = &data[k..];
                    st.change.notify_waiters();
                    continue;
                }
            }
            tokio::select! {
                _ = change => {}
                r = st.cancel.canceled() => return Err(r),
            }
        }
        Ok(())
    }
}

type DownloadFn<P> = Arc<dyn Fn(P, Writer, Cancel) -> BoxFuture<Result<(), CallError>> + Send + Sync>;

/// The adapter's side of one download method.
pub struct Download<P> {
    handler: DownloadFn<P>,
    max: Mutex<usize>, // the most bytes one read returns: set by register
    streams: Mutex<HashMap<String, Arc<DownStream>>>,
}

impl<P> Download<P>
where
    P: DeserializeOwned + Default + Send + 'static,
{
    /// The download method served by `handler`: the method's params, the stream's
    /// writer, and the stream's cancellation. Returning Ok ends the stream; an error is
    /// the reply to the read after the bytes written before it.
    pub fn new<F, Fut>(handler: F) -> Arc<Self>
    where
        F: Fn(P, Writer, Cancel) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), CallError>> + Send + 'static,
    {
        Arc::new(Download {
            handler: Arc::new(move |p, w, c| Box::pin(handler(p, w, c))),
            max: Mutex::new(chunk_bytes("")),
            streams: Mutex::default(),
        })
    }

    /// Registers the method `name` on `svc`.
    pub fn register(self: &Arc<Self>, svc: &mut Service, name: &str) {
        *self.max.lock().unwrap() = chunk_bytes(name);
        let down = self.clone();
        svc.method(name, move |r: DownloadRead<P>, ctx: RequestContext| {
            let down = down.clone();
            async move { down.read(r, ctx).await }
        });
    }

    /// How many streams are under way.
    pub fn len(&self) -> usize {
        self.streams.lock().unwrap().len()
    }

    /// The handler of one waiting read.
    pub async fn read(&self, r: DownloadRead<P>, ctx: RequestContext) -> Result<DownloadChunk, CallError> {
        let none = || DownloadChunk { data: Bytes::default(), eof: false };
        if r.max_bytes <= 0 || r.wait_ms < 0 {
            return Err(CallError::new(Code::Invalid, "max_bytes must be above 0 and wait_ms at least 0"));
        }
        let max = *self.max.lock().unwrap();
        let st = {
            let mut streams = self.streams.lock().unwrap();
            if r.close {
                if let Some(st) = streams.remove(&r.stream) {
                    st.cancel.cancel(CallError::new(Code::Aborted, "the host closed the download"));
                }
                return Ok(DownloadChunk { data: Bytes::default(), eof: true });
            }
            match streams.get(&r.stream) {
                Some(st) => st.clone(),
                None => {
                    let st = Arc::new(DownStream {
                        state: Mutex::default(),
                        change: Notify::new(),
                        cancel: Cancel::default(),
                        limit: 2 * max,
                    });
                    streams.insert(r.stream.clone(), st.clone());
                    self.start(&st, r.params.unwrap_or_default());
                    st
                }
            }
        };
        let deadline = tokio::time::sleep(Duration::from_millis(r.wait_ms as u64));
        tokio::pin!(deadline);
        loop {
            let change = st.change.notified();
            {
                let s = st.state.lock().unwrap();
                if !s.buf.is_empty() || s.done {
                    break;
                }
            }
            tokio::select! {
                _ = change => {}
                _ = &mut deadline => return Ok(none()), // nothing yet: an empty chunk
                _ = ctx.canceled() => {
                    let err = call_canceled(&ctx);
                    st.cancel.cancel(err.clone());
                    self.drop_stream(&r.stream, &st);
                    return Err(err);
                }
            }
        }
        let mut s = st.state.lock().unwrap();
        let n = s.buf.len().min(r.max_bytes as usize).min(max);
        let data = Bytes(s.buf.drain(..n).collect());
        st.change.notify_waiters();
        if !s.done || !s.buf.is_empty() {
            return Ok(DownloadChunk { data, eof: false });
        }
        match s.err.clone() {
            None => {
                drop(s);
                self.drop_stream(&r.stream, &st);
                Ok(DownloadChunk { data, eof: true })
            }
            // The handler failed: its last bytes go first, its error is the reply to the
            // read after them.
            Some(_) if n > 0 => Ok(DownloadChunk { data, eof: false }),
            Some(e) => {
                drop(s);
                self.drop_stream(&r.stream, &st);
                Err(e)
            }
        }
    }

    /// Runs the handler of `st`, on its first read.
    fn start(&self, st: &Arc<DownStream>, params: P) {
        let run = (self.handler)(params, Writer(st.clone()), st.cancel.clone());
        let st = st.clone();
        tokio::spawn(async move {
            let outcome = match tokio::spawn(run).await {
                Ok(r) => r,
                Err(e) => Err(CallError::new(Code::Failed, format!("panic: {}", e))),
            };
            {
                let mut s = st.state.lock().unwrap();
                s.done = true;
                s.err = outcome.err();
            }
            st.change.notify_waiters();
            st.cancel.cancel(CallError::new(Code::Aborted, "the stream's handler returned"));
        });
    }

    fn drop_stream(&self, name: &str, st: &Arc<DownStream>) {
        let mut streams = self.streams.lock().unwrap();
        if streams.get(name).map_or(false, |s| Arc::ptr_eq(s, st)) {
            streams.remove(name);
        }
    }
}
