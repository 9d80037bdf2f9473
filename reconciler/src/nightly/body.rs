//! The evidence a nightly run puts in front of a reviewer: the commit message and the pull
//! request's Markdown description. Each intent in plain words with its actor, client, time and
//! event ids; each decision with its reason; what waits for a person as a checklist; the
//! validation; what was left unexplained; and the patch.

use std::fmt::Write;

use crate::agent::AgentReport;
use crate::intents::describe;
use crate::policy::Decision;
use crate::reconcile::Outcome;
use crate::report::reconcile::finding_line;
use crate::report::words;

/// What a run did for one workspace, as the commit and the request tell it.
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

impl Told<'_> {
    /// Whether anything waits for a person: a flagged part, an edit not made, a failed
    /// validation or a finding that needs one.
    pub fn needs_person(&self) -> bool {
        !self.checklist().is_empty()
    }

    /// The request's title: the template with `{workspace}` and `{changes}` filled in.
    pub fn title(&self) -> String {
        self.title
            .replace("{workspace}", self.workspace)
            .replace("{changes}", &self.outcome.intents.len().to_string())
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
        let checklist = self.checklist();
        if !checklist.is_empty() {
            let _ = writeln!(out, "\nFor a person ({}):", checklist.len());
            for item in checklist {
                let _ = writeln!(out, "- {item}");
            }
        }
        let _ = write!(out, "\nEvents read: {}.\n", self.window);
        out
    }

    /// The request's description, in Markdown.
    pub fn body(&self) -> String {
        let outcome = self.outcome;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "retrace read the CloudTrail events of **{}** from {} and found {} change(s) made outside Terraform. This pull request holds the code that absorbs them; nothing in the cloud was changed.\n",
            md(self.workspace),
            md(self.window),
            outcome.intents.len()
        );
        let checklist = self.checklist();
        if !checklist.is_empty() {
            out.push_str("## For the reviewer\n\n");
            for item in &checklist {
                let _ = writeln!(out, "- [ ] {}", md(item));
            }
            out.push('\n');
        }
        out.push_str(&self.intents());
        self.validation(&mut out);
        self.agent(&mut out);
        self.left_out(&mut out);
        if !outcome.diff.is_empty() {
            let fence = fence_for(&outcome.diff);
            let _ = write!(
                out,
                "## Patch\n\n<details><summary>The diff</summary>\n\n{fence}diff\n{}{fence}\n\n</details>\n",
                outcome.diff
            );
        }
        let _ = write!(out, "\nStatus: {}\n", words::status(outcome.status));
        out
    }

    /// Each intent: who, how, when, which calls, and each decision with its reason.
    fn intents(&self) -> String {
        let mut out = String::new();
        if self.outcome.intents.is_empty() {
            return out;
        }
        out.push_str("## Changes\n\n");
        for d in &self.outcome.intents {
            let i = &d.intent;
            let _ = writeln!(out, "### {}: {}\n", md(&i.id), md(&i.story));
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

    /// Edits already in the code, and the findings no intent absorbs.
    /// The agent's tasks, how each ended and its tokens, and the rules it found: a reviewer
    /// sees what the model cost and which changes it explained.
    fn agent(&self, out: &mut String) {
        let Some(agent) = self.agent.filter(|a| !a.tasks.is_empty()) else {
            return;
        };
        out.push_str(
            "## Agent

",
        );
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

    /// What waits for a person: flagged parts, edits not made, failed validations, and
    /// findings that need one.
    fn checklist(&self) -> Vec<String> {
        let outcome = self.outcome;
        let mut out = Vec::new();
        for d in &outcome.intents {
            for (delta, rulings) in d.intent.deltas.iter().zip(&d.rulings) {
                let resource = delta
                    .address
                    .clone()
                    .unwrap_or_else(|| delta.resource.to_string());
                for r in rulings.iter().filter(|r| r.decision == Decision::Flag) {
                    out.push(format!(
                        "{} ({}): {} on {resource} is held: {}",
                        d.intent.id,
                        d.intent.actor,
                        words::part(&r.part, Some(delta)),
                        r.reason
                    ));
                }
            }
        }
        for u in &outcome.plan.unplanned {
            out.push(format!(
                "{} {}: not written: {}",
                u.intent, u.resource, u.reason
            ));
        }
        for s in outcome.plan.steps.iter() {
            if let Some(warning) = &s.warning {
                out.push(format!("{} {}: {warning}", s.intent, s.resource));
            }
        }
        for v in outcome.validations.iter().filter(|v| !v.passed) {
            out.push(format!("{} failed: check the patch by hand", v.validator));
        }
        out.extend(
            outcome
                .findings
                .iter()
                .filter(|f| f.needs_person())
                .map(finding_line),
        );
        out
    }
}

/// Text made safe for Markdown: characters that would start emphasis, links, HTML or code
/// are escaped.
fn md(text: &str) -> String {
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
            _ => out.push(c),
        }
    }
    out
}

/// A code fence longer than any run of backticks in `text`.
fn fence_for(text: &str) -> String {
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
        let body = told.body();
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
        assert!(!without.body().contains("## Agent"));
    }

    #[test]
    fn the_fence_is_longer_than_any_backtick_run_in_the_patch() {
        assert_eq!(fence_for("+ x = 1\n"), "```");
        assert_eq!(fence_for("+ <<EOT ```` EOT\n"), "`````");
    }
}
