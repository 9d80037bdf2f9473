//! The scorer's checks of one reconciliation: each compares the patched code, evaluated, with
//! the cloud after the drift and with the code before the patch, and gives plain reasons.

use super::compare::{Shape, Side, settable, show, unmanaged_when_absent};
use super::hcl_scan::{self, Import};
use super::importable::importable;
use super::report::{Report, ReportedKind, Ruled, Verdict};
use crate::evaluate::Instance as ResourceInstance;
/// The code as the benchmark's own Terraform evaluator loads it, which the built-in checks
/// compare.
pub use crate::evaluate::Project;
use crate::scenario::{Expect, Target};
use knowledge::schema::{Member, Presence, ProviderSchema, ResourceSchema};
use reconciler::terraform::state::{IndexKey, Instance, Mode, State};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// One check's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckResult {
    /// The check's name, `drift-absorbed`.
    pub name: String,
    /// Whether it passed.
    pub passed: bool,
    /// Why not, one line per problem.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
}

impl CheckResult {
    fn new(name: &str, reasons: Vec<String>) -> Self {
        Self {
            name: name.to_owned(),
            passed: reasons.is_empty(),
            reasons,
        }
    }
}

/// What the checks look at.
pub struct Evidence<'a> {
    /// The state before the drift.
    pub pre: &'a State,
    /// The cloud after the drift, in state form.
    pub post: &'a State,
    /// The code before the patch, evaluated with the pre-drift state.
    pub original: &'a Project,
    /// The patched code, evaluated the same way, or why it does not load.
    pub patched: Result<&'a Project, String>,
    /// What the system under test changed and reported.
    pub report: &'a Report,
    /// What a correct answer is.
    pub expect: &'a Expect,
    /// The provider schema.
    pub schema: &'a ProviderSchema,
}

/// Runs every check.
pub fn run(e: &Evidence) -> Vec<CheckResult> {
    let mut out = vec![parses(e.report), accounted(e.report)];
    if !e.expect.patch {
        out.push(no_patch(e.report));
    }
    if !e.expect.unexplained.is_empty() {
        out.push(unexplained(e.report, &e.expect.unexplained));
    }
    if !e.expect.security.is_empty() {
        out.push(security(e.report, &e.expect.security));
    }
    let patched = match &e.patched {
        Ok(p) => p,
        Err(reason) => {
            out.push(CheckResult::new(
                "loads",
                vec![format!("the patched code does not load: {reason}")],
            ));
            return out;
        }
    };
    let drift = Drift::between(e.pre, e.post, e.schema);
    let ctx = Ctx { e, patched, drift };
    let (created, imported) = ctx.created();
    out.push(ctx.absorbed());
    out.push(created);
    out.push(ctx.deleted());
    out.push(ctx.untouched(&imported));
    if !e.expect.flag.is_empty() {
        out.push(ctx.flagged());
    }
    if !e.expect.ignore.is_empty() {
        out.push(ctx.ignored());
    }
    if !e.expect.unowned.is_empty() {
        out.push(ctx.unowned());
    }
    out
}

/// Every out-of-band write call that entered the reconciliation ended in a listed intent or a
/// finding, as the system accounts for it.
fn accounted(report: &Report) -> CheckResult {
    let reasons = report
        .decisions
        .unaccounted
        .iter()
        .map(|id| format!("the write {id} is in no intent and no finding"))
        .collect();
    CheckResult::new("accounted", reasons)
}

/// Every changed `.tf` and `.tfvars` file parses.
fn parses(report: &Report) -> CheckResult {
    let mut reasons = Vec::new();
    for change in &report.changed {
        let path = &change.path;
        let hcl = path.extension().is_some_and(|x| x == "tf" || x == "tfvars");
        if let (true, Some(text)) = (hcl, &change.new)
            && let Err(message) = hcl_scan::parse(text)
        {
            reasons.push(format!("{}: does not parse: {message}", path.display()));
        }
    }
    CheckResult::new("parses", reasons)
}

/// A noise-only trail gives an empty diff.
fn no_patch(report: &Report) -> CheckResult {
    let reasons = report
        .changed
        .iter()
        .map(|change| {
            format!(
                "{}: changed, but nothing out of band changed the cloud",
                change.path.display()
            )
        })
        .collect();
    CheckResult::new("no-patch", reasons)
}

