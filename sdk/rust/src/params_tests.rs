//! Unit tests of params.rs (the typed params deserializer).
use super::*;
use crate::types::{Bytes, Number};
use std::collections::BTreeMap;

#[derive(Deserialize, Debug, PartialEq)]
struct Inner {
    n: u8,
    o: Option<String>,
}

#[derive(Deserialize, Debug)]
struct Outer {
    inner: Vec<Inner>,
    #[serde(default)]
    by: BTreeMap<String, i32>,
    mode: Mode,
    bytes: Option<Bytes>,
    raw: Option<Box<serde_json::value::RawValue>>,
}

#[derive(Deserialize, Debug, PartialEq)]
#[serde(rename_all = "lowercase")]
enum Mode {
    Fast,
    Slow,
}

// What the shared vectors (tests/conformance.rs) do not show: serde's own shapes.
#[test]
fn serde_shapes_keep_the_rules() {
    let o: Outer = from_str(
        r#"{"inner":[{"n":255,"o":null}],"mode":"slow","bytes":"AAH+/w==","raw":{ "b" : [1.50, "\u00e9"], "a":null }}"#,
    )
    .unwrap();
    assert_eq!(o.raw.unwrap().get(), r#"{"b":[1.50,"é"],"a":null}"#);
    assert_eq!(o.inner, [Inner { n: 255, o: None }]);
    // A38, A39: left out or null, a member is its zero value; an enum has none.
    let z: Outer = from_str(r#"{"inner":[{"n":1},{},null],"mode":"fast","by":{"a":null}}"#).unwrap();
    assert_eq!(z.inner, [Inner { n: 1, o: None }, Inner { n: 0, o: None }, Inner { n: 0, o: None }]);
    assert_eq!((z.by.get("a"), z.bytes, z.raw.map(|r| r.get().to_string())), (Some(&0), None, None));
    assert_eq!((o.mode, o.bytes), (Mode::Slow, Some(Bytes(vec![0, 1, 0xfe, 0xff]))));
    for (text, want) in [
        (r#"{"inner":[{"n":1,"x":2}],"mode":"fast"}"#, r#"field "inner[0].x" is not known (known: n, o)"#),
        (r#"{"inner":[],"mode":"fast","by":{"a":2147483648}}"#, r#"field "by[a]": 2147483648 does not fit int32"#),
        (r#"{"inner":[],"mode":null}"#, r#"field "mode": missing"#),
        (r#"{"inner":[],"mode":1}"#, r#"field "mode": expected a string, got the number 1"#),
        ("[]", "expected an object, got an array"),
    ] {
        assert_eq!(from_str::<Outer>(text).unwrap_err().to_string(), want, "{}", text);
    }
    assert!(from_str::<Outer>(r#"{"inner":[],"mode":"medium"}"#)
        .unwrap_err()
        .to_string()
        .starts_with("field \"mode\": unknown variant"));
}

#[test]
fn number_and_bytes_write_as_go_does() {
    let n: Number = from_str("123456789012345678901234567890.5e-7").unwrap();
    assert_eq!(
        serde_json::to_string(&(n, Bytes(vec![0, 1, 0xfe, 0xff]))).unwrap(),
        r#"[123456789012345678901234567890.5e-7,"AAH+/w=="]"#
    );
    assert!(Number::new("1.").is_err());
    let v: serde_json::Value = from_str(r#"{"u":18446744073709551615,"i":-9223372036854775808,"f":0.1}"#).unwrap();
    assert_eq!(v.to_string(), r#"{"f":0.1,"i":-9223372036854775808,"u":18446744073709551615}"#);
}
