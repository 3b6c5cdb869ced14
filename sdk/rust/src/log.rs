//! A logger writing the go-hclog JSON lines a host reads from an adapter's stderr.

use std::io::Write;

use serde_json::{Map, Value};

/// A log level, least severe first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// trace
    Trace,
    /// debug
    Debug,
    /// info
    Info,
    /// warn
    Warn,
    /// error
    Error,
}

impl Level {
    /// The name hclog writes.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Trace => "trace",
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Warn => "warn",
            Level::Error => "error",
        }
    }
}

/// Writes one go-hclog JSON line per record to stderr (stdout carries frames, R6):
///
/// ```text
/// {"@level":"info","@message":"ready","@module":"adapter","@timestamp":"2026-01-02T15:04:05.000000Z","probe":"inlet"}
/// ```
#[derive(Debug, Clone)]
pub struct Logger {
    module: String,
    level: Level,
    fields: Vec<(String, Value)>,
}

impl Default for Logger {
    fn default() -> Self {
        Logger::new("adapter", Level::Info)
    }
}

impl Logger {
    /// A logger with `@module` `module` writing records at or above `level`.
    pub fn new(module: &str, level: Level) -> Self {
        Logger { module: module.to_string(), level, fields: Vec::new() }
    }

    /// A logger whose module is this one's plus "." + `name`.
    pub fn named(&self, name: &str) -> Logger {
        let module = if self.module.is_empty() { name.to_string() } else { format!("{}.{}", self.module, name) };
        Logger { module, level: self.level, fields: self.fields.clone() }
    }

    /// A logger adding `key` = `value` to every record.
    pub fn with(&self, key: &str, value: impl Into<Value>) -> Logger {
        let mut l = self.clone();
        l.fields.push((key.to_string(), value.into()));
        l
    }

    /// Whether a record at `level` would be written.
    pub fn enabled(&self, level: Level) -> bool {
        level >= self.level
    }

    /// The JSON line of a record (without the newline).
    pub fn format(&self, level: Level, message: &str, fields: &[(&str, Value)]) -> String {
        let mut rec = Map::new();
        rec.insert("@level".into(), level.as_str().into());
        rec.insert("@message".into(), message.into());
        if !self.module.is_empty() {
            rec.insert("@module".into(), self.module.clone().into());
        }
        rec.insert("@timestamp".into(), timestamp().into());
        for (k, v) in &self.fields {
            if !k.starts_with('@') {
                rec.insert(k.clone(), v.clone());
            }
        }
        for (k, v) in fields {
            if !k.starts_with('@') {
                rec.insert((*k).to_string(), v.clone());
            }
        }
        Value::Object(rec).to_string()
    }

    /// Writes one record at `level` with `fields`.
    pub fn log(&self, level: Level, message: &str, fields: &[(&str, Value)]) {
        if !self.enabled(level) {
            return;
        }
        let mut line = self.format(level, message, fields);
        line.push('\n');
        let _ = std::io::stderr().write_all(line.as_bytes());
    }

    /// Logs at trace level.
    pub fn trace(&self, message: &str, fields: &[(&str, Value)]) {
        self.log(Level::Trace, message, fields)
    }
    /// Logs at debug level.
    pub fn debug(&self, message: &str, fields: &[(&str, Value)]) {
        self.log(Level::Debug, message, fields)
    }
    /// Logs at info level.
    pub fn info(&self, message: &str, fields: &[(&str, Value)]) {
        self.log(Level::Info, message, fields)
    }
    /// Logs at warn level.
    pub fn warn(&self, message: &str, fields: &[(&str, Value)]) {
        self.log(Level::Warn, message, fields)
    }
    /// Logs at error level.
    pub fn error(&self, message: &str, fields: &[(&str, Value)]) {
        self.log(Level::Error, message, fields)
    }
}

/// The current local time in hclog's JSON format: microseconds, and the offset or Z.
pub fn timestamp() -> String {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime and localtime_r write only into the structs passed.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    unsafe {
        libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts);
        libc::localtime_r(&ts.tv_sec, &mut tm);
    }
    let base = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        ts.tv_nsec / 1000
    );
    let off = tm.tm_gmtoff / 60;
    if off == 0 {
        return base + "Z";
    }
    let sign = if off > 0 { '+' } else { '-' };
    let a = off.abs();
    format!("{}{}{:02}:{:02}", base, sign, a / 60, a % 60)
}
