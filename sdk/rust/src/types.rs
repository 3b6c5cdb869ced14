//! The types that travel as Go's do: [`Number`] (Go's `json.Number`), [`Bytes`] (`[]byte`)
//! and [`Time`] (`time.Time`), each read and written by the rules of docs/protocol.md
//! (A40, A41).

use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::json::{base64_decode, base64_encode, parse, Json};
use crate::params::ParamsError;

/// The name of the newtype struct [`Number`] deserializes as, so that the params
/// deserializer can hand it the literal.
pub(crate) const NUMBER_TOKEN: &str = "$adapterkit::Number";

/// The name of the newtype struct [`Time`] deserializes as, so that the params
/// deserializer knows a time (and its zero value) when it sees one.
pub(crate) const TIME_TOKEN: &str = "$adapterkit::Time";

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

/// A time (Go's `time.Time`): an RFC 3339 text as Go writes it, the same instant at the
/// same offset, the fraction cut to nine digits without trailing zeros, `Z` for offset
/// zero (A41). Its default, and the value of a member left out, is Go's zero time
/// `0001-01-01T00:00:00Z`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Time(String);

impl Time {
    /// Reads an RFC 3339 time as Go's `time.Time` does: upper-case `T` and `Z`, a
    /// fraction of any length, an offset with its colon, a date that exists.
    pub fn parse(text: &str) -> Result<Time, ParamsError> {
        normal_time(text).map(Time).ok_or_else(|| {
            let shown: String = text.chars().take(40).collect();
            let more = if shown.len() < text.len() { "…" } else { "" };
            ParamsError::new(format!("{:?} is not an RFC 3339 time", format!("{}{}", shown, more)))
        })
    }

    /// The text, as Go writes it: "2024-01-02T03:04:05.5+01:00".
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for Time {
    fn default() -> Self {
        Time("0001-01-01T00:00:00Z".into())
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn digits(b: &[u8]) -> Option<u32> {
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(b.iter().fold(0, |n, c| n * 10 + u32::from(c - b'0')))
}

/// The text of an RFC 3339 time as Go writes it, or None for one Go refuses.
fn normal_time(s: &str) -> Option<String> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (y, mo, d) = (digits(&b[0..4])?, digits(&b[5..7])?, digits(&b[8..10])?);
    let (h, mi, se) = (digits(&b[11..13])?, digits(&b[14..16])?, digits(&b[17..19])?);
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if !(1..=12).contains(&mo) || d < 1 || d > days[mo as usize - 1] || h > 23 || mi > 59 || se > 59 {
        return None;
    }
    let mut rest = &s[19..];
    let mut frac = "";
    if let Some(r) = rest.strip_prefix('.') {
        let n = r.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return None;
        }
        frac = r[..n.min(9)].trim_end_matches('0');
        rest = &r[n..];
    }
    let zone = match rest.as_bytes() {
        [b'Z'] => "Z".to_string(),
        [sign @ (b'+' | b'-'), oh @ .., b':', _, _] if oh.len() == 2 => {
            let (hh, mm) = (digits(oh)?, digits(&rest.as_bytes()[4..6])?);
            if hh > 23 || mm > 59 {
                return None;
            }
            if hh == 0 && mm == 0 {
                "Z".to_string()
            } else {
                format!("{}{}", *sign as char, &rest[1..])
            }
        }
        _ => return None,
    };
    let dot = if frac.is_empty() { "" } else { "." };
    Some(format!("{}{}{}{}", &s[..19], dot, frac, zone))
}

impl Serialize for Time {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Time {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Time;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an RFC 3339 time")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Time, E> {
                Time::parse(s).map_err(E::custom)
            }
            fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Time, D::Error> {
                d.deserialize_str(self)
            }
        }
        d.deserialize_newtype_struct(TIME_TOKEN, V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_reads_and_writes_as_go_does() {
        for (text, want) in [
            ("2024-01-02T03:04:05.500+01:00", Some("2024-01-02T03:04:05.5+01:00")),
            ("2024-01-02T03:04:05.1234567891-00:00", Some("2024-01-02T03:04:05.123456789Z")),
            ("0000-02-29T00:00:00Z", Some("0000-02-29T00:00:00Z")),
            ("1900-02-29T00:00:00Z", None),
            ("2024-01-02T03:04:05.Z", None),
            ("2024-01-02T03:04:05+24:00", None),
            ("2024-01-02T03:04:05+01:0", None),
            ("2024-01-02T03:04:05+01:000", None),
            ("2024-01-02T03:04:05é", None),
        ] {
            assert_eq!(normal_time(text).as_deref(), want, "{}", text);
        }
        assert_eq!(Time::parse("x").unwrap_err().to_string(), r#""x" is not an RFC 3339 time"#);
    }
}
