//! The evidence a nightly run puts in front of a reviewer. A night's reconciliation is told
//! in its commit message and turned into [`Entry`]s: each intent in plain words with its
//! actor, client, time and event ids and each decision with its reason, rendered once, with
//! what it leaves for a person. The request's description is rebuilt every night from the
//! ledger of everything its branch holds (see [`super::ledger`]), never from one night alone.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use crate::agent::AgentReport;
use crate::intents::describe;
use crate::policy::{Decision, Fingerprint};
use crate::reconcile::{Decided, Outcome};
use crate::report::reconcile::finding_line;
use crate::report::words;

/// Stands for an intent's id in rendered text until the ledger numbers it.
pub const ID: &str = "\u{1}ID\u{1}";

/// One intent as the ledger keeps it: rendered once, numbered when the description is built.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Its first event id: the same intent read twice is kept once.
    pub key: String,
    /// Its section of the description, with [`ID`] for its number.
    pub section: String,
    /// What it leaves for a person, each with [`ID`] for its number.
    pub held: Vec<String>,
    /// Whether it proposes or holds anything (not cancelled out, already in the code,
    /// ignored or left out as rejected).
    pub live: bool,
    /// Its calls' event ids.
    pub event_ids: Vec<String>,
    /// The changes its edits propose, for remembering a rejection.
    pub proposed: Vec<Fingerprint>,
    /// Its first and last call, RFC 3339.
    pub start: String,
    /// Its last call.
    pub end: String,
}

/// What a run did for one workspace, as the commit and the ledger tell it.
pub struct Told<'a> {
    /// The workspace's name.
    pub workspace: &'a str,
    /// The reconciliation.
    pub outcome: &'a Outcome,
    /// The window of events read, in words (`2026-11-24 02:00 to 2026-11-25 02:00 UTC`).
    pub window: &'a str,
    /// The title template (`[nightly] title`).
    pub title: &'a str,
    /// What the agent did, when it ran.
    pub agent: Option<&'a AgentReport>,
}

/// The title template with `{workspace}` and `{changes}` filled in.
pub fn title(template: &str, workspace: &str, changes: usize) -> String {
    template
        .replace("{workspace}", workspace)
        .replace("{changes}", &changes.to_string())
}

