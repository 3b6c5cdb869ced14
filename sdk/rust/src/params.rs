//! Typed params, checked with the Go SDK's rules and words, whatever the serde
//! attributes: a serde `Deserializer` over a tree that keeps each number's literal.
//!
//! A struct's known field names come from serde's derive (`deserialize_struct` is told
//! them), so an unknown member is refused without `#[serde(deny_unknown_fields)]`:
//! `field "x" is not known (known: probe, seq)`. The integer types say what fits
//! (`field "seq": 9223372036854775808 does not fit int64`), an integer refuses 1.5, 1.0
//! and 1e3 (`field "seq": expected an integer, got the number 1.5`), a member named twice
//! is refused (`field "seq": appears twice`), and the members are checked in the order
//! written, so the first problem is the one named. A member that is null counts as left
//! out: an `Option` is then `None`, a field with `#[serde(default)]` its default, and any
//! other field is refused (`field "x": missing`). serde reads a struct with a
//! `#[serde(flatten)]` field as a map, without telling its field names: such a struct
//! needs `#[serde(deny_unknown_fields)]` to refuse unknown members.

use std::fmt;

use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::json::{base64_decode, base64_encode, parse, Json};

/// A value that does not fit the declared params type; its text names the field, in the
/// Go SDK's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamsError {
    path: Option<String>,
    detail: Detail,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Detail {
    /// The text after `field "path": `.
    Text(String),
    /// The whole text (an unknown member names itself).
    Whole(String),
    /// A field with no value and no default, named once its struct's path is known.
    Missing(String),
}

impl ParamsError {
    fn new(detail: impl Into<String>) -> Self {
        ParamsError { path: None, detail: Detail::Text(detail.into()) }
    }

    /// Gives the error the path of the value it is about, unless it has one.
    fn at(mut self, path: &Path<'_>) -> Self {
        if self.path.is_none() {
            if let Detail::Missing(field) = &self.detail {
                self.path = Some(path.member(field));
                self.detail = Detail::Text("missing".into());
            } else {
                self.path = Some(path.to_string());
            }
        }
        self
    }
}

impl fmt::Display for ParamsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match &self.detail {
            Detail::Whole(s) => return f.write_str(s),
            Detail::Text(s) => s.as_str(),
            Detail::Missing(_) => "missing",
        };
        match self.path.as_deref() {
            Some(p) if !p.is_empty() => write!(f, "field \"{}\": {}", p, text),
            _ => f.write_str(text),
        }
    }
}

impl std::error::Error for ParamsError {}

impl de::Error for ParamsError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        ParamsError::new(msg.to_string())
    }

    fn missing_field(field: &'static str) -> Self {
        ParamsError { path: None, detail: Detail::Missing(field.to_string()) }
    }
}

/// Decodes the JSON text `text` into a `T` with the Go SDK's rules (see the module doc):
/// what the SDK does with a request's params and initialize's configuration.
pub fn from_str<'de, T: Deserialize<'de>>(text: &'de str) -> Result<T, ParamsError> {
    let tree = parse(text).map_err(ParamsError::new)?;
    T::deserialize(Value { v: &tree, path: Path::Root })
}

/// Where a value is: member names joined with dots, indexes and map keys in brackets
/// ("items[2].name", "labels[site]"), rendered only for an error.
#[derive(Clone, Copy)]
enum Path<'p> {
    Root,
    Member(&'p Path<'p>, &'p str),
    Index(&'p Path<'p>, usize),
    Key(&'p Path<'p>, &'p str),
}

impl Path<'_> {
    fn member(&self, name: &str) -> String {
        match self {
            Path::Root => name.to_string(),
            p => format!("{}.{}", p, name),
        }
    }
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Path::Root => Ok(()),
            Path::Member(Path::Root, n) => f.write_str(n),
            Path::Member(p, n) => write!(f, "{}.{}", p, n),
            Path::Index(p, i) => write!(f, "{}[{}]", p, i),
            Path::Key(p, k) => write!(f, "{}[{}]", p, k),
        }
    }
}

