//! How far the rules cover a resource type: which write APIs create, change, delete and tag
//! it, and which of those a type needs are missing.
//!
//! A type is covered when rules create it, delete it, change it (unless the catalog says it
//! has nothing to update: an association, or a type whose every argument forces a new
//! resource; a type Terraform adopts, such as a VPC's default security group, needs no create
//! or delete) and tag it (when the provider schema gives it `tags`). A rule counts as creating
//! the type when its kind is `create` or `associate`, or when it creates the resource a state
//! lacks (`missing = "create"`); as deleting it for `delete` and `disassociate`, or when it
//! reads a deletion from the request (`delete_unless`, `delete_when`). A type the catalog
//! says AWS cannot remove needs no delete. Items of a block the state may hold as separate
//! resources (security group rules) are created and deleted by the parent's `add-block` and
//! `remove-block` rules for that block, as resolve reads them; where the parent holds one
//! item per key (a table's route per destination), the `add-block` rules change items too.
//! An argument a resource of its own may manage (a queue's policy through
//! `aws_sqs_queue_policy`) is created, changed and deleted by the parent's rules that set it;
//! a type holding one tag of another resource (`aws_ec2_tag`) by its service's tag rules.

use serde::Serialize;

use crate::catalog::Catalog;
use crate::rules::{Kind, Missing, Rule, RuleSet, TagOp};
use crate::schema::ProviderSchema;

/// A part of a type's life cycle a rule can cover.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Part {
    /// The resource is created.
    Create,
    /// Its arguments or blocks change.
    Change,
    /// It is deleted.
    Delete,
    /// Its tags change.
    Tags,
}

impl Part {
    /// The part in plain words, as a report prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Create => "create",
            Self::Change => "change",
            Self::Delete => "delete",
            Self::Tags => "tags",
        }
    }

    /// Every part, in life-cycle order.
    pub const ALL: [Part; 4] = [Part::Create, Part::Change, Part::Delete, Part::Tags];
}

/// The rules covering one type, by part, and the parts it needs but lacks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TypeCoverage {
    /// The resource type.
    #[serde(rename = "type")]
    pub resource_type: String,
    /// Whether the bundled provider schema knows the type (rules can only name known types).
    pub in_schema: bool,
    /// For each part, the ids of the rules covering it (`service:Api`), sorted.
    pub apis: Vec<(Part, Vec<String>)>,
    /// The parts the type needs.
    pub needed: Vec<Part>,
    /// The needed parts no rule covers.
    pub missing: Vec<Part>,
}

impl TypeCoverage {
    /// Whether every needed part has a rule.
    pub fn is_covered(&self) -> bool {
        self.in_schema && self.missing.is_empty()
    }

    /// The rule ids covering a part.
    pub fn apis_for(&self, part: Part) -> &[String] {
        self.apis
            .iter()
            .find(|(p, _)| *p == part)
            .map_or(&[], |(_, ids)| ids.as_slice())
    }

    /// Every rule id naming the type, once each, sorted.
    pub fn all_apis(&self) -> Vec<&str> {
        let mut all: Vec<&str> = self
            .apis
            .iter()
            .flat_map(|(_, ids)| ids.iter().map(String::as_str))
            .collect();
        all.sort_unstable();
        all.dedup();
        all
    }
}

/// The parts of a type's life cycle one rule covers for that type.
pub fn parts_of(rule: &Rule) -> Vec<Part> {
    let spec = &rule.spec;
    let mut parts = match spec.kind {
        Kind::Create | Kind::Associate => vec![Part::Create],
        Kind::Delete | Kind::Disassociate => vec![Part::Delete],
        Kind::Update | Kind::AddBlock | Kind::RemoveBlock => vec![Part::Change],
        Kind::Tags => vec![Part::Tags],
        Kind::Operational => vec![],
    };
    if spec.missing == Some(Missing::Create) && !parts.contains(&Part::Create) {
        parts.push(Part::Create);
    }
    if (spec.delete_unless.is_some() || spec.delete_when.is_some())
        && !parts.contains(&Part::Delete)
    {
        parts.push(Part::Delete);
    }
    parts.sort_unstable();
    parts
}

/// The rules that create or delete a type as items of a parent's block.
fn split_rules(resource_type: &str, rules: &RuleSet, catalog: &Catalog) -> Vec<(Part, String)> {
    let mut found = Vec::new();
    for (parent, block) in catalog.split_parents(resource_type) {
        for rule in rules
            .iter()
            .filter(|r| r.resource_types().contains(&parent))
        {
            let on_block = rule.spec.blocks.iter().any(|b| b.name == block);
            let keyed = catalog
                .split(parent, block)
                .is_some_and(|s| !s.key.is_empty());
            match rule.kind() {
                Kind::AddBlock if on_block && keyed => {
                    found.push((Part::Create, rule.id()));
                    found.push((Part::Change, rule.id()));
                }
                Kind::AddBlock if on_block => found.push((Part::Create, rule.id())),
                Kind::RemoveBlock if on_block => found.push((Part::Delete, rule.id())),
                _ => {}
            }
        }
    }
    found
}

