//! The connection's output: one byte stream of whole frames, written by whoever holds the
//! writing turn.

use std::any::Any;
use std::io::Write;
use std::os::unix::io::{AsRawFd, RawFd};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// The most bytes one write to a pipe moves without blocking once `poll` reports the
/// pipe writable (POSIX PIPE_BUF; Linux frees pipe space a page at a time).
const PIPE_ATOMIC: usize = 4096;

/// The batch buffer kept between writes; a larger one is given back after its write.
const KEEP_CAP: usize = 1 << 20;

#[derive(Default)]
struct State {
    queue: Vec<u8>, // frames waiting for the turn, in order
    spare: Vec<u8>, // the last written batch's buffer, for the next queue
    writing: bool,  // someone holds the writing turn
    idle: bool,     // the writer thread waits for work
    closing: bool,
    failed: bool,
    finished: bool, // the writer thread has returned
}

/// Writes a connection's frames with as few writes as possible and without a thread
/// hand-off where none is needed.
///
/// A handler task whose reply finds nobody writing writes it itself. The reader thread,
/// which must keep reading (R46), writes its batch of replies itself only when that
/// cannot block: the output is a file (a pipe) that `poll` reports writable and the batch
/// fits one non-blocking write; otherwise the rest is queued for the writer's own thread.
/// Anything queued while the turn is held is written by the writer thread, batched.
pub(crate) struct Writer {
    st: Mutex<State>,
    work: Condvar, // the writer thread: something is queued, a turn ended, or closing
    done: Condvar, // the writer thread has returned
    out: Mutex<Box<dyn Write + Send>>,
    fd: Option<RawFd>,
    on_error: Box<dyn Fn(String) + Send + Sync>,
}

impl Writer {
    /// A writer of `out`; `on_error` is called once, with the first write error. The
    /// writer's thread is started by [`Writer::spawn`].
    pub(crate) fn new<W: Write + Send + 'static>(out: W, on_error: Box<dyn Fn(String) + Send + Sync>) -> Writer {
        let any: Box<dyn Any + Send> = Box::new(out);
        let (out, fd): (Box<dyn Write + Send>, Option<RawFd>) = match any.downcast::<std::fs::File>() {
            Ok(f) => {
                let fd = f.as_raw_fd();
                (f, Some(fd))
            }
            Err(any) => (Box::new(*any.downcast::<W>().expect("the output's own type")), None),
        };
        Writer {
            st: Mutex::new(State::default()),
            work: Condvar::new(),
            done: Condvar::new(),
            out: Mutex::new(out),
            fd,
            on_error,
        }
    }

    /// Starts the thread that writes what was queued.
    pub(crate) fn spawn(w: std::sync::Arc<Writer>) {
        std::thread::spawn(move || w.run());
    }

    fn run(&self) {
        let mut st = self.st.lock().unwrap();
        loop {
            if st.failed || (st.closing && !st.writing && st.queue.is_empty()) {
                break;
            }
            if st.writing || st.queue.is_empty() {
                st.idle = true;
                st = self.work.wait(st).unwrap();
                st.idle = false;
                continue;
            }
            let spare = std::mem::take(&mut st.spare);
            let batch = std::mem::replace(&mut st.queue, spare);
            st.writing = true;
            drop(st);
            let res = self.out.lock().unwrap().write_all(&batch);
            st = self.st.lock().unwrap();
            st.writing = false;
            if let Err(e) = res {
                self.fail(&mut st, e);
                break;
            }
            if batch.capacity() <= KEEP_CAP {
                let mut b = batch;
                b.clear();
                st.spare = b;
            }
        }
        st.finished = true;
        self.done.notify_all();
    }

    fn fail(&self, st: &mut State, e: std::io::Error) {
        if !st.failed {
            st.failed = true;
            st.queue = Vec::new();
            (self.on_error)(e.to_string());
        }
        self.done.notify_all();
    }

    /// Ends a turn: wakes the writer thread if something was queued meanwhile.
    fn end_turn(&self, st: &mut State) {
        st.writing = false;
        if st.idle && (!st.queue.is_empty() || st.closing) {
            self.work.notify_one();
        }
    }

    /// Queues `frames` (whole frames) behind what is queued, for the writer thread.
    fn enqueue(&self, st: &mut State, frames: &[u8]) {
        st.queue.extend_from_slice(frames);
        if st.idle && !st.writing {
            self.work.notify_one();
        }
    }

    /// A handler's reply: written by the calling thread when nobody is writing, else
    /// queued. After a failure or close replies are dropped: the connection is over.
    pub(crate) fn reply(&self, frames: &[u8]) {
        let mut st = self.st.lock().unwrap();
        if st.failed || st.finished {
            return;
        }
        if st.writing || !st.queue.is_empty() {
            self.enqueue(&mut st, frames);
            return;
        }
        st.writing = true;
        drop(st);
        let res = self.out.lock().unwrap().write_all(frames);
        let mut st = self.st.lock().unwrap();
        if let Err(e) = res {
            st.writing = false;
            self.fail(&mut st, e);
            self.work.notify_one();
            return;
        }
        self.end_turn(&mut st);
    }

    /// The reader thread's batch of replies: written at once as far as a write cannot
    /// block, the rest queued. Empties `frames`.
    pub(crate) fn reader_batch(&self, frames: &mut Vec<u8>) {
        if frames.is_empty() {
            return;
        }
        let mut st = self.st.lock().unwrap();
        if st.failed || st.finished {
            frames.clear();
            return;
        }
        let direct = match self.fd {
            Some(fd) => !st.writing && st.queue.is_empty() && writable(fd),
            None => false,
        };
        if !direct {
            self.enqueue(&mut st, frames);
            frames.clear();
            return;
        }
        st.writing = true;
        drop(st);
        let n = frames.len().min(PIPE_ATOMIC);
        let res = self.out.lock().unwrap().write(&frames[..n]);
        let mut st = self.st.lock().unwrap();
        let written = match res {
            Ok(w) => w,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted || e.kind() == std::io::ErrorKind::WouldBlock => 0,
            Err(e) => {
                st.writing = false;
                self.fail(&mut st, e);
                self.work.notify_one();
                frames.clear();
                return;
            }
        };
        if written < frames.len() {
            // Nothing was queued behind the turn: the rest goes first.
            let later = std::mem::take(&mut st.queue);
            st.queue.extend_from_slice(&frames[written..]);
            st.queue.extend_from_slice(&later);
        }
        frames.clear();
        self.end_turn(&mut st);
    }

    /// Writes what is queued, then stops; returns whether that finished within `wait`.
    pub(crate) fn close(&self, wait: Duration) -> bool {
        let deadline = Instant::now() + wait;
        let mut st = self.st.lock().unwrap();
        st.closing = true;
        self.work.notify_one();
        while !st.finished && !st.failed {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            st = self.done.wait_timeout(st, left).unwrap().0;
        }
        !st.failed
    }
}

/// Whether `poll` reports `fd` writable now.
fn writable(fd: RawFd) -> bool {
    let mut p = libc::pollfd { fd, events: libc::POLLOUT, revents: 0 };
    // SAFETY: one pollfd, no timeout.
    let n = unsafe { libc::poll(&mut p, 1, 0) };
    n == 1 && p.revents & libc::POLLOUT != 0 && p.revents & (libc::POLLERR | libc::POLLHUP) == 0
}
