//! What the SDK tells through the `log` facade, and what it answers when a handler
//! panics. This test binary owns the process's `log` logger: a recorder.

mod common;

use std::sync::Mutex;
use std::time::Duration;

use adapterkit::{Adapter, CallError, Code, Level, Logger, RequestContext, Service};
use common::Host;
use serde_json::Value;

/// Every record logged: (level, target, message).
static RECORDS: Mutex<Vec<(log::Level, String, String)>> = Mutex::new(Vec::new());

/// The records so far (a test that failed holding the lock does not stop the others).
fn records() -> std::sync::MutexGuard<'static, Vec<(log::Level, String, String)>> {
    RECORDS.lock().unwrap_or_else(|e| e.into_inner())
}

struct Recorder;

impl log::Log for Recorder {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }
    fn log(&self, r: &log::Record<'_>) {
        records().push((r.level(), r.target().to_string(), r.args().to_string()));
    }
    fn flush(&self) {}
}

fn install() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        log::set_logger(&Recorder).unwrap();
        log::set_max_level(log::LevelFilter::Trace);
        // The default hook prints each panic to stderr; these are on purpose.
        std::panic::set_hook(Box::new(|_| {}));
    });
}

/// The SDK's records (target "adapterkit") that contain `needle`.
fn sdk_records(needle: &str) -> Vec<(log::Level, String)> {
    records()
        .iter()
        .filter(|(_, t, m)| t == "adapterkit" && m.contains(needle))
        .map(|(l, _, m)| (*l, m.clone()))
        .collect()
}

fn panicking() -> Adapter {
    let mut svc = Service::new("test.panics", 1);
    svc.method("test.panics.str", |_p: Value, _c: RequestContext| async move {
        if true {
            panic!("boom");
        }
        Ok(())
    });
    svc.method("test.panics.string", |p: Value, _c: RequestContext| async move {
        if true {
            panic!("bad seq {}", p["seq"]);
        }
        Ok(())
    });
    svc.method("test.panics.other", |_p: Value, _c: RequestContext| async move {
        if true {
            std::panic::panic_any(42_i32);
        }
        Ok(())
    });
    svc.method("test.panics.later", |_p: Value, _c: RequestContext| async move {
        tokio::time::sleep(Duration::from_millis(1)).await;
        if true {
            panic!("after a wait");
        }
        Ok(())
    });
    svc.method("test.panics.refuse", |_p: Value, _c: RequestContext| async move {
        Err::<(), _>(CallError::new(Code::Denied, "no"))
    });
    Adapter::new(vec![svc])
}

#[test]
fn a_panic_answers_failed_with_its_message_and_logs_the_method() {
    install();
    let mut h = Host::start(panicking());
    h.initialize(1, "{}");
    let cases: [(u64, &str, &str, &str); 4] = [
        (2, "test.panics.str", "{}", "handler panicked: boom"),
        (3, "test.panics.string", r#"{"seq":7}"#, "handler panicked: bad seq 7"),
        (4, "test.panics.other", "{}", "handler panicked"),
        // Polled to the end by its tokio task, not on the reader thread.
        (5, "test.panics.later", "{}", "handler panicked: after a wait"),
    ];
    for (id, method, params, want) in cases {
        h.request(id, method, params);
        let m = h.recv();
        assert_eq!(m["id"].as_u64(), Some(id));
        assert_eq!((m["code"].as_str(), m["message"].as_str()), (Some("failed"), Some(want)), "{}", method);
        let logged = sdk_records(&format!("(method {}, request {})", method, id));
        assert_eq!(logged.len(), 1, "{}: {:?}", method, logged);
        assert_eq!(logged[0], (log::Level::Error, format!("{} (method {}, request {})", want, method, id)));
    }
    h.request(6, "test.panics.refuse", "{}");
    let m = h.recv();
    assert_eq!((m["code"].as_str(), m["message"].as_str()), (Some("denied"), Some("no")));
    assert!(h.close().0.is_ok());
}

#[test]
fn a_refused_initialize_is_logged_as_a_warning() {
    install();
    let adapter = panicking().on_initialize(|_c: Value, _ctx: RequestContext| async move {
        Err(CallError::new(Code::Denied, "refused by a logging test"))
    });
    let mut h = Host::start(adapter);
    assert_eq!(h.initialize(1, "{}")["code"], "denied");
    let logged = sdk_records("refused by a logging test");
    assert_eq!(logged, vec![(log::Level::Warn, "initialize refused: denied: refused by a logging test".to_string())]);
    let _ = h.close();
}

#[test]
fn the_hclog_logger_is_a_log_backend() {
    use log::Log;
    let l = Logger::new("adapter", Level::Warn);
    assert!(Log::enabled(&l, &log::Metadata::builder().level(log::Level::Error).build()));
    assert!(!Log::enabled(&l, &log::Metadata::builder().level(log::Level::Info).build()));
    // Installing it fails here, changing nothing: this binary installed the recorder.
    install();
    assert!(l.install().is_err());
    log::info!(target: "elsewhere", "still recorded");
    assert!(records().iter().any(|(_, t, m)| t == "elsewhere" && m == "still recorded"));
}

#[test]
fn codes_are_an_enum_and_strings() {
    for c in adapterkit::CODES {
        assert_eq!(Code::parse(c).map(Code::as_str), Some(c));
    }
    assert_eq!(Code::parse("Busy"), None);
    assert_eq!(CallError::new(Code::Busy, "x").code, "busy");
    assert_eq!(CallError::new("nope", "x").kind(), Code::Failed);
    assert_eq!(Code::Deadline.to_string(), "deadline");
}
