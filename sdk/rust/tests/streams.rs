//! The stream recipe (streams/recipe.rs) in an adapter (streams/fixture.rs) served over
//! real pipes: the chunks and reads of docs/contracts.md "The chunks on the wire", sent as
//! registry.Upload and registry.Download send them, with chunk K+1 of an upload arriving
//! before chunk K.

mod common;
#[path = "streams/fixture.rs"]
mod fixture;
#[path = "streams/recipe.rs"]
mod recipe;
#[path = "streams/sha256.rs"]
mod sha256;

use std::collections::HashMap;
use std::future::Future;
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use adapterkit::{Adapter, Bytes, CallError, Code, Service};
use serde_json::{json, Value};

const PUT: &str = "test.streams.put";
const GET: &str = "test.streams.get";

/// The adapter, initialized, with its replies taken by id whatever their order.
struct Client {
    host: common::Host,
    id: u64,
    replies: HashMap<u64, Value>,
}

impl Client {
    fn start() -> Client {
        Client::serve(fixture::adapter())
    }

    fn serve(adapter: Adapter) -> Client {
        let mut host = common::Host::start(adapter);
        assert_eq!(host.initialize(1, "{}")["type"], "result");
        Client { host, id: 1, replies: HashMap::new() }
    }

    /// Sends a request and returns its id.
    fn send(&mut self, method: &str, params: &Value) -> u64 {
        self.id += 1;
        self.host.request(self.id, method, &params.to_string());
        self.id
    }

    /// The reply to the request id.
    fn reply(&mut self, id: u64) -> Value {
        while !self.replies.contains_key(&id) {
            let m = self.host.recv_within(Duration::from_secs(30));
            self.replies.insert(m["id"].as_u64().unwrap(), m);
        }
        self.replies.remove(&id).unwrap()
    }

    /// Calls method and returns the reply's value; fails on an error reply.
    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, &params);
        let m = self.reply(id);
        assert_eq!(m["type"], "result", "{}", m);
        m["value"].clone()
    }

    /// The adapter's stats, once at least aborted handlers saw their stream given up.
    fn stats(&mut self, aborted: i64) -> Value {
        self.call("test.streams.stats", json!({"wait_aborted": aborted}))
    }
}

/// Pseudo-random bytes (xorshift64*).
fn random(n: usize, mut seed: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(n + 8);
    while out.len() < n {
        seed ^= seed >> 12;
        seed ^= seed << 25;
        seed ^= seed >> 27;
        out.extend_from_slice(&seed.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes());
    }
    out.truncate(n);
    out
}

/// The chunks registry.Upload sends for blob: size bytes each, params with chunk 0.
fn chunks(stream: &str, blob: &[u8], size: usize, params: Value) -> Vec<Value> {
    let mut out = Vec::new();
    let mut off = 0;
    loop {
        let end = (off + size).min(blob.len());
        let mut c = json!({"stream": stream, "seq": out.len(), "offset": off, "data": Bytes(blob[off..end].to_vec())});
        if off == 0 {
            c["params"] = params.clone();
        }
        if off + size >= blob.len() {
            c["eof"] = json!(true);
            out.push(c);
            return out;
        }
        out.push(c);
        off += size;
    }
}

/// Uploads blob as a host does, two chunks in flight, but the later of each two sent
/// first; stops after the first pair with an error. The replies, by seq.
fn upload(c: &mut Client, stream: &str, blob: &[u8], size: usize, params: Value) -> Vec<Value> {
    let cs = chunks(stream, blob, size, params);
    let mut replies = Vec::new();
    for (i, pair) in cs.chunks(2).enumerate() {
        let ids: Vec<u64> = pair.iter().rev().map(|ch| c.send(PUT, ch)).collect();
        for id in ids.into_iter().rev() {
            replies.push(c.reply(id));
        }
        if replies.iter().any(|r| r["type"] == "error") {
            // As registry.Upload does.
            c.send(PUT, &json!({"stream": stream, "seq": 2 * i, "offset": 0, "data": "", "abort": "a chunk failed"}));
            break;
        }
    }
    replies
}