impl Told<'_> {
    /// The night's commit title: its live changes counted.
    pub fn title(&self) -> String {
        let live = self.entries().iter().filter(|e| e.live).count();
        title(self.title, self.workspace, live)
    }

    /// The commit message: the title, then one line per intent with its event ids, and
    /// what waits for a person.
    pub fn commit_message(&self) -> String {
        let mut out = format!("{}\n\n", self.title());
        for d in &self.outcome.intents {
            let i = &d.intent;
            let ids: Vec<&str> = i.evidence.iter().map(|e| e.event_id.as_str()).collect();
            let _ = writeln!(out, "- {} ({}): {}", i.id, i.actor, i.story);
            let _ = writeln!(out, "  events: {}", ids.join(", "));
        }
        let mut checklist: Vec<String> = self
            .outcome
            .intents
            .iter()
            .flat_map(|d| self.held(d, &d.intent.id))
            .collect();
        checklist.extend(self.loose());
        if !checklist.is_empty() {
            let _ = writeln!(out, "\nFor a person ({}):", checklist.len());
            for item in checklist {
                let _ = writeln!(out, "- {item}");
            }
        }
        let _ = write!(out, "\nEvents read: {}.\n", self.window);
        out
    }

    /// The night's intents as ledger entries.
    pub fn entries(&self) -> Vec<Entry> {
        self.outcome
            .intents
            .iter()
            .map(|d| {
                let i = &d.intent;
                let held: Vec<String> = self
                    .held(d, "")
                    .into_iter()
                    .map(|h| format!("{ID}{}", md(&h)))
                    .collect();
                let stepped = self.outcome.plan.steps.iter().any(|s| s.intent == i.id);
                let proposed = if stepped { proposed(d) } else { Vec::new() };
                Entry {
                    key: i
                        .evidence
                        .first()
                        .map_or_else(|| i.id.clone(), |e| e.event_id.clone()),
                    section: section(d),
                    live: stepped || !held.is_empty(),
                    held,
                    event_ids: i.evidence.iter().map(|e| e.event_id.clone()).collect(),
                    proposed,
                    start: i.start.to_rfc3339(),
                    end: i.end.to_rfc3339(),
                }
            })
            .collect()
    }

    /// What waits for a person and belongs to no intent: failed validations and findings
    /// that need one.
    pub fn loose(&self) -> Vec<String> {
        let outcome = self.outcome;
        let mut out: Vec<String> = outcome
            .validations
            .iter()
            .filter(|v| !v.passed)
            .map(|v| format!("{} failed: check the patch by hand", v.validator))
            .collect();
        out.extend(
            outcome
                .findings
                .iter()
                .filter(|f| f.needs_person())
                .map(finding_line),
        );
        out
    }

    /// The changes a reviewer rejected that this night left out, in Markdown.
    pub fn suppressed(&self) -> Vec<String> {
        let mut out = Vec::new();
        for d in &self.outcome.intents {
            for (delta, rulings) in d.intent.deltas.iter().zip(&d.rulings) {
                for r in rulings.iter().filter(|r| r.decision == Decision::Rejected) {
                    out.push(md(&format!(
                        "{} on {}: {}",
                        words::part(&r.part, Some(delta)),
                        label(delta),
                        r.reason
                    )));
                }
            }
        }
        out
    }

    /// The night's validation, agent and left-out sections, in Markdown.
    pub fn latest(&self) -> String {
        let mut out = String::new();
        self.validation(&mut out);
        self.agent(&mut out);
        self.left_out(&mut out);
        out
    }

    /// What one intent leaves for a person: flagged parts, edits not made and edits with a
    /// warning, its id written as `id`.
    fn held(&self, d: &Decided, id: &str) -> Vec<String> {
        let outcome = self.outcome;
        let mut out = Vec::new();
        for (delta, rulings) in d.intent.deltas.iter().zip(&d.rulings) {
            for r in rulings.iter().filter(|r| r.decision == Decision::Flag) {
                out.push(format!(
                    "{id} ({}): {} on {} is held: {}",
                    d.intent.actor,
                    words::part(&r.part, Some(delta)),
                    label(delta),
                    r.reason
                ));
            }
        }
        for u in outcome
            .plan
            .unplanned
            .iter()
            .filter(|u| u.intent == d.intent.id)
        {
            out.push(format!("{id} {}: not written: {}", u.resource, u.reason));
        }
        for s in outcome
            .plan
            .steps
            .iter()
            .filter(|s| s.intent == d.intent.id)
        {
            if let Some(warning) = &s.warning {
                out.push(format!("{id} {}: {warning}", s.resource));
            }
        }
        out
    }

    /// The validators' verdicts and the ones that could not run.
    fn validation(&self, out: &mut String) {
        let outcome = self.outcome;
        if outcome.validations.is_empty() && outcome.skipped_validators.is_empty() {
            return;
        }
        out.push_str("## Validation\n\n");
        for v in &outcome.validations {
            let verdict = if v.passed { "passed" } else { "**failed**" };
            let note = v
                .note
                .as_deref()
                .map(|n| format!(" ({})", md(n)))
                .unwrap_or_default();
            let _ = writeln!(out, "- {}: {verdict}{note}", md(&v.validator));
            for d in v.differences.iter().chain(&v.collateral) {
                let _ = writeln!(out, "  - {}", md(&words::difference(d)));
            }
        }
        for (name, why) in &outcome.skipped_validators {
            let _ = writeln!(out, "- {}: not run ({})", md(name), md(why));
        }
        out.push('\n');
    }

    /// The agent's tasks, how each ended and its tokens, and the rules it found: a reviewer
    /// sees what the model cost and which changes it explained.
    fn agent(&self, out: &mut String) {
        let Some(agent) = self.agent.filter(|a| !a.tasks.is_empty()) else {
            return;
        };
        out.push_str("## Agent\n\n");
        for line in crate::report::agent::lines(agent) {
            let _ = writeln!(out, "- {}", md(&line));
        }
        for (task, rule) in agent.validated() {
            let _ = writeln!(
                out,
                "- learned rule {} for {} prompt + {} completion tokens; the same change costs none next time",
                md(&rule.id()),
                task.usage.prompt_tokens,
                task.usage.completion_tokens
            );
        }
        out.push('\n');
    }

    /// Edits already in the code, and the findings no intent absorbs.
    fn left_out(&self, out: &mut String) {
        let outcome = self.outcome;
        let settled: Vec<String> = outcome
            .plan
            .settled
            .iter()
            .map(|u| format!("{} {}: {}", u.intent, u.resource, u.reason))
            .collect();
        let findings: Vec<String> = outcome.findings.iter().map(finding_line).collect();
        for (title, lines) in [
            ("Already in the code", settled),
            ("Reported, nothing written", findings),
        ] {
            if lines.is_empty() {
                continue;
            }
            let _ = writeln!(out, "## {title}\n");
            for line in lines {
                let _ = writeln!(out, "- {}", md(&line));
            }
            out.push('\n');
        }
    }
}

/// A delta's resource: its address, else its type and id.
fn label(delta: &crate::intents::Delta) -> String {
    delta
        .address
        .clone()
        .unwrap_or_else(|| delta.resource.to_string())
}

