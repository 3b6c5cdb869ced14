//! Error codes and the error types of the SDK.

use std::fmt;

/// The eight error codes of the protocol (R28); any other code is sent as `failed`.
pub const CODES: [&str; 8] = [
    Code::Invalid.as_str(),
    Code::Closed.as_str(),
    Code::Aborted.as_str(),
    Code::Denied.as_str(),
    Code::Unavailable.as_str(),
    Code::Busy.as_str(),
    Code::Failed.as_str(),
    Code::Deadline.as_str(),
];

/// One of the eight error codes of the protocol (R28).
///
/// `CallError::new(Code::Aborted, "Canceled")` takes it where a code string is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Code {
    /// The request is malformed or its params are wrong.
    Invalid,
    /// The adapter is shutting down.
    Closed,
    /// The request was cancelled.
    Aborted,
    /// The caller may not do this.
    Denied,
    /// The method or a resource it needs is not available.
    Unavailable,
    /// Too many requests in flight.
    Busy,
    /// Anything else that went wrong.
    Failed,
    /// The request ran out of time.
    Deadline,
}

impl Code {
    /// The code as sent on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            Code::Invalid => "invalid",
            Code::Closed => "closed",
            Code::Aborted => "aborted",
            Code::Denied => "denied",
            Code::Unavailable => "unavailable",
            Code::Busy => "busy",
            Code::Failed => "failed",
            Code::Deadline => "deadline",
        }
    }

    /// The code named `code`, if it is one of the eight.
    pub fn parse(code: &str) -> Option<Code> {
        [
            Code::Invalid,
            Code::Closed,
            Code::Aborted,
            Code::Denied,
            Code::Unavailable,
            Code::Busy,
            Code::Failed,
            Code::Deadline,
        ]
        .into_iter()
        .find(|c| c.as_str() == code)
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<Code> for String {
    fn from(c: Code) -> String {
        c.as_str().to_string()
    }
}

/// The longest error message sent, in UTF-8 bytes (R30).
pub const MAX_MESSAGE_BYTES: usize = 4096;

/// An error reply: return it from a handler to answer with `code` and `message`.
///
/// A code that is not one of [`CODES`] is sent as `failed`; the message is capped at
/// 4096 UTF-8 bytes on a character boundary when sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallError {
    /// The error code.
    pub code: String,
    /// The message.
    pub message: String,
}

impl CallError {
    /// An error reply with `code` and `message`.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        CallError { code: code.into(), message: message.into() }
    }
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for CallError {}

impl CallError {
    /// The code sent for this error: its own if it is one of the eight, else `failed`.
    pub fn kind(&self) -> Code {
        Code::parse(&self.code).unwrap_or(Code::Failed)
    }
}

/// Why an adapter cannot be served or a connection ended abnormally.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServeError {
    /// The adapter definition is invalid (its catalog breaks R19-R25); nothing was read.
    InvalidAdapter(String),
    /// The host broke the protocol in a way no error reply can answer (A14, A28).
    Violation(String),
    /// Writing to the host failed.
    Output(String),
}

impl fmt::Display for ServeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServeError::InvalidAdapter(s) => write!(f, "invalid adapter: {}", s),
            ServeError::Violation(s) => write!(f, "host protocol violation: {}", s),
            ServeError::Output(s) => write!(f, "writing to the host: {}", s),
        }
    }
}

impl std::error::Error for ServeError {}

/// Returns `code` if it is one of the eight codes, else `"failed"` (R28).
pub fn normalize_code(code: &str) -> &str {
    match Code::parse(code) {
        Some(c) => c.as_str(),
        None => Code::Failed.as_str(),
    }
}

/// Caps `message` at 4096 UTF-8 bytes without splitting a character (R30).
pub fn cap_message(message: &str) -> &str {
    if message.len() <= MAX_MESSAGE_BYTES {
        return message;
    }
    let mut cut = MAX_MESSAGE_BYTES;
    while !message.is_char_boundary(cut) {
        cut -= 1;
    }
    &message[..cut]
}
