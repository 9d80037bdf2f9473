//! Tag changes: on a resource's own `tags` where they are written, or on the provider's
//! `default_tags` when every resource that has the tag from there changed alike.

use super::planner::{Outcome, Planner, step};
use crate::intents::{Delta, Intent, Lifecycle};
use crate::policy::{Decision, Part, Ruling};
use crate::synthesize::edit::{
    Ordered, SetTags, Step as EditStep, TagMode, ToolCall, Value as EditValue,
};
use crate::synthesize::place::{new_input, thread_input};
use crate::synthesize::settled::Settled;
use crate::synthesize::tags::{TagSite, block_target, site};
use crate::terraform::state::Mode;
use crate::terraform::values::string_map;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

impl Planner<'_> {
    /// Tag changes the provider's `default_tags` already hold, every one of them (a second
    /// run after the change was written on `default_tags`).
    pub(super) fn tags_settled(&self, delta: &Delta, part: &Part) -> Option<Settled> {
        if *part != Part::Tags || delta.lifecycle != Lifecycle::Managed {
            return None;
        }
        let (own, changed) = self.split_tags(delta);
        let nothing_left =
            own.tags_set.is_empty() && own.tags_removed.is_empty() && changed.is_empty();
        nothing_left.then(|| Settled {
            reason: "the provider's default_tags already give these tags".to_owned(),
            imported_as: None,
        })
    }

    /// The tag changes of delta `i`, at its [`TagSite`]. When the site stands for several
    /// instances, only this one's tags change, unless the intent gives every one of them the
    /// same change: then the first of them writes it once for all and the others add nothing.
    pub(super) fn tags(&self, intent: &Intent, rulings: &[Vec<Ruling>], i: usize) -> Vec<Outcome> {
        let (own, defaults) = self.split_tags(&intent.deltas[i]);
        let mut outcomes = self.default_tags(intent, rulings, i, &defaults);
        if !own.tags_set.is_empty() || !own.tags_removed.is_empty() {
            outcomes.extend(self.own_tags(intent, rulings, i, &own));
        }
        outcomes
    }

    /// The tag changes of a resource's own `tags` (delta `i` with the default tags split off).
    fn own_tags(
        &self,
        intent: &Intent,
        rulings: &[Vec<Ruling>],
        i: usize,
        delta: &Delta,
    ) -> Vec<Outcome> {
        let mut site = match self
            .instance(delta)
            .and_then(|inst| site(self.project, inst))
        {
            Ok(site) => site,
            Err(reason) => return vec![self.tags_by_new_input(delta, reason)],
        };
        if site.instance.is_some() {
            let same: Vec<usize> = (0..intent.deltas.len())
                .filter(|&j| self.same_tag_change(intent, rulings, i, j, &site))
                .collect();
            let covered = site.sharers.iter().all(|address| {
                same.iter()
                    .any(|&j| intent.deltas[j].address.as_deref() == Some(address.as_str()))
            });
            if covered {
                if same.first() != Some(&i) {
                    return Vec::new();
                }
                site.instance = None;
                site.why = format!(
                    "all {} instances got the same tags outside Terraform; written once for all",
                    site.sharers.len()
                );
            }
        }
        let call = ToolCall::SetTags(SetTags {
            target: site.target,
            attribute: site.attribute,
            tags: tag_map(delta),
            mode: TagMode::Merge,
            remove: delta.tags_removed.iter().cloned().collect(),
            instance: site.instance,
        });
        vec![Ok(step(delta, Part::Tags, call, site.why, true, None))]
    }

    /// Delta `delta` with the tags the provider's `default_tags` give split off: a tag set to
    /// the value the provider already gives is not written (an override of it in the
    /// resource's own tags is removed instead, so the default shows through); a tag the
    /// resource has only from the provider, set to another value, is returned apart, for
    /// [`Planner::default_tags`].
    fn split_tags(&self, delta: &Delta) -> (Delta, BTreeMap<String, String>) {
        let mut own = delta.clone();
        let mut changed = BTreeMap::new();
        let state = delta
            .address
            .as_deref()
            .and_then(|a| self.state.instance(a));
        let (Some(defaults), Some(state)) = (&self.default_tags, state) else {
            return (own, changed);
        };
        if !default_provider(&state.provider) {
            return (own, changed);
        }
        let written = string_map(state.attributes.get("tags"));
        for (key, value) in &delta.tags_set {
            match (written.get(key), defaults.tags.get(key)) {
                (None, Some(default)) if default == value => {}
                (Some(_), Some(default)) if default == value => {
                    own.tags_removed.insert(key.clone());
                }
                (None, Some(_)) => {
                    changed.insert(key.clone(), value.clone());
                }
                _ => continue,
            }
            own.tags_set.remove(key);
        }
        (own, changed)
    }

    /// A new value of a tag the resource has from the provider's `default_tags` (`changed`,
    /// from [`Planner::split_tags`]): written on `default_tags` when every resource that has
    /// the tag from there got the same value in this intent (by the first of them), else held,
    /// since every one of them would change with it.
    fn default_tags(
        &self,
        intent: &Intent,
        rulings: &[Vec<Ruling>],
        i: usize,
        changed: &BTreeMap<String, String>,
    ) -> Vec<Outcome> {
        let Some(defaults) = &self.default_tags else {
            return Vec::new();
        };
        let delta = &intent.deltas[i];
        let mut outcomes = Vec::new();
        let mut written = Vec::new();
        for (key, value) in changed {
            let sharers: Vec<&str> = self
                .state
                .iter()
                .filter(|s| s.mode == Mode::Managed && default_provider(&s.provider))
                .filter(|s| {
                    string_map(s.attributes.get("tags_all")).contains_key(key)
                        && !string_map(s.attributes.get("tags")).contains_key(key)
                })
                .map(|s| s.address.as_str())
                .collect();
            let same: Vec<usize> = (0..intent.deltas.len())
                .filter(|&j| {
                    rulings[j]
                        .iter()
                        .any(|r| r.decision == Decision::Absorb && r.part == Part::Tags)
                        && self.split_tags(&intent.deltas[j]).1.get(key) == Some(value)
                })
                .collect();
            let missed: Vec<&str> = sharers
                .iter()
                .copied()
                .filter(|address| {
                    !same
                        .iter()
                        .any(|&j| intent.deltas[j].address.as_deref() == Some(*address))
                })
                .collect();
            let old = defaults.tags.get(key).map_or("", String::as_str);
            if !missed.is_empty() || !defaults.alone_in_file {
                let why = if missed.is_empty() {
                    format!("{} holds several `provider \"aws\"` blocks", defaults.file)
                } else {
                    format!(
                        "writing it there would change it on {} other resources too ({})",
                        missed.len(),
                        missed
                            .iter()
                            .take(3)
                            .copied()
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                };
                outcomes.push(Err(format!(
                    "tag `{key}` comes from the provider's default_tags (\"{old}\"), and was set to \"{value}\" outside Terraform; {why}, so the change is held"
                )));
            } else if same.first() == Some(&i) {
                written.push((key.clone(), EditValue::String(value.clone())));
            }
        }
        if !written.is_empty() {
            let mut target = block_target(&defaults.file, "provider", &["aws"]);
            target.path.push(EditStep {
                block: "default_tags".to_owned(),
                labels: Vec::new(),
                matches: Ordered::default(),
            });
            let call = ToolCall::SetTags(SetTags {
                target,
                attribute: "tags".to_owned(),
                tags: Ordered(written),
                mode: TagMode::Merge,
                remove: Vec::new(),
                instance: None,
            });
            let why = "every resource that gets these tags from the provider's default_tags got the same new value outside Terraform; written on default_tags".to_owned();
            outcomes.push(Ok(step(delta, Part::Tags, call, why, true, None)));
        }
        outcomes
    }

    /// Tags added to one instance of a module called with `count`/`for_each` whose tags input
    /// feeds other resources too: a new module input merged over this resource's tags. Removing
    /// a tag this way is impossible (merge only adds), so `reason` stands then.
    fn tags_by_new_input(&self, delta: &Delta, reason: String) -> Outcome {
        let instance = self.instance(delta)?;
        let input = match new_input(self.project, instance, "tags") {
            Ok(input) if delta.tags_removed.is_empty() => input,
            _ => return Err(reason),
        };
        let tags: Map<String, Value> = delta
            .tags_set
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        let why = format!(
            "{reason}; the new module input `{}` is merged over this resource's tags and set for this instance alone",
            input.input
        );
        Ok(step(
            delta,
            Part::Tags,
            ToolCall::ThreadModuleInput(thread_input(
                &input,
                "tags",
                "map(string)",
                true,
                &Value::Object(tags),
            )),
            why,
            true,
            None,
        ))
    }

    /// Whether delta `j` of the intent makes the same absorbed tag change as delta `i`, at the
    /// same site.
    fn same_tag_change(
        &self,
        intent: &Intent,
        rulings: &[Vec<Ruling>],
        i: usize,
        j: usize,
        site_i: &TagSite,
    ) -> bool {
        let (a, b) = (
            self.split_tags(&intent.deltas[i]).0,
            self.split_tags(&intent.deltas[j]).0,
        );
        let (a, b) = (&a, &b);
        let absorbed = rulings[j]
            .iter()
            .any(|r| r.decision == Decision::Absorb && r.part == Part::Tags);
        if !absorbed
            || b.lifecycle != Lifecycle::Managed
            || a.tags_set != b.tags_set
            || a.tags_removed != b.tags_removed
        {
            return false;
        }
        self.instance(b)
            .and_then(|inst| site(self.project, inst))
            .is_ok_and(|s| s.target == site_i.target && s.attribute == site_i.attribute)
    }
}

/// Whether a state instance's provider is the AWS provider (the state index keeps its source
/// address only, so an aliased configuration of it counts too).
fn default_provider(provider: &str) -> bool {
    provider.ends_with("hashicorp/aws")
}

/// The tags a delta sets.
fn tag_map(delta: &Delta) -> Ordered {
    Ordered(
        delta
            .tags_set
            .iter()
            .map(|(k, v)| (k.clone(), EditValue::String(v.clone())))
            .collect(),
    )
}
