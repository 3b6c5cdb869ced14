//! The shared value vectors (testdata/conformance/values.json at the repository's root,
//! docs/protocol.md A38-A44), run against this SDK: each type of the file declared as a
//! serde struct here, each input decoded as params are (`adapterkit::from_str`), and the
//! value written back as results are (serde_json); writing a NaN goes through a real
//! handler, whose reply must be an error.

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use adapterkit::{from_str, Adapter, Bytes, RequestContext, Service, Time};
use common::{exact, Host};
use serde::{Deserialize, Serialize};
use serde_json::Value;

// The types of the file, as a Rust adapter declares them: what Go makes nil is an Option.
#[derive(Deserialize, Serialize)]
struct Entry {
    key: String,
    value: Option<Bytes>,
    n: i64,
    ok: bool,
}

#[derive(Deserialize, Serialize)]
struct Shapes {
    entry: Entry,
    ptr: Option<Box<Entry>>,
    list: Option<Vec<Entry>>,
    names: Option<Vec<String>>,
    tags: Option<BTreeMap<String, i64>>,
    any: Value,
}

#[derive(Deserialize, Serialize)]
struct Stamp {
    at: Time,
}

#[derive(Deserialize, Serialize)]
struct Ints {
    i8: i8,
    u8: u8,
    i32: i32,
    u32: u32,
    i64: i64,
    u64: u64,
}

#[derive(Deserialize, Serialize)]
struct Floats {
    f32: f32,
    f64: f64,
}

#[derive(Deserialize)]
struct Case {
    rule: String,
    name: String,
    #[serde(rename = "type")]
    typ: String,
    input: String,
    output: Option<String>,
    error: Option<String>,
    error_prefix: Option<String>,
}

#[derive(Deserialize)]
struct EncodeCase {
    rule: String,
    name: String,
    f64: String,
}

#[derive(Deserialize)]
struct Doc {
    types: BTreeMap<String, Vec<(String, String)>>,
    cases: Vec<Case>,
    encode: Vec<EncodeCase>,
}

fn load() -> Doc {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/conformance/values.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {}", path.display(), e));
    serde_json::from_str(&text).unwrap()
}

fn round_trip<T: for<'de> Deserialize<'de> + Serialize>(input: &str) -> Result<String, String> {
    let v: T = from_str(input).map_err(|e| e.to_string())?;
    serde_json::to_string(&v).map_err(|e| e.to_string())
}

fn decode(typ: &str, input: &str) -> Result<String, String> {
    match typ {
        "Entry" => round_trip::<Entry>(input),
        "Shapes" => round_trip::<Shapes>(input),
        "Stamp" => round_trip::<Stamp>(input),
        "Ints" => round_trip::<Ints>(input),
        "Floats" => round_trip::<Floats>(input),
        _ => panic!("no type {}", typ),
    }
}

#[test]
fn value_vectors() {
    let doc = load();
    assert!(!doc.cases.is_empty());
    // The structs above have the members the file declares.
    for (name, members) in &doc.types {
        let zero: Value = serde_json::from_str(&decode(name, "{}").unwrap()).unwrap();
        let mut have: Vec<&String> = zero.as_object().unwrap().keys().collect();
        let mut want: Vec<&String> = members.iter().map(|(m, _)| m).collect();
        have.sort();
        want.sort();
        assert_eq!(have, want, "type {}", name);
    }
    let mut failed = Vec::new();
    for c in &doc.cases {
        let got = decode(&c.typ, &c.input);
        let ok = match (&got, &c.output, &c.error, &c.error_prefix) {
            (Ok(out), Some(want), _, _) => exact(out) == exact(want),
            (Err(e), None, Some(want), _) => e == want,
            (Err(e), None, None, Some(prefix)) => e.starts_with(prefix.as_str()),
            _ => false,
        };
        if !ok {
            failed.push(format!(
                "{} {}: {}\n got {:?}\nwant {:?}",
                c.rule,
                c.name,
                c.input,
                got,
                c.output.as_ref().or(c.error.as_ref()).or(c.error_prefix.as_ref())
            ));
        }
    }
    assert!(failed.is_empty(), "{} of {} cases:\n{}", failed.len(), doc.cases.len(), failed.join("\n"));
}

#[derive(Deserialize)]
struct Special {
    f64: String,
}

#[test]
fn value_vectors_encode() {
    let doc = load();
    assert!(!doc.encode.is_empty());
    let mut svc = Service::new("test.values", 1);
    svc.method("test.values.floats", |p: Special, _ctx: RequestContext| async move {
        let f64 = match p.f64.as_str() {
            "NaN" => f64::NAN,
            "+Inf" => f64::INFINITY,
            _ => f64::NEG_INFINITY,
        };
        Ok(Floats { f32: 0.0, f64 })
    });
    let mut h = Host::start(Adapter::new(vec![svc]));
    assert_eq!(h.initialize(1, "{}")["type"], "result");
    for (i, c) in doc.encode.iter().enumerate() {
        let id = i as u64 + 2;
        h.request(id, "test.values.floats", &serde_json::json!({ "f64": c.f64 }).to_string());
        let m = h.recv();
        assert_eq!(
            (m["id"].as_u64(), m["type"].as_str(), m["code"].as_str()),
            (Some(id), Some("error"), Some("failed")),
            "{} {}: {}",
            c.rule,
            c.name,
            m
        );
    }
    let (r, _) = h.close();
    assert!(r.is_ok(), "{:?}", r);
}