/// The changes an intent's absorbed parts propose.
fn proposed(d: &Decided) -> Vec<Fingerprint> {
    d.intent
        .deltas
        .iter()
        .zip(&d.rulings)
        .flat_map(|(delta, rulings)| {
            rulings
                .iter()
                .filter(|r| r.decision == Decision::Absorb)
                .map(move |r| Fingerprint::of(delta, &r.part))
        })
        .collect()
}

/// An intent's section: who, how, when, which calls, and each decision with its reason; its
/// id written as [`ID`].
fn section(d: &Decided) -> String {
    let mut out = String::new();
    let i = &d.intent;
    let _ = writeln!(out, "### {ID}: {}\n", md(&i.story));
    let _ = writeln!(
        out,
        "- **Who:** {} using {}",
        md(&i.actor),
        md(&i.clients.join(", "))
    );
    let _ = writeln!(
        out,
        "- **When:** {} to {} UTC",
        i.start.format("%Y-%m-%d %H:%M:%S"),
        i.end.format("%H:%M:%S")
    );
    out.push_str("- **Calls:**\n");
    for e in &i.evidence {
        let _ = writeln!(
            out,
            "  - {} `{}` in {}, event `{}`",
            e.time.format("%H:%M:%S"),
            md(&e.api),
            md(&e.region),
            md(&e.event_id)
        );
    }
    if i.deltas.is_empty() {
        out.push_str("- **Decisions:** none needed: the changes cancelled out\n");
    } else {
        out.push_str("- **Decisions:**\n");
    }
    for (delta, rulings) in i.deltas.iter().zip(&d.rulings) {
        let _ = writeln!(out, "  - {}", md(&describe(delta)));
        for r in rulings {
            let warning = r
                .warning
                .as_deref()
                .map(|w| format!(" (warning: {})", md(w)))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "    - {} {}: {}{warning}",
                words::decision(r.decision),
                md(&words::part(&r.part, Some(delta))),
                md(&r.reason)
            );
        }
    }
    out.push('\n');
    out
}

/// Text made safe for Markdown: characters that would start emphasis, links, HTML or code
/// are escaped.
pub fn md(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '#' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            c if c.is_control() => {}
            _ => out.push(c),
        }
    }
    out
}

/// A code fence longer than any run of backticks in `text`.
pub fn fence_for(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_in_names_and_reasons_is_escaped() {
        assert_eq!(
            md("<script> *bold* [link](x) `code` a|b"),
            "&lt;script&gt; \\*bold\\* \\[link\\](x) \\`code\\` a\\|b"
        );
    }

    #[test]
    fn the_request_tells_what_the_agent_cost_and_which_rule_it_found() {
        use crate::agent::client::Usage;
        use crate::agent::{TaskReport, TaskResult};
        let usage = Usage {
            prompt_tokens: 2400,
            completion_tokens: 150,
        };
        let rule = knowledge::rules::RuleSet::bundled()
            .expect("rules")
            .find("logs.amazonaws.com", "PutRetentionPolicy")
            .expect("rule")
            .clone();
        let agent = AgentReport {
            model: "local-model".into(),
            tasks: vec![TaskReport {
                event_source: "logs.amazonaws.com".into(),
                api: "PutRetentionPolicy".into(),
                event_ids: vec!["e-1".into()],
                result: TaskResult::Validated,
                turns: 3,
                attempts: 1,
                usage,
                first_prompt_tokens: 700,
                context_tokens: 350,
                rule: Some(rule),
                placement: false,
                placed: None,
            }],
            usage,
        };
        let outcome = Outcome::empty();
        let told = Told {
            workspace: "prod",
            outcome: &outcome,
            window: "today",
            title: "t",
            agent: Some(&agent),
        };
        let body = told.latest();
        let section = &body[body.find("## Agent").expect("an agent section")..];
        assert!(section.contains("- PutRetentionPolicy (logs.amazonaws.com), 1 call(s): a rule validated and is learned; 2400 prompt + 150 completion tokens in 3 turn(s)"), "{section}");
        assert!(
            section
                .contains("- model local-model: 2400 prompt + 150 completion tokens in this run"),
            "{section}"
        );
        assert!(
            section.contains(
                "- learned rule logs:PutRetentionPolicy for 2400 prompt + 150 completion tokens"
            ),
            "{section}"
        );
        let without = Told {
            agent: None,
            ..told
        };
        assert!(!without.latest().contains("## Agent"));
    }

    #[test]
    fn the_fence_is_longer_than_any_backtick_run_in_the_patch() {
        assert_eq!(fence_for("+ x = 1\n"), "```");
        assert_eq!(fence_for("+ <<EOT ```` EOT\n"), "`````");
    }
}
