//! The agent's tools: read-only looks at the code, state, schema and knowledge base; the
//! typed edit tools of the planner on a scratch copy with `check_plan`; and `propose_rule`,
//! which reconciles again with the proposed rule and says, relative to the task, what the
//! patch does and whether it validated.

use super::context::{self, Sources};
use super::redact::Redactor;
use crate::intents::Lifecycle;
use crate::learn::service_of;
use crate::reconcile::{
    Outcome, Placed, ReconcileError, out_of_bounds, outside_the_root, unplaceable,
};
use crate::record;
use crate::resolve::FindingKind;
use crate::synthesize::edit::{Files, ToolCall, tool, tool_names};
use crate::synthesize::plan::Unplanned;
use crate::terraform::state::StateIndex;
use crate::validate::{Check, PlanCheck, Sandbox, Validator, admit};
use crate::vet;
use knowledge::rules::{FlagLevel, Rule, RuleSet, RuleSpec, validate};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::Replan;
use super::client::ToolDef;

/// Lines a `read_file` call returns at most.
const MAX_LINES: usize = 80;

/// Matches a `search_config` call returns at most.
const MAX_MATCHES: usize = 20;

/// Re-runs the reconciliation with another rule set (supplied by the run).
pub type Recheck<'a> = dyn Fn(&RuleSet) -> Result<Outcome, ReconcileError> + 'a;

/// What a tool call gave: the text for the model, and the rule or the edits when they
/// validated.
pub struct ToolOutput {
    /// The result, in words or compact JSON.
    pub text: String,
    /// The proposed rule, when retrace's check with it passed.
    pub validated: Option<Rule>,
    /// The submitted edits, when they placed the task's parts and the check passed.
    pub placed: Option<Placed>,
}

impl ToolOutput {
    fn text(text: impl Into<String>) -> ToolOutput {
        ToolOutput {
            text: text.into(),
            validated: None,
            placed: None,
        }
    }
}

/// What a task to place a change checks its edits with.
pub struct PlaceCheck<'a> {
    /// The parts to place.
    pub parts: &'a [Unplanned],
    /// Reconciles again with the edits.
    pub replan: &'a Replan<'a>,
    /// Whether edits may land in modules outside the root.
    pub shared: bool,
}

/// The tools of one task, over a scratch copy of the configuration files.
pub struct Bench<'a> {
    /// The sources of the context.
    pub sources: &'a Sources<'a>,
    /// The project's root (for the plan check).
    pub root: &'a Path,
    /// The run's one scratch copy of the project, which `check_plan` sets to the edits.
    pub sandbox: &'a Sandbox,
    /// `-var-file` arguments.
    pub var_files: &'a [PathBuf],
    /// The task's API and event source.
    pub event_source: &'a str,
    /// The task's API.
    pub api: &'a str,
    /// The task's event ids.
    pub event_ids: Vec<String>,
    /// The addresses the task's calls touched.
    pub addresses: &'a [String],
    /// Reconciles again with a rule set.
    pub recheck: &'a Recheck<'a>,
    /// The scratch files the edit tools change (for a task to place a change, they start
    /// patched).
    pub files: Files,
    /// For a task to place a change: how its edits are checked.
    pub place: Option<PlaceCheck<'a>>,
}

/// A tool of the bench, declared by its input type: the name the model calls it by, what it
/// does, and what it answers. Each is this one `impl` beside its input, plus its line in
/// [`BENCH`]; the schema the model sees is derived from the input type.
trait BenchTool: DeserializeOwned + JsonSchema {
    /// The name the model calls it by.
    const NAME: &'static str;
    /// What it does, for the model, in whole sentences.
    const DESCRIPTION: &'static str;
    /// Runs it on the bench.
    fn run(self, bench: &mut Bench) -> ToolOutput;
}

/// A registered bench tool: its name and description, and its input type's schema and runner.
struct Entry {
    name: &'static str,
    description: &'static str,
    schema: fn() -> Value,
    run: fn(&mut Bench, Value) -> ToolOutput,
}