/// Each call no rule explains is reported as an unexplained finding naming its managed
/// resource: never silent.
fn unexplained(report: &Report, targets: &[Target]) -> CheckResult {
    let reasons = targets
        .iter()
        .filter(|t| {
            !report.decisions.findings.iter().any(|f| {
                f.kind == ReportedKind::Unexplained
                    && f.resources
                        .iter()
                        .any(|r| r.address.as_deref() == Some(t.address.as_str()))
            })
        })
        .map(|t| {
            format!(
                "{}: a call no rule explains touched it, but no unexplained finding names it",
                t.address
            )
        })
        .collect();
    CheckResult::new("unexplained-reported", reasons)
}

/// Each security event (`source:Api`) raised a security finding.
fn security(report: &Report, events: &[String]) -> CheckResult {
    let reasons = events
        .iter()
        .filter(|event| {
            !report
                .decisions
                .findings
                .iter()
                .any(|f| f.kind == ReportedKind::Security && f.event == **event)
        })
        .map(|event| format!("{event}: a security event, but no security finding reports it"))
        .collect();
    CheckResult::new("security-reported", reasons)
}

/// What the drift did, from the states before and after it.
struct Drift<'a> {
    pre: BTreeMap<&'a str, &'a Instance>,
    post: BTreeMap<&'a str, &'a Instance>,
    /// (address, top-level attribute) pairs whose value changed and that code may set.
    changed: BTreeSet<(String, String)>,
}

impl<'a> Drift<'a> {
    fn between(pre: &'a State, post: &'a State, schema: &ProviderSchema) -> Self {
        let pre = managed(pre);
        let post = managed(post);
        let mut changed = BTreeSet::new();
        for (address, before) in &pre {
            let Some(after) = post.get(address) else {
                continue;
            };
            let resource = schema.resource(&before.resource_type);
            let same = Shape {
                resource_type: &before.resource_type,
                schema: resource,
                side: Side::Same,
            };
            for key in keys(&before.attributes, &after.attributes) {
                let old = before.attributes.get(&key).unwrap_or(&Value::Null);
                let new = after.attributes.get(&key).unwrap_or(&Value::Null);
                if settable(resource, &key) && !same.agree(&key, old, new) {
                    changed.insert(((*address).to_owned(), key));
                }
            }
        }
        Self { pre, post, changed }
    }

    fn created(&self) -> impl Iterator<Item = &'a Instance> + '_ {
        self.post
            .iter()
            .filter(|(a, _)| !self.pre.contains_key(*a))
            .map(|(_, i)| *i)
    }

    fn deleted(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.pre
            .keys()
            .filter(|a| !self.post.contains_key(*a))
            .copied()
    }
}

fn managed(state: &State) -> BTreeMap<&str, &Instance> {
    state
        .instances
        .iter()
        .filter(|i| i.mode == Mode::Managed && i.deposed.is_none())
        .map(|i| (i.address.as_str(), i))
        .collect()
}

/// The keys of two JSON objects, each once.
fn keys(a: &Value, b: &Value) -> BTreeSet<String> {
    [a, b]
        .into_iter()
        .filter_map(Value::as_object)
        .flat_map(|m| m.keys().cloned())
        .collect()
}

/// Whether a target names this attribute (or the whole resource).
fn covers(targets: &[Target], address: &str, attribute: &str) -> bool {
    targets
        .iter()
        .any(|t| t.address == address && (t.attribute.is_empty() || t.attribute == attribute))
}

/// The whole object of evaluated code; null when any part is unknown until apply.
fn code_object(instance: &ResourceInstance) -> Value {
    instance.json().unwrap_or(Value::Null)
}

struct Ctx<'a> {
    e: &'a Evidence<'a>,
    patched: &'a Project,
    drift: Drift<'a>,
}

