//! What a workspace's branch holds, kept in the knowledge base from night to night: every
//! intent its commits absorb or hold, what waits for a person, and the changes left out
//! because a reviewer rejected them. The request's title and description are rebuilt from it
//! every night, with the diff of the branch against the base, so they always tell the whole
//! branch, not the latest night. It is dropped when the request ends (merged, closed,
//! deleted): the next branch starts again from the base.

use std::collections::BTreeSet;
use std::fmt::Write;

use chrono::{DateTime, Utc};
use knowledge::store::{Rejection, ReviewLine};
use serde::{Deserialize, Serialize};

use super::body::{Entry, ID, Told, fence_for, md, title};

/// What a workspace's branch holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ledger {
    /// The request the branch is proposed in, once one is open.
    pub number: Option<i64>,
    /// Every intent the branch holds, in the order they came.
    pub entries: Vec<Entry>,
    /// What waits for a person and belongs to no intent (failed validations, findings).
    pub loose: Vec<String>,
    /// The changes left out because a reviewer rejected them, in Markdown.
    pub suppressed: Vec<String>,
    /// The latest night's validation, agent and left-out sections, in Markdown.
    pub latest: String,
    /// The lines retrace's commits added, with the rules behind them.
    #[serde(default)]
    pub lines: Vec<ReviewLine>,
}

/// A request's title and description as the ledger tells them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Described {
    /// The title (without GitLab's `Draft:`; the forge adds it).
    pub title: String,
    /// The description, in Markdown.
    pub body: String,
    /// Whether something is left for a person (the request is then a draft).
    pub draft: bool,
}

/// What a description needs besides the ledger.
pub struct Describe<'a> {
    /// The workspace.
    pub workspace: &'a str,
    /// The title template.
    pub template: &'a str,
    /// `pull request` or `merge request`.
    pub noun: &'a str,
    /// The diff of the branch against the base.
    pub diff: &'a str,
    /// The checklist items a reviewer ticked in the request's current description.
    pub ticked: &'a BTreeSet<String>,
}

impl Ledger {
    /// The ledger kept as JSON; an unreadable one is started again (with a warning): the
    /// description then tells the diff only.
    pub fn parse(text: Option<&str>) -> Ledger {
        let Some(text) = text else {
            return Ledger::default();
        };
        serde_json::from_str(text).unwrap_or_else(|error| {
            tracing::warn!(%error, "the kept ledger of a branch does not read; starting again");
            Ledger::default()
        })
    }

    /// The ledger as kept.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Whether the branch holds nothing retrace knows of.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.loose.is_empty()
    }

    /// Adds a night: its intents (one already kept, by its first event, is replaced), what
    /// waits for a person, what it left out and its latest sections. Returns whether the
    /// night brought anything new for a person.
    pub fn add(&mut self, told: &Told<'_>) -> bool {
        let before = self.items().len();
        for entry in told.entries() {
            match self.entries.iter_mut().find(|e| e.key == entry.key) {
                Some(kept) => *kept = entry,
                None => self.entries.push(entry),
            }
        }
        for item in told.loose().iter().map(|i| md(i)) {
            if !self.loose.contains(&item) {
                self.loose.push(item);
            }
        }
        for line in told.suppressed() {
            if !self.suppressed.contains(&line) {
                self.suppressed.push(line);
            }
        }
        if !told.outcome.intents.is_empty() {
            self.latest = told.latest();
        }
        self.items().len() > before
    }

    /// The event ids of every intent the branch holds.
    pub fn event_ids(&self) -> BTreeSet<String> {
        self.entries
            .iter()
            .flat_map(|e| e.event_ids.iter().cloned())
            .collect()
    }

    /// The first call the branch holds.
    pub fn first_event(&self) -> Option<DateTime<Utc>> {
        self.entries.iter().filter_map(|e| time(&e.start)).min()
    }

    /// The intents that propose or hold something.
    pub fn live(&self) -> usize {
        self.entries.iter().filter(|e| e.live).count()
    }

    /// Everything that waits for a person, numbered, in Markdown.
    pub fn items(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .entries
            .iter()
            .enumerate()
            .flat_map(|(n, e)| e.held.iter().map(move |h| h.replace(ID, &id(n))))
            .collect();
        out.extend(self.loose.iter().cloned());
        out
    }

    /// The changes the branch proposes, as rejections of request `number`.
    pub fn rejections(&self, number: i64) -> Vec<Rejection> {
        let mut out: Vec<Rejection> = self
            .entries
            .iter()
            .flat_map(|e| &e.proposed)
            .map(|f| Rejection {
                resource: f.resource.clone(),
                attribute: f.attribute.clone(),
                value: f.value.clone(),
                number,
            })
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// The title, description and draft state of the request.
    pub fn describe(&self, d: &Describe<'_>) -> Described {
        let items = self.items();
        let open: Vec<&String> = items.iter().filter(|i| !d.ticked.contains(*i)).collect();
        let live = self.live();
        let mut out = String::new();
        let _ = writeln!(
            out,
            "retrace read the CloudTrail events of **{}**{} and found {live} change(s) made outside Terraform. This {} holds the code that absorbs them and lists what waits for a person; nothing in the cloud was changed. It is rebuilt every night from what the branch holds against the base.\n",
            md(d.workspace),
            self.span(),
            d.noun
        );
        if !items.is_empty() {
            out.push_str("## For the reviewer\n\n");
            for item in &items {
                let mark = if d.ticked.contains(item) { "x" } else { " " };
                let _ = writeln!(out, "- [{mark}] {item}");
            }
            let _ = writeln!(
                out,
                "\nTick an item once a person has dealt with it; the {} stays a draft while one is unticked.\n",
                d.noun
            );
        }
        if !self.entries.is_empty() {
            out.push_str("## Changes\n\n");
            for (n, e) in self.entries.iter().enumerate() {
                out.push_str(&e.section.replace(ID, &id(n)));
            }
        }
        if !self.suppressed.is_empty() {
            out.push_str("## Left out: rejected by a reviewer\n\n");
            for line in &self.suppressed {
                let _ = writeln!(out, "- {line}");
            }
            out.push('\n');
        }
        out.push_str(&self.latest);
        if !d.diff.is_empty() {
            let fence = fence_for(d.diff);
            let _ = write!(
                out,
                "## Patch\n\n<details><summary>The diff of the branch against the base</summary>\n\n{fence}diff\n{}{fence}\n\n</details>\n",
                d.diff
            );
        }
        let status = if open.is_empty() {
            "patched: every change is absorbed"
        } else {
            "something waits for a person"
        };
        let _ = write!(out, "\nStatus: {status}\n");
        Described {
            title: title(d.template, d.workspace, live),
            body: out,
            draft: !open.is_empty(),
        }
    }

    /// ` from FIRST to LAST UTC` over the calls the branch holds, or nothing.
    fn span(&self) -> String {
        let first = self.entries.iter().filter_map(|e| time(&e.start)).min();
        let last = self.entries.iter().filter_map(|e| time(&e.end)).max();
        match (first, last) {
            (Some(first), Some(last)) => format!(
                " from {} to {} UTC",
                first.format("%Y-%m-%d %H:%M"),
                last.format("%Y-%m-%d %H:%M")
            ),
            _ => String::new(),
        }
    }
}

