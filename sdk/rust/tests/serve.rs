//! The engine over real pipes, in process; each test names the rules it checks.

mod common;

use std::time::Duration;

use common::Host;

use adapterkit::{
    cap_message, normalize_code, Adapter, CallError, Level, Logger, Method, RawJson, RequestContext, ServeError,
    Service,
};
use serde::Deserialize;
use serde_json::Value;

#[derive(Deserialize)]
struct Config {
    greeting: String,
}

#[derive(Deserialize)]
struct Greet {
    name: String,
}

fn fixture() -> Adapter {
    let mut svc = Service::new("test.fixture", 1);
    svc.method("test.fixture.echo", |p: Box<RawJson>, _c: RequestContext| async move { Ok(p) });
    svc.method("test.fixture.greet", |p: Greet, _c: RequestContext| async move { Ok(format!("hello, {}", p.name)) });
    svc.method("test.fixture.wait", |_p: Value, c: RequestContext| async move {
        tokio::select! {
            _ = c.canceled() => Err(CallError::new("aborted", format!("Wait {}", c.reason().unwrap_or("?")))),
            _ = tokio::time::sleep(Duration::from_secs(30)) => Ok(Value::Null),
        }
    });
    svc.method("test.fixture.stubborn", |_p: Value, c: RequestContext| async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        Ok(c.is_canceled())
    });
    svc.method("test.fixture.forever", |_p: Value, _c: RequestContext| async move {
        std::future::pending::<()>().await;
        Ok(())
    });
    svc.method("test.fixture.panic", |_p: Value, _c: RequestContext| async move {
        if true {
            panic!("boom");
        }
        Ok(())
    });
    Adapter::new(vec![svc]).logger(Logger::new("adapter", Level::Error)).on_initialize(
        |c: Config, _ctx: RequestContext| async move {
            if c.greeting == "no" {
                return Err(CallError::new("denied", "refused by configuration"));
            }
            Ok(())
        },
    )
}

/// A method descriptor as `adapterctl contract gen -lang rust` writes one.
const GREET_METHOD: Method<Greet, String> = Method::new("test.typed.greet");

