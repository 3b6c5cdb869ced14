//! A JSON tree that keeps every number as its literal text and every object's members in
//! the order written (duplicates too), for the params checks of `params.rs`; and the
//! base64 that Go's `[]byte` travels as.

use std::borrow::Cow;

/// A parsed JSON value borrowing the text it was parsed from.
#[derive(Debug)]
pub(crate) enum Json<'a> {
    Null,
    Bool(bool),
    /// A number's literal, exactly as written ("1.0", "1e3", "-0").
    Num(&'a str),
    Str(Cow<'a, str>),
    Arr(Vec<Json<'a>>),
    Obj(Vec<(Cow<'a, str>, Json<'a>)>),
}

/// Nesting deeper than this is refused, as by the Go SDK.
const MAX_DEPTH: usize = 10_000;

struct Parser<'a> {
    s: &'a str,
    b: &'a [u8],
    i: usize,
    depth: usize,
}

/// Parses one JSON text; the error says what is wrong and where.
pub(crate) fn parse(s: &str) -> Result<Json<'_>, String> {
    let mut p = Parser { s, b: s.as_bytes(), i: 0, depth: 0 };
    let v = p.value()?;
    p.ws();
    if p.i != p.b.len() {
        return Err(p.fail("data after the JSON value"));
    }
    Ok(v)
}

