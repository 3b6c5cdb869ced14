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
//!   less 1 KiB.
//!
//! With `ADAPTERKIT_ECHO_STRAY_STDOUT=1` in its environment, `example.echo.echo` also
//! prints to stdout (`println!` and a raw write to fd 1): tests use it to show that stray
//! output cannot reach the protocol stream.

use std::time::Duration;

use adapterkit::{Adapter, CallError, RawJson, RequestContext, Service, MAX_FRAME};
use serde::{Deserialize, Serialize};

const MAX_SLEEP_MS: i64 = 30_000;
const MAX_BIG: i64 = MAX_FRAME as i64 - 1024;

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct Sleep {
    #[serde(default)]
    ms: i64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Fail {
    #[serde(default)]
    code: String,
    #[serde(default)]
    message: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Big {
    #[serde(default)]
    bytes: i64,
}

fn main() {
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
    adapterkit::run(Adapter::new(vec![svc]));
}
