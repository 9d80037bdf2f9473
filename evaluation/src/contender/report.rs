//! retrace's outcome as a [`Report`]: the one place the harness reads the product's result
//! types, so the judges see retrace and any other system through the same shape.

use crate::score::report::{
    ChangedFile, Decisions, Named, Report, Reported, ReportedKind, Ruled, Verdict,
};
use reconciler::policy::{Decision, Part};
use reconciler::reconcile::Outcome;
use reconciler::resolve::FindingKind;

/// The files retrace changed and the findings and rulings it reported.
pub fn report(outcome: &Outcome) -> Report {
    let changed = outcome
        .changes
        .changed()
        .map(|(path, change)| ChangedFile {
            path: path.to_owned(),
            new: change.new.clone(),
        })
        .collect();
    let findings = outcome
        .findings
        .iter()
        .map(|f| Reported {
            kind: kind(f.kind),
            event: format!("{}:{}", f.event_source, f.api),
            resources: f
                .resources
                .iter()
                .map(|t| Named {
                    address: t.address.clone(),
                    identity: t.identity.clone(),
                })
                .collect(),
        })
        .collect();
    // A part the policy would absorb but the planner left to a person, with its reason (no
    // edit writes it cleanly), is left to a person as a flagged one is.
    let held = |address: &Option<String>, part: &Part| {
        address.as_deref().is_some_and(|a| {
            outcome
                .plan
                .unplanned
                .iter()
                .any(|u| u.resource == a && u.part == *part)
        })
    };
    let decisions = outcome
        .intents
        .iter()
        .flat_map(|d| d.intent.deltas.iter().zip(&d.rulings))
        .flat_map(|(delta, rulings)| {
            rulings.iter().map(move |r| Ruled {
                address: delta.address.clone(),
                resource_type: delta.resource.resource_type.clone(),
                identity: delta.resource.identity.clone(),
                attribute: r.part.attribute().to_owned(),
                decision: match held(&delta.address, &r.part) {
                    true => Verdict::Flag,
                    false => verdict(r.decision),
                },
            })
        })
        .collect();
    Report {
        changed,
        decisions: Decisions {
            findings,
            decisions,
            unaccounted: outcome.accounting.unaccounted.clone(),
        },
    }
}

fn kind(kind: FindingKind) -> ReportedKind {
    match kind {
        FindingKind::Security => ReportedKind::Security,
        FindingKind::Unexplained => ReportedKind::Unexplained,
        FindingKind::Unowned => ReportedKind::Unowned,
        FindingKind::HiddenValue | FindingKind::Operational => ReportedKind::Other,
    }
}

fn verdict(decision: Decision) -> Verdict {
    match decision {
        Decision::Absorb => Verdict::Absorb,
        // A change a reviewer rejected is left out of the code, as a flagged one is (only
        // `retrace nightly` decides it, so the benchmark never sees it).
        Decision::Flag | Decision::Rejected => Verdict::Flag,
        Decision::Ignore => Verdict::Ignore,
    }
}