/// `Service::implement` registers a typed handler under the descriptor's name: its params
/// decode into `P` with the SDK's rules (a refusal answers `invalid`, R27's field naming),
/// and its `R` is the result.
#[test]
fn implement_serves_a_method_descriptor() {
    assert_eq!(GREET_METHOD.name(), "test.typed.greet");
    assert_eq!(format!("{:?}", GREET_METHOD), r#"Method("test.typed.greet")"#);
    let mut svc = Service::new("test.typed", 1);
    svc.implement(GREET_METHOD, |p, _c| async move { Ok(format!("hello, {}", p.name)) });
    let mut h = Host::start(Adapter::new(vec![svc]).logger(Logger::new("adapter", Level::Error)));
    let m = h.initialize(1, "{}");
    assert_eq!(m["value"]["services"][0]["methods"][0], "test.typed.greet");
    h.request(2, "test.typed.greet", r#"{"name":"typed"}"#);
    assert_eq!(h.recv()["value"], "hello, typed");
    h.request(3, "test.typed.greet", r#"{"name":true}"#);
    let m = h.recv();
    assert_eq!(m["code"], "invalid");
    assert_eq!(m["message"], r#"params: field "name": expected a string, got true"#);
    let (r, _) = h.close();
    assert!(r.is_ok(), "{:?}", r);
}

#[test]
fn duplicate_method_is_an_invalid_adapter() {
    let mut svc = Service::new("example.x", 1);
    svc.method("example.x.y", |p: Value, _c: RequestContext| async move { Ok(p) });
    svc.method("example.x.y", |p: Value, _c: RequestContext| async move { Ok(p) });
    assert!(matches!(Adapter::new(vec![svc]).catalog(), Err(ServeError::InvalidAdapter(_))));
}

#[test]
fn messages_and_codes() {
    assert_eq!(cap_message(&"x".repeat(5000)), "x".repeat(4096));
    assert_eq!(cap_message(&"€".repeat(2000)), "€".repeat(1365));
    assert_eq!(normalize_code("busy"), "busy");
    assert_eq!(normalize_code("Busy"), "failed");
}

#[test]
fn logger_lines() {
    let l = Logger::new("adapter", Level::Info).named("probe").with("probe", "inlet");
    let rec: Value = serde_json::from_str(&l.format(Level::Warn, "slow", &[("ms", 12.into())])).unwrap();
    assert_eq!(rec["@level"], "warn");
    assert_eq!(rec["@message"], "slow");
    assert_eq!(rec["@module"], "adapter.probe");
    assert_eq!(rec["probe"], "inlet");
    assert_eq!(rec["ms"], 12);
    let ts = rec["@timestamp"].as_str().unwrap();
    assert_eq!(&ts[10..11], "T");
    assert!(ts.split('.').nth(1).unwrap().len() >= 7, "{}", ts);
    assert!(!l.enabled(Level::Debug));
}

#[test]
fn protocol_exchange() {
    let mut h = Host::start(fixture());
    h.request(1, "test.fixture.echo", "{}"); // R27
    assert_eq!(h.recv()["code"], "invalid");
    let m = h.initialize(2, r#"{"greeting":"hi"}"#);
    assert_eq!(m["value"]["services"][0]["id"], "test.fixture");
    assert_eq!(h.initialize(3, "{}")["code"], "invalid"); // A7
    h.send(r#"{"type":"request","v":1,"id":4,"method":"test.fixture.echo","params":{},"x":1}"#); // R12
    assert_eq!(h.recv()["code"], "invalid");
    h.request(5, "test.fixture.nope", "{}"); // R42
    let m = h.recv();
    assert_eq!((m["code"].as_str(), m["message"].as_str()), (Some("unavailable"), Some("Unknown method")));
    h.cancel(99); // R37: no reply
    h.request(6, "test.fixture.echo", r#"{"n":18446744073709551615,"f":0.1}"#);
    let m = h.recv();
    assert_eq!((m["id"].as_u64(), m["value"]["n"].as_u64()), (Some(6), Some(u64::MAX)));
    h.request(7, "test.fixture.greet", r#"{"name":1}"#);
    let m = h.recv();
    assert_eq!(m["code"], "invalid");
    assert_eq!(m["message"], r#"params: field "name": expected a string, got the number 1"#);
    h.request(8, "test.fixture.panic", "{}");
    let m = h.recv();
    assert_eq!((m["code"].as_str(), m["message"].as_str()), (Some("failed"), Some("handler panicked: boom")));
    h.request(9, "test.fixture.wait", "{}");
    h.cancel(9);
    let m = h.recv();
    assert_eq!((m["code"].as_str(), m["message"].as_str()), (Some("aborted"), Some("Wait canceled by the host")));
    // R40: 32 in flight; a cancelled handler keeps its slot until it returns (R38).
    for i in 0..32 {
        h.request(100 + i, "test.fixture.stubborn", "{}");
        h.cancel(100 + i);
    }
    h.request(132, "test.fixture.greet", r#"{"name":"x"}"#);
    let m = h.recv();
    assert_eq!((m["id"].as_u64(), m["code"].as_str()), (Some(132), Some("busy")));
    for _ in 0..32 {
        assert_eq!(h.recv()["value"], true);
    }
    // R49: EOF ends serve within 2 s, even with a handler that never returns.
    h.request(200, "test.fixture.forever", "{}");
    h.request(201, "test.fixture.greet", r#"{"name":"x"}"#);
    assert_eq!(h.recv()["value"], "hello, x");
    let (r, took) = h.close();
    assert!(r.is_ok(), "{:?}", r);
    assert!(took < Duration::from_secs(2), "{:?}", took);
}

#[test]
fn initialize_refusals() {
    let mut h = Host::start(fixture());
    let m = h.initialize(1, r#"{"greting":"typo"}"#);
    assert_eq!(m["code"], "invalid");
    assert_eq!(m["message"], r#"Invalid configuration: field "greting" is not known (known: greeting)"#);
    h.request(2, "test.fixture.greet", r#"{"name":"x"}"#);
    assert_eq!(h.recv()["code"], "invalid");
    let mut h = Host::start(fixture());
    let m = h.initialize(1, r#"{"greeting":"no"}"#);
    assert_eq!((m["code"].as_str(), m["message"].as_str()), (Some("denied"), Some("refused by configuration")));
}

#[test]
fn host_violations() {
    for (name, data) in
        [("zero-length", vec![0u8, 0, 0, 0]), ("oversized", vec![0, 0x40, 0, 1]), ("text", b"hello there\n".to_vec())]
    {
        let mut h = Host::start(fixture());
        h.initialize(1, r#"{"greeting":"hi"}"#);
        h.send_raw(&data);
        let r = h.done.recv_timeout(Duration::from_secs(30)).expect(name);
        assert!(matches!(r, Err(ServeError::Violation(_))), "{}: {:?}", name, r);
    }
    for (name, payload) in [
        ("not JSON", r#"{"type":"#),
        ("result from host", r#"{"type":"result","v":1,"id":2,"value":1}"#),
        ("id 2.0", r#"{"type":"request","v":1,"id":2.0,"method":"a.b","params":{}}"#),
        ("id 2^53", r#"{"type":"request","v":1,"id":9007199254740992,"method":"a.b","params":{}}"#),
        ("id not increasing", r#"{"type":"request","v":1,"id":1,"method":"a.b","params":{}}"#),
    ] {
        let mut h = Host::start(fixture());
        h.initialize(1, r#"{"greeting":"hi"}"#);
        h.send(payload);
        let r = h.done.recv_timeout(Duration::from_secs(30)).expect(name);
        assert!(matches!(r, Err(ServeError::Violation(_))), "{}: {:?}", name, r);
    }
}

/// An output the engine cannot poll: every reply goes through the writer thread.
struct Opaque(std::fs::File);

impl std::io::Write for Opaque {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.write(b)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// Sends `n` echo requests of about 1 KiB each from a thread of its own, without
/// reading a reply, and returns the thread: it ends once all are written, returning the
/// input (stdin stays open).
fn flood(h: &mut Host, first: u64, n: u64) -> std::thread::JoinHandle<std::fs::File> {
    use std::io::Write;
    let mut to = h.take_input();
    std::thread::spawn(move || {
        let pad = "p".repeat(1000);
        for id in first..first + n {
            let payload = format!(
                r#"{{"type":"request","v":1,"id":{},"method":"test.fixture.echo","params":{{"pad":"{}"}}}}"#,
                id, pad
            );
            let mut b = (payload.len() as u32).to_be_bytes().to_vec();
            b.extend_from_slice(payload.as_bytes());
            to.write_all(&b).unwrap();
        }
        to
    })
}

#[test]
fn stdin_is_read_while_the_host_reads_no_reply() {
    // R46: 2,000 replies of 1 KiB fill the output pipe many times over while the host is
    // still writing; the adapter reads on, so the host's writes complete before it
    // reads anything. Then every reply arrives, once (in any order, R34).
    for opaque in [false, true] {
        let mut h = if opaque { Host::start_with(fixture(), Opaque) } else { Host::start(fixture()) };
        h.initialize(1, r#"{"greeting":"hi"}"#);
        let writer = flood(&mut h, 2, 2000);
        let t = std::time::Instant::now();
        while !writer.is_finished() {
            assert!(t.elapsed() < Duration::from_secs(20), "opaque={}: the host's writes stalled", opaque);
            std::thread::sleep(Duration::from_millis(10));
        }
        let input = writer.join().unwrap();
        let mut seen = std::collections::HashSet::new();
        for _ in 0..2000 {
            let m = h.recv();
            assert_eq!(m["type"], "result", "{}", m);
            assert_eq!(m["value"]["pad"].as_str().map(str::len), Some(1000));
            assert!(seen.insert(m["id"].as_u64().unwrap()));
        }
        drop(input);
        let (r, _) = h.close();
        assert!(r.is_ok(), "opaque={}: {:?}", opaque, r);
    }
}