impl Ctx<'_> {
    fn resource(&self, resource_type: &str) -> Option<&ResourceSchema> {
        self.e.schema.resource(resource_type)
    }

    fn shape<'s>(&'s self, resource_type: &'s str, side: Side) -> Shape<'s> {
        Shape {
            resource_type,
            schema: self.resource(resource_type),
            side,
        }
    }

    fn excused(&self, address: &str, attribute: &str) -> bool {
        covers(&self.e.expect.flag, address, attribute)
            || covers(&self.e.expect.ignore, address, attribute)
    }

    /// Every drifted attribute of every managed instance now evaluates to its cloud value.
    fn absorbed(&self) -> CheckResult {
        let mut reasons = Vec::new();
        let mut missing = BTreeSet::new();
        for (address, attribute) in &self.drift.changed {
            if self.excused(address, attribute) {
                continue;
            }
            let Some(cloud) = self.drift.post.get(address.as_str()) else {
                continue;
            };
            let want = cloud.attributes.get(attribute).unwrap_or(&Value::Null);
            let Some(instance) = self.patched.instance(address) else {
                if missing.insert(address.clone()) {
                    reasons.push(format!(
                        "{address}: not in the code, but the cloud still has it"
                    ));
                }
                continue;
            };
            let before = self
                .drift
                .pre
                .get(address.as_str())
                .and_then(|i| i.attributes.get(attribute));
            let got = instance
                .value(attribute)
                .map(|v| unset_as_before(v, before, want));
            let unset = got
                .as_ref()
                .is_some_and(|v| v.is_null() || v == &Value::Array(Vec::new()));
            if unset && unmanaged_when_absent(&cloud.resource_type, attribute) {
                continue;
            }
            let shape = self.shape(&cloud.resource_type, Side::CodeToCloud);
            let reason = match &got {
                None => Some(format!(
                    "{address}.{attribute}: code gives {}, cloud has {}",
                    show(None),
                    show(Some(want))
                )),
                Some(v) => shape.difference(attribute, v, want).map(|(path, a, b)| {
                    format!(
                        "{address}.{path}: code gives {}, cloud has {}",
                        show(Some(a)),
                        show(Some(b))
                    )
                }),
            };
            reasons.extend(reason);
        }
        CheckResult::new("drift-absorbed", reasons)
    }

    /// Each resource created out of band is in the code, of its type, with an `import` block
    /// for its id and configured values equal to the cloud's. Returns the check and the
    /// addresses of new code instances that stand for a created resource.
    fn created(&self) -> (CheckResult, BTreeSet<String>) {
        let imports = self.imports();
        let mut reasons = Vec::new();
        let mut imported = BTreeSet::new();
        for cloud in self.drift.created() {
            if covers(&self.e.expect.flag, &cloud.address, "")
                || covers(&self.e.expect.unowned, &cloud.address, "")
            {
                continue;
            }
            let candidates: Vec<&ResourceInstance> = self
                .patched
                .instances()
                .filter(|i| i.mode == Mode::Managed && i.resource_type == cloud.resource_type)
                .filter(|i| self.e.original.instance(&i.address).is_none())
                .filter(|i| {
                    !importable(&cloud.resource_type)
                        || imports.iter().any(|imp| {
                            imp.to == i.address
                                && imp.id.as_deref().is_some_and(|id| names(id, cloud))
                        })
                })
                .collect();
            if candidates.is_empty() {
                let how = if importable(&cloud.resource_type) {
                    " has an import block for it"
                } else {
                    " stands for it"
                };
                reasons.push(format!(
                    "{} ({} {}): created in the cloud, but no new {} in the code{how}",
                    cloud.address, cloud.resource_type, cloud.attributes["id"], cloud.resource_type
                ));
                continue;
            }
            imported.extend(candidates.iter().map(|c| c.address.clone()));
            let problems: Vec<Vec<String>> = candidates
                .iter()
                .map(|c| self.configured_matches(c, cloud))
                .collect();
            if !problems.iter().any(Vec::is_empty) {
                reasons.extend(problems.into_iter().next().unwrap_or_default());
            }
        }
        reasons.extend(self.refused_imports());
        (CheckResult::new("created-imported", reasons), imported)
    }

    /// The patch's import blocks of types the provider cannot import: `terraform plan`
    /// stops at each, so the patch fails. Such an object is written without one, and the
    /// next apply creates it.
    fn refused_imports(&self) -> Vec<String> {
        self.imports()
            .into_iter()
            .filter_map(|imp| {
                let kind = type_of(&imp.to).filter(|k| !importable(k))?;
                Some(format!(
                    "{}: the patch imports it, but terraform plan stops: resource {kind} doesn't support import",
                    imp.to
                ))
            })
            .collect()
    }

    /// The problems of a new code instance against the created cloud resource.
    fn configured_matches(&self, code: &ResourceInstance, cloud: &Instance) -> Vec<String> {
        let shape = self.shape(&cloud.resource_type, Side::CodeToCloud);
        let mut problems = Vec::new();
        let object = code_object(code);
        let configured = object.as_object().cloned().unwrap_or_default();
        for (key, value) in &configured {
            let want = cloud.attributes.get(key).unwrap_or(&Value::Null);
            if let Some((path, a, b)) = shape.difference(key, value, want) {
                problems.push(format!(
                    "{}.{path}: code gives {}, cloud has {}",
                    code.address,
                    show(Some(a)),
                    show(Some(b))
                ));
            }
        }
        if let Some(schema) = self.resource(&cloud.resource_type) {
            for name in required(schema) {
                if configured.get(&name).is_none_or(Value::is_null) {
                    problems.push(format!(
                        "{}.{name}: required, but the code leaves it unset",
                        code.address
                    ));
                }
            }
        }
        // An instance the next apply creates (a type the provider cannot import) has its id
        // only then.
        if code.value("id").is_none() && importable(&cloud.resource_type) {
            problems.push(format!("{}: does not evaluate", code.address));
        }
        problems
    }

    /// Each managed instance deleted out of band is gone from the code.
    fn deleted(&self) -> CheckResult {
        let reasons = self
            .drift
            .deleted()
            .filter(|a| !covers(&self.e.expect.flag, a, ""))
            .filter(|a| self.patched.instance(a).is_some())
            .map(|a| format!("{a}: deleted in the cloud, but still in the code"))
            .collect();
        CheckResult::new("deleted-removed", reasons)
    }

    /// Nothing the drift did not touch changes value, and no instance appears or disappears
    /// unless the drift created or deleted it.
    fn untouched(&self, imported: &BTreeSet<String>) -> CheckResult {
        let deleted: BTreeSet<&str> = self.drift.deleted().collect();
        let moves = hcl_scan::project_moves(self.patched.files());
        let mut moved_to = BTreeSet::new();
        let mut reasons = Vec::new();
        for old in self.e.original.instances() {
            if deleted.contains(old.address.as_str())
                && !covers(&self.e.expect.flag, &old.address, "")
            {
                continue;
            }
            let new = self.patched.instance(&old.address).or_else(|| {
                let new = self.patched.instance(&moved_address(old, &moves)?)?;
                moved_to.insert(new.address.clone());
                Some(new)
            });
            let Some(new) = new else {
                reasons.push(format!(
                    "{}: removed from the code, but the drift did not delete it",
                    old.address
                ));
                continue;
            };
            reasons.extend(self.collateral(old, new));
        }
        for new in self.patched.instances() {
            if self.e.original.instance(&new.address).is_none()
                && !imported.contains(&new.address)
                && !moved_to.contains(&new.address)
            {
                reasons.push(format!(
                    "{}: new in the code, but the drift created nothing it stands for",
                    new.address
                ));
            }
        }
        CheckResult::new("untouched", reasons)
    }

    /// The attributes of an instance that changed in the code although the drift did not
    /// change them.
    fn collateral(&self, old: &ResourceInstance, new: &ResourceInstance) -> Vec<String> {
        let shape = self.shape(&old.resource_type, Side::Same);
        let (a, b) = (code_object(old), code_object(new));
        let mut out = Vec::new();
        for key in keys(&a, &b) {
            // Drifted attributes are judged by the drift, flag and ignore checks.
            let drifted = (old.address.clone(), key.clone());
            if self.drift.changed.contains(&drifted) {
                continue;
            }
            let (was, now) = (old.value(&key), new.value(&key));
            let found = match (&was, &now) {
                (Some(x), Some(y)) => shape
                    .difference(&key, x, y)
                    .map(|(path, a, b)| (path, Some(a), Some(b))),
                (None, None) => None,
                _ => Some((key.clone(), was.as_ref(), now.as_ref())),
            };
            if let Some((path, a, b)) = found {
                out.push(format!(
                    "{}.{path}: was {} in the code, now {}",
                    old.address,
                    show(a),
                    show(b)
                ));
            }
        }
        out
    }

    /// Each part the policy must flag is flagged and keeps its value in the code.
    fn flagged(&self) -> CheckResult {
        let mut reasons = Vec::new();
        for target in &self.e.expect.flag {
            if !self.ruled(target, Verdict::Flag) {
                reasons.push(format!(
                    "{}: expected to be flagged, but the reconciler did not flag it",
                    label(target)
                ));
            }
            reasons.extend(self.kept(target));
        }
        CheckResult::new("flagged", reasons)
    }

    /// Each resource created outside any workspace is reported as such and not imported: no
    /// new code instance has an import block for it.
    fn unowned(&self) -> CheckResult {
        let imports = self.imports();
        let mut reasons = Vec::new();
        for cloud in self.drift.created() {
            if !covers(&self.e.expect.unowned, &cloud.address, "") {
                continue;
            }
            let brought_in = imports
                .iter()
                .any(|imp| imp.id.as_deref().is_some_and(|id| names(id, cloud)));
            if brought_in {
                reasons.push(format!(
                    "{} ({}): created outside any workspace, but the patch imports it",
                    cloud.address, cloud.resource_type
                ));
            }
            let reported = self.e.report.decisions.findings.iter().any(|f| {
                f.kind == ReportedKind::Unowned
                    && f.resources.iter().any(|t| names(&t.identity, cloud))
            });
            if !reported {
                reasons.push(format!(
                    "{} ({}): created outside any workspace, but not reported as such",
                    cloud.address, cloud.resource_type
                ));
            }
        }
        CheckResult::new("unowned-reported", reasons)
    }

    /// Each part an automation owns keeps its value and is named in `ignore_changes`.
    fn ignored(&self) -> CheckResult {
        let mut reasons = Vec::new();
        for target in &self.e.expect.ignore {
            reasons.extend(self.kept(target));
            let Some(instance) = self.patched.instance(&target.address) else {
                continue;
            };
            let text = self
                .patched
                .files()
                .get(&instance.file)
                .and_then(|t| t.get(instance.span.clone()))
                .unwrap_or_default();
            let names = hcl_scan::ignore_changes(text);
            if !names.iter().any(|n| n == &target.attribute || n == "all") {
                reasons.push(format!(
                    "{}: lifecycle.ignore_changes does not name {} (it names [{}])",
                    target.address,
                    target.attribute,
                    names.join(", ")
                ));
            }
        }
        CheckResult::new("ignored", reasons)
    }

    /// Whether the reconciler ruled `decision` on the target: on the target's part of a delta
    /// of its instance (or on the whole resource), or on a resource created in the cloud that
    /// stands for it ([`Ctx::stands_for`]).
    fn ruled(&self, target: &Target, decision: Verdict) -> bool {
        self.e.report.decisions.decisions.iter().any(|r| {
            r.decision == decision
                && self.stands_for(r, target)
                && (target.attribute.is_empty()
                    || r.attribute.is_empty()
                    || within(&r.attribute, &target.attribute))
        })
    }

    /// Whether a ruling is about the target's instance: its address, or for a resource the
    /// system saw created, the created instance's type or an identity naming the target
    /// instance (an `aws_iam_role_policy_attachment` `role/policy-arn` names the role whose
    /// `managed_policy_arns` it changes).
    fn stands_for(&self, ruled: &Ruled, target: &Target) -> bool {
        if let Some(address) = &ruled.address {
            return *address == target.address;
        }
        let created = self.drift.created().find(|i| i.address == target.address);
        if created.is_some_and(|i| i.resource_type == ruled.resource_type) {
            return true;
        }
        let Some(instance) = self.drift.pre.get(target.address.as_str()) else {
            return false;
        };
        let names: Vec<&str> = ["id", "name"]
            .iter()
            .filter_map(|k| instance.attributes.get(*k).and_then(Value::as_str))
            .filter(|s| !s.is_empty())
            .collect();
        ruled.identity.split('/').any(|part| names.contains(&part))
    }

    /// Problems if the target's value in the code changed with the patch.
    fn kept(&self, target: &Target) -> Vec<String> {
        let old = self.e.original.instance(&target.address);
        let new = self.patched.instance(&target.address);
        match (old, new) {
            (None, None) => Vec::new(),
            (Some(_), None) => vec![format!("{}: removed from the code", target.address)],
            (None, Some(_)) => vec![format!("{}: added to the code", target.address)],
            (Some(o), Some(n)) if target.attribute.is_empty() => self.collateral_all(o, n),
            (Some(o), Some(n)) => {
                let (was, now) = (o.value(&target.attribute), n.value(&target.attribute));
                let same = match (&was, &now) {
                    (Some(x), Some(y)) => {
                        self.shape(&o.resource_type, Side::Same)
                            .agree(&target.attribute, x, y)
                    }
                    (None, None) => true,
                    _ => false,
                };
                if same {
                    Vec::new()
                } else {
                    vec![format!(
                        "{}: the code must keep {}, but the patch made it {}",
                        label(target),
                        show(was.as_ref()),
                        show(now.as_ref())
                    )]
                }
            }
        }
    }

    fn collateral_all(&self, old: &ResourceInstance, new: &ResourceInstance) -> Vec<String> {
        let shape = self.shape(&old.resource_type, Side::Same);
        if shape.agree("", &code_object(old), &code_object(new)) {
            Vec::new()
        } else {
            vec![format!(
                "{}: the code must keep it as it was, but the patch changed it",
                old.address
            )]
        }
    }

    /// The import blocks of every patched `.tf` file.
    fn imports(&self) -> Vec<Import> {
        hcl_scan::project_imports(self.patched.files())
    }
}

