//! adapterkit for Rust: write adapters for the Adapter process protocol v1.
//!
//! An adapter declares its services, registers a handler per method and calls [`run`]:
//!
//! ```no_run
//! use adapterkit::{Adapter, CallError, Code, RequestContext, Service};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Deserialize, Serialize)]
//! struct Greet { name: String }
//!
//! let mut svc = Service::new("example.hello", 1);
//! svc.method("example.hello.greet", |p: Greet, ctx: RequestContext| async move {
//!     tokio::select! {
//!         _ = ctx.canceled() => Err(CallError::new(Code::Aborted, "Canceled")),
//!         _ = tokio::time::sleep(std::time::Duration::from_millis(10)) => Ok(p),
//!     }
//! });
//! adapterkit::run(Adapter::new(vec![svc]));
//! ```
//!
//! The SDK validates the catalog before anything is read, answers initialize (and
//! decodes its configuration), refuses requests before it, runs every request (first
//! polled on the thread that read it, then, if still pending, as its own tokio task) with
//! a [`RequestContext`] that the host's `cancel` and the end of stdin cancel,
//! answers a 33rd request in flight `busy`, maps errors to the eight codes, answers
//! unknown methods `unavailable`, ends the connection on host faults, exits within 2 s of
//! the end of stdin, and protects stdout at the file-descriptor level.
#![warn(missing_docs)]

mod catalog;
mod contract;
mod errors;
mod finite;
mod json;
mod log;
mod params;
mod serve;
mod spin;
mod types;
mod wire;
mod writer;
mod zero;

use std::any::TypeId;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;
use tokio::sync::Notify;

pub use catalog::{validate_catalog, CatalogError, CatalogService};
pub use contract::Method;
pub use errors::{cap_message, normalize_code, CallError, Code, ServeError, CODES, MAX_MESSAGE_BYTES};
pub use log::{default_module, timestamp, Level, Logger, LEVEL_ENV};
pub use params::{from_str, ParamsError};
pub use serve::{protect_stdout, run, serve};
pub use types::{Bytes, Number, Time};
pub use wire::{INITIALIZE, MAX_FRAME, MAX_ID, MAX_IN_FLIGHT, PROTOCOL_VERSION};

/// Re-exported so that handlers can take and return raw JSON (`Box<RawValue>`): the
/// params exactly as the host sent them, a result sent verbatim.
pub use serde_json::value::RawValue as RawJson;

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;
type HandlerFn = Arc<dyn Fn(&RawValue, RequestContext) -> BoxFuture<Result<String, CallError>> + Send + Sync>;
type InitFn = Arc<dyn Fn(&RawValue, RequestContext) -> BoxFuture<Result<(), CallError>> + Send + Sync>;

#[derive(Debug, Default)]
struct CancelState {
    canceled: AtomicBool,
    reason: Mutex<Option<&'static str>>,
    notify: Notify,
}

/// What a handler knows about its request, and its cancellation signal.
///
/// [`RequestContext::canceled`] completes when the host cancels the request or
/// disconnects; it fits `tokio::select!`:
///
/// ```ignore
/// tokio::select! {
///     _ = ctx.canceled() => Err(CallError::new(Code::Aborted, "Canceled")),
///     result = read_device(&params) => result,
/// }
/// ```
///
/// A cancelled handler keeps its concurrency slot until it returns, so return promptly
/// (R38).
#[derive(Debug, Clone)]
pub struct RequestContext {
    id: u64,
    method: Arc<str>,
    state: Arc<CancelState>,
    logger: Logger,
}

impl RequestContext {
    fn new(id: u64, method: &str, logger: Logger) -> Self {
        RequestContext { id, method: Arc::from(method), state: Arc::new(CancelState::default()), logger }
    }

    /// The request id.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The method's full name.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The adapter's logger.
    pub fn logger(&self) -> &Logger {
        &self.logger
    }

    /// Whether the request was cancelled.
    pub fn is_canceled(&self) -> bool {
        self.state.canceled.load(Ordering::Acquire)
    }

    /// Why the request was cancelled: "canceled by the host" or "host disconnected".
    pub fn reason(&self) -> Option<&'static str> {
        *self.state.reason.lock().unwrap()
    }

    /// Completes once the request is cancelled (at once if it already is).
    pub async fn canceled(&self) {
        loop {
            let notified = self.state.notify.notified();
            if self.is_canceled() {
                return;
            }
            notified.await;
        }
    }

    fn cancel(&self, reason: &'static str) {
        if !self.state.canceled.swap(true, Ordering::AcqRel) {
            *self.state.reason.lock().unwrap() = Some(reason);
            self.state.notify.notify_waiters();
        }
    }
}

/// One service of the catalog: an id, a version and its methods.
pub struct Service {
    id: String,
    version: i64,
    order: Vec<String>,
    handlers: HashMap<String, HandlerFn>,
}

