//! Helpers shared by the rule extraction tests.
#![allow(dead_code)]

use knowledge::{Extraction, RuleSet};
use serde_json::Value;

/// What the bundled rule for the call reads from its request and response (`null`: none);
/// panics naming the call when no rule takes it or the rule cannot read it.
pub fn extract(source: &str, api: &str, request: Value, response: Value) -> Extraction {
    let response = (!response.is_null()).then_some(&response);
    let rule = RuleSet::bundled()
        .expect("rules load")
        .find_for(source, api, Some(&request), response)
        .unwrap_or_else(|| panic!("no rule for {source} {api}"));
    rule.extract(Some(&request), response)
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The fields an extraction flags.
pub fn flagged(x: &Extraction) -> Vec<&str> {
    x.flags.iter().map(|f| f.field.as_str()).collect()
}