/// `address.attribute`, or the address alone for a whole resource.
fn label(target: &Target) -> String {
    if target.attribute.is_empty() {
        target.address.clone()
    } else {
        format!("{}.{}", target.address, target.attribute)
    }
}

/// The top-level attributes the configuration must set.
fn required(schema: &ResourceSchema) -> Vec<String> {
    schema
        .block
        .attributes
        .iter()
        .filter(|(name, _)| {
            matches!(schema.member(name), Some(Member::Attribute(a)) if a.presence == Presence::Required)
        })
        .map(|(name, _)| name.clone())
        .collect()
}

/// Whether an import id names the cloud resource: its `id` or `arn`, or two of its string
/// attributes joined by `/` or `,` as composite import ids are (`role/policy_arn`).
pub fn names(import_id: &str, cloud: &Instance) -> bool {
    let strings: Vec<&str> = cloud
        .attributes
        .as_object()
        .into_iter()
        .flat_map(|m| m.values())
        .filter_map(Value::as_str)
        .filter(|s| !s.is_empty())
        .collect();
    let direct = ["id", "arn"]
        .iter()
        .any(|k| cloud.attributes.get(*k).and_then(Value::as_str) == Some(import_id));
    direct
        || strings.iter().any(|a| {
            strings.iter().any(|b| {
                a != b
                    && ["/", ",", "_"]
                        .iter()
                        .any(|sep| import_id == format!("{a}{sep}{b}"))
            })
        })
}
/// Where Terraform finds `old`'s object in the patched configuration when its address is gone:
/// a `moved` block of its module directory naming its block (or this instance) as `from`, or,
/// for a no-key instance of a block that gained `count`, index 0 (Terraform moves it there
/// itself).
fn moved_address(old: &ResourceInstance, moves: &[hcl_scan::Move]) -> Option<String> {
    let prefix = old
        .module
        .as_deref()
        .map_or(String::new(), |m| format!("{m}."));
    let local = old.address.strip_prefix(&prefix)?;
    let dir = old.file.rsplit_once('/').map_or("", |(d, _)| d);
    let block = format!("{}.{}", old.resource_type, old.name);
    let key = &local[block.len().min(local.len())..];
    for m in moves.iter().filter(|m| m.dir == dir) {
        if m.from == local {
            return Some(format!("{prefix}{}", m.to));
        }
        if m.from == block && (key.is_empty() || !m.to.contains('[')) {
            // A block renamed keeps each instance's key; a no-key instance goes where `to` says.
            return Some(format!("{prefix}{}{key}", m.to));
        }
    }
    old.index.is_none().then(|| format!("{}[0]", old.address))
}