/// Reads the download of params to its end, as registry.Download does; the bytes, and
/// the error reply that ended it, if any.
fn download(c: &mut Client, stream: &str, params: Value, max_bytes: usize) -> (Vec<u8>, Option<Value>) {
    let mut out = Vec::new();
    let mut first = true;
    loop {
        let mut read = json!({"stream": stream, "max_bytes": max_bytes, "wait_ms": 1000});
        if first {
            read["params"] = params.clone();
            first = false;
        }
        let id = c.send(GET, &read);
        let m = c.reply(id);
        if m["type"] == "error" {
            return (out, Some(m));
        }
        let data: Bytes = serde_json::from_value(m["value"]["data"].clone()).unwrap();
        assert!(data.0.len() <= max_bytes, "{} bytes, asked for at most {}", data.0.len(), max_bytes);
        out.extend_from_slice(&data.0);
        if m["value"]["eof"] == true {
            return (out, None);
        }
    }
}

fn error_of(m: &Value) -> (&str, &str) {
    assert_eq!(m["type"], "error", "{}", m);
    (m["code"].as_str().unwrap(), m["message"].as_str().unwrap())
}

#[test]
fn sha256_vectors() {
    assert_eq!(sha256::hex(b""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    assert_eq!(sha256::hex(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    let long = b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    assert_eq!(sha256::hex(long), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

#[test]
fn upload_out_of_order_read_in_order_and_download_it_back() {
    let mut c = Client::start();
    let blob = random((8 << 20) + 123, 1);
    let want = json!({"result": {"bytes": blob.len(), "sha256": sha256::hex(&blob)}});
    // Chunks of 1 MiB: nine, each pair arriving in reverse; then the host's own size.
    for (name, size) in [("small", (1 << 20) - 1), ("large", recipe::chunk_bytes(PUT))] {
        let mut replies = upload(&mut c, &format!("s-{}", name), &blob, size, json!({"name": name}));
        let last = replies.pop().unwrap();
        assert_eq!(last["value"], want, "{}", name);
        assert!(replies.len() >= 2, "{} chunks", replies.len() + 1);
        for r in &replies {
            assert_eq!((&r["type"], &r["value"]), (&json!("result"), &json!({})), "{}", r);
        }
        let (back, err) = download(&mut c, &format!("d-{}", name), json!({"name": name}), size);
        assert_eq!(err, None);
        assert_eq!(sha256::hex(&back), sha256::hex(&blob), "{}", name);
    }
    assert_eq!(c.stats(0), json!({"uploads": 0, "downloads": 0, "aborted": 0}));
}

#[test]
fn upload_handler_error_is_the_reply_of_the_first_chunk_it_did_not_take() {
    let mut c = Client::start();
    let replies = upload(&mut c, "s1", &random(10 << 16, 2), 1 << 16, json!({"name": "f", "fail_after": 100000}));
    // The handler reads 64 KiB at a time: it took chunks 0 and 1, and failed.
    assert_eq!(replies[0]["value"], json!({}));
    assert_eq!(replies[1]["value"], json!({}));
    assert_eq!(error_of(&replies[2]), ("failed", "failing after 131072 bytes as asked"));
    assert_eq!(c.stats(0), json!({"uploads": 0, "downloads": 0, "aborted": 0}));
}

#[test]
fn upload_abort_and_cancelled_chunk_give_the_stream_up() {
    let mut c = Client::start();
    let cs = chunks("s1", &random(1000, 3), 100, json!({"name": "f", "stall": true}));
    assert_eq!(c.call(PUT, cs[0].clone()), json!({}));
    let waiting = c.send(PUT, &cs[1]); // the handler stalls: chunk 1 is never taken
    let abort = json!({"stream": "s1", "seq": 1, "offset": 100, "data": "", "abort": "the host gave up"});
    assert_eq!(c.call(PUT, abort), json!({}));
    let m = c.reply(waiting);
    assert_eq!(error_of(&m), ("aborted", "the host gave the upload up: the host gave up"));
    assert_eq!(c.stats(1), json!({"uploads": 0, "downloads": 0, "aborted": 1}));

    let ds = chunks("s2", &random(1000, 4), 100, json!({"name": "f", "stall": true}));
    assert_eq!(c.call(PUT, ds[0].clone()), json!({}));
    let id = c.send(PUT, &ds[1]);
    c.host.cancel(id);
    let m = c.reply(id);
    assert_eq!(error_of(&m), ("aborted", "Request canceled by the host"));
    assert_eq!(c.stats(2), json!({"uploads": 0, "downloads": 0, "aborted": 2}));
}

#[test]
fn download_handler_error_unknown_blob_and_held_stream_closed() {
    let mut c = Client::start();
    let blob = random(300000, 5);
    upload(&mut c, "s1", &blob, 1 << 16, json!({"name": "f"}));
    let (got, err) = download(&mut c, "d1", json!({"name": "f", "fail_after": 100000}), 1 << 16);
    assert!(got == blob[..100000]);
    assert_eq!(error_of(&err.unwrap()), ("failed", "failing after 100000 bytes as asked"));
    let (none, unknown) = download(&mut c, "d2", json!({"name": "nope"}), 1 << 16);
    assert!(none.is_empty());
    assert_eq!(error_of(&unknown.unwrap()), ("invalid", "no blob \"nope\""));
    // A read that finds nothing within wait_ms returns no data; close ends the stream.
    let held = json!({"stream": "d3", "max_bytes": 10, "wait_ms": 20, "params": {"name": "f", "hold": true}});
    assert_eq!(c.call(GET, held), json!({"data": "", "eof": false}));
    assert_eq!(c.stats(0), json!({"uploads": 0, "downloads": 1, "aborted": 0}));
    assert_eq!(
        c.call(GET, json!({"stream": "d3", "max_bytes": 1, "wait_ms": 0, "close": true})),
        json!({"data": "", "eof": true})
    );
    let bad = c.send(GET, &json!({"stream": "d4", "max_bytes": 0, "wait_ms": 0}));
    assert_eq!(error_of(&c.reply(bad)), ("invalid", "max_bytes must be above 0 and wait_ms at least 0"));
    assert_eq!(c.stats(1), json!({"uploads": 0, "downloads": 0, "aborted": 1}));
}

const LATE: &str = "test.late.put";

/// An adapter of one upload method, LATE, on the recipe with `handler`; the recipe, to
/// count its streams; and each stream's cancellation, which the recipe sets once the
/// stream's handler returned.
fn late_adapter<F, Fut>(handler: F) -> (Client, Arc<recipe::Upload<Value, i64>>, mpsc::Receiver<recipe::Cancel>)
where
    F: Fn(recipe::Reader) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<i64, CallError>> + Send + 'static,
{
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let up = recipe::Upload::new(move |_p: Value, r: recipe::Reader, c: recipe::Cancel| {
        let _ = tx.lock().unwrap().send(c);
        handler(r)
    });
    let mut svc = Service::new("test.late", 1);
    up.register(&mut svc, LATE);
    (Client::serve(Adapter::new(vec![svc])), up, rx)
}

/// Waits until the handler of the stream whose cancellation `started` gives returned.
fn returned(started: &mpsc::Receiver<recipe::Cancel>) {
    let cancel = started.recv_timeout(Duration::from_secs(30)).expect("the handler started");
    let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    rt.block_on(async { tokio::time::timeout(Duration::from_secs(30), cancel.canceled()).await })
        .expect("the handler returned");
}

/// Chunk seq of stream "s", carrying data.
fn late_chunk(seq: usize, data: &[u8], eof: bool) -> Value {
    let mut c = json!({"stream": "s", "seq": seq, "offset": seq, "data": Bytes(data.to_vec())});
    if seq == 0 {
        c["params"] = json!({});
    }
    if eof {
        c["eof"] = json!(true);
    }
    c
}

fn late_abort(seq: usize) -> Value {
    json!({"stream": "s", "seq": seq, "offset": seq, "data": "", "abort": "a chunk failed"})
}

fn boom() -> CallError {
    CallError::new(Code::Failed, "boom")
}

// The host has two chunks in flight and sends each from its own goroutine, so chunk 1's
// call may come after chunk 2's, and after the handler returned. A chunk is answered only
// on its turn (after every earlier chunk's call came), so the answer never leaves a late
// earlier chunk a second, empty stream that waits for a chunk 0 that will not come (the
// replies' timeout turns such a hang into a failure).
#[test]
fn upload_chunk_that_arrives_late_gets_the_streams_answer() {
    // The handler failed: chunk 2 comes before chunk 1.
    let (mut c, up, started) = late_adapter(|mut r| async move {
        r.read(&mut [0u8; 1]).await?;
        Err(boom())
    });
    assert_eq!(c.call(LATE, late_chunk(0, b"a", false)), json!({}));
    returned(&started);
    let later = c.send(LATE, &late_chunk(2, b"c", false));
    let earlier = c.send(LATE, &late_chunk(1, b"b", false));
    assert_eq!(error_of(&c.reply(earlier)), ("failed", "boom"));
    assert_eq!(error_of(&c.reply(later)), ("failed", "boom"));
    assert_eq!(c.call(LATE, late_abort(1)), json!({})); // as registry.Upload does
    assert_eq!(up.len(), 0);

    // The handler returned early: the last chunk comes before chunk 1.
    let (mut c, up, started) = late_adapter(|_r| async { Ok(42) });
    assert_eq!(c.call(LATE, late_chunk(0, b"a", false)), json!({}));
    returned(&started);
    let later = c.send(LATE, &late_chunk(2, b"c", true));
    let earlier = c.send(LATE, &late_chunk(1, b"b", false));
    assert_eq!(c.reply(earlier)["value"], json!({}));
    assert_eq!(c.reply(later)["value"], json!({"result": 42}));
    assert_eq!(up.len(), 0);
}

// Chunk 0 is answered with the handler's error before chunk 1, in flight, comes: chunk 1
// finds no stream and waits for a chunk 0 that will not come, until the host cancels its
// call (registry.Upload cancels the chunks after a failed one); then nothing is left.
#[test]
fn upload_chunk_that_arrives_after_the_failure_is_given_up_with_its_call() {
    let (mut c, up, _started) = late_adapter(|_r| async { Err(boom()) });
    let first = c.send(LATE, &late_chunk(0, b"a", false));
    assert_eq!(error_of(&c.reply(first)), ("failed", "boom"));
    let late = c.send(LATE, &late_chunk(1, b"b", false));
    c.host.cancel(late);
    let m = c.reply(late);
    assert_eq!(m["type"], "error", "{}", m);
    assert_eq!(c.call(LATE, late_abort(0)), json!({}));
    assert_eq!(up.len(), 0);
}

// A handler's error is the reply of the first chunk whose bytes it did not take, also
// when the handler dropped its reader before it returned (as every handler does when it
// returns): the chunk waits for the handler's outcome.
#[test]
fn upload_chunk_offered_to_a_dropped_reader_gets_the_handlers_error() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let open = gate.clone();
    let (dropped_tx, dropped) = mpsc::channel();
    let dropped_tx = Mutex::new(dropped_tx);
    let (mut c, up, _started) = late_adapter(move |mut r| {
        let (gate, dropped) = (gate.clone(), dropped_tx.lock().unwrap().clone());
        async move {
            r.read(&mut [0u8; 1]).await?;
            drop(r);
            let _ = dropped.send(());
            gate.notified().await;
            Err(boom())
        }
    });
    assert_eq!(c.call(LATE, late_chunk(0, b"a", false)), json!({}));
    dropped.recv_timeout(Duration::from_secs(30)).expect("the handler dropped its reader");
    let second = c.send(LATE, &late_chunk(1, b"b", false));
    // The SDK polls each call once as it reads it, in order: once this call (the abort of
    // no stream) is answered, chunk 1's call took every step it takes without the handler.
    let ping = json!({"stream": "none", "seq": 0, "offset": 0, "data": "", "abort": "ping"});
    assert_eq!(c.call(LATE, ping), json!({}));
    open.notify_one(); // the handler returns
    assert_eq!(error_of(&c.reply(second)), ("failed", "boom"));
    assert_eq!(c.call(LATE, late_abort(1)), json!({}));
    assert_eq!(up.len(), 0);
}
