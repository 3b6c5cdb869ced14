//! A thread that spins while one caller's requests follow each other closely, as Go's
//! runtime spins the threads of its idle processors.
//!
//! The kernel wakes a thread on an idle CPU where it can; on a virtual machine an idle
//! vCPU is halted, and waking it goes through the hypervisor. On the two-vCPU machines the
//! SDK is measured on, that makes a plain Rust ping-pong over pipes 36–38 µs where Go's
//! takes 7 (and Go's falls to Rust's level with `GOMAXPROCS=1`). The spinner keeps a CPU
//! running for [`WINDOW`] after each read while reads bring about one frame each, then parks until
//! the next read. It runs at `SCHED_IDLE` and yields, so any other task of the machine takes
//! its CPU first, and it stops while reads bring several frames on average (the host keeps
//! the pipe full: the reader seldom waits and the CPUs are busy anyway). Measured with
//! `make bench-sdk` there: the echo's round trip 31–33 → 8–9 µs (Go's 10), 32 callers
//! unchanged, and with two busy loops beside it nothing worse. Its cost is CPU time: up to
//! a core while requests come less than [`WINDOW`] apart, none on a quiet connection.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long the spinner spins after a read, while reads bring about one frame each.
pub(crate) const WINDOW: Duration = Duration::from_micros(50);

struct State {
    start: Instant,
    last: AtomicU64, // µs since `start` of the last read that armed the spinner; 0: none
    parked: AtomicBool,
    stopped: AtomicBool,
    wakes: AtomicU64, // times the thread left a park
}

impl State {
    /// µs since `start`, from 1: 0 in `last` means no read armed the spinner.
    fn now(&self) -> u64 {
        self.start.elapsed().as_micros() as u64 + 1
    }

    fn quiet(&self) -> bool {
        self.now().saturating_sub(self.last.load(Ordering::SeqCst)) >= WINDOW.as_micros() as u64
    }
}

/// Frames per read, in sixteenths, above which the host is taken to keep the pipe full.
const BUSY_AVG: u32 = 24;

/// One connection's spinner; dropping it (or [`Spinner::stop`]) ends its thread.
pub(crate) struct Spinner {
    st: Arc<State>,
    avg: AtomicU32, // frames per read, moving average in sixteenths; the reader's alone
    thread: Option<JoinHandle<()>>,
}

impl Spinner {
    /// Starts the spinner's thread, parked until the first [`Spinner::read`].
    pub(crate) fn start() -> std::io::Result<Spinner> {
        let st = Arc::new(State {
            start: Instant::now(),
            last: AtomicU64::new(0),
            parked: AtomicBool::new(false),
            stopped: AtomicBool::new(false),
            wakes: AtomicU64::new(0),
        });
        let run = st.clone();
        let thread = std::thread::Builder::new().name("adapterkit-spin".into()).spawn(move || spin(&run))?;
        Ok(Spinner { st, avg: AtomicU32::new(16), thread: Some(thread) })
    }

    /// Says a read completed `frames` frames. While reads bring about one frame each (a
    /// caller waiting for each reply, or parts of a large frame), the spinner spins for
    /// [`WINDOW`] from now. When they bring more on average (the host keeps the pipe full,
    /// so the reader seldom waits and the CPUs are busy anyway) it stops, leaving the CPUs
    /// their time. Cheap; a futex wake only when the spinner is parked.
    pub(crate) fn read(&self, frames: usize) {
        // Frames per read, a moving average in sixteenths (weight 1/8 for the newest).
        let avg = self.avg.load(Ordering::Relaxed);
        let avg = avg - avg / 8 + 2 * frames.min(64) as u32;
        self.avg.store(avg, Ordering::Relaxed);
        if avg > BUSY_AVG {
            self.st.last.store(0, Ordering::SeqCst);
            return;
        }
        self.st.last.store(self.st.now(), Ordering::SeqCst);
        if self.st.parked.load(Ordering::SeqCst) {
            if let Some(t) = &self.thread {
                t.thread().unpark();
            }
        }
    }

    /// Ends the thread and waits for it (at once: it checks between spins and parks).
    pub(crate) fn stop(&mut self) {
        self.st.stopped.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }

    #[cfg(test)]
    fn parked(&self) -> bool {
        self.st.parked.load(Ordering::SeqCst)
    }

    #[cfg(test)]
    fn wakes(&self) -> u64 {
        self.st.wakes.load(Ordering::Relaxed)
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.stop();
    }
}

fn spin(st: &State) {
    // SCHED_IDLE: the spinner runs only on a CPU nothing else wants, and any task woken
    // there preempts it at once. Failing to set it leaves a normal thread that yields.
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: plain system call on this thread (pid 0) with a valid parameter block.
    unsafe {
        libc::sched_setscheduler(0, libc::SCHED_IDLE, &param);
    }
    while !st.stopped.load(Ordering::SeqCst) {
        if !st.quiet() {
            std::thread::yield_now();
            continue;
        }
        st.parked.store(true, Ordering::SeqCst);
        // A read after `parked` is set unparks; one before it is seen by `quiet`.
        if st.quiet() && !st.stopped.load(Ordering::SeqCst) {
            std::thread::park();
            st.wakes.fetch_add(1, Ordering::Relaxed);
        }
        st.parked.store(false, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wait_for(what: &str, cond: impl Fn() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !cond() {
            assert!(Instant::now() < deadline, "{}", what);
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn parks_when_quiet_and_spins_after_a_touch() {
        let mut s = Spinner::start().unwrap();
        wait_for("the spinner never parked", || s.parked());
        let before = s.wakes();
        s.read(1);
        wait_for("a touch did not wake the parked spinner", || s.wakes() > before);
        wait_for("the spinner did not park again once quiet", || s.parked());
        s.stop();
    }

    #[test]
    fn reads_of_several_frames_leave_it_unarmed() {
        let mut s = Spinner::start().unwrap();
        s.read(1);
        assert_ne!(s.st.last.load(Ordering::SeqCst), 0, "a one-frame read arms it");
        s.read(8);
        assert_eq!(s.st.last.load(Ordering::SeqCst), 0, "a full pipe disarms it at once");
        for _ in 0..3 {
            s.read(1);
        }
        assert_eq!(s.st.last.load(Ordering::SeqCst), 0, "the average stays high for a few reads");
        for _ in 0..20 {
            s.read(1);
        }
        assert_ne!(s.st.last.load(Ordering::SeqCst), 0, "one frame per read again arms it");
        s.stop();
    }

    #[test]
    fn stop_ends_the_thread_while_spinning_or_parked() {
        for touch in [false, true] {
            let mut s = Spinner::start().unwrap();
            if touch {
                s.read(1);
            }
            s.stop();
            assert!(s.thread.is_none());
            s.stop(); // a second stop is a no-op
        }
    }
}
