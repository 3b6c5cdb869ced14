//! Frames and envelopes of the Adapter process protocol v1 (R1-R14).

use std::collections::HashMap;

use serde_json::value::RawValue;

use crate::errors::{cap_message, normalize_code};

/// The largest payload, in bytes, the 4-byte prefix excluded (R3, A1).
pub const MAX_FRAME: usize = 4 << 20;
/// The largest request id (R14).
pub const MAX_ID: u64 = (1 << 53) - 1;
/// Requests a connection runs at once; one more is answered busy (R40).
pub const MAX_IN_FLIGHT: usize = 32;
/// The protocol version, also every envelope's `v` (A5).
pub const PROTOCOL_VERSION: i64 = 1;
/// The handshake's method (R17).
pub const INITIALIZE: &str = "system.adapter.initialize";

/// The hint given when the input reads as text.
pub const TEXT_HINT: &str = "the input reads as text, not as length-prefixed frames: an adapter is started by a host (try `adapterctl check PATH`), not fed text by hand";

/// Whether a frame header is printable text.
pub fn looks_like_text(head: &[u8]) -> bool {
    head.iter().all(|&c| (32..127).contains(&c) || c == b'\t' || c == b'\n' || c == b'\r')
}

/// A host message, decoded.
#[derive(Debug)]
pub enum HostMessage<'a> {
    /// A valid request.
    Request { id: u64, method: String, params: &'a RawValue },
    /// A request whose envelope is invalid but whose id is known: answered invalid (A4).
    BadRequest { id: u64, problem: String },
    /// A valid cancel.
    Cancel { id: u64 },
    /// A malformed cancel: ignored (A4).
    BadCancel,
}

/// Parses an id literal: an integer from 1 to 2^53-1 (R14, A6).
pub fn parse_id(raw: &RawValue) -> Option<u64> {
    let s = raw.get();
    if s.is_empty() || s.len() > 16 || !s.bytes().all(|b| b.is_ascii_digit()) || s.starts_with('0') {
        return None;
    }
    let id: u64 = s.parse().ok()?;
    if id <= MAX_ID {
        Some(id)
    } else {
        None
    }
}

/// Decodes a payload from the host; an error is a violation that ends the connection.
pub fn decode_host(payload: &[u8]) -> Result<HostMessage<'_>, String> {
    let text = std::str::from_utf8(payload).map_err(|e| format!("a payload that is not UTF-8: {}", e))?;
    let m: HashMap<String, &RawValue> =
        serde_json::from_str(text).map_err(|e| format!("a payload that is not one JSON object: {}", e))?;
    let typ: Option<String> = m.get("type").and_then(|r| serde_json::from_str(r.get()).ok());
    let id = m.get("id").and_then(|r| parse_id(r));
    let v_ok = m.get("v").map(|r| r.get() == "1").unwrap_or(false);
    match typ.as_deref() {
        Some("cancel") => match id {
            Some(id) if m.len() == 3 && v_ok => Ok(HostMessage::Cancel { id }),
            _ => Ok(HostMessage::BadCancel),
        },
        Some("request") => {
            let id = id.ok_or_else(|| "a request without a valid id (A28)".to_string())?;
            let mut extra: Vec<&String> =
                m.keys().filter(|k| !["type", "v", "id", "method", "params"].contains(&k.as_str())).collect();
            extra.sort();
            if let Some(k) = extra.first() {
                return Ok(HostMessage::BadRequest { id, problem: format!("unknown field (field {:?})", k) });
            }
            for k in ["method", "params", "v"] {
                if !m.contains_key(k) {
                    return Ok(HostMessage::BadRequest { id, problem: format!("missing field (field {:?})", k) });
                }
            }
            if !v_ok {
                return Ok(HostMessage::BadRequest { id, problem: "v is not 1 (field \"v\")".into() });
            }
            let method: String = match serde_json::from_str(m["method"].get()) {
                Ok(s) => s,
                Err(_) => {
                    return Ok(HostMessage::BadRequest {
                        id,
                        problem: "method is not a string (field \"method\")".into(),
                    })
                }
            };
            let params = m["params"];
            if !params.get().starts_with('{') {
                return Ok(HostMessage::BadRequest {
                    id,
                    problem: "params is not an object (field \"params\")".into(),
                });
            }
            Ok(HostMessage::Request { id, method, params })
        }
        other => Err(format!("an envelope of type {:?} from the host (A28)", other)),
    }
}

/// Appends the 4-byte big-endian length of `payload` and the payload (R1).
pub fn frame(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + payload.len());
    out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    out.extend_from_slice(payload);
    out
}

/// A framed result envelope whose value is the JSON text `value`.
pub fn result_frame(id: u64, value: &str) -> Vec<u8> {
    let head = format!("{{\"type\":\"result\",\"v\":1,\"id\":{},\"value\":", id);
    let n = head.len() + value.len() + 1;
    let mut out = Vec::with_capacity(4 + n);
    out.extend_from_slice(&(n as u32).to_be_bytes());
    out.extend_from_slice(head.as_bytes());
    out.extend_from_slice(value.as_bytes());
    out.push(b'}');
    out
}

/// A framed error envelope: the code normalised (R28), the message capped (R30).
pub fn error_frame(id: u64, code: &str, message: &str) -> Vec<u8> {
    let msg = serde_json::to_string(cap_message(message)).unwrap_or_else(|_| "\"\"".into());
    let payload = format!(
        "{{\"type\":\"error\",\"v\":1,\"id\":{},\"code\":\"{}\",\"message\":{}}}",
        id,
        normalize_code(code),
        msg
    );
    frame(payload.as_bytes())
}
