//! The adapter of the stream recipe's tests, service test.streams version 1, the same
//! in every SDK and in the Go end-to-end test of streams (e2e/sdk_streams_test.go):
//!
//! - test.streams.put (an upload) reads the stream and keeps it under its name; it
//!   returns {"bytes", "sha256"}. fail_after N fails (code failed) once N bytes were
//!   read; stall stops reading after the first read until the stream is given up.
//! - test.streams.get (a download) writes the stream kept under name; unknown, it fails
//!   with invalid. fail_after N fails (code failed) after writing N bytes; hold writes
//!   nothing until the stream is given up.
//! - test.streams.stats returns {"uploads", "downloads"} (the streams under way) and
//!   "aborted" (the handlers that saw their stream given up), once "aborted" is at least
//!   its param wait_aborted (waiting at most 10 s: a handler sees the end of its stream
//!   after the reply that ended it).

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use adapterkit::{Adapter, CallError, Code, RequestContext, Service};
use serde::{Deserialize, Serialize};
use tokio::sync::Notify;

use crate::recipe::{Cancel, Download, Reader, Upload, Writer};
use crate::sha256::Sha256;

#[derive(Deserialize, Default)]
pub struct PutParams {
    pub name: String,
    pub fail_after: i64,
    pub stall: bool,
}

#[derive(Serialize)]
pub struct Digest {
    pub bytes: i64,
    pub sha256: String,
}

#[derive(Deserialize, Default)]
pub struct GetParams {
    pub name: String,
    pub fail_after: i64,
    pub hold: bool,
}

#[derive(Deserialize)]
struct StatsParams {
    wait_aborted: i64,
}

/// The handlers that saw their stream given up.
#[derive(Default)]
struct Aborted {
    n: AtomicI64,
    change: Notify,
}

impl Aborted {
    fn add(&self) {
        self.n.fetch_add(1, Ordering::SeqCst);
        self.change.notify_waiters();
    }

    /// The count, once at least n (or after 10 s).
    async fn at_least(&self, n: i64) -> i64 {
        let wait = async {
            loop {
                let change = self.change.notified();
                if self.n.load(Ordering::SeqCst) >= n {
                    return;
                }
                change.await;
            }
        };
        let _ = tokio::time::timeout(Duration::from_secs(10), wait).await;
        self.n.load(Ordering::SeqCst)
    }
}

#[derive(Serialize)]
struct Stats {
    uploads: usize,
    downloads: usize,
    aborted: i64,
}

/// The test.streams adapter.
pub fn adapter() -> Adapter {
    let blobs: Arc<Mutex<HashMap<String, Arc<Vec<u8>>>>> = Arc::default();
    let aborted = Arc::new(Aborted::default());

    let (kept, seen) = (blobs.clone(), aborted.clone());
    let put = Upload::new(move |p: PutParams, mut r: Reader, c: Cancel| {
        let (kept, seen) = (kept.clone(), seen.clone());
        async move {
            let mut h = Sha256::new();
            let mut all = Vec::new();
            let mut buf = vec![0u8; 64 << 10];
            loop {
                let k = r.read(&mut buf).await?;
                h.update(&buf[..k]);
                all.extend_from_slice(&buf[..k]);
                if p.fail_after > 0 && all.len() as i64 >= p.fail_after {
                    return Err(CallError::new(Code::Failed, format!("failing after {} bytes as asked", all.len())));
                }
                if p.stall {
                    let reason = c.canceled().await;
                    seen.add();
                    return Err(reason);
                }
                if k == 0 {
                    let bytes = all.len() as i64;
                    kept.lock().unwrap().insert(p.name, Arc::new(all));
                    return Ok(Digest { bytes, sha256: h.hex() });
                }
            }
        }
    });

    let (kept, seen) = (blobs, aborted.clone());
    let get = Download::new(move |p: GetParams, w: Writer, c: Cancel| {
        let (kept, seen) = (kept.clone(), seen.clone());
        async move {
            if p.hold {
                let reason = c.canceled().await;
                seen.add();
                return Err(reason);
            }
            let blob = kept.lock().unwrap().get(&p.name).cloned();
            let blob = blob.ok_or_else(|| CallError::new(Code::Invalid, format!("no blob \"{}\"", p.name)))?;
            let end = if p.fail_after > 0 { blob.len().min(p.fail_after as usize) } else { blob.len() };
            for part in blob[..end].chunks(256 << 10) {
                w.write(part).await?;
            }
            if end < blob.len() {
                return Err(CallError::new(Code::Failed, format!("failing after {} bytes as asked", end)));
            }
            Ok(())
        }
    });

    let mut svc = Service::new("test.streams", 1);
    put.register(&mut svc, "test.streams.put");
    get.register(&mut svc, "test.streams.get");
    svc.method("test.streams.stats", move |p: StatsParams, _c: RequestContext| {
        let (put, get, aborted) = (put.clone(), get.clone(), aborted.clone());
        async move {
            let aborted = aborted.at_least(p.wait_aborted).await;
            Ok(Stats { uploads: put.len(), downloads: get.len(), aborted })
        }
    });
    Adapter::new(vec![svc])
}