fn excerpt(lit: &str) -> String {
    if lit.len() > 40 {
        format!("{}…", &lit[..40]) // a number literal is ASCII
    } else {
        lit.to_string()
    }
}

fn got(v: &Json<'_>) -> String {
    match v {
        Json::Null => "null".into(),
        Json::Bool(b) => b.to_string(),
        Json::Num(n) => format!("the number {}", excerpt(n)),
        Json::Str(_) => "a string".into(),
        Json::Arr(_) => "an array".into(),
        Json::Obj(_) => "an object".into(),
    }
}

/// The name of the newtype struct [`Number`] deserializes as, so that this deserializer
/// can hand it the literal.
const NUMBER_TOKEN: &str = "$adapterkit::Number";

/// The name of the newtype struct serde_json's RawValue deserializes as.
const RAW_TOKEN: &str = "$serde_json::private::RawValue";

/// Writes a value as compact JSON text: numbers as their literals, members in their order.
fn write(v: &Json<'_>, out: &mut String) {
    match v {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Num(n) => out.push_str(n),
        Json::Str(s) => out.push_str(&serde_json::to_string(s.as_ref()).unwrap_or_default()),
        Json::Arr(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(x, out);
            }
            out.push(']');
        }
        Json::Obj(m) => {
            out.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::to_string(k.as_ref()).unwrap_or_default());
                out.push(':');
                write(x, out);
            }
            out.push('}');
        }
    }
}

/// The one-member map serde_json's RawValue reads its text from.
struct RawMap {
    text: Option<String>,
}

impl<'de> MapAccess<'de> for RawMap {
    type Error = ParamsError;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, ParamsError> {
        if self.text.is_none() {
            return Ok(None);
        }
        seed.deserialize(RAW_TOKEN.into_deserializer()).map(Some)
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, ParamsError> {
        seed.deserialize(self.text.take().unwrap_or_default().into_deserializer())
    }
}

/// A JSON number kept as its literal text (Go's `json.Number`), written back digit for
/// digit; a string is refused for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Number(String);

impl Number {
    /// The literal, checked to be a JSON number.
    pub fn new(literal: impl Into<String>) -> Result<Number, ParamsError> {
        let s = literal.into();
        match parse(&s) {
            Ok(Json::Num(_)) => Ok(Number(s)),
            _ => Err(ParamsError::new(format!("{:?} is not a JSON number", s))),
        }
    }

    /// The literal, e.g. "1.50".
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for Number {
    fn default() -> Self {
        Number("0".into())
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for Number {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // serde_json writes a RawValue's text as it is: the digits, unchanged.
        let raw = serde_json::value::RawValue::from_string(self.0.clone()).map_err(serde::ser::Error::custom)?;
        raw.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Number {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Number;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Number, E> {
                Number::new(s).map_err(E::custom)
            }
            fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Number, D::Error> {
                d.deserialize_str(self)
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<Number, E> {
                Ok(Number(n.to_string()))
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<Number, E> {
                Ok(Number(n.to_string()))
            }
            fn visit_f64<E: de::Error>(self, n: f64) -> Result<Number, E> {
                Number::new(serde_json::to_string(&n).map_err(E::custom)?).map_err(E::custom)
            }
        }
        d.deserialize_newtype_struct(NUMBER_TOKEN, V)
    }
}

/// Bytes that travel as a base64 string, as Go's `[]byte` do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bytes(pub Vec<u8>);

impl Serialize for Bytes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&base64_encode(&self.0))
    }
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Bytes;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a base64 string")
            }
            fn visit_byte_buf<E: de::Error>(self, b: Vec<u8>) -> Result<Bytes, E> {
                Ok(Bytes(b))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Bytes, E> {
                base64_decode(s)
                    .map(Bytes)
                    .ok_or_else(|| E::custom("expected a base64 string, got a string that is not base64"))
            }
        }
        d.deserialize_byte_buf(V)
    }
}

