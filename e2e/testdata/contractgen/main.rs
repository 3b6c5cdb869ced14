//! The e2e.contract service (e2e/contractapi) written with the Rust SDK and the types
//! adapterctl contract gen writes (contractapi.rs): each method returns its params.

mod contractapi;

use adapterkit::{Adapter, Service};
use contractapi as api;

fn main() {
    let mut svc = Service::new(api::E2E_CONTRACT_ID, api::E2E_CONTRACT_VERSION);
    svc.implement(api::EVERYTHING_METHOD, |p, _ctx| async move { Ok(p) });
    svc.implement(api::EVENT_METHOD, |p, _ctx| async move { Ok(p) });
    svc.implement(api::TREE_METHOD, |p, _ctx| async move { Ok(p) });
    adapterkit::run(Adapter::new(vec![svc]));
}