impl Service {
    /// A service with the given id (dotted and namespaced) and version (>= 1); both are
    /// checked when the adapter is served.
    pub fn new(id: &str, version: i64) -> Self {
        Service { id: id.to_string(), version, order: Vec::new(), handlers: HashMap::new() }
    }

    /// Registers `handler` for the method `name` (its full name, prefixed with the
    /// service id). Registering a name twice is a duplicate in the catalog (R25).
    ///
    /// The params object is decoded into `P` by serde with the Go SDK's rules and words
    /// ([`from_str`]): unknown members refused whatever the serde attributes, integers
    /// exact and checked against their type, a refusal answered `invalid` with one line
    /// naming the field (`params: field "seq": expected an integer, got the number 1.5`).
    /// `P = Box<RawJson>` receives the params exactly as sent, and a `Box<RawJson>` result
    /// is sent verbatim. The result is encoded with serde_json.
    pub fn method<P, R, F, Fut>(&mut self, name: &str, handler: F) -> &mut Self
    where
        P: DeserializeOwned + Send + 'static,
        R: Serialize + Send + 'static,
        F: Fn(P, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, CallError>> + Send + 'static,
    {
        self.order.push(name.to_string());
        let handler = Arc::new(handler);
        let f: HandlerFn = Arc::new(move |params: &RawValue, ctx: RequestContext| {
            let decoded: Result<P, CallError> = if TypeId::of::<P>() == TypeId::of::<Box<RawValue>>() {
                serde_json::from_str(params.get()).map_err(|e| CallError::new(Code::Invalid, format!("params: {}", e)))
            } else {
                from_str(params.get()).map_err(|e| CallError::new(Code::Invalid, format!("params: {}", e)))
            };
            let handler = handler.clone();
            Box::pin(async move {
                let r = handler(decoded?, ctx).await?;
                let not_json =
                    |e: &dyn std::fmt::Display| CallError::new(Code::Failed, format!("Result is not JSON: {}", e));
                finite::check(&r).map_err(|e| not_json(&e))?;
                serde_json::to_string(&r).map_err(|e| not_json(&e))
            })
        });
        self.handlers.entry(name.to_string()).or_insert(f);
        self
    }

    /// The service as it appears in the catalog.
    pub fn entry(&self) -> CatalogService {
        CatalogService { id: self.id.clone(), version: self.version, methods: self.order.clone() }
    }
}

/// An adapter: its services and how it is configured.
pub struct Adapter {
    services: Vec<Service>,
    on_initialize: Option<InitFn>,
    logger: Logger,
    spin: bool,
}

impl Adapter {
    /// An adapter serving `services`, in order.
    pub fn new(services: Vec<Service>) -> Self {
        Adapter { services, on_initialize: None, logger: Logger::default(), spin: true }
    }

    /// Sets the logger the SDK's diagnostics go to (default: [`Logger::default`], hclog
    /// JSON lines on stderr at `$ADAPTERKIT_LOG_LEVEL`).
    pub fn logger(mut self, logger: Logger) -> Self {
        self.logger = logger;
        self
    }

    /// Whether a thread spins for 50 µs after each read while reads bring about one
    /// request each (default: yes), at the lowest scheduling priority (`SCHED_IDLE`), so
    /// that the next request finds a CPU running rather than halted, as Go's runtime spins
    /// its idle threads. On virtual machines whose idle CPUs wake slowly it takes a round
    /// trip from 30–40 µs to under ten. Any other task takes the CPU first; reads that
    /// bring several requests on average stop it. It costs CPU time, up to a core while one caller's requests follow
    /// each other closely, and none on a quiet connection: turn it off where CPU time counts
    /// more than a round trip's latency.
    pub fn spin(mut self, on: bool) -> Self {
        self.spin = on;
        self
    }

    /// Decodes initialize's configuration object into `C` (as params are, with
    /// [`from_str`]) and runs `f` with it before initialize is answered. A decoding error
    /// answers `invalid`; an error from `f`
    /// refuses the handshake with its code, and the host ends the connection (R26).
    pub fn on_initialize<C, F, Fut>(mut self, f: F) -> Self
    where
        C: DeserializeOwned + Send + 'static,
        F: Fn(C, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), CallError>> + Send + 'static,
    {
        let f = Arc::new(f);
        self.on_initialize = Some(Arc::new(move |config: &RawValue, ctx: RequestContext| {
            let decoded: Result<C, CallError> = from_str(config.get())
                .map_err(|e| CallError::new(Code::Invalid, format!("Invalid configuration: {}", e)));
            let f = f.clone();
            Box::pin(async move { f(decoded?, ctx).await })
        }));
        self
    }

    /// The catalog's services, validated (R19-R25).
    pub fn catalog(&self) -> Result<Vec<CatalogService>, ServeError> {
        let services: Vec<CatalogService> = self.services.iter().map(|s| s.entry()).collect();
        validate_catalog(&services).map_err(|e| ServeError::InvalidAdapter(format!("invalid catalog: {}", e)))?;
        Ok(services)
    }
}
