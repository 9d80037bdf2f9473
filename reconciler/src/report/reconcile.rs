//! `retrace reconcile` output: each intent with its calls, resources and decisions, the edits
//! and why each place was edited, what could not be reconciled and why, the diff, and the
//! validators' verdicts; as text or JSON.

use super::words;
use crate::intents::{Delta, describe};
use crate::pipeline::InputSummary;
use crate::reconcile::{Accounting, Outcome};
use crate::resolve::{Finding, FindingKind, Reach};
use std::fmt::Write;

/// The input section of a text report: what was read, the window it covered, duplicates,
/// each malformed record skipped with where it was and why, and what became of the write
/// calls (a bug report when one has no fate).
pub fn input_text(input: &InputSummary, writes: &Accounting) -> String {
    let mut out = String::new();
    let span = match (input.first, input.last) {
        (Some(first), Some(last)) => format!(
            ", from {} to {}",
            first.format("%Y-%m-%d %H:%M:%S"),
            last.format("%Y-%m-%d %H:%M:%S")
        ),
        _ => String::new(),
    };
    let _ = writeln!(
        out,
        "Input: {} record(s) read, {} inside the window{span}, {} outside it, {} duplicate(s), {} malformed",
        input.records, input.in_window, input.filtered_out, input.duplicates, input.skipped
    );
    let _ = writeln!(out, "  {}", writes.words());
    if !writes.holds() {
        let _ = writeln!(out, "  {}", unaccounted_text(writes));
    }
    for source in &input.sources {
        let _ = writeln!(out, "  from {source}");
    }
    for bad in &input.skipped_records {
        let at = bad
            .offset
            .map(|o| format!(" (byte {o})"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  skipped {} record #{}{at}: {}",
            bad.source, bad.index, bad.reason
        );
    }
    if input.skipped > input.skipped_records.len() as u64 {
        let more = input.skipped - input.skipped_records.len() as u64;
        let _ = writeln!(out, "  ... and {more} more malformed record(s)");
    }
    out.push('\n');
    out
}

/// The bug report for write calls with no fate in the report.
pub fn unaccounted_text(writes: &Accounting) -> String {
    format!(
        "BUG: {} out-of-band write call(s) ended in no intent and no finding ({}); this is a \
         bug of retrace, please report it with these event ids",
        writes.unaccounted.len(),
        writes.unaccounted.join(", ")
    )
}

/// The outcome as a text report.
pub fn text(outcome: &Outcome) -> String {
    let mut out = String::new();
    if outcome.intents.is_empty() && outcome.findings.is_empty() {
        out.push_str("No out-of-band changes.\n");
    }
    for d in &outcome.intents {
        let i = &d.intent;
        let _ = writeln!(
            out,
            "{} {}, by {} ({}), {} to {}, {} call(s)",
            i.id,
            words::kind(i.kind),
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
                    "    {} {}: {}{}",
                    words::decision(r.decision),
                    words::part(&r.part, Some(delta)),
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
                s.call.name(),
                s.resource,
                s.why,
                warning(s.warning.as_deref())
            )
        }),
    );
    section(
        &mut out,
        "Not reconciled",
        outcome.plan.unplanned.iter().map(|u| {
            let delta = delta_of(outcome, &u.intent, &u.resource);
            let part = words::part(&u.part, delta);
            format!("{} {} {part}: {}", u.intent, u.resource, u.reason)
        }),
    );
    section(
        &mut out,
        "Placed by the agent",
        outcome.plan.placed.iter().map(|u| {
            let delta = delta_of(outcome, &u.intent, &u.resource);
            let part = words::part(&u.part, delta);
            format!(
                "{} {} {part} (the planner: {})",
                u.intent, u.resource, u.reason
            )
        }),
    );
    section(
        &mut out,
        "Already in the code",
        outcome
            .plan
            .settled
            .iter()
            .map(|u| format!("{} {}: {}", u.intent, u.resource, u.reason)),
    );
    findings(&mut out, outcome);
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
            if let Some(note) = &v.note {
                let _ = write!(line, " ({note})");
            }
            for d in &v.differences {
                let _ = write!(line, "\n    {}", words::difference(d));
            }
            for d in &v.collateral {
                let _ = write!(
                    line,
                    "\n    not touched by any intent: {}",
                    words::difference(d)
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
    let _ = writeln!(out, "\nStatus: {}", words::outcome_status(outcome));
    out
}

/// The delta of intent `intent` on `resource` (its address, or its type and identity).
fn delta_of<'o>(outcome: &'o Outcome, intent: &str, resource: &str) -> Option<&'o Delta> {
    let decided = outcome.intents.iter().find(|d| d.intent.id == intent)?;
    decided
        .intent
        .deltas
        .iter()
        .find(|d| d.address.as_deref() == Some(resource) || d.resource.to_string() == resource)
}

/// The findings, a section per kind: security first, each with its event id, who, where,
/// the resources it named and why; operational calls one line each.
fn findings(out: &mut String, outcome: &Outcome) {
    let kinds = [
        FindingKind::Security,
        FindingKind::HiddenValue,
        FindingKind::Unexplained,
        FindingKind::Operational,
        FindingKind::Unowned,
    ];
    for kind in kinds {
        let lines = outcome
            .findings
            .iter()
            .filter(|f| f.kind == kind)
            .map(finding_line);
        section(out, kind.label(), lines);
    }
}

/// One finding on a line: API, event id, actor, place, resources, reach and reason.
pub fn finding_line(f: &Finding) -> String {
    let resources: Vec<String> = f
        .resources
        .iter()
        .map(|t| match &t.address {
            Some(address) => format!("{address} ({})", t.identity),
            None => t.identity.clone(),
        })
        .collect();
    let on = if resources.is_empty() {
        String::new()
    } else {
        format!(" on {}", resources.join(", "))
    };
    let reach = match f.reach {
        Reach::Managed => "a managed resource",
        Reach::Account => "in this project's account, not managed here",
        Reach::Elsewhere => "in another account or region, not this project's",
    };
    let risk = f.risk.map(|r| format!("{r} risk, ")).unwrap_or_default();
    format!(
        "{} {} by {} in {}/{}{on} [{risk}{reach}]: {}",
        f.api,
        f.event_id,
        f.actor,
        f.account.as_deref().unwrap_or("?"),
        f.region,
        f.reason
    )
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
