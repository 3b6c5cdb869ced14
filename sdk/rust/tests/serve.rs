//! The engine over real pipes, in process; each test names the rules it checks.

use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::io::FromRawFd;
use std::time::{Duration, Instant};

use adapterkit::{
    cap_message, normalize_code, serve, validate_catalog, Adapter, CallError, CatalogService, Level, Logger, RawJson,
    RequestContext, ServeError, Service,
};
use serde::Deserialize;
use serde_json::Value;

fn pipe() -> (File, File) {
    let mut fds = [0; 2];
    // SAFETY: pipe fills the array; each descriptor is owned by one File.
    unsafe {
        assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
        (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1]))
    }
}

struct Host {
    to: Option<File>,
    from: File,
    done: std::sync::mpsc::Receiver<Result<(), ServeError>>,
}

impl Host {
    fn start(adapter: Adapter) -> Host {
        let (in_r, in_w) = pipe();
        let (out_r, out_w) = pipe();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
            let _ = tx.send(rt.block_on(serve(adapter, in_r, out_w)));
            rt.shutdown_background();
        });
        Host { to: Some(in_w), from: out_r, done: rx }
    }

    fn send_raw(&mut self, b: &[u8]) {
        self.to.as_mut().unwrap().write_all(b).unwrap();
    }

    fn send(&mut self, payload: &str) {
        let mut b = (payload.len() as u32).to_be_bytes().to_vec();
        b.extend_from_slice(payload.as_bytes());
        self.send_raw(&b);
    }

    fn request(&mut self, id: u64, method: &str, params: &str) {
        self.send(&format!(r#"{{"type":"request","v":1,"id":{},"method":"{}","params":{}}}"#, id, method, params));
    }

    fn cancel(&mut self, id: u64) {
        self.send(&format!(r#"{{"type":"cancel","v":1,"id":{}}}"#, id));
    }

    fn recv(&mut self) -> Value {
        let mut h = [0u8; 4];
        self.from.read_exact(&mut h).expect("a reply");
        let mut b = vec![0u8; u32::from_be_bytes(h) as usize];
        self.from.read_exact(&mut b).unwrap();
        serde_json::from_slice(&b).unwrap()
    }

    fn initialize(&mut self, id: u64, configuration: &str) -> Value {
        self.request(id, "system.adapter.initialize", &format!(r#"{{"protocol":1,"configuration":{}}}"#, configuration));
        self.recv()
    }

    /// Closes stdin and returns how serve ended and how long that took.
    fn close(&mut self) -> (Result<(), ServeError>, Duration) {
        self.to = None;
        let t = Instant::now();
        let r = self.done.recv_timeout(Duration::from_secs(30)).expect("serve returned");
        (r, t.elapsed())
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
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
    Adapter::new(vec![svc]).logger(Logger::new("adapter", Level::Error)).on_initialize(|c: Config, _ctx: RequestContext| async move {
        if c.greeting == "no" {
            return Err(CallError::new("denied", "refused by configuration"));
        }
        Ok(())
    })
}

#[test]
fn catalog_rules() {
    let s = |id: &str, v: i64, m: &[&str]| CatalogService { id: id.into(), version: v, methods: m.iter().map(|x| x.to_string()).collect() };
    assert_eq!(validate_catalog(&[s("a.b", 1, &["a.b.c"]), s("a.c", 2, &["a.c.d.e"])]), None);
    for (name, bad) in [
        ("R20", vec![s("ab", 1, &["ab.c"])]),
        ("R20 empty segment", vec![s("a..b", 1, &["a..b.c"])]),
        ("R21", vec![s("systemd.x", 1, &["systemd.x.y"])]),
        ("R22", vec![s("a.b", 0, &["a.b.c"])]),
        ("R23", vec![s("a.b", 1, &[])]),
        ("R24", vec![s("conf.echo", 1, &["conf.echoX"])]),
        ("R25 service", vec![s("a.b", 1, &["a.b.c"]), s("a.b", 2, &["a.b.d"])]),
        ("R25 method", vec![s("a.b", 1, &["a.b.c", "a.b.c"])]),
    ] {
        assert!(validate_catalog(&bad).is_some(), "{}", name);
    }
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
    assert_eq!(ts.split('.').nth(1).unwrap().len() >= 7, true, "{}", ts);
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
    assert!(m["message"].as_str().unwrap().starts_with("invalid params: "));
    h.request(8, "test.fixture.panic", "{}");
    assert_eq!(h.recv()["code"], "failed");
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
    h.request(2, "test.fixture.greet", r#"{"name":"x"}"#);
    assert_eq!(h.recv()["code"], "invalid");
    let mut h = Host::start(fixture());
    let m = h.initialize(1, r#"{"greeting":"no"}"#);
    assert_eq!((m["code"].as_str(), m["message"].as_str()), (Some("denied"), Some("refused by configuration")));
}

#[test]
fn host_violations() {
    for (name, data) in [
        ("zero-length", vec![0u8, 0, 0, 0]),
        ("oversized", vec![0, 0x40, 0, 1]),
        ("text", b"hello there\n".to_vec()),
    ] {
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
