//! The catalog and its validation (R19-R25).

use std::fmt;

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

/// Why a catalog is invalid: the rule it breaks and what breaks it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogError {
    rule: &'static str,
    message: String,
}

impl CatalogError {
    fn new(rule: &'static str, message: String) -> Self {
        CatalogError { rule, message }
    }

    /// The rule broken, e.g. `"R21"`.
    pub fn rule(&self) -> &'static str {
        self.rule
    }
}

impl fmt::Display for CatalogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.rule)
    }
}

impl std::error::Error for CatalogError {}

/// Checks the catalog of `services`: `Err` says why it is invalid.
///
/// Checks R20-R25 with the decisions A9-A11: ids and methods dotted with non-empty
/// segments, nothing starting with "system", versions >= 1, non-empty method lists,
/// every method prefixed by its service id and a dot, no service id and no method name
/// twice.
pub fn validate_catalog(services: &[CatalogService]) -> Result<(), CatalogError> {
    let mut ids = std::collections::HashSet::new();
    let mut methods = std::collections::HashSet::new();
    for s in services {
        if s.id.starts_with("system") {
            return Err(CatalogError::new("R21", format!("service id {} starts with system", s.id)));
            // R21 first, as the Go SDK
        }
        if !dotted(&s.id) {
            return Err(CatalogError::new("R20", format!("service id {:?} is not dotted and namespaced", s.id)));
        }
        if s.version < 1 {
            return Err(CatalogError::new("R22", format!("service {}: version {} is not >= 1", s.id, s.version)));
        }
        if s.methods.is_empty() {
            return Err(CatalogError::new("R23", format!("service {} has no methods", s.id)));
        }
        if !ids.insert(s.id.clone()) {
            return Err(CatalogError::new("R25", format!("service id {} is duplicated", s.id)));
        }
        for m in &s.methods {
            if m.starts_with("system") {
                return Err(CatalogError::new("R21", format!("method {} starts with system", m)));
            }
            if !dotted(m) {
                return Err(CatalogError::new("R20", format!("method {:?} is not dotted and namespaced", m)));
            }
            if !m.starts_with(&format!("{}.", s.id)) || m.len() == s.id.len() + 1 {
                return Err(CatalogError::new(
                    "R24",
                    format!("method {} is not prefixed by its service id {}", m, s.id),
                ));
            }
            if !methods.insert(m.clone()) {
                return Err(CatalogError::new("R25", format!("method {} is duplicated", m)));
            }
        }
    }
    Ok(())
}