impl Entry {
    const fn of<T: BenchTool>() -> Entry {
        Entry {
            name: T::NAME,
            description: T::DESCRIPTION,
            schema: || T::json_schema(&mut SchemaGenerator::default()).to_value(),
            run: |bench, input| match serde_json::from_value::<T>(input) {
                Ok(input) => input.run(bench),
                Err(e) => ToolOutput::text(format!("invalid input for {}: {e}", T::NAME)),
            },
        }
    }
}

/// The read-only and checking tools, then the edit tools, in the order the model sees them.
const BENCH: &[Entry] = &[
    Entry::of::<ReadFile>(),
    Entry::of::<SearchConfig>(),
    Entry::of::<ShowState>(),
    Entry::of::<ShowSchema>(),
    Entry::of::<SimilarFixes>(),
    Entry::of::<CheckPlan>(),
    Entry::of::<ProposeRule>(),
    Entry::of::<SubmitEdits>(),
    Entry::of::<Edit>(),
];

/// The bench's tools as the model sees them.
pub fn definitions() -> Vec<ToolDef> {
    BENCH
        .iter()
        .map(|entry| ToolDef {
            name: entry.name.to_owned(),
            description: entry.description.to_owned(),
            schema: (entry.schema)(),
        })
        .collect()
}

/// `{"type": "integer"}`: a line number as the model writes it.
fn integer(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"type": "integer"})
}

/// `{"type": "object"}`: a JSON object checked when it is used.
fn object(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"type": "object"})
}

/// The name of an edit tool, one of the registry's.
fn edit_tool_name(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"type": "string", "enum": tool_names()})
}

// The input of `read_file`.
#[derive(Deserialize, JsonSchema)]
struct ReadFile {
    path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "integer")]
    start_line: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "integer")]
    end_line: Option<u64>,
}

impl BenchTool for ReadFile {
    const NAME: &'static str = "read_file";
    const DESCRIPTION: &'static str = "Read lines of a configuration file (1-based, at most 80).";

    fn run(self, bench: &mut Bench) -> ToolOutput {
        ToolOutput::text(bench.read_file(&self.path, self.start_line, self.end_line))
    }
}

// The input of `search_config`.
#[derive(Deserialize, JsonSchema)]
struct SearchConfig {
    text: String,
}

impl BenchTool for SearchConfig {
    const NAME: &'static str = "search_config";
    const DESCRIPTION: &'static str =
        "Find configuration lines containing a text (at most 20 matches).";

    fn run(self, bench: &mut Bench) -> ToolOutput {
        ToolOutput::text(bench.search(&self.text))
    }
}

// The input of `show_state`.
#[derive(Deserialize, JsonSchema)]
struct ShowState {
    address: String,
}

impl BenchTool for ShowState {
    const NAME: &'static str = "show_state";
    const DESCRIPTION: &'static str =
        "Show a resource instance's attributes in the state and what the observed cloud changed.";

    fn run(self, bench: &mut Bench) -> ToolOutput {
        ToolOutput::text(bench.show_state(&self.address))
    }
}

// The input of `show_schema`.
#[derive(Deserialize, JsonSchema)]
struct ShowSchema {
    resource_type: String,
}

impl BenchTool for ShowSchema {
    const NAME: &'static str = "show_schema";
    const DESCRIPTION: &'static str =
        "Show the settable attributes and nested blocks of a Terraform AWS resource type.";

    fn run(self, bench: &mut Bench) -> ToolOutput {
        ToolOutput::text(bench.show_schema(&self.resource_type))
    }
}

// The input of `similar_fixes`; the task's event source when none is given.
#[derive(Deserialize, JsonSchema)]
struct SimilarFixes {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    event_source: Option<String>,
    api: String,
}

impl BenchTool for SimilarFixes {
    const NAME: &'static str = "similar_fixes";
    const DESCRIPTION: &'static str =
        "Show the knowledge base's rules most like an API of an event source.";

    fn run(self, bench: &mut Bench) -> ToolOutput {
        let source = self.event_source.filter(|s| !s.is_empty());
        ToolOutput::text(bench.similar(source.as_deref().unwrap_or(bench.event_source), &self.api))
    }
}