impl<'a> Parser<'a> {
    fn fail(&self, what: &str) -> String {
        format!("{} at offset {}", what, self.i)
    }

    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn value(&mut self) -> Result<Json<'a>, String> {
        self.ws();
        match self.b.get(self.i) {
            None => Err(self.fail("unexpected end of JSON")),
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'"') => Ok(Json::Str(self.string()?)),
            Some(b't') => self.word("true", Json::Bool(true)),
            Some(b'f') => self.word("false", Json::Bool(false)),
            Some(b'n') => self.word("null", Json::Null),
            Some(_) => self.number(),
        }
    }

    fn word(&mut self, w: &str, v: Json<'a>) -> Result<Json<'a>, String> {
        if !self.s[self.i..].starts_with(w) {
            return Err(self.fail("invalid literal"));
        }
        self.i += w.len();
        Ok(v)
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while self.i < self.b.len() && self.b[self.i].is_ascii_digit() {
            self.i += 1;
        }
        self.i - start
    }

    fn number(&mut self) -> Result<Json<'a>, String> {
        let start = self.i;
        if self.b[self.i] == b'-' {
            self.i += 1;
        }
        let first = self.i;
        let n = self.digits();
        if n == 0 || (n > 1 && self.b[first] == b'0') {
            self.i = start;
            return Err(self.fail("invalid number"));
        }
        if self.b.get(self.i) == Some(&b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return Err(self.fail("invalid number"));
            }
        }
        if matches!(self.b.get(self.i), Some(b'e') | Some(b'E')) {
            self.i += 1;
            if matches!(self.b.get(self.i), Some(b'+') | Some(b'-')) {
                self.i += 1;
            }
            if self.digits() == 0 {
                return Err(self.fail("invalid number"));
            }
        }
        Ok(Json::Num(&self.s[start..self.i]))
    }

    fn string(&mut self) -> Result<Cow<'a, str>, String> {
        let start = self.i;
        let mut j = start + 1;
        let mut escaped = false;
        loop {
            match self.b.get(j) {
                None => return Err(self.fail("unterminated string")),
                Some(b'"') => break,
                Some(b'\\') => {
                    escaped = true;
                    j += 2;
                }
                Some(c) if *c < 0x20 => return Err(self.fail("control character in a string")),
                Some(_) => j += 1,
            }
        }
        self.i = j + 1;
        if !escaped {
            return Ok(Cow::Borrowed(&self.s[start + 1..j]));
        }
        serde_json::from_str::<String>(&self.s[start..j + 1]).map(Cow::Owned).map_err(|e| {
            self.i = start;
            self.fail(&format!("invalid string ({})", e))
        })
    }

    fn enter(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.fail("exceeded max depth"));
        }
        self.i += 1;
        self.ws();
        Ok(())
    }

    fn array(&mut self) -> Result<Json<'a>, String> {
        self.enter()?;
        let mut out = Vec::new();
        if self.b.get(self.i) == Some(&b']') {
            self.i += 1;
            self.depth -= 1;
            return Ok(Json::Arr(out));
        }
        loop {
            out.push(self.value()?);
            self.ws();
            match self.b.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    self.depth -= 1;
                    return Ok(Json::Arr(out));
                }
                _ => return Err(self.fail("expected ',' or ']' in an array")),
            }
        }
    }

    fn object(&mut self) -> Result<Json<'a>, String> {
        self.enter()?;
        let mut out = Vec::new();
        if self.b.get(self.i) == Some(&b'}') {
            self.i += 1;
            self.depth -= 1;
            return Ok(Json::Obj(out));
        }
        loop {
            self.ws();
            if self.b.get(self.i) != Some(&b'"') {
                return Err(self.fail("expected a member name"));
            }
            let k = self.string()?;
            self.ws();
            if self.b.get(self.i) != Some(&b':') {
                return Err(self.fail("expected ':' after a member name"));
            }
            self.i += 1;
            out.push((k, self.value()?));
            self.ws();
            match self.b.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    self.depth -= 1;
                    return Ok(Json::Obj(out));
                }
                _ => return Err(self.fail("expected ',' or '}' in an object")),
            }
        }
    }
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding, as Go's encoding/base64.StdEncoding writes it.
pub(crate) fn base64_encode(b: &[u8]) -> String {
    let mut s = String::with_capacity((b.len() + 2) / 3 * 4);
    for c in b.chunks(3) {
        let n = (c[0] as u32) << 16 | (*c.get(1).unwrap_or(&0) as u32) << 8 | *c.get(2).unwrap_or(&0) as u32;
        for k in 0..4 {
            if k <= c.len() {
                s.push(B64[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

/// Decodes standard base64 with its padding; None for anything else.
pub(crate) fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    if b.len() % 4 != 0 {
        return None;
    }
    let val = |c: u8| B64.iter().position(|&x| x == c).map(|p| p as u32);
    let mut out = Vec::with_capacity(b.len() / 4 * 3);
    for (i, q) in b.chunks(4).enumerate() {
        let last = i == b.len() / 4 - 1;
        let pad = if last { q.iter().rev().take_while(|&&c| c == b'=').count() } else { 0 };
        if pad > 2 {
            return None;
        }
        let mut n = 0u32;
        for &c in &q[..4 - pad] {
            n = n << 6 | val(c)?;
        }
        n <<= 6 * pad as u32;
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        // Bits left over after the last byte may be set: Go's StdEncoding (not Strict)
        // accepts them too.
        out.extend_from_slice(&bytes[..3 - pad]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips() {
        for b in [&b""[..], b"\x00", b"\x00\x01", b"\x00\x01\xfe", b"\x00\x01\xfe\xff"] {
            assert_eq!(base64_decode(&base64_encode(b)).as_deref(), Some(b));
        }
        assert_eq!(base64_encode(b"\x00\x01\xfe\xff"), "AAH+/w==");
        for bad in ["AA", "A===", "!!!!", "AA=A"] {
            assert_eq!(base64_decode(bad), None, "{}", bad);
        }
    }

    #[test]
    fn parse_keeps_literals_and_order() {
        match parse(r#" {"b":1.0,"a":[1e3,-0,"\u00e9"],"b":null} "#).unwrap() {
            Json::Obj(m) => {
                let keys: Vec<&str> = m.iter().map(|(k, _)| k.as_ref()).collect();
                assert_eq!(keys, ["b", "a", "b"]);
                assert!(matches!(m[0].1, Json::Num("1.0")));
            }
            v => panic!("{:?}", v),
        }
        for bad in ["", "{", "[1,]", r#"{"a" 1}"#, "01", "1.", "\"\u{1}\"", r#""\x""#, "nul", "1 2"] {
            assert!(parse(bad).is_err(), "{:?}", bad);
        }
    }

    /// Accepts and refuses what serde_json does, over texts near valid JSON (valid ones
    /// and random edits of them, from a seeded generator).
    #[test]
    fn parse_agrees_with_serde_json() {
        let corpus = [
            r#"{"a":[1,-0.5e-3,9007199254740993,"x\n\u00e9",true,false,null],"b":{}}"#,
            "[]",
            r#""s""#,
            "0",
            "[[[[1]]]]",
        ];
        let alphabet: Vec<char> = "{}[]\",:0123456789.eE+- \t\ntrufalsn\\/ab".chars().collect();
        let mut seed: u32 = 12345;
        let mut rnd = |n: usize| {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345) & 0x7fff_ffff;
            (seed >> 16) as usize % n // the high bits: the low ones of this generator cycle fast
        };
        let mut accepted = 0;
        for _ in 0..20_000 {
            let mut s: Vec<char> = corpus[rnd(corpus.len())].chars().collect();
            for _ in 0..rnd(4) {
                let at = rnd(s.len() + 1);
                let c = alphabet[rnd(alphabet.len())];
                match rnd(3) {
                    0 => s.insert(at, c),
                    1 if at < s.len() => {
                        s.remove(at);
                    }
                    _ if at < s.len() => s[at] = c,
                    _ => {}
                }
            }
            let s: String = s.into_iter().collect();
            let want = serde_json::from_str::<Box<serde_json::value::RawValue>>(&s).is_ok();
            assert_eq!(parse(&s).is_ok(), want, "{:?}", s);
            accepted += want as usize;
        }
        assert!(accepted > 1000, "only {} valid texts", accepted);
    }
}