/// The deserializer of one value of the tree, at its path.
#[derive(Clone, Copy)]
struct Value<'t, 'a, 'p> {
    v: &'t Json<'a>,
    path: Path<'p>,
}

impl<'t, 'a, 'p> Value<'t, 'a, 'p> {
    fn err(&self, detail: impl Into<String>) -> ParamsError {
        ParamsError::new(detail).at(&self.path)
    }

    fn mismatch(&self, expected: &str) -> ParamsError {
        self.err(format!("expected {}, got {}", expected, got(self.v)))
    }

    fn range(&self, lit: &str, name: &str) -> ParamsError {
        self.err(format!("{} does not fit {}", excerpt(lit), name))
    }

    /// The value as an integer between min and max (the type named name).
    fn integer(&self, name: &str, min: i128, max: i128) -> Result<i128, ParamsError> {
        let lit = match self.v {
            Json::Num(n) => *n,
            _ => return Err(self.mismatch("an integer")),
        };
        if lit.contains(['.', 'e', 'E']) {
            return Err(self.err(format!("expected an integer, got the number {}", excerpt(lit))));
        }
        if min == 0 && lit.starts_with('-') {
            return Err(self.range(lit, name)); // -0 too, as Go's strconv.ParseUint
        }
        match lit.parse::<i128>() {
            Ok(n) if n >= min && n <= max => Ok(n),
            _ => Err(self.range(lit, name)),
        }
    }

    fn float(&self, name: &str) -> Result<f64, ParamsError> {
        let lit = match self.v {
            Json::Num(n) => *n,
            _ => return Err(self.mismatch("a number")),
        };
        let f: f64 = lit.parse().map_err(|_| self.range(lit, name))?;
        // The smallest magnitude a float32 rounds to infinity: its largest value and half an ulp.
        if f.is_infinite() || (name == "float32" && f.abs() >= 3.402_823_567_797_336_6e38) {
            return Err(self.range(lit, name));
        }
        Ok(f)
    }

    fn str(&self) -> Result<&'t str, ParamsError> {
        match self.v {
            Json::Str(s) => Ok(s.as_ref()),
            _ => Err(self.mismatch("a string")),
        }
    }

    /// A visitor's own error about this value gets its path.
    fn own<T>(&self, r: Result<T, ParamsError>) -> Result<T, ParamsError> {
        r.map_err(|e| e.at(&self.path))
    }
}

macro_rules! integer {
    ($method:ident, $visit:ident, $t:ty, $name:expr) => {
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
            let n = self.integer($name, <$t>::MIN as i128, <$t>::MAX as i128)?;
            self.own(visitor.$visit(n as $t))
        }
    };
}

