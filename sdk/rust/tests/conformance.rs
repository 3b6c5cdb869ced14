//! The shared conformance vectors (testdata/conformance at the repository's root), run
//! against this SDK: the frames the echo adapter must answer word for word as the Go echo
//! does, and the catalogs its validation must accept or refuse by rule.

mod common;
#[allow(dead_code)] // its main is the example's
#[path = "../examples/echo.rs"]
mod echo;

use std::collections::HashMap;
use std::path::PathBuf;

use adapterkit::{validate_catalog, CatalogService};
use common::Host;
use serde::Deserialize;
use serde_json::Value;

fn load<T: for<'de> Deserialize<'de>>(name: &str) -> Vec<T> {
    #[derive(Deserialize)]
    struct Doc<T> {
        cases: Vec<T>,
    }
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/conformance").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {}", path.display(), e));
    let doc: Doc<T> = serde_json::from_str(&text).unwrap();
    assert!(!doc.cases.is_empty(), "{} has no cases", name);
    doc.cases
}

/// A number literal in one canonical form: 1e21, 1000000000000000000000 and 1.0e21 are
/// the same; 2^53 and 2^53+1 are not.
fn canonical(lit: &str) -> String {
    let (neg, rest) = match lit.strip_prefix('-') {
        Some(r) => ("-", r),
        None => ("", lit),
    };
    let (mantissa, exp) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], rest[i + 1..].parse::<i64>().unwrap()),
        None => (rest, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all = format!("{}{}", int, frac);
    let digits = all.trim_start_matches('0');
    let trimmed = digits.trim_end_matches('0');
    if trimmed.is_empty() {
        return "0".into();
    }
    let exp = exp - frac.len() as i64 + (digits.len() - trimmed.len()) as i64;
    format!("{}{}e{}", neg, trimmed, exp)
}

/// A JSON value with every number exact (as the string "#<canonical>") and its objects'
/// members in no order.
fn exact(text: &str) -> Value {
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'"' {
            let start = i;
            i += 1;
            while b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str(&text[start..i]);
        } else if c == b'-' || c.is_ascii_digit() {
            let start = i;
            while i < b.len() && matches!(b[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') {
                i += 1;
            }
            out.push_str(&format!("\"#{}\"", canonical(&text[start..i])));
        } else {
            let start = i;
            i += text[i..].chars().next().unwrap().len_utf8();
            out.push_str(&text[start..i]);
        }
    }
    serde_json::from_str(&out).unwrap()
}

#[derive(Deserialize)]
struct Expect {
    id: u64,
    #[serde(rename = "type")]
    typ: String,
    code: Option<String>,
    message: Option<String>,
    value: Option<String>,
}

#[derive(Deserialize)]
struct FrameCase {
    name: String,
    initialize: Option<bool>,
    send: Vec<String>,
    expect: Vec<Expect>,
}

#[test]
fn echo_frames() {
    for c in load::<FrameCase>("echo.json") {
        let mut h = Host::start(echo::adapter());
        if c.initialize != Some(false) {
            assert_eq!(h.initialize(1, "{}")["type"], "result", "{}", c.name);
        }
        for f in &c.send {
            h.send(f);
        }
        let mut got = HashMap::new();
        for _ in &c.expect {
            let text = h.recv_text();
            let m: Value = serde_json::from_str(&text).unwrap();
            got.insert(m["id"].as_u64().unwrap(), (m, text));
        }
        for want in &c.expect {
            let (m, text) = got.get(&want.id).unwrap_or_else(|| panic!("{}: no reply to id {}", c.name, want.id));
            assert_eq!(m["type"], want.typ.as_str(), "{}: {}", c.name, text);
            assert_eq!(m["code"].as_str(), want.code.as_deref(), "{}: {}", c.name, text);
            if let Some(msg) = &want.message {
                assert_eq!(m["message"].as_str(), Some(msg.as_str()), "{}", c.name);
            }
            if let Some(v) = &want.value {
                assert_eq!(exact(text)["value"], exact(v), "{}: {}", c.name, text);
            }
        }
        let (r, _) = h.close();
        assert!(r.is_ok(), "{}: {:?}", c.name, r);
    }
}

#[derive(Deserialize)]
struct CatalogCase {
    name: String,
    services: Vec<CatalogService>,
    rule: Option<String>,
}

#[test]
fn catalogs() {
    for c in load::<CatalogCase>("catalogs.json") {
        match (validate_catalog(&c.services), &c.rule) {
            (None, None) => {}
            (Some(p), Some(rule)) => assert!(p.contains(&format!("({})", rule)), "{}: {}", c.name, p),
            (p, _) => panic!("{}: {:?}", c.name, p),
        }
    }
}
