//! rsecho: the echo test adapter of adapterkit written with the Rust SDK.
//!
//! Service example.echo version 1, exactly as the Go examples/echo:
//!
//! - `example.echo.echo` returns its params unchanged (raw JSON, not decoded);
//! - `example.echo.sleep` `{"ms": 0..30000}` returns `{"ms": N}` after N ms; a cancel ends
//!   the wait early with aborted "Sleep canceled";
//! - `example.echo.fail` `{"code", "message"}` answers that error (an unknown code is sent
//!   as failed, the message capped at 4096 bytes);
//! - `example.echo.big` `{"bytes": N}` returns a string of N 'x', N at most the frame limit
//!   less 1 KiB;
//! - `example.echo.record`, `example.echo.blob` and `example.echo.exact` decode their
//!   params into a struct and return it, encoded again: the typed path, for tests of
//!   exactness (every integer size, floats, a number's literal, base64 bytes, nested and
//!   optional structs, maps, vectors).
//!
//! With `ADAPTERKIT_ECHO_STRAY_STDOUT=1` in its environment, `example.echo.echo` also
//! prints to stdout (`println!` and a raw write to fd 1): tests use it to show that stray
//! output cannot reach the protocol stream.

use std::collections::BTreeMap;
use std::time::Duration;

use adapterkit::{Adapter, Bytes, CallError, Number, RawJson, RequestContext, Service, MAX_FRAME};
use serde::{Deserialize, Serialize};

const MAX_SLEEP_MS: i64 = 30_000;
const MAX_BIG: i64 = MAX_FRAME as i64 - 1024;

// No #[serde(deny_unknown_fields)]: the SDK refuses unknown members itself. #[serde(default)]
// makes a member left out its zero value, as in the Go echo.

#[derive(Deserialize, Serialize, Default)]
#[serde(default)]
struct Sleep {
    ms: i64,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Fail {
    code: String,
    message: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Big {
    bytes: i64,
}

#[derive(Deserialize, Serialize, Default)]
#[serde(default)]
struct Record {
    probe: String,
    seq: i64,
    unit: String,
    pad: String,
}

#[derive(Deserialize, Serialize, Default)]
#[serde(default)]
struct Blob {
    s: String,
}

#[derive(Deserialize, Serialize, Default)]
#[serde(default)]
struct Inner {
    name: String,
    count: u64,
    tags: Option<BTreeMap<String, i64>>,
}

/// The Go Exact embeds Inner: its fields (name, count, tags) are the object's own.
#[derive(Deserialize, Serialize, Default)]
#[serde(default)]
struct Exact {
    name: String,
    count: u64,
    tags: Option<BTreeMap<String, i64>>,
    i64_max: i64,
    i64_min: i64,
    u64_max: u64,
    i32_min: i32,
    u32_max: u32,
    i8_min: i8,
    u16_max: u16,
    beyond: i64,
    int: i64,
    tenth: f64,
    max: f64,
    tiny: f64,
    third: f64,
    f32: f32,
    number: Number,
    escapes: String,
    seps: String,
    astral: String,
    bytes: Option<Bytes>,
    any: serde_json::Value,
    ptr: Option<Inner>,
    ptr_ptr: Option<i64>,
    nil: Option<Inner>,
    map: Option<BTreeMap<String, Inner>>,
    slice: Option<Vec<Inner>>,
    matrix: Option<Vec<Vec<u64>>>,
    empty: Option<Vec<String>>,
}

/// The echo adapter (tests/conformance.rs serves it in process).
pub fn adapter() -> Adapter {
    let stray = std::env::var("ADAPTERKIT_ECHO_STRAY_STDOUT").map(|v| v == "1").unwrap_or(false);
    let mut svc = Service::new("example.echo", 1);
    svc.method("example.echo.echo", move |p: Box<RawJson>, _ctx: RequestContext| async move {
        if stray {
            println!("a stray println! on stdout");
            // SAFETY: writes a static buffer to descriptor 1.
            unsafe { libc::write(1, b"a stray write to fd 1\n".as_ptr() as *const libc::c_void, 22) };
        }
        Ok(p)
    });
    svc.method("example.echo.sleep", |p: Sleep, ctx: RequestContext| async move {
        if p.ms < 0 || p.ms > MAX_SLEEP_MS {
            return Err(CallError::new("invalid", format!("ms must be from 0 to {}", MAX_SLEEP_MS)));
        }
        tokio::select! {
            _ = ctx.canceled() => Err(CallError::new("aborted", "Sleep canceled")),
            _ = tokio::time::sleep(Duration::from_millis(p.ms as u64)) => Ok(p),
        }
    });
    svc.method("example.echo.fail", |p: Fail, _ctx: RequestContext| async move {
        Err::<(), _>(CallError::new(p.code, p.message))
    });
    svc.method("example.echo.big", |p: Big, _ctx: RequestContext| async move {
        if p.bytes < 0 || p.bytes > MAX_BIG {
            return Err(CallError::new("invalid", format!("bytes must be from 0 to {}", MAX_BIG)));
        }
        let mut s = String::with_capacity(p.bytes as usize + 2);
        s.push('"');
        s.extend(std::iter::repeat('x').take(p.bytes as usize));
        s.push('"');
        RawJson::from_string(s).map_err(|e| CallError::new("failed", e.to_string()))
    });
    svc.method("example.echo.record", |p: Record, _ctx: RequestContext| async move { Ok(p) });
    svc.method("example.echo.blob", |p: Blob, _ctx: RequestContext| async move { Ok(p) });
    svc.method("example.echo.exact", |p: Exact, _ctx: RequestContext| async move { Ok(p) });
    Adapter::new(vec![svc])
}

fn main() {
    adapterkit::run(adapter());
}
