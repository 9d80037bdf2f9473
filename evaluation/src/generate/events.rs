//! Calls the simulator does not run through its model: writes no shipped rule explains (the
//! long tail) and account-level security events. Each is played in a person's session with
//! reads around it; the resources a Terraform state holds stay as they were, so the correct
//! answer is no patch and a finding: an unexplained call naming the managed resource, or a
//! security finding.

use super::categories::{Run, mix, name_hash};
use super::session::Session;
use crate::scenario::{Category, Expect, StateDelta, Target};
use crate::sim::{Cloud, Foreign, Request, Settings};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use reconciler::terraform::state::State;
use serde_json::Value;
use std::collections::BTreeMap;

/// One call outside the model.
#[derive(Debug, Clone)]
pub struct Event {
    /// The generator's name, `rds-manual-snapshot`.
    pub generator: &'static str,
    /// What was done, for the description.
    pub what: String,
    /// The call.
    pub request: Request,
    /// Its response elements.
    pub response: Value,
    /// The managed instance it touches, if any.
    pub address: Option<String>,
}

/// What a correct reconciliation reports about an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finding {
    /// An unexplained call naming the managed instance.
    Unexplained,
    /// A security finding for the call.
    Security,
}

/// Up to `want` events played as scenarios: generators in seeded order, taken round-robin,
/// each generator's events shuffled. Returns each event with its seed and run.
pub fn pick(
    events: Vec<Event>,
    finding: Finding,
    seed: u64,
    project: &str,
    category: Category,
    want: usize,
    base: &State,
) -> Vec<(Event, u64, Run)> {
    let salt = match finding {
        Finding::Unexplained => "unexplained",
        Finding::Security => "account-security",
    };
    let group_seed = mix(seed ^ name_hash(project) ^ name_hash(category.name()) ^ name_hash(salt));
    let mut rng = ChaCha8Rng::seed_from_u64(group_seed);
    let mut groups: BTreeMap<&str, Vec<Event>> = BTreeMap::new();
    for e in events {
        groups.entry(e.generator).or_default().push(e);
    }
    let mut queues: Vec<Vec<Event>> = groups.into_values().collect();
    queues.shuffle(&mut rng);
    for q in &mut queues {
        q.shuffle(&mut rng);
        q.reverse();
    }
    let mut out = Vec::new();
    let mut tried = 0u64;
    while out.len() < want && queues.iter().any(|q| !q.is_empty()) {
        for q in &mut queues {
            if out.len() >= want {
                break;
            }
            let Some(event) = q.pop() else { continue };
            tried += 1;
            let run_seed = mix(group_seed.wrapping_add(tried));
            match play(&event, finding, run_seed, base) {
                Ok(run) => out.push((event, run_seed, run)),
                Err(why) => tracing::debug!(project, generator = event.generator, "skipped: {why}"),
            }
        }
    }
    out
}

/// Plays one event in a person's session in a fresh cloud.
pub fn play(event: &Event, finding: Finding, seed: u64, base: &State) -> Result<Run, String> {
    let settings = Settings {
        seed,
        ..Settings::default()
    };
    let mut s = Session::new(Cloud::from_state(base, &settings), seed);
    let (caller, who) = s.human();
    let err = |e: crate::sim::SimError| e.to_string();
    match &event.address {
        Some(address) => s.look_at(address, &caller).map_err(err)?,
        None => s.reads(&caller, 1).map_err(err)?,
    }
    if s.rng.random_bool(0.5) {
        s.terraform_refresh().map_err(err)?;
    }
    let record = match Cloud::models(&event.request.event_source) {
        true => s
            .cloud
            .unmodelled(&event.request, &caller, event.response.clone())
            .map_err(err)?,
        false => {
            let call = Foreign::call(
                &event.request.event_source,
                &event.request.event_name,
                event.request.request_parameters.clone(),
                event.response.clone(),
            );
            s.cloud.foreign(&call, &caller)
        }
    };
    s.records.push(record);
    let n = s.rng.random_range(0..=2);
    s.reads(&caller, n).map_err(err)?;
    let delta = StateDelta::between(base, &s.cloud.snapshot());
    if !delta.is_empty() {
        return Err("the cloud changed".to_owned());
    }
    let mut expect = Expect::default();
    match finding {
        Finding::Unexplained => expect
            .unexplained
            .extend(event.address.iter().map(|a| Target {
                address: a.clone(),
                attribute: String::new(),
            })),
        Finding::Security => expect.security.push(format!(
            "{}:{}",
            event.request.event_source, event.request.event_name
        )),
    }
    Ok(Run {
        description: format!("{who} {}", event.what),
        expect,
        records: s.shuffled_records(),
        delta,
    })
}
