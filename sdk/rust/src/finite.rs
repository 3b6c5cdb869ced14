//! JSON has no NaN and no infinities, and serde_json writes them as `null`: a result
//! holding one is refused instead (docs/protocol.md, A43), as the Go SDK refuses it.
//! [`check`] walks a value as a serializer, without writing anything.

use std::fmt;

use serde::ser::{self, Serialize};

/// A value that holds a NaN or an infinity.
#[derive(Debug)]
pub(crate) struct NotFinite(String);

impl fmt::Display for NotFinite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NotFinite {}

impl ser::Error for NotFinite {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        NotFinite(msg.to_string())
    }
}

/// Refuses a value that holds a float JSON cannot carry: "NaN is not a JSON number".
pub(crate) fn check<T: Serialize + ?Sized>(v: &T) -> Result<(), NotFinite> {
    v.serialize(Check)
}

fn float(f: f64) -> Result<(), NotFinite> {
    if f.is_finite() {
        Ok(())
    } else {
        Err(NotFinite(format!("{} is not a JSON number", f)))
    }
}

struct Check;

macro_rules! fine {
    ($($method:ident($t:ty)),* $(,)?) => {
        $(fn $method(self, _v: $t) -> Result<(), NotFinite> {
            Ok(())
        })*
    };
}

impl ser::Serializer for Check {
    type Ok = ();
    type Error = NotFinite;
    type SerializeSeq = Check;
    type SerializeTuple = Check;
    type SerializeTupleStruct = Check;
    type SerializeTupleVariant = Check;
    type SerializeMap = Check;
    type SerializeStruct = Check;
    type SerializeStructVariant = Check;

    fine! {
        serialize_bool(bool), serialize_i8(i8), serialize_i16(i16), serialize_i32(i32), serialize_i64(i64),
        serialize_i128(i128), serialize_u8(u8), serialize_u16(u16), serialize_u32(u32), serialize_u64(u64),
        serialize_u128(u128), serialize_char(char), serialize_str(&str), serialize_bytes(&[u8]),
        serialize_unit_struct(&'static str),
    }

    fn serialize_f32(self, v: f32) -> Result<(), NotFinite> {
        float(f64::from(v))
    }

    fn serialize_f64(self, v: f64) -> Result<(), NotFinite> {
        float(v)
    }

    fn serialize_none(self) -> Result<(), NotFinite> {
        Ok(())
    }

    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<(), NotFinite> {
        v.serialize(self)
    }

    fn serialize_unit(self) -> Result<(), NotFinite> {
        Ok(())
    }

    fn serialize_unit_variant(self, _name: &'static str, _index: u32, _variant: &'static str) -> Result<(), NotFinite> {
        Ok(())
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _name: &'static str, v: &T) -> Result<(), NotFinite> {
        v.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self, _name: &'static str, _index: u32, _variant: &'static str, v: &T,
    ) -> Result<(), NotFinite> {
        v.serialize(self)
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Check, NotFinite> {
        Ok(Check)
    }

    fn serialize_tuple(self, _len: usize) -> Result<Check, NotFinite> {
        Ok(Check)
    }

    fn serialize_tuple_struct(self, _name: &'static str, _len: usize) -> Result<Check, NotFinite> {
        Ok(Check)
    }

    fn serialize_tuple_variant(
        self, _name: &'static str, _index: u32, _variant: &'static str, _len: usize,
    ) -> Result<Check, NotFinite> {
        Ok(Check)
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Check, NotFinite> {
        Ok(Check)
    }

    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Check, NotFinite> {
        Ok(Check)
    }

    fn serialize_struct_variant(
        self, _name: &'static str, _index: u32, _variant: &'static str, _len: usize,
    ) -> Result<Check, NotFinite> {
        Ok(Check)
    }
}

macro_rules! elements {
    ($($trait:ident :: $method:ident),* $(,)?) => {
        $(impl ser::$trait for Check {
            type Ok = ();
            type Error = NotFinite;
            fn $method<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), NotFinite> {
                v.serialize(Check)
            }
            fn end(self) -> Result<(), NotFinite> {
                Ok(())
            }
        })*
    };
}

elements! {
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field,
}

impl ser::SerializeMap for Check {
    type Ok = ();
    type Error = NotFinite;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, k: &T) -> Result<(), NotFinite> {
        k.serialize(Check)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), NotFinite> {
        v.serialize(Check)
    }
    fn end(self) -> Result<(), NotFinite> {
        Ok(())
    }
}

macro_rules! fields {
    ($($trait:ident),* $(,)?) => {
        $(impl ser::$trait for Check {
            type Ok = ();
            type Error = NotFinite;
            fn serialize_field<T: Serialize + ?Sized>(&mut self, _key: &'static str, v: &T) -> Result<(), NotFinite> {
                v.serialize(Check)
            }
            fn end(self) -> Result<(), NotFinite> {
                Ok(())
            }
        })*
    };
}

fields! { SerializeStruct, SerializeStructVariant }
