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
use common::{exact, Host};
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
            (Ok(()), None) => {}
            (Err(e), Some(rule)) => {
                assert_eq!(e.rule(), rule, "{}: {}", c.name, e);
                assert!(e.to_string().ends_with(&format!("({})", rule)), "{}: {}", c.name, e);
            }
            (r, _) => panic!("{}: {:?}", c.name, r),
        }
    }
}