// The input of `check_plan`: nothing.
#[derive(Deserialize, JsonSchema)]
#[schemars(extend("properties" = {}))]
struct CheckPlan {}

impl BenchTool for CheckPlan {
    const NAME: &'static str = "check_plan";
    const DESCRIPTION: &'static str = "Check the scratch edits made so far against the observed cloud: what still differs on the touched resources and what else changed.";

    fn run(self, bench: &mut Bench) -> ToolOutput {
        ToolOutput::text(bench.check_plan())
    }
}

// The input of `propose_rule`.
#[derive(Deserialize, JsonSchema)]
struct ProposeRule {
    #[schemars(schema_with = "object")]
    rule: Value,
}

impl BenchTool for ProposeRule {
    const NAME: &'static str = "propose_rule";
    const DESCRIPTION: &'static str = "Propose the rule for the task's API (the body of a [[rule]] table as JSON: api, resource, kind, risk, summary, identity, set, block, tags, ...). retrace plans the patch with it and checks it; done when the check passes.";

    fn run(self, bench: &mut Bench) -> ToolOutput {
        bench.propose(&self.rule)
    }
}

// The input of `submit_edits`: nothing.
#[derive(Deserialize, JsonSchema)]
#[schemars(extend("properties" = {}))]
struct SubmitEdits {}

impl BenchTool for SubmitEdits {
    const NAME: &'static str = "submit_edits";
    const DESCRIPTION: &'static str = "For a task to place a change: keep the scratch edits as the patch for the parts the planner could not place. retrace reconciles with them and checks the code against the observed cloud; done when the check passes.";

    fn run(self, bench: &mut Bench) -> ToolOutput {
        bench.submit()
    }
}

// The input of `edit`: the edit tools are offered by name, each one's schema on request
// (without `input`): every schema in every request would cost more tokens than the task's
// whole context.
#[derive(Deserialize, JsonSchema)]
struct Edit {
    #[schemars(schema_with = "edit_tool_name")]
    tool: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "object")]
    input: Option<Value>,
}

impl BenchTool for Edit {
    const NAME: &'static str = "edit";
    const DESCRIPTION: &'static str = "Run one edit tool on the scratch copy. Without `input`, returns the tool's description and input schema.";

    fn run(self, bench: &mut Bench) -> ToolOutput {
        ToolOutput::text(match self.input {
            Some(input) => bench.edit(&self.tool, &input),
            None => match tool(&self.tool) {
                Some(t) => format!("{}\n{}", t.description, t.input_schema),
                None => format!("no edit tool {}", self.tool),
            },
        })
    }
}

