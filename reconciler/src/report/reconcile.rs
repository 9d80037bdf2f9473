//! `retrace reconcile` output: each intent with its calls, resources and decisions, the edits
//! and why each place was edited, what could not be reconciled and why, the diff, and the
//! validators' verdicts; as text or JSON.

use crate::intents::describe;
use crate::reconcile::Outcome;
use std::fmt::Write;

/// The outcome as a text report.
pub fn text(outcome: &Outcome) -> String {
    let mut out = String::new();
    if outcome.intents.is_empty() {
        out.push_str("No out-of-band changes.\n");
    }
    for d in &outcome.intents {
        let i = &d.intent;
        let _ = writeln!(
            out,
            "{} {:?} by {} ({}), {} to {}, {} call(s)",
            i.id,
            i.kind,
            i.actor,
            i.clients.join(", "),
            i.start.format("%Y-%m-%d %H:%M:%S"),
            i.end.format("%H:%M:%S"),
            i.evidence.len()
        );
        let _ = writeln!(out, "  {}", i.story);
        for e in &i.evidence {
            let _ = writeln!(
                out,
                "  - {} {} {}",
                e.time.format("%H:%M:%S"),
                e.api,
                e.event_id
            );
        }
        for (delta, rulings) in i.deltas.iter().zip(&d.rulings) {
            let _ = writeln!(out, "  * {}", describe(delta));
            for r in rulings {
                let _ = writeln!(
                    out,
                    "    {:?} {:?}: {}{}",
                    r.decision,
                    r.part,
                    r.reason,
                    warning(r.warning.as_deref())
                );
            }
        }
    }
    section(
        &mut out,
        "Edits",
        outcome.plan.steps.iter().map(|s| {
            format!(
                "{} {} on {}: {}{}",
                s.intent,
                s.tool,
                s.resource,
                s.why,
                warning(s.warning.as_deref())
            )
        }),
    );
    section(
        &mut out,
        "Not reconciled",
        outcome
            .plan
            .unplanned
            .iter()
            .map(|u| format!("{} {} {:?}: {}", u.intent, u.resource, u.part, u.reason)),
    );
    section(
        &mut out,
        "Calls without a rule",
        outcome.unexplained.iter().map(|u| {
            format!(
                "{} {} by {} ({}): {}",
                u.api, u.event_id, u.actor, u.event_source, u.reason
            )
        }),
    );
    if !outcome.diff.is_empty() {
        out.push('\n');
        out.push_str(&outcome.diff);
    }
    section(
        &mut out,
        "Validation",
        outcome.validations.iter().map(|v| {
            let mut line = format!(
                "{}: {}",
                v.validator,
                if v.passed { "passed" } else { "FAILED" }
            );
            for d in v.differences.iter().chain(&v.collateral) {
                let _ = write!(
                    line,
                    "\n    {} {}: code {} / cloud {}",
                    d.address, d.attribute, d.config, d.observed
                );
            }
            line
        }),
    );
    section(
        &mut out,
        "Validators not run",
        outcome
            .skipped_validators
            .iter()
            .map(|(n, why)| format!("{n}: {why}")),
    );
    if outcome.repair_rounds > 0 {
        let _ = writeln!(
            out,
            "\nRepaired in {} round(s): the withdrawn edits are listed under \"Not reconciled\".",
            outcome.repair_rounds
        );
    }
    let _ = writeln!(out, "\nStatus: {:?}", outcome.status);
    out
}

/// A caution for the reviewer as the end of a report line, or nothing.
fn warning(text: Option<&str>) -> String {
    text.map(|w| format!(" (warning: {w})")).unwrap_or_default()
}

fn section(out: &mut String, title: &str, lines: impl Iterator<Item = String>) {
    let lines: Vec<String> = lines.collect();
    if lines.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n{title}:");
    for line in lines {
        let _ = writeln!(out, "  {line}");
    }
}

/// The outcome as one JSON document (the diff included as text).
pub fn json(outcome: &Outcome) -> serde_json::Result<String> {
    serde_json::to_string_pretty(outcome)
}
