//! The catalog and its validation (R19-R25).

use serde::{Deserialize, Serialize};

/// A service as it appears in the catalog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CatalogService {
    /// The service id, e.g. `example.device`.
    pub id: String,
    /// The version, >= 1.
    pub version: i64,
    /// The methods' full names.
    pub methods: Vec<String>,
}

fn dotted(name: &str) -> bool {
    let parts: Vec<&str> = name.split('.').collect();
    parts.len() >= 2 && parts.iter().all(|p| !p.is_empty())
}

/// Returns why the catalog of `services` is invalid, or `None`.
///
/// Checks R20-R25 with the decisions A9-A11: ids and methods dotted with non-empty
/// segments, nothing starting with "system", versions >= 1, non-empty method lists,
/// every method prefixed by its service id and a dot, no service id and no method name
/// twice.
pub fn validate_catalog(services: &[CatalogService]) -> Option<String> {
    let mut ids = std::collections::HashSet::new();
    let mut methods = std::collections::HashSet::new();
    for s in services {
        if s.id.starts_with("system") {
            return Some(format!("service id {} starts with system (R21)", s.id)); // R21 first, as the Go SDK
        }
        if !dotted(&s.id) {
            return Some(format!("service id {:?} is not dotted and namespaced (R20)", s.id));
        }
        if s.version < 1 {
            return Some(format!("service {}: version {} is not >= 1 (R22)", s.id, s.version));
        }
        if s.methods.is_empty() {
            return Some(format!("service {} has no methods (R23)", s.id));
        }
        if !ids.insert(s.id.clone()) {
            return Some(format!("service id {} is duplicated (R25)", s.id));
        }
        for m in &s.methods {
            if m.starts_with("system") {
                return Some(format!("method {} starts with system (R21)", m));
            }
            if !dotted(m) {
                return Some(format!("method {:?} is not dotted and namespaced (R20)", m));
            }
            if !m.starts_with(&format!("{}.", s.id)) || m.len() == s.id.len() + 1 {
                return Some(format!("method {} is not prefixed by its service id {} (R24)", m, s.id));
            }
            if !methods.insert(m.clone()) {
                return Some(format!("method {} is duplicated (R25)", m));
            }
        }
    }
    None
}
