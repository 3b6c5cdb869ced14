//! The value of a member left out, or null where the type is not nullable: Go's zero
//! value of the type (docs/protocol.md, A38-A39). A deserializer that hands every type
//! its zero: 0, "", false, empty bytes, an empty Vec or map, None, the zero time, a
//! struct of zero values; a type without one (an enum, a char) is `missing`.

use serde::de::Visitor;
use serde::Deserializer;

use crate::params::{Map, ParamsError, Path, RawMap, Seq, RAW_TOKEN};
use crate::types::{NUMBER_TOKEN, TIME_TOKEN};

/// The zero value of whatever type is deserialized from it, at path.
#[derive(Clone, Copy)]
pub(crate) struct Zero<'p> {
    pub(crate) path: Path<'p>,
}

impl Zero<'_> {
    fn missing(&self) -> ParamsError {
        ParamsError::new("missing").at(&self.path)
    }
}

macro_rules! zero {
    ($($method:ident => $visit:ident($($v:expr)?)),* $(,)?) => {
        $(fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
            visitor.$visit($($v)?).map_err(|e: ParamsError| e.at(&self.path))
        })*
    };
}

impl<'de> Deserializer<'de> for Zero<'_> {
    type Error = ParamsError;

    zero! {
        deserialize_any => visit_unit(),
        deserialize_bool => visit_bool(false),
        deserialize_i8 => visit_i8(0),
        deserialize_i16 => visit_i16(0),
        deserialize_i32 => visit_i32(0),
        deserialize_i64 => visit_i64(0),
        deserialize_u8 => visit_u8(0),
        deserialize_u16 => visit_u16(0),
        deserialize_u32 => visit_u32(0),
        deserialize_u64 => visit_u64(0),
        deserialize_f32 => visit_f32(0.0),
        deserialize_f64 => visit_f64(0.0),
        deserialize_str => visit_str(""),
        deserialize_string => visit_str(""),
        deserialize_bytes => visit_byte_buf(Vec::new()),
        deserialize_byte_buf => visit_byte_buf(Vec::new()),
        deserialize_option => visit_none(),
        deserialize_unit => visit_unit(),
        deserialize_ignored_any => visit_unit(),
    }

    fn deserialize_char<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, ParamsError> {
        Err(self.missing())
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, ParamsError> {
        Err(self.missing())
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self, _name: &'static str, _variants: &'static [&'static str], _visitor: V,
    ) -> Result<V::Value, ParamsError> {
        Err(self.missing())
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self, _name: &'static str, visitor: V,
    ) -> Result<V::Value, ParamsError> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self, name: &'static str, visitor: V,
    ) -> Result<V::Value, ParamsError> {
        let r = match name {
            NUMBER_TOKEN => visitor.visit_str("0"),
            TIME_TOKEN => visitor.visit_str("0001-01-01T00:00:00Z"),
            RAW_TOKEN => visitor.visit_map(RawMap { text: Some("null".into()) }),
            _ => visitor.visit_newtype_struct(self),
        };
        r.map_err(|e| e.at(&self.path))
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        visitor.visit_seq(Seq { items: &[], i: 0, path: &self.path }).map_err(|e| e.at(&self.path))
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
        visitor.visit_map(Map::new(&[], &self.path, None)).map_err(|e| e.at(&self.path))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self, _name: &'static str, fields: &'static [&'static str], visitor: V,
    ) -> Result<V::Value, ParamsError> {
        visitor.visit_map(Map::new(&[], &self.path, Some(fields))).map_err(|e| e.at(&self.path))
    }
}
