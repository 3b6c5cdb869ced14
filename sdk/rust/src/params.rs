//! Typed params, checked with the Go SDK's rules and words, whatever the serde
//! attributes: a serde `Deserializer` over a tree that keeps each number's literal.
//!
//! A struct's known field names come from serde's derive (`deserialize_struct` is told
//! them), so an unknown member is refused without `#[serde(deny_unknown_fields)]`:
//! `field "x" is not known (known: probe, seq)`. The integer types say what fits
//! (`field "seq": 9223372036854775808 does not fit int64`), an integer refuses 1.5, 1.0
//! and 1e3 (`field "seq": expected an integer, got the number 1.5`), a member named twice
//! is refused (`field "seq": appears twice`), and the members are checked in the order
//! written, so the first problem is the one named. A member left out, or null (a member,
//! an element, a map value), is the zero value of its type, as in Go (docs/protocol.md,
//! A38-A39): 0, "", false, empty bytes, an empty `Vec` or map, `None`, the zero
//! [`Time`](crate::Time), a struct of zero values; serde's `default` attributes are not
//! consulted, and a type without a zero value (an enum) is refused (`field "x":
//! missing`). Declare what Go declares nullable (a slice, map, pointer or `[]byte`) as an
//! `Option`, so that nil travels as null and comes back as `None`. serde reads a struct
//! with a `#[serde(flatten)]` field as a map, without telling its field names: such a
//! struct needs `#[serde(deny_unknown_fields)]` to refuse unknown members, and gets no
//! zero values.

use std::fmt;

use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

use crate::json::{base64_decode, parse, Json};
use crate::types::{NUMBER_TOKEN, TIME_TOKEN};
use crate::zero::Zero;

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
    pub(crate) fn new(detail: impl Into<String>) -> Self {
        ParamsError { path: None, detail: Detail::Text(detail.into()) }
    }

    /// Gives the error the path of the value it is about, unless it has one.
    pub(crate) fn at(mut self, path: &Path<'_>) -> Self {
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
pub(crate) enum Path<'p> {
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

/// The name of the newtype struct serde_json's RawValue deserializes as.
pub(crate) const RAW_TOKEN: &str = "$serde_json::private::RawValue";

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
pub(crate) struct RawMap {
    pub(crate) text: Option<String>,
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
            if let Json::Null = self.v {
                return Zero { path: self.path }.$method(visitor);
            }
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
                visitor.visit_map(Map::new(m, &self.path, None))
            }
        };
        self.own(r)
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        if let Json::Null = self.v {
            return Zero { path: self.path }.deserialize_bool(visitor);
        }
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
        if let Json::Null = self.v {
            return Zero { path: self.path }.deserialize_f32(visitor);
        }
        let f = self.float("float32")?;
        self.own(visitor.visit_f32(f as f32))
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        if let Json::Null = self.v {
            return Zero { path: self.path }.deserialize_f64(visitor);
        }
        let f = self.float("float64")?;
        self.own(visitor.visit_f64(f))
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        if let Json::Null = self.v {
            return Zero { path: self.path }.deserialize_str(visitor);
        }
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
        if let Json::Null = self.v {
            return Zero { path: self.path }.deserialize_byte_buf(visitor);
        }
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

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self, _name: &'static str, visitor: V,
    ) -> Result<V::Value, ParamsError> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self, name: &'static str, visitor: V,
    ) -> Result<V::Value, ParamsError> {
        if name == NUMBER_TOKEN || name == TIME_TOKEN {
            return match (self.v, name) {
                (Json::Null, _) => Zero { path: self.path }.deserialize_newtype_struct(name, visitor),
                (Json::Num(lit), NUMBER_TOKEN) => self.own(visitor.visit_str(lit)),
                (Json::Str(s), TIME_TOKEN) => self.own(visitor.visit_str(s)),
                (_, NUMBER_TOKEN) => Err(self.mismatch("a number")),
                _ => Err(self.mismatch("an RFC 3339 time")),
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
        if let Json::Null = self.v {
            return Zero { path: self.path }.deserialize_seq(visitor);
        }
        match self.v {
            Json::Arr(a) => self.own(visitor.visit_seq(Seq { items: a, i: 0, path: &self.path })),
            _ => Err(self.mismatch("an array")),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, ParamsError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self, _name: &'static str, _len: usize, visitor: V,
    ) -> Result<V::Value, ParamsError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        if let Json::Null = self.v {
            return Zero { path: self.path }.deserialize_map(visitor);
        }
        match self.v {
            Json::Obj(m) => {
                once(m, &self.path)?;
                self.own(visitor.visit_map(Map::new(m, &self.path, None)))
            }
            _ => Err(self.mismatch("an object")),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self, _name: &'static str, fields: &'static [&'static str], visitor: V,
    ) -> Result<V::Value, ParamsError> {
        match self.v {
            Json::Null => Zero { path: self.path }.deserialize_struct(_name, fields, visitor),
            Json::Obj(m) => self.own(visitor.visit_map(Map::new(m, &self.path, Some(fields)))),
            _ => Err(self.mismatch("an object")),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self, _name: &'static str, _variants: &'static [&'static str], visitor: V,
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

pub(crate) struct Seq<'t, 'a, 'p> {
    pub(crate) items: &'t [Json<'a>],
    pub(crate) i: usize,
    pub(crate) path: &'p Path<'p>,
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
/// After a struct's members come the fields they leave out (or give as null), each with
/// its zero value (A38, A39).
pub(crate) struct Map<'t, 'a, 'p> {
    members: &'t [(std::borrow::Cow<'a, str>, Json<'a>)],
    i: usize,
    path: &'p Path<'p>,
    known: Option<&'static [&'static str]>,
    /// The next known field to give its zero value if no member gave it a value.
    zero: usize,
    /// The field whose key was just handed over for its zero value.
    zeroed: Option<&'static str>,
}

impl<'t, 'a, 'p> Map<'t, 'a, 'p> {
    pub(crate) fn new(
        members: &'t [(std::borrow::Cow<'a, str>, Json<'a>)], path: &'p Path<'p>,
        known: Option<&'static [&'static str]>,
    ) -> Self {
        Map { members, i: 0, path, known, zero: 0, zeroed: None }
    }
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
                        detail: Detail::Whole(format!(
                            "field \"{}\" is not known (known: {})",
                            self.path.member(k),
                            list
                        )),
                    });
                }
                if self.members[..self.i].iter().any(|(seen, _)| seen == k) {
                    return Err(ParamsError::new("appears twice").at(&Path::Member(self.path, k)));
                }
                if let Json::Null = v {
                    self.i += 1; // null is a member left out: its zero value, given below
                    continue;
                }
            }
            return seed.deserialize(k.as_ref().into_deserializer()).map(Some);
        }
        let known = self.known.unwrap_or(&[]);
        while let Some(&field) = known.get(self.zero) {
            self.zero += 1;
            if !self.members.iter().any(|(k, v)| k == field && !matches!(v, Json::Null)) {
                self.zeroed = Some(field);
                return seed.deserialize(field.into_deserializer()).map(Some);
            }
        }
        Ok(None)
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, ParamsError> {
        if let Some(field) = self.zeroed.take() {
            return seed.deserialize(Zero { path: Path::Member(self.path, field) });
        }
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
#[path = "params_tests.rs"]
mod tests;
