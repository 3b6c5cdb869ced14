//! Method descriptors: what `adapterctl contract gen -lang rust` writes for each method
//! of a Go contract, and how a handler is registered with one, its params and result
//! typed:
//!
//! ```ignore
//! mod device; // generated
//! let mut svc = Service::new(device::DEVICE_ID, device::DEVICE_VERSION);
//! svc.implement(device::READ_METHOD, |p, _ctx| async move {
//!     Ok(device::ReadResult { probe: p.probe, celsius: 21.5, ..Default::default() })
//! });
//! ```

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::{CallError, RequestContext, Service};

/// A method of a contract: its full name, with the types of its params (`P`) and result
/// (`R`), which the generated code declares with serde.
pub struct Method<P, R> {
    name: &'static str,
    types: PhantomData<fn(P) -> R>,
}

impl<P, R> Method<P, R> {
    /// The descriptor of the method `name` (generated code calls it).
    pub const fn new(name: &'static str) -> Self {
        Method { name, types: PhantomData }
    }

    /// The method's full name.
    pub const fn name(&self) -> &'static str {
        self.name
    }
}

impl<P, R> Clone for Method<P, R> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<P, R> Copy for Method<P, R> {}

impl<P, R> fmt::Debug for Method<P, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Method").field(&self.name).finish()
    }
}

impl Service {
    /// Registers `handler` for the method `m`, as [`Service::method`] does: the params
    /// are decoded into `P` with the SDK's rules (a refusal answers `invalid`), and the
    /// result, an `R`, is encoded by serde, so it has the contract's shape by its type.
    pub fn implement<P, R, F, Fut>(&mut self, m: Method<P, R>, handler: F) -> &mut Self
    where
        P: DeserializeOwned + Send + 'static,
        R: Serialize + Send + 'static,
        F: Fn(P, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, CallError>> + Send + 'static,
    {
        self.method(m.name, handler)
    }
}