/// The code's value with each member it leaves unset that the drift did not change (the
/// cloud holds what it held before) taken from the cloud: a provider default the code never
/// wrote (a target group's `health_check.enabled`) is not drift left unabsorbed.
fn unset_as_before(code: Value, before: Option<&Value>, cloud: &Value) -> Value {
    match (code, before, cloud) {
        (Value::Null, Some(b), c) if b == c => c.clone(),
        (Value::Object(mut fields), Some(Value::Object(b)), Value::Object(c)) => {
            for (key, value) in c {
                let given = fields.remove(key).unwrap_or(Value::Null);
                fields.insert(key.clone(), unset_as_before(given, b.get(key), value));
            }
            Value::Object(fields)
        }
        (Value::Array(items), Some(Value::Array(b)), Value::Array(c))
            if items.len() == c.len() && b.len() == c.len() =>
        {
            let items = items
                .into_iter()
                .zip(b.iter().zip(c))
                .map(|(item, (b, c))| unset_as_before(item, Some(b), c))
                .collect();
            Value::Array(items)
        }
        (code, _, _) => code,
    }
}

/// Whether an attribute path is the expected one or a field inside it (a ruling on
/// `vpc_config.endpoint_public_access` stands for an expectation on `vpc_config`).
fn within(attribute: &str, expected: &str) -> bool {
    attribute == expected
        || attribute
            .strip_prefix(expected)
            .is_some_and(|rest| rest.starts_with('.'))
}