/// The rules that set an argument a type manages for its parent: the provider creates,
/// changes and deletes the companion through that very call.
fn companion_rules(resource_type: &str, rules: &RuleSet, catalog: &Catalog) -> Vec<(Part, String)> {
    let mut found = Vec::new();
    for (parent, attribute) in catalog.companion_parents(resource_type) {
        for rule in rules
            .iter()
            .filter(|r| r.resource_types().contains(&parent))
            .filter(|r| r.spec.sets.iter().any(|s| s.attribute == attribute))
        {
            for part in [Part::Create, Part::Change, Part::Delete] {
                found.push((part, rule.id()));
            }
        }
    }
    found
}

/// The tag rules of the service whose tags a single-tag type holds: a tag set creates or
/// changes it, a tag removed deletes it.
fn tag_rules(resource_type: &str, rules: &RuleSet, catalog: &Catalog) -> Vec<(Part, String)> {
    let Some(tag_of) = catalog.entry(resource_type).and_then(|e| e.tag_of.as_ref()) else {
        return Vec::new();
    };
    rules
        .iter()
        .filter(|r| r.service == tag_of.service && r.kind() == Kind::Tags)
        .flat_map(|rule| {
            let parts = match rule.spec.tags.as_ref().map(|t| t.op) {
                Some(TagOp::Remove) => vec![Part::Delete],
                Some(_) => vec![Part::Create, Part::Change],
                None => Vec::new(),
            };
            parts.into_iter().map(move |p| (p, rule.id()))
        })
        .collect()
}

/// The parts a type needs: create and delete unless the catalog says Terraform adopts it (or,
/// for delete, that AWS cannot remove it), change unless it has nothing to update, tags when
/// the schema gives it a `tags` argument.
pub fn needed_parts(resource_type: &str, catalog: &Catalog, schema: &ProviderSchema) -> Vec<Part> {
    let mut needed = Vec::new();
    if !catalog.has_no_create(resource_type) {
        needed.push(Part::Create);
    }
    if !catalog.has_no_update(resource_type) {
        needed.push(Part::Change);
    }
    if !catalog.has_no_delete(resource_type) {
        needed.push(Part::Delete);
    }
    if schema.attribute(resource_type, "tags").is_some() {
        needed.push(Part::Tags);
    }
    needed
}

/// How the rules cover one type.
pub fn coverage(
    resource_type: &str,
    rules: &RuleSet,
    catalog: &Catalog,
    schema: &ProviderSchema,
) -> TypeCoverage {
    let mut apis: Vec<(Part, Vec<String>)> = Part::ALL.iter().map(|p| (*p, Vec::new())).collect();
    for rule in rules
        .iter()
        .filter(|r| r.resource_types().contains(&resource_type))
    {
        for part in parts_of(rule) {
            if let Some((_, ids)) = apis.iter_mut().find(|(p, _)| *p == part) {
                ids.push(rule.id());
            }
        }
    }
    let derived = split_rules(resource_type, rules, catalog)
        .into_iter()
        .chain(companion_rules(resource_type, rules, catalog))
        .chain(tag_rules(resource_type, rules, catalog));
    for (part, id) in derived {
        if let Some((_, ids)) = apis.iter_mut().find(|(p, _)| *p == part) {
            ids.push(id);
        }
    }
    for (_, ids) in &mut apis {
        ids.sort_unstable();
        ids.dedup();
    }
    apis.retain(|(_, ids)| !ids.is_empty());
    let needed = needed_parts(resource_type, catalog, schema);
    let missing = needed
        .iter()
        .copied()
        .filter(|part| !apis.iter().any(|(p, _)| p == part))
        .collect();
    TypeCoverage {
        resource_type: resource_type.to_owned(),
        in_schema: schema.resource(resource_type).is_some(),
        apis,
        needed,
        missing,
    }
}

/// The ranking of resource types by use in public Terraform code
/// (`knowledge/data/resource-ranking.json`; method in `knowledge/data/RANKING.md`).
const RANKING_JSON: &str = include_str!("../data/resource-ranking.json");

/// One type of the ranking.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Ranked {
    /// 1 for the most used type.
    pub rank: usize,
    /// The resource type.
    #[serde(rename = "type")]
    pub resource_type: String,
    /// Declaring files plus module calls reaching the type.
    pub score: u64,
}

/// The bundled ranking file could not be read.
#[derive(Debug, Clone, thiserror::Error)]
#[error("the bundled resource ranking does not parse: {0}")]
pub struct RankingError(String);

/// The bundled ranking, most used type first.
pub fn bundled_ranking() -> Result<&'static [Ranked], RankingError> {
    #[derive(serde::Deserialize)]
    struct Document {
        ranking: Vec<Ranked>,
    }
    static BUNDLED: std::sync::OnceLock<Result<Vec<Ranked>, RankingError>> =
        std::sync::OnceLock::new();
    BUNDLED
        .get_or_init(|| {
            serde_json::from_str::<Document>(RANKING_JSON)
                .map(|d| d.ranking)
                .map_err(|e| RankingError(e.to_string()))
        })
        .as_ref()
        .map(Vec::as_slice)
        .map_err(Clone::clone)
}
