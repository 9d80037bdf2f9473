//! What generated scenarios cover: the resource types whose instances or attributes their
//! expected outcomes touch, and how many scenarios each service family has.

use super::ProjectScenarios;
use crate::family;
use std::collections::{BTreeMap, BTreeSet};

/// The breadth of a set of scenarios.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Resource types changed, created or deleted in at least one scenario.
    pub types: BTreeSet<String>,
    /// Scenarios per family.
    pub families: BTreeMap<String, usize>,
}

/// The coverage of the scenarios of `projects`.
pub fn coverage(projects: &[ProjectScenarios]) -> Coverage {
    let mut out = Coverage::default();
    for g in projects.iter().flat_map(|p| &p.scenarios) {
        let changed = g.delta.upserts.iter().map(|i| i.resource_type.clone());
        let removed = g
            .delta
            .removed
            .iter()
            .map(|a| family::type_of_address(a).to_owned());
        out.types.extend(changed.chain(removed));
        *out.families.entry(g.scenario.family.clone()).or_default() += 1;
    }
    out
}