/// Loads a configuration with the pre-drift state; the error as text.
pub fn load(dir: &Path, state: &State) -> Result<Project, String> {
    Project::load(dir, state).map_err(|e| e.to_string())
}

/// Loads the patched configuration as `terraform plan` sees it: `import` blocks whose id names
/// a resource the drift created read that resource into the state first, so references to it
/// (`role = aws_iam_role.new.id`) evaluate to its values rather than unknown.
pub fn load_imported(dir: &Path, pre: &State, post: &State) -> Result<Project, String> {
    let project = load(dir, pre)?;
    let state = with_imports(&project, pre, post);
    if state.instances.len() == pre.instances.len() {
        return Ok(project);
    }
    load(dir, &state)
}

/// `state` with each resource the drift created (in `post`) that an `import` block of the
/// project names, at the block's address, as the state holds it once imported.
pub fn with_imports(project: &Project, state: &State, post: &State) -> State {
    let imports = hcl_scan::project_imports(project.files());
    let mut state = state.clone();
    for import in &imports {
        let known = |address: &str| state.instances.iter().any(|i| i.address == address);
        let created = post
            .instances
            .iter()
            .filter(|i| !known(&i.address))
            .find(|i| {
                i.mode == Mode::Managed
                    && import.id.as_deref().is_some_and(|id| names(id, i))
                    && type_of(&import.to) == Some(i.resource_type.as_str())
            });
        if let (Some(created), false) = (created, known(&import.to)) {
            state.instances.push(imported(created, &import.to));
        }
    }
    state
}