impl<'de, 't, 'a, 'p> Deserializer<'de> for Value<'t, 'a, 'p> {
    type Error = ParamsError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        let r = match self.v {
            Json::Null => visitor.visit_unit(),
            Json::Bool(b) => visitor.visit_bool(*b),
            Json::Num(lit) => {
                if let Ok(n) = lit.parse::<i64>() {
                    visitor.visit_i64(n)
                } else if let Ok(n) = lit.parse::<u64>() {
                    visitor.visit_u64(n)
                } else {
                    // Any other number is a float64, as in Go; one beyond it is refused.
                    let f = self.float("float64")?;
                    visitor.visit_f64(f)
                }
            }
            Json::Str(s) => visitor.visit_str(s),
            Json::Arr(a) => visitor.visit_seq(Seq { items: a, i: 0, path: &self.path }),
            Json::Obj(m) => {
                once(m, &self.path)?;
                visitor.visit_map(Map { members: m, i: 0, path: &self.path, known: None })
            }
        };
        self.own(r)
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        match self.v {
            Json::Bool(b) => self.own(visitor.visit_bool(*b)),
            _ => Err(self.mismatch("true or false")),
        }
    }

    integer!(deserialize_i8, visit_i8, i8, "int8");
    integer!(deserialize_i16, visit_i16, i16, "int16");
    integer!(deserialize_i32, visit_i32, i32, "int32");
    integer!(deserialize_i64, visit_i64, i64, "int64");
    integer!(deserialize_u8, visit_u8, u8, "uint8");
    integer!(deserialize_u16, visit_u16, u16, "uint16");
    integer!(deserialize_u32, visit_u32, u32, "uint32");
    integer!(deserialize_u64, visit_u64, u64, "uint64");

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        let f = self.float("float32")?;
        self.own(visitor.visit_f32(f as f32))
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        let f = self.float("float64")?;
        self.own(visitor.visit_f64(f))
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        let s = self.str()?;
        self.own(visitor.visit_str(s))
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        self.deserialize_byte_buf(visitor)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        let s = match self.v {
            Json::Str(s) => s,
            _ => return Err(self.mismatch("a base64 string")),
        };
        match base64_decode(s) {
            Some(b) => self.own(visitor.visit_byte_buf(b)),
            None => Err(self.err("expected a base64 string, got a string that is not base64")),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        match self.v {
            Json::Null => self.own(visitor.visit_none()),
            _ => self.own(visitor.visit_some(self)),
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        match self.v {
            Json::Null => self.own(visitor.visit_unit()),
            _ => Err(self.mismatch("null")),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(self, _name: &'static str, visitor: V) -> Result<V::Value, ParamsError> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, name: &'static str, visitor: V) -> Result<V::Value, ParamsError> {
        if name == NUMBER_TOKEN {
            return match self.v {
                Json::Num(lit) => self.own(visitor.visit_str(lit)),
                _ => Err(self.mismatch("a number")),
            };
        }
        if name == RAW_TOKEN {
            // A Box<RawJson> member: the value's text, as serde_json hands it over.
            let mut text = String::new();
            write(self.v, &mut text);
            return self.own(visitor.visit_map(RawMap { text: Some(text) }));
        }
        self.own(visitor.visit_newtype_struct(self))
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        match self.v {
            Json::Arr(a) => self.own(visitor.visit_seq(Seq { items: a, i: 0, path: &self.path })),
            _ => Err(self.mismatch("an array")),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, ParamsError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, ParamsError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        match self.v {
            Json::Obj(m) => {
                once(m, &self.path)?;
                self.own(visitor.visit_map(Map { members: m, i: 0, path: &self.path, known: None }))
            }
            _ => Err(self.mismatch("an object")),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ParamsError> {
        match self.v {
            Json::Obj(m) => self.own(visitor.visit_map(Map { members: m, i: 0, path: &self.path, known: Some(fields) })),
            _ => Err(self.mismatch("an object")),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ParamsError> {
        let s = self.str()?;
        self.own(visitor.visit_enum(s.into_deserializer()))
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        visitor.visit_unit()
    }
}

/// Refuses a map's member named twice.
fn once(m: &[(std::borrow::Cow<'_, str>, Json<'_>)], path: &Path<'_>) -> Result<(), ParamsError> {
    if m.len() > 1 {
        let mut seen = std::collections::HashSet::with_capacity(m.len());
        for (k, _) in m {
            if !seen.insert(k.as_ref()) {
                return Err(ParamsError::new("appears twice").at(&Path::Key(path, k)));
            }
        }
    }
    Ok(())
}

struct Seq<'t, 'a, 'p> {
    items: &'t [Json<'a>],
    i: usize,
    path: &'p Path<'p>,
}

impl<'de, 't, 'a, 'p> SeqAccess<'de> for Seq<'t, 'a, 'p> {
    type Error = ParamsError;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, ParamsError> {
        match self.items.get(self.i) {
            None => Ok(None),
            Some(v) => {
                let path = Path::Index(self.path, self.i);
                self.i += 1;
                seed.deserialize(Value { v, path }).map(Some)
            }
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len() - self.i)
    }
}

/// An object's members, for a map (known: None) or a struct (known: its field names).
struct Map<'t, 'a, 'p> {
    members: &'t [(std::borrow::Cow<'a, str>, Json<'a>)],
    i: usize,
    path: &'p Path<'p>,
    known: Option<&'static [&'static str]>,
}

impl<'de, 't, 'a, 'p> MapAccess<'de> for Map<'t, 'a, 'p> {
    type Error = ParamsError;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, ParamsError> {
        while let Some((k, v)) = self.members.get(self.i) {
            if let Some(known) = self.known {
                // In the order written: the first problem is the one named, as in Go.
                if !known.contains(&k.as_ref()) {
                    let list = if known.is_empty() { "none".to_string() } else { known.join(", ") };
                    return Err(ParamsError {
                        path: Some(self.path.member(k)),
                        detail: Detail::Whole(format!("field \"{}\" is not known (known: {})", self.path.member(k), list)),
                    });
                }
                if self.members[..self.i].iter().any(|(seen, _)| seen == k) {
                    return Err(ParamsError::new("appears twice").at(&Path::Member(self.path, k)));
                }
                if let Json::Null = v {
                    self.i += 1; // null is a member left out: None, the default, or missing
                    continue;
                }
            }
            return seed.deserialize(k.as_ref().into_deserializer()).map(Some);
        }
        Ok(None)
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, ParamsError> {
        let (k, v) = &self.members[self.i];
        self.i += 1;
        let path = if self.known.is_some() { Path::Member(self.path, k) } else { Path::Key(self.path, k) };
        seed.deserialize(Value { v, path })
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.members.len() - self.i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
        let o: Outer = from_str(r#"{"inner":[{"n":255,"o":null}],"mode":"slow","bytes":"AAH+/w==","raw":{ "b" : [1.50, "\u00e9"], "a":null }}"#).unwrap();
        assert_eq!(o.raw.unwrap().get(), r#"{"b":[1.50,"é"],"a":null}"#);
        assert_eq!(o.inner, [Inner { n: 255, o: None }]);
        assert_eq!((o.mode, o.bytes), (Mode::Slow, Some(Bytes(vec![0, 1, 0xfe, 0xff]))));
        for (text, want) in [
            (r#"{"inner":[{"n":1},{}],"mode":"fast"}"#, r#"field "inner[1].n": missing"#),
            (r#"{"inner":[{"n":1,"x":2}],"mode":"fast"}"#, r#"field "inner[0].x" is not known (known: n, o)"#),
            (r#"{"inner":[],"mode":"fast","by":{"a":2147483648}}"#, r#"field "by[a]": 2147483648 does not fit int32"#),
            (r#"{"inner":[],"mode":null}"#, r#"field "mode": missing"#),
            (r#"{"inner":[],"mode":1}"#, r#"field "mode": expected a string, got the number 1"#),
            ("[]", "expected an object, got an array"),
        ] {
            assert_eq!(from_str::<Outer>(text).unwrap_err().to_string(), want, "{}", text);
        }
        assert!(from_str::<Outer>(r#"{"inner":[],"mode":"medium"}"#).unwrap_err().to_string().starts_with("field \"mode\": unknown variant"));
    }

    #[test]
    fn number_and_bytes_write_as_go_does() {
        let n: Number = from_str("123456789012345678901234567890.5e-7").unwrap();
        assert_eq!(serde_json::to_string(&(n, Bytes(vec![0, 1, 0xfe, 0xff]))).unwrap(), r#"[123456789012345678901234567890.5e-7,"AAH+/w=="]"#);
        assert!(Number::new("1.").is_err());
        let v: serde_json::Value = from_str(r#"{"u":18446744073709551615,"i":-9223372036854775808,"f":0.1}"#).unwrap();
        assert_eq!(v.to_string(), r#"{"f":0.1,"i":-9223372036854775808,"u":18446744073709551615}"#);
    }
}