impl Bench<'_> {
    /// Runs one tool call; a bad call is answered with the reason, for the model to correct.
    pub fn run(&mut self, name: &str, input: &Value) -> ToolOutput {
        match BENCH.iter().find(|entry| entry.name == name) {
            Some(entry) => (entry.run)(self, input.clone()),
            None => ToolOutput::text(format!("no tool {name}")),
        }
    }

    fn redactor(&self) -> &Redactor {
        self.sources.redactor
    }

    fn read_file(&self, path: &str, start: Option<u64>, end: Option<u64>) -> String {
        let Some(text) = self.files.get(path) else {
            let known: Vec<&str> = self.files.keys().map(String::as_str).collect();
            return format!("no file {path}; the files are: {}", known.join(", "));
        };
        let start = start.unwrap_or(1).max(1) as usize;
        let end = (end.unwrap_or(u64::MAX) as usize).min(start + MAX_LINES - 1);
        text.lines()
            .enumerate()
            .skip(start - 1)
            .take(end + 1 - start)
            .map(|(i, line)| format!("{}: {line}\n", i + 1))
            .collect()
    }

    fn search(&self, needle: &str) -> String {
        if needle.is_empty() {
            return "give a text to search for".to_owned();
        }
        let mut out = String::new();
        let hits = self.files.iter().flat_map(|(path, text)| {
            text.lines()
                .enumerate()
                .filter(move |(_, l)| l.contains(needle))
                .map(move |(i, l)| format!("{path}:{}: {}\n", i + 1, l.trim()))
        });
        for hit in hits.take(MAX_MATCHES) {
            out.push_str(&hit);
        }
        if out.is_empty() {
            format!("no line contains {needle}")
        } else {
            out
        }
    }

    fn show_state(&self, address: &str) -> String {
        let s = self.sources;
        let before = s.state.instances.iter().find(|i| i.address == address);
        let after = s.observed.instances.iter().find(|i| i.address == address);
        let Some(shown) = before.or(after) else {
            return format!("no instance {address} in the state or the observed cloud");
        };
        format!(
            "{address} ({}):\n{}\nchanged in the cloud:\n{}",
            shown.resource_type,
            self.redactor().json(&shown.attributes),
            context::net_change(before, after, self.redactor())
        )
    }

    fn show_schema(&self, resource_type: &str) -> String {
        let Some(resource) = self.sources.schema.resource(resource_type) else {
            return format!("{resource_type} is not in the bundled schema");
        };
        let blocks: Vec<&str> = resource.block.blocks.keys().map(String::as_str).collect();
        format!(
            "attributes: {}\nnested blocks: {}",
            context::schema_excerpt(self.sources.schema, resource_type),
            blocks.join(", ")
        )
    }

    fn similar(&self, event_source: &str, api: &str) -> String {
        let rules = context::similar_rules(self.sources.rules, event_source, api, 3);
        if rules.is_empty() {
            return "no similar rule".to_owned();
        }
        rules.iter().map(|r| context::rule_json(r) + "\n").collect()
    }

    fn edit(&mut self, name: &str, input: &Value) -> String {
        let call = match ToolCall::parse(name, &input.to_string()) {
            Ok(call) => call,
            Err(e) => return e.to_string(),
        };
        match call.run(&self.files) {
            Ok(result) => {
                if let Some(reason) = result.files.keys().find_map(|p| self.confine(p).err()) {
                    return format!("refused: {reason}");
                }
                self.files.extend(result.files);
                result.summary
            }
            Err(e) => format!("refused: {e}"),
        }
    }

    /// Whether the edit tools may write a file: one [`admit`] lets an edit take (plainly
    /// written, not a symbolic link) that is one of the project's own or a new `.tf` file
    /// beside them. Nothing else is in the sandbox.
    fn confine(&self, path: &str) -> Result<(), String> {
        admit(self.root, path)?;
        let files = self.sources.project.files();
        let dir_of = |p: &str| {
            p.rsplit_once('/')
                .map_or(String::new(), |(d, _)| d.to_owned())
        };
        let known = files.contains_key(path)
            || path.ends_with(".tf") && files.keys().any(|k| dir_of(k) == dir_of(path));
        if known {
            Ok(())
        } else {
            Err(format!(
                "{path} is not a file of the project nor a new .tf file beside them"
            ))
        }
    }

    fn check_plan(&self) -> String {
        let original = self.sources.project.files();
        let changed: std::collections::BTreeMap<String, String> = self
            .files
            .iter()
            .filter(|(p, t)| original.get(*p) != Some(*t))
            .map(|(p, t)| (p.clone(), t.clone()))
            .collect();
        if changed.is_empty() {
            return "no edit made yet".to_owned();
        }
        let outside = outside_the_root(original.keys(), self.var_files);
        let check = Check {
            root: self.root,
            sandbox: self.sandbox,
            outside: &outside,
            changed: &changed,
            var_files: self.var_files,
            state: self.sources.state,
            observed: self.sources.observed,
            touched: self.addresses,
            excused: &[],
            creates: &[],
        };
        match PlanCheck::new(self.sources.project).validate(&check) {
            Ok(validation) => {
                let mut out = format!("passed: {}\n", validation.passed);
                for d in validation.differences.iter().chain(&validation.collateral) {
                    let _ = writeln!(
                        out,
                        "{} {}: code {} cloud {}",
                        d.address, d.attribute, d.config, d.observed
                    );
                }
                self.redactor().text(&out)
            }
            Err(e) => format!("the check could not run: {e}"),
        }
    }

    /// Reconciles with the scratch edits beside the planner's patch; they are kept when they
    /// place every part of the task and every validation passes.
    fn submit(&self) -> ToolOutput {
        let Some(place) = &self.place else {
            return ToolOutput::text("this task explains an API: propose a rule with propose_rule");
        };
        let original = self.sources.project.files();
        let files: Files = self
            .files
            .iter()
            .filter(|(path, text)| original.get(*path) != Some(*text))
            .map(|(path, text)| (path.clone(), text.clone()))
            .collect();
        let project = self.sources.project;
        if let Some(reason) = files.iter().find_map(|(p, text)| {
            unplaceable(self.root, p, place.shared)
                .or_else(|| out_of_bounds(project, self.sources.schema, p, text, place.parts))
        }) {
            return ToolOutput::text(format!("refused: {reason}"));
        }
        let placed = Placed {
            files,
            parts: place.parts.to_vec(),
        };
        let outcome = match (place.replan)(&placed) {
            Ok(outcome) => outcome,
            Err(e) => return ToolOutput::text(format!("the reconciliation failed: {e}")),
        };
        let left = place
            .parts
            .iter()
            .filter(|p| outcome.plan.unplanned.contains(p))
            .count();
        let mut text = String::new();
        for v in outcome.validations.iter().filter(|v| !v.passed) {
            for d in v.differences.iter().chain(&v.collateral) {
                let _ = writeln!(
                    text,
                    "{} {}: code {} cloud {}",
                    d.address, d.attribute, d.config, d.observed
                );
            }
        }
        if left == 0 && outcome.validations.iter().all(|v| v.passed) {
            return ToolOutput {
                text: "passed: the edits place every part and the check passes".to_owned(),
                validated: None,
                placed: Some(placed),
            };
        }
        let head = if left > 0 {
            format!("not kept: {left} part(s) are still not placed\n")
        } else {
            "not kept: the check failed\n".to_owned()
        };
        ToolOutput::text(self.redactor().text(&(head + &text)))
    }

    /// Parses, checks against the schema, and reconciles with the proposed rule.
    fn propose(&self, body: &Value) -> ToolOutput {
        let rule = match self
            .parse_rule(body)
            .and_then(|r| vet::harden(r, self.sources.rules, self.sources.schema))
        {
            Ok(rule) => rule,
            Err(reason) => return ToolOutput::text(format!("not a usable rule: {reason}")),
        };
        let with = match self
            .sources
            .rules
            .with_replaced(std::slice::from_ref(&rule))
        {
            Ok(set) => set,
            Err(e) => return ToolOutput::text(format!("not a usable rule: {e}")),
        };
        let problems =
            RuleSet::from_rules([rule.clone()]).map(|s| s.check_schema(self.sources.schema));
        if let Ok(problems) = &problems
            && !problems.is_empty()
        {
            let words: Vec<String> = problems.iter().map(ToString::to_string).collect();
            return ToolOutput::text(format!(
                "the rule does not fit the provider schema: {}",
                words.join("; ")
            ));
        }
        let outcome = match (self.recheck)(&with) {
            Ok(outcome) => outcome,
            Err(e) => return ToolOutput::text(format!("the reconciliation failed: {e}")),
        };
        if let Some(reason) = self.foreign_target(&rule, &outcome) {
            return ToolOutput::text(format!("not validated: {reason}"));
        }
        let (summary, passed) = self.summary(&rule, &outcome);
        ToolOutput {
            text: self.redactor().text(&summary),
            validated: passed.then(|| self.as_learned(rule, &outcome)),
            placed: None,
        }
    }

    /// Why the rule's changes are not the task's calls' own: a change to a managed resource
    /// the calls do not name, a change to a resource outside the project, or a creation the
    /// observed cloud does not show and the calls do not describe.
    fn foreign_target(&self, rule: &Rule, outcome: &Outcome) -> Option<String> {
        let observed = StateIndex::new(self.sources.observed.clone());
        let deltas = outcome
            .intents
            .iter()
            .flat_map(|d| &d.intent.deltas)
            .filter(|d| d.rules.contains(&rule.id()));
        for delta in deltas {
            let key = &delta.resource;
            match (delta.lifecycle, &delta.address) {
                (Lifecycle::Created | Lifecycle::Transient, _) => {
                    let seen = !observed
                        .lookup(Some(key.resource_type.as_str()), &key.identity)
                        .is_empty();
                    if !seen && !self.describes(&key.resource_type) {
                        return Some(format!(
                            "the rule creates {} {}, which the observed cloud does not hold and {} does not create",
                            key.resource_type, key.identity, self.api
                        ));
                    }
                }
                (_, Some(address)) if !self.addresses.contains(address) => {
                    return Some(format!(
                        "the rule changes {address}, which the calls of {} do not name",
                        self.api
                    ));
                }
                (_, Some(_)) => {}
                (_, None) => {
                    return Some(format!(
                        "the rule changes {} {}, which is not a resource of this project the calls of {} name",
                        key.resource_type, key.identity, self.api
                    ));
                }
            }
        }
        None
    }

    /// Whether the task's calls describe a resource of this type: a noun of the type's name
    /// (after its provider and service) is a word of the API's name after its verb, or of the
    /// type of a resource the calls list in `resources[]`.
    fn describes(&self, resource_type: &str) -> bool {
        let nouns: Vec<String> = resource_type
            .split('_')
            .skip(2)
            .map(str::to_lowercase)
            .collect();
        let mut words: Vec<String> = crate::text::key_words(self.api)
            .into_iter()
            .skip(1)
            .collect();
        for call in self
            .sources
            .all_calls
            .iter()
            .filter(|c| self.event_ids.contains(&c.event_id))
        {
            for resource in &call.resources {
                if let Some(kind) = &resource.kind {
                    words.extend(crate::text::key_words(kind));
                }
            }
        }
        let singular = |w: &str| w.trim_end_matches('s').to_owned();
        nouns
            .iter()
            .any(|n| words.iter().any(|w| singular(w) == singular(n)))
    }

    /// The rule as it is learned: when a change it read was held for a security reason (a
    /// flag that holds, a security signal on the calls), it holds every change it reads.
    fn as_learned(&self, mut rule: Rule, outcome: &Outcome) -> Rule {
        let mut reasons: Vec<String> = Vec::new();
        for delta in outcome.intents.iter().flat_map(|d| &d.intent.deltas) {
            if !delta.rules.contains(&rule.id()) {
                continue;
            }
            for flag in delta.flags.iter().filter(|f| f.level != FlagLevel::Warn) {
                if !reasons.contains(&flag.reason) {
                    reasons.push(flag.reason.clone());
                }
            }
        }
        for finding in outcome
            .findings
            .iter()
            .filter(|f| f.kind == FindingKind::Security && self.event_ids.contains(&f.event_id))
        {
            if !reasons.contains(&finding.reason) {
                reasons.push(finding.reason.clone());
            }
        }
        if rule.spec.hold.is_none() && !reasons.is_empty() {
            rule.spec.hold = Some(format!(
                "learned from a security-relevant change ({}): every change of this rule is held for a person",
                reasons.join("; ")
            ));
        }
        rule
    }

    fn parse_rule(&self, body: &Value) -> Result<Rule, String> {
        let mut body = body.clone();
        let Some(fields) = body.as_object_mut() else {
            return Err("`rule` must be an object".to_owned());
        };
        fields.entry("api").or_insert_with(|| json!(self.api));
        let spec: RuleSpec = serde_json::from_value(body).map_err(|e| e.to_string())?;
        if spec.api != self.api {
            return Err(format!("the task is {}, not {}", self.api, spec.api));
        }
        let rule = Rule {
            service: service_of(self.event_source, self.sources.rules),
            event_source: self.event_source.to_owned(),
            id_prefixes: Default::default(),
            spec,
        };
        validate(&rule)?;
        Ok(rule)
    }

    /// What the reconciliation with the rule did for the task's calls, and whether it is a
    /// validated fix: every call explained, the rule's changes validated, every validator
    /// passed.
    fn summary(&self, rule: &Rule, outcome: &Outcome) -> (String, bool) {
        let mut out = String::new();
        let unexplained: Vec<&str> = outcome
            .findings
            .iter()
            .filter(|f| f.kind == FindingKind::Unexplained && self.event_ids.contains(&f.event_id))
            .map(|f| f.reason.as_str())
            .collect();
        for reason in &unexplained {
            let _ = writeln!(out, "still unexplained: {reason}");
        }
        for decided in &outcome.intents {
            for delta in &decided.intent.deltas {
                if delta.rules.contains(&rule.id()) {
                    let address = delta.address.as_deref().unwrap_or("a new resource");
                    let change = json!({"lifecycle": delta.lifecycle, "attributes": delta.attributes,
                        "blocks": delta.blocks, "tags_set": delta.tags_set, "tags_removed": delta.tags_removed});
                    let _ = writeln!(out, "changes {address}: {change}");
                }
            }
        }
        for step in &outcome.plan.steps {
            let _ = writeln!(out, "edit: {} ({})", step.call.name(), step.why);
        }
        for unplanned in &outcome.plan.unplanned {
            let _ = writeln!(out, "not planned: {}", unplanned.reason);
        }
        for v in &outcome.validations {
            let _ = writeln!(
                out,
                "{}: {}",
                v.validator,
                if v.passed { "passed" } else { "failed" }
            );
            for d in v.differences.iter().chain(&v.collateral) {
                let _ = writeln!(
                    out,
                    "  {} {}: code {} cloud {}",
                    d.address, d.attribute, d.config, d.observed
                );
            }
        }
        for (validator, why) in &outcome.skipped_validators {
            let _ = writeln!(out, "{validator}: not run ({why})");
        }
        let rule_ok = record::rule_explains(outcome).get(&rule.id()) == Some(&true);
        let passed = unexplained.is_empty()
            && rule_ok
            && outcome.skipped_validators.is_empty()
            && outcome.validations.iter().all(|v| v.passed);
        let _ = writeln!(
            out,
            "{}",
            match (passed, outcome.skipped_validators.is_empty()) {
                (true, _) => "validated: the rule is learned",
                (false, false) => "not validated: a check could not run",
                (false, true) => "not validated",
            }
        );
        (out, passed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::is_sentence;

    #[test]
    fn every_bench_tool_is_named_once_and_described_in_sentences() {
        let definitions = definitions();
        let mut names: Vec<&str> = definitions.iter().map(|d| d.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), definitions.len(), "names are unique");
        for definition in &definitions {
            assert!(
                is_sentence(&definition.description),
                "{}: {}",
                definition.name,
                definition.description
            );
            assert_eq!(definition.schema["type"], "object", "{}", definition.name);
        }
    }

    #[test]
    fn the_schemas_are_derived_from_the_inputs() {
        let schema = |name: &str| {
            definitions()
                .into_iter()
                .find(|d| d.name == name)
                .map(|d| d.schema)
                .expect(name)
        };
        // Optional fields are left out of `required`; a field with no fitting Rust schema
        // gets the plain JSON type the model writes.
        assert_eq!(
            schema("read_file"),
            json!({"type": "object", "properties": {"path": {"type": "string"},
                "start_line": {"type": "integer"}, "end_line": {"type": "integer"}},
                "required": ["path"]})
        );
        assert_eq!(
            schema("similar_fixes")["required"],
            json!(["api"]),
            "the event source defaults to the task's"
        );
        assert_eq!(
            schema("check_plan"),
            json!({"type": "object", "properties": {}})
        );
        let edit = schema("edit");
        assert_eq!(edit["properties"]["tool"]["enum"], json!(tool_names()));
        assert_eq!(edit["required"], json!(["tool"]));
        // What the model sends is read by the same types.
        assert!(serde_json::from_value::<ReadFile>(json!({"path": "main.tf"})).is_ok());
        let missing = serde_json::from_value::<ReadFile>(json!({"start_line": 1}));
        assert!(missing.is_err_and(|e| e.to_string().contains("path")));
    }
}
