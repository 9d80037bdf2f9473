//! Multi-actor days: several people and automations change the same resource within hours.
//! The correct answer is the net effect, each part ruled on its own:
//!
//! - `revert-and-change`: alice makes a change, an automation re-tags the resource, bob puts
//!   alice's change back an hour later, carol changes another attribute: only the tag and
//!   carol's change remain;
//! - `flag-and-absorb`: carol makes a change the policy absorbs and dave, on the same
//!   resource, one it must flag: one part absorbed, the other flagged.
//!
//! A candidate's changes are in the order the session plays them (see [`session`]).

use super::categories::Candidate;
use super::change::{Change, Kind};
use super::session::Session;
use crate::sim::{Agent, Caller, Identity};
use rand::Rng;
use std::collections::{BTreeMap, BTreeSet};

/// The role of the tagging automation.
const TAGGER_ROLE: &str = "tag-compliance";

/// The multi-actor candidates among `changes`: per resource, changes on disjoint
/// attributes.
pub fn candidates(changes: &[Change]) -> Vec<Candidate> {
    let mut by_address: BTreeMap<&str, Vec<&Change>> = BTreeMap::new();
    for c in changes
        .iter()
        .filter(|c| c.kind == Kind::Modify && c.owned.is_empty())
    {
        by_address.entry(c.address.as_str()).or_default().push(c);
    }
    let mut out = Vec::new();
    for on_one in by_address.values() {
        let tag = on_one.iter().find(|c| is_tag(c)).copied();
        let plain: Vec<&Change> = on_one
            .iter()
            .filter(|c| !c.risky && !is_tag(c))
            .copied()
            .collect();
        let risky: Vec<&Change> = on_one.iter().filter(|c| c.risky).copied().collect();
        for (n, first) in plain.iter().enumerate() {
            if first.undo.is_empty() {
                continue;
            }
            if let Some(second) = plain[n + 1..].iter().find(|c| disjoint(first, c)) {
                let mut picked = vec![(*first).clone()];
                picked.extend(tag.filter(|t| disjoint(first, t)).cloned());
                picked.push((*second).clone());
                out.push(candidate("revert-and-change", picked));
            }
            if let Some(flagged) = risky.iter().find(|r| disjoint(first, r)) {
                out.push(candidate(
                    "flag-and-absorb",
                    vec![(*first).clone(), (*flagged).clone()],
                ));
            }
        }
    }
    out
}

fn candidate(generator: &str, changes: Vec<Change>) -> Candidate {
    Candidate {
        generator: generator.to_owned(),
        changes,
        noise: None,
    }
}

fn is_tag(change: &Change) -> bool {
    change.top_attributes().iter().all(|a| a == "tags")
}

fn disjoint(a: &Change, b: &Change) -> bool {
    let tops: BTreeSet<String> = a.top_attributes().into_iter().collect();
    b.top_attributes().iter().all(|t| !tops.contains(t))
}

/// Plays a multi-actor day; returns its description.
pub fn session(s: &mut Session, candidate: &Candidate) -> Result<String, String> {
    let err = |e: crate::sim::SimError| e.to_string();
    let alice = Caller::user("alice", Agent::Console);
    let bob = Caller::user("bob", Agent::Cli);
    let carol = Caller::sso_console("carol@example.com", "AdministratorAccess");
    let dave = Caller::new(
        Identity::Sso {
            permission_set: "PowerUserAccess".to_owned(),
            user: "dave@example.com".to_owned(),
        },
        Agent::Cli,
    );
    let tagger = Caller::new(
        Identity::AssumedRole {
            role: TAGGER_ROLE.to_owned(),
            session: "tag-compliance-lambda".to_owned(),
        },
        Agent::Boto3,
    );
    let [first, rest @ ..] = candidate.changes.as_slice() else {
        return Err("no change".to_owned());
    };
    let mut parts = Vec::new();
    match candidate.generator.as_str() {
        "revert-and-change" => {
            let [middle @ .., last] = rest else {
                return Err("one change only".to_owned());
            };
            s.look_at(&first.address, &alice).map_err(err)?;
            s.apply(first, &alice)?;
            parts.push(format!("alice (console) {}", first.what));
            for tag in middle {
                let minutes = s.rng.random_range(5..=30);
                let later = s.later(&tagger, minutes);
                s.apply(tag, &later)?;
                parts.push(format!("the {TAGGER_ROLE} automation {}", tag.what));
            }
            let later = s.later(&bob, 60);
            s.undo(first, &later)?;
            parts.push("bob (CLI) put alice's change back an hour later".to_owned());
            if s.rng.random_bool(0.5) {
                s.terraform_refresh().map_err(err)?;
            }
            let minutes = s.rng.random_range(10..=90);
            let later = s.later(&carol, minutes);
            s.look_at(&last.address, &later).map_err(err)?;
            s.apply(last, &carol)?;
            parts.push(format!("carol@example.com via SSO {}", last.what));
        }
        _ => {
            s.look_at(&first.address, &carol).map_err(err)?;
            s.apply(first, &carol)?;
            parts.push(format!("carol@example.com via SSO {}", first.what));
            for flagged in rest {
                let minutes = s.rng.random_range(20..=120);
                let later = s.later(&dave, minutes);
                s.apply(flagged, &later)?;
                parts.push(format!("dave@example.com via SSO (CLI) {}", flagged.what));
            }
        }
    }
    Ok(format!("{} (on {})", parts.join("; then "), first.address))
}
