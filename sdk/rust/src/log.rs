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
    off: bool,
    fields: Vec<(String, Value)>,
}

/// The target of the SDK's own `log` records.
pub(crate) const TARGET: &str = "adapterkit";

/// The environment variable a host sets to choose adapters' log level.
pub const LEVEL_ENV: &str = "ADAPTERKIT_LOG_LEVEL";

impl Default for Logger {
    /// A logger named after the executable without its version (`rsecho` for
    /// `rsecho_v1.0.0`), as the Go SDK names it, at the level `$ADAPTERKIT_LOG_LEVEL`
    /// (trace .. error, off; default info), which the host sets.
    fn default() -> Self {
        let mut l = Logger::new(&default_module(), Level::Info);
        match std::env::var(LEVEL_ENV).unwrap_or_default().to_lowercase().as_str() {
            "trace" => l.level = Level::Trace,
            "debug" => l.level = Level::Debug,
            "warn" => l.level = Level::Warn,
            "error" => l.level = Level::Error,
            "off" => l.off = true,
            _ => {}
        }
        l
    }
}

/// The executable's name without its version and extension: `rsecho` for `rsecho_v1.0.0`.
pub fn default_module() -> String {
    let arg0 = std::env::args().next().unwrap_or_default();
    let mut name =
        std::path::Path::new(&arg0).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if let Some(stripped) = name.strip_suffix(".exe") {
        name = stripped.to_string();
    }
    if let Some(i) = name.find("_v") {
        if name[i + 2..].starts_with(|c: char| c.is_ascii_digit()) {
            name.truncate(i);
        }
    }
    if name.is_empty() {
        "adapter".into()
    } else {
        name
    }
}

impl Logger {
    /// A logger with `@module` `module` writing records at or above `level`.
    pub fn new(module: &str, level: Level) -> Self {
        Logger { module: module.to_string(), level, off: false, fields: Vec::new() }
    }

    /// A logger whose module is this one's plus "." + `name`.
    pub fn named(&self, name: &str) -> Logger {
        let module = if self.module.is_empty() { name.to_string() } else { format!("{}.{}", self.module, name) };
        Logger { module, level: self.level, off: self.off, fields: self.fields.clone() }
    }

    /// A logger adding `key` = `value` to every record.
    pub fn with(&self, key: &str, value: impl Into<Value>) -> Logger {
        let mut l = self.clone();
        l.fields.push((key.to_string(), value.into()));
        l
    }

    /// Whether a record at `level` would be written.
    pub fn enabled(&self, level: Level) -> bool {
        !self.off && level >= self.level
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

    /// Makes this logger the process's [`log`] logger, so that `log::info!` and the
    /// like, in handlers and in the SDK (its records have the target `adapterkit`),
    /// write hclog lines; it sets [`log::max_level`] to this logger's level. Fails,
    /// changing nothing, when a logger is installed already. [`crate::run`] installs the
    /// adapter's logger this way unless the adapter installed one before.
    pub fn install(self) -> Result<(), log::SetLoggerError> {
        let max = if self.off { log::LevelFilter::Off } else { filter(self.level) };
        log::set_boxed_logger(Box::new(self))?;
        log::set_max_level(max);
        Ok(())
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

fn filter(level: Level) -> log::LevelFilter {
    match level {
        Level::Trace => log::LevelFilter::Trace,
        Level::Debug => log::LevelFilter::Debug,
        Level::Info => log::LevelFilter::Info,
        Level::Warn => log::LevelFilter::Warn,
        Level::Error => log::LevelFilter::Error,
    }
}

impl From<log::Level> for Level {
    fn from(l: log::Level) -> Level {
        match l {
            log::Level::Trace => Level::Trace,
            log::Level::Debug => Level::Debug,
            log::Level::Info => Level::Info,
            log::Level::Warn => Level::Warn,
            log::Level::Error => Level::Error,
        }
    }
}

/// A [`log`] record becomes one hclog line: its level, its message, this logger's
/// `@module` and fields.
impl log::Log for Logger {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        Logger::enabled(self, metadata.level().into())
    }

    fn log(&self, record: &log::Record<'_>) {
        let level = record.level().into();
        if !Logger::enabled(self, level) {
            return;
        }
        match record.args().as_str() {
            Some(m) => Logger::log(self, level, m, &[]),
            None => Logger::log(self, level, &record.args().to_string(), &[]),
        }
    }

    fn flush(&self) {}
}