/// The checklist items ticked (`- [x] ...`) in a description.
pub fn ticked(body: &str) -> BTreeSet<String> {
    body.lines()
        .filter_map(|l| {
            l.trim_start()
                .strip_prefix("- [x] ")
                .or_else(|| l.trim_start().strip_prefix("- [X] "))
        })
        .map(|item| item.trim_end().to_owned())
        .collect()
}

/// The number of the `n`th intent (from 0) of a branch.
fn id(n: usize) -> String {
    format!("I{}", n + 1)
}

fn time(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(key: &str, held: &[&str], live: bool) -> Entry {
        Entry {
            key: key.into(),
            section: format!("### {ID}: {key}\n\n"),
            held: held.iter().map(|h| format!("{ID} (bob): {h}")).collect(),
            live,
            event_ids: vec![key.into()],
            proposed: Vec::new(),
            start: "2026-11-20T10:00:00Z".into(),
            end: "2026-11-21T11:00:00Z".into(),
        }
    }

    fn described(ledger: &Ledger, ticked: &BTreeSet<String>) -> Described {
        ledger.describe(&Describe {
            workspace: "shop",
            template: "retrace: {changes} change(s) in {workspace}",
            noun: "merge request",
            diff: "--- a/shop/main.tf\n+++ b/shop/main.tf\n",
            ticked,
        })
    }

    #[test]
    fn every_night_is_told_numbered_in_order_and_only_live_changes_are_counted() {
        let ledger = Ledger {
            entries: vec![
                entry("e1", &[], true),
                entry("e2", &["tcp 22 is held"], true),
                entry("e3", &[], false),
            ],
            ..Ledger::default()
        };
        let d = described(&ledger, &BTreeSet::new());
        assert_eq!(d.title, "retrace: 2 change(s) in shop");
        assert!(d.draft);
        for text in [
            "### I1: e1",
            "### I2: e2",
            "### I3: e3",
            "- [ ] I2 (bob): tcp 22 is held",
            "This merge request holds",
            "from 2026-11-20 10:00 to 2026-11-21 11:00 UTC",
            "+++ b/shop/main.tf",
        ] {
            assert!(d.body.contains(text), "{text} in:\n{}", d.body);
        }
        let ticked = ticked(&d.body.replace("- [ ] I2", "- [x] I2"));
        let again = described(&ledger, &ticked);
        assert!(!again.draft, "a ticked item is dealt with");
        assert!(again.body.contains("- [x] I2 (bob): tcp 22 is held"));
    }

    #[test]
    fn a_ledger_survives_its_json() {
        let ledger = Ledger {
            number: Some(3),
            entries: vec![entry("e1", &["x"], true)],
            ..Ledger::default()
        };
        assert_eq!(Ledger::parse(Some(&ledger.to_json())), ledger);
        assert_eq!(Ledger::parse(Some("not json")), Ledger::default());
    }
}