/// A created cloud resource as the state holds it once imported at `address`: in the root
/// module or a child module's instance (`module.users["x"].aws_iam_user.this`), with its
/// `count` or `for_each` key.
fn imported(created: &Instance, address: &str) -> Instance {
    let mut instance = created.clone();
    let (resource, index) = split_key(address);
    let (module, name) = match resource.rsplit_once('.') {
        Some((head, name)) => (
            head.rsplit_once('.').map(|(module, _)| module.to_owned()),
            name,
        ),
        None => (None, resource),
    };
    instance.address = address.to_owned();
    instance.module = module;
    instance.index = index;
    instance.name = name.to_owned();
    instance
}

/// The resource type an instance address names: `aws_iam_user` in
/// `module.users["x"].aws_iam_user.this`.
fn type_of(address: &str) -> Option<&str> {
    let (resource, _) = split_key(address);
    let (head, _) = resource.rsplit_once('.')?;
    Some(head.rsplit_once('.').map_or(head, |(_, kind)| kind))
}

/// An address without its last key, and that key: `aws_x.y["a"]` is `aws_x.y` and `"a"`.
fn split_key(address: &str) -> (&str, Option<IndexKey>) {
    let Some(open) = address.strip_suffix(']').and_then(|a| a.rfind('[')) else {
        return (address, None);
    };
    let key = &address[open + 1..address.len() - 1];
    let index = match serde_json::from_str::<Value>(key) {
        Ok(Value::String(text)) => IndexKey::Str(text),
        Ok(Value::Number(n)) => match n.as_i64() {
            Some(n) => IndexKey::Int(n),
            None => return (address, None),
        },
        _ => return (address, None),
    };
    (&address[..open], Some(index))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reconciler::terraform::state::IndexKey;

    #[test]
    fn an_imported_object_takes_its_module_name_and_key_from_the_address() {
        let created = Instance {
            address: "aws_iam_user.smith".to_owned(),
            module: None,
            mode: Mode::Managed,
            resource_type: "aws_iam_user".to_owned(),
            name: "smith".to_owned(),
            index: None,
            provider: "registry.terraform.io/hashicorp/aws".to_owned(),
            schema_version: 0,
            attributes: serde_json::json!({"id": "smith"}),
            sensitive: Vec::new(),
            private: None,
            dependencies: Vec::new(),
            tainted: false,
            deposed: None,
        };
        let at = |address: &str| {
            let i = imported(&created, address);
            (i.module, i.name, i.index)
        };
        assert_eq!(at("aws_iam_user.new"), (None, "new".to_owned(), None));
        assert_eq!(
            at("module.users[\"a.b\"].aws_iam_user.this"),
            (
                Some("module.users[\"a.b\"]".to_owned()),
                "this".to_owned(),
                None
            )
        );
        assert_eq!(
            at("module.sg.aws_security_group_rule.ingress[1]"),
            (
                Some("module.sg".to_owned()),
                "ingress".to_owned(),
                Some(IndexKey::Int(1))
            )
        );
        assert_eq!(
            type_of("module.users[\"a.b\"].aws_iam_user.this"),
            Some("aws_iam_user")
        );
        assert_eq!(type_of("aws_sqs_queue.q[\"app-c\"]"), Some("aws_sqs_queue"));
        assert_eq!(
            at("aws_sqs_queue.q[\"app-c\"]"),
            (
                None,
                "q".to_owned(),
                Some(IndexKey::Str("app-c".to_owned()))
            )
        );
    }

    #[test]
    fn a_default_the_drift_left_alone_is_not_unabsorbed_drift() {
        let before = serde_json::json!([{"enabled": true, "path": "/", "timeout": 5}]);
        let cloud = serde_json::json!([{"enabled": true, "path": "/healthz", "timeout": 5}]);
        let patched = serde_json::json!([{"enabled": null, "path": "/healthz"}]);
        assert_eq!(unset_as_before(patched, Some(&before), &cloud), cloud);
        // A member the drift changed stays as the code gives it.
        let unpatched = serde_json::json!([{"enabled": null, "path": null}]);
        let filled = unset_as_before(unpatched, Some(&before), &cloud);
        assert_eq!(filled[0]["path"], Value::Null);
        assert_eq!(filled[0]["enabled"], serde_json::json!(true));
    }

    #[test]
    fn a_flag_on_a_field_stands_for_its_block_and_not_for_a_namesake() {
        assert!(within("vpc_config", "vpc_config"));
        assert!(within("vpc_config.endpoint_public_access", "vpc_config"));
        assert!(!within("vpc_config_extra", "vpc_config"));
        assert!(!within("vpc", "vpc_config"));
    }

    fn policy(index: Option<IndexKey>) -> ResourceInstance {
        let key = match &index {
            Some(IndexKey::Int(n)) => format!("[{n}]"),
            Some(IndexKey::Str(s)) => format!("[{s:?}]"),
            None => String::new(),
        };
        ResourceInstance {
            address: format!("module.fn[\"a\"].aws_iam_role_policy.this{key}"),
            module: Some("module.fn[\"a\"]".to_owned()),
            mode: Mode::Managed,
            resource_type: "aws_iam_role_policy".to_owned(),
            name: "this".to_owned(),
            index,
            attributes: hcl::Value::Null,
            file: "modules/fn/main.tf".to_owned(),
            span: 0..0,
            place: Default::default(),
        }
    }

    fn moved(dir: &str, from: &str, to: &str) -> hcl_scan::Move {
        hcl_scan::Move {
            dir: dir.to_owned(),
            from: from.to_owned(),
            to: to.to_owned(),
        }
    }

    #[test]
    fn moved_blocks_and_the_implicit_move_to_index_zero_are_followed() {
        // No moved block: a no-key instance whose block gained count is at [0].
        assert_eq!(
            moved_address(&policy(None), &[]).as_deref(),
            Some("module.fn[\"a\"].aws_iam_role_policy.this[0]")
        );
        // A keyed instance has no implicit move.
        assert_eq!(moved_address(&policy(Some(IndexKey::Int(1))), &[]), None);
        // A renamed block keeps each key, only in the module's own directory.
        let rename = [moved(
            "modules/fn",
            "aws_iam_role_policy.this",
            "aws_iam_role_policy.main",
        )];
        assert_eq!(
            moved_address(&policy(Some(IndexKey::Int(1))), &rename).as_deref(),
            Some("module.fn[\"a\"].aws_iam_role_policy.main[1]")
        );
        let elsewhere = [moved(
            "",
            "aws_iam_role_policy.this",
            "aws_iam_role_policy.main",
        )];
        assert_eq!(
            moved_address(&policy(Some(IndexKey::Int(1))), &elsewhere),
            None
        );
    }
}
