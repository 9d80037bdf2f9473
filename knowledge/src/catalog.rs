//! The resource catalog: what retrace knows about each Terraform resource type, read from the
//! `[[resource]]` tables of the rule files (format in `knowledge/rules/README.md`).
//!
//! Per type: the natural keys that name its cloud objects besides `id` and `arn`, the
//! attributes an automation owns, whether it only links two other resources, and the nested
//! blocks the state may manage as separate resources. The state index, resolve, intents,
//! ownership and policy read it, so adding a type touches its rule file and a test.

use serde::Deserialize;
use std::collections::BTreeMap;

use crate::rules::RuleError;

/// One type's entry, as a `[[resource]]` table.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The Terraform resource type, `aws_security_group`.
    #[serde(rename = "type")]
    pub resource_type: String,
    /// Attributes that name a cloud object besides `id` and `arn`; a key of several
    /// attributes matches their values joined by `/` (a group is found by `vpc-0a1/web`).
    #[serde(default)]
    pub natural_keys: Vec<Vec<String>>,
    /// How the provider joins attributes into the type's id (Route 53's
    /// `ZONEID_NAME_TYPE`): the state index also finds an instance by its attributes joined
    /// that way, its DNS names in one form, whatever form its `id` keeps them in.
    #[serde(default)]
    pub composite_id: Option<CompositeId>,
    /// Attributes an automation changes routinely, with who changes them.
    #[serde(default)]
    pub automation_owned: Vec<Owned>,
    /// Whether the type only links two other resources (an attachment, an association, a
    /// membership): its creation or deletion links or unlinks them.
    #[serde(default)]
    pub association: bool,
    /// Whether every argument of the type forces a new resource (the provider documentation
    /// marks them all `ForceNew`): the type has no update API to cover.
    #[serde(default)]
    pub immutable: bool,
    /// Whether AWS has no call that removes it (a bucket's versioning or ACL): destroying it in
    /// Terraform only resets it or stops managing it, so there is no delete API to cover.
    #[serde(default)]
    pub no_delete: bool,
    /// Whether Terraform adopts the type rather than creating it, and on destroy only stops
    /// managing it (the default security group, route table and network ACL AWS makes with
    /// each VPC): there is no create or delete API to cover.
    #[serde(default)]
    pub adopted: bool,
    /// Nested blocks whose items the state may manage as separate resources.
    #[serde(default)]
    pub split: Vec<Split>,
    /// Arguments the state may manage through a resource of their own (a queue's `policy`
    /// through `aws_sqs_queue_policy`).
    #[serde(default)]
    pub companion: Vec<Companion>,
    /// Whether the type holds one tag of another resource (`aws_ec2_tag`), and whose.
    #[serde(default)]
    pub tag_of: Option<TagOf>,
    /// Arguments the provider refuses together (`ConflictsWith`, or two of one
    /// `ExactlyOneOf`), which the schema data does not carry.
    #[serde(default)]
    pub conflict: Vec<Conflict>,
}

/// The attributes a provider id joins, in order.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompositeId {
    /// The attributes joined; empty ones at the end are left out, as the provider leaves out
    /// a record's empty `set_identifier`.
    pub attributes: Vec<String>,
    /// What joins them, `_`.
    pub separator: String,
    /// Those of them that hold DNS names, compared in [`crate::dns::canonical_name`]'s form.
    #[serde(default)]
    pub dns_names: Vec<String>,
}

/// Two arguments of a type the provider refuses together, as its documentation lists them
/// (`default_version` of `aws_launch_template` "conflicts with `update_default_version`").
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Conflict {
    /// The argument a change writes: `default_version`.
    pub attribute: String,
    /// The argument refused beside it: `update_default_version`.
    pub with: String,
    /// The computed attribute `attribute` always equals while `with` is true
    /// (`update_default_version = true` makes each new version the default, so
    /// `default_version` follows `latest_version`): a change to that value needs no edit.
    #[serde(default)]
    pub follows: Option<String>,
    /// Whether the provider reads `attribute` from AWS where the code sets `with` instead (an
    /// optional and computed argument: `access_control_policy` beside a canned `acl`): a
    /// change of it then needs no edit of its own.
    #[serde(default)]
    pub computed: bool,
}

/// A type that holds one tag (`key`, `value`) of a resource it names by id, imported as
/// `<id>,<key>`: the tag calls of `service` create, change and delete it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TagOf {
    /// The attribute naming the tagged resource by its id: `resource_id`.
    pub parent: String,
    /// The service whose tag rules tag that resource: `ec2`.
    pub service: String,
}

/// An argument of a type that a resource of its own may manage instead: the provider's
/// create, update and delete of that resource all call the parent's API that sets the
/// argument (`SetQueueAttributes` with `Policy`), and its documentation warns against setting
/// the argument on both.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Companion {
    /// The argument, named alike on both types: `policy`.
    pub attribute: String,
    /// The type that manages it on its own: `aws_sqs_queue_policy`.
    pub resource: String,
    /// The attribute of that type naming the parent by the parent's `id`: `queue_url`.
    pub parent: String,
}

/// An attribute an automation owns.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Owned {
    /// The attribute.
    pub attribute: String,
    /// Who changes it, in words: `scaling policies and schedules`.
    pub owner: String,
    /// The resource that is the automation, when it owns the attribute only where such a
    /// resource exists for this one (a scheduled action for a scalable target's capacities);
    /// absent when the automation always does.
    #[serde(default)]
    pub when: Option<Present>,
}

/// A resource whose presence makes an automation: one of type `resource` whose `same`
/// attributes hold what the changed resource's do.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Present {
    /// Its type: `aws_appautoscaling_scheduled_action`.
    pub resource: String,
    /// The attributes both have alike: `resource_id`, `scalable_dimension`.
    pub same: Vec<String>,
}

/// A nested block whose items may be separate resources of their own.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Split {
    /// The block, `ingress`.
    pub block: String,
    /// The type the provider documentation recommends for one item.
    pub resource: String,
    /// The attribute of an item's resource that names the parent.
    pub parent: String,
    /// An older type that holds items of several blocks, told apart by a field.
    #[serde(default)]
    pub legacy: Option<Legacy>,
    /// Block fields that name an item, when the parent holds at most one item per value (a
    /// table routes each destination once): an item added for a value the parent holds
    /// already replaces that item, so the block's add rules also change the item's resource.
    #[serde(default)]
    pub key: Vec<String>,
}

/// An older resource type for a split block, with the field that names the block.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Legacy {
    /// The type, `aws_security_group_rule`.
    pub resource: String,
    /// The attribute whose value is the block's name, `type`.
    pub field: String,
}

/// Every type's entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Catalog {
    entries: BTreeMap<String, Entry>,
}

/// The `[[resource]]` tables of a rule file; its other keys are the rules'.
#[derive(Deserialize)]
struct ResourceTables {
    #[serde(default)]
    resource: Vec<toml::Spanned<Entry>>,
}

impl Catalog {
    /// The catalog of the bundled rule files.
    pub fn load_bundled() -> Result<&'static Catalog, RuleError> {
        static BUNDLED: std::sync::OnceLock<Result<Catalog, RuleError>> =
            std::sync::OnceLock::new();
        BUNDLED
            .get_or_init(|| {
                let mut catalog = Catalog::default();
                for (file, text) in crate::rules::BUNDLED {
                    catalog.add_file(file, text)?;
                }
                Ok(catalog)
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The catalog of the bundled rule files, or an empty one when they do not load: every
    /// run loads the bundled rules first and stops on that error, and a test loads them.
    pub fn bundled() -> &'static Catalog {
        static EMPTY: std::sync::OnceLock<Catalog> = std::sync::OnceLock::new();
        Catalog::load_bundled().unwrap_or_else(|_| EMPTY.get_or_init(Catalog::default))
    }

    /// Adds the `[[resource]]` tables of one rule file; `file` names it in errors. A type
    /// given twice is an error.
    pub fn add_file(&mut self, file: &str, text: &str) -> Result<(), RuleError> {
        let parse_error = |line: usize, message: String| RuleError::Parse {
            file: file.to_owned(),
            line,
            rule: None,
            message,
        };
        let tables: ResourceTables = toml::from_str(text).map_err(|e| {
            let line = e.span().map_or(1, |s| line_of(text, s.start));
            parse_error(line, e.message().trim().to_owned())
        })?;
        for spanned in tables.resource {
            let line = line_of(text, spanned.span().start);
            let entry = spanned.into_inner();
            check(&entry).map_err(|message| {
                parse_error(line, format!("resource {}: {message}", entry.resource_type))
            })?;
            if self.entries.contains_key(&entry.resource_type) {
                return Err(parse_error(
                    line,
                    format!("resource {} is described twice", entry.resource_type),
                ));
            }
            self.entries.insert(entry.resource_type.clone(), entry);
        }
        Ok(())
    }

    /// The entry of a type.
    pub fn entry(&self, resource_type: &str) -> Option<&Entry> {
        self.entries.get(resource_type)
    }

    /// Every entry, by type.
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.entries.values()
    }

    /// The natural keys of a type (none when the catalog does not know it).
    pub fn natural_keys(&self, resource_type: &str) -> &[Vec<String>] {
        self.entry(resource_type)
            .map_or(&[], |e| e.natural_keys.as_slice())
    }

    /// How the provider joins a type's id from its attributes, when it does.
    pub fn composite_id(&self, resource_type: &str) -> Option<&CompositeId> {
        self.entry(resource_type)?.composite_id.as_ref()
    }

    /// Who owns an attribute of a type, when an automation does.
    pub fn automation_owner(&self, resource_type: &str, attribute: &str) -> Option<&Owned> {
        let entry = self.entry(resource_type)?;
        entry
            .automation_owned
            .iter()
            .find(|o| o.attribute == attribute)
    }

    /// Whether a type only links two other resources.
    pub fn is_association(&self, resource_type: &str) -> bool {
        self.entry(resource_type).is_some_and(|e| e.association)
    }

    /// Whether a type has nothing to update: an association, or every argument forces a new
    /// resource.
    pub fn has_no_update(&self, resource_type: &str) -> bool {
        self.entry(resource_type)
            .is_some_and(|e| e.association || e.immutable)
    }

    /// Whether AWS has no call that removes a type (or Terraform only adopts it).
    pub fn has_no_delete(&self, resource_type: &str) -> bool {
        self.entry(resource_type)
            .is_some_and(|e| e.no_delete || e.adopted)
    }

    /// Whether Terraform adopts a type that AWS makes with another resource, so there is no
    /// call that creates it.
    pub fn has_no_create(&self, resource_type: &str) -> bool {
        self.entry(resource_type).is_some_and(|e| e.adopted)
    }

    /// The parent type and block whose items a type holds as separate resources
    /// (`aws_vpc_security_group_ingress_rule` → `aws_security_group`, `ingress`), including
    /// the blocks an older type holds.
    pub fn split_parents(&self, resource_type: &str) -> Vec<(&str, &str)> {
        self.entries
            .values()
            .flat_map(|e| e.split.iter().map(move |s| (e, s)))
            .filter(|(_, s)| {
                s.resource == resource_type
                    || s.legacy
                        .as_ref()
                        .is_some_and(|l| l.resource == resource_type)
            })
            .map(|(e, s)| (e.resource_type.as_str(), s.block.as_str()))
            .collect()
    }

    /// How an argument of a type may be managed by a resource of its own, when it can be.
    pub fn companion(&self, resource_type: &str, attribute: &str) -> Option<&Companion> {
        let entry = self.entry(resource_type)?;
        entry.companion.iter().find(|c| c.attribute == attribute)
    }

    /// The parent types and arguments a type manages as a companion
    /// (`aws_sqs_queue_policy` → `aws_sqs_queue`, `policy`).
    pub fn companion_parents(&self, resource_type: &str) -> Vec<(&str, &str)> {
        self.entries
            .values()
            .flat_map(|e| e.companion.iter().map(move |c| (e, c)))
            .filter(|(_, c)| c.resource == resource_type)
            .map(|(e, c)| (e.resource_type.as_str(), c.attribute.as_str()))
            .collect()
    }

    /// The types that hold one tag of another resource, with how they name it.
    pub fn tag_holders(&self) -> impl Iterator<Item = (&str, &TagOf)> {
        self.entries
            .values()
            .filter_map(|e| Some((e.resource_type.as_str(), e.tag_of.as_ref()?)))
    }

    /// The conflicts a type's argument takes part in, on either side.
    pub fn conflicts(&self, resource_type: &str, attribute: &str) -> Vec<&Conflict> {
        self.entry(resource_type)
            .map(|e| {
                e.conflict
                    .iter()
                    .filter(|c| c.attribute == attribute || c.with == attribute)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// How a nested block of a type is split into separate resources, when it can be.
    pub fn split(&self, resource_type: &str, block: &str) -> Option<&Split> {
        let entry = self.entry(resource_type)?;
        entry.split.iter().find(|s| s.block == block)
    }
}

/// What the TOML types cannot check.
fn check(entry: &Entry) -> Result<(), String> {
    if !entry.resource_type.starts_with("aws_") {
        return Err("the type must be an AWS provider resource type (`aws_...`)".into());
    }
    if entry.natural_keys.iter().any(|k| k.is_empty()) {
        return Err("a natural key names at least one attribute".into());
    }
    if let Some(id) = &entry.composite_id {
        if id.attributes.is_empty() {
            return Err("a composite id names at least one attribute".into());
        }
        if let Some(name) = id.dns_names.iter().find(|n| !id.attributes.contains(n)) {
            return Err(format!("composite id: {name} is not one of its attributes"));
        }
    }
    if let Some(c) = entry.conflict.iter().find(|c| c.attribute == c.with) {
        return Err(format!("{} cannot conflict with itself", c.attribute));
    }
    Ok(())
}

/// The line (from 1) of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "service = \"ec2\"\nevent_source = \"ec2.amazonaws.com\"\n";

    #[test]
    fn entries_are_read_beside_the_rules() {
        let text = format!(
            "{HEAD}\n[[resource]]\ntype = \"aws_security_group\"\nnatural_keys = [[\"vpc_id\", \"name\"]]\n[[resource.split]]\nblock = \"ingress\"\nresource = \"aws_vpc_security_group_ingress_rule\"\nparent = \"security_group_id\"\nlegacy = {{ resource = \"aws_security_group_rule\", field = \"type\" }}\n\n[[resource]]\ntype = \"aws_autoscaling_group\"\nautomation_owned = [{{ attribute = \"desired_capacity\", owner = \"scaling policies\" }}]\n\n[[resource]]\ntype = \"aws_volume_attachment\"\nassociation = true\n"
        );
        let mut catalog = Catalog::default();
        catalog.add_file("ec2.toml", &text).expect("loads");
        assert_eq!(
            catalog.natural_keys("aws_security_group"),
            [vec!["vpc_id".to_owned(), "name".to_owned()]]
        );
        let split = catalog
            .split("aws_security_group", "ingress")
            .expect("split");
        assert_eq!(split.resource, "aws_vpc_security_group_ingress_rule");
        assert!(catalog.split("aws_security_group", "egress").is_none());
        assert_eq!(
            catalog
                .automation_owner("aws_autoscaling_group", "desired_capacity")
                .map(|o| o.owner.as_str()),
            Some("scaling policies")
        );
        assert!(catalog.is_association("aws_volume_attachment"));
        assert!(
            catalog
                .conflicts("aws_volume_attachment", "device_name")
                .is_empty()
        );
        assert!(!catalog.is_association("aws_security_group"));
        assert!(catalog.natural_keys("aws_unknown").is_empty());
    }

    #[test]
    fn a_composite_id_names_its_attributes_and_which_are_dns_names() {
        let head = "service = \"route53\"\nevent_source = \"route53.amazonaws.com\"\n";
        let text = format!(
            "{head}\n[[resource]]\ntype = \"aws_route53_record\"\ncomposite_id = {{ attributes = [\"zone_id\", \"name\", \"type\"], separator = \"_\", dns_names = [\"name\"] }}\n"
        );
        let mut catalog = Catalog::default();
        catalog.add_file("route53.toml", &text).expect("loads");
        let id = catalog.composite_id("aws_route53_record").expect("id");
        assert_eq!(id.attributes, ["zone_id", "name", "type"]);
        assert_eq!(id.separator, "_");
        assert_eq!(id.dns_names, ["name"]);
        assert!(catalog.composite_id("aws_vpc").is_none());
        let stray = format!(
            "{head}\n[[resource]]\ntype = \"aws_route53_record\"\ncomposite_id = {{ attributes = [\"zone_id\"], separator = \"_\", dns_names = [\"fqdn\"] }}\n"
        );
        let err = Catalog::default()
            .add_file("route53.toml", &stray)
            .expect_err("a DNS name outside the id")
            .to_string();
        assert_eq!(
            err,
            "route53.toml:4: resource aws_route53_record: composite id: fqdn is not one of its attributes"
        );
    }

    #[test]
    fn a_bad_entry_names_its_file_and_line() {
        let twice = format!(
            "{HEAD}\n[[resource]]\ntype = \"aws_vpc\"\n\n[[resource]]\ntype = \"aws_vpc\"\n"
        );
        let err = Catalog::default()
            .add_file("ec2.toml", &twice)
            .expect_err("twice")
            .to_string();
        assert_eq!(err, "ec2.toml:7: resource aws_vpc is described twice");
        let unknown = format!("{HEAD}\n[[resource]]\ntype = \"aws_vpc\"\nkeys = []\n");
        let err = Catalog::default()
            .add_file("ec2.toml", &unknown)
            .expect_err("unknown key")
            .to_string();
        assert!(err.starts_with("ec2.toml:"), "{err}");
        assert!(err.contains("keys"), "{err}");
        let empty_key = format!("{HEAD}\n[[resource]]\ntype = \"aws_vpc\"\nnatural_keys = [[]]\n");
        let err = Catalog::default()
            .add_file("ec2.toml", &empty_key)
            .expect_err("empty key")
            .to_string();
        assert_eq!(
            err,
            "ec2.toml:4: resource aws_vpc: a natural key names at least one attribute"
        );
        let itself = format!(
            "{HEAD}\n[[resource]]\ntype = \"aws_vpc\"\n[[resource.conflict]]\nattribute = \"a\"\nwith = \"a\"\n"
        );
        let err = Catalog::default()
            .add_file("ec2.toml", &itself)
            .expect_err("itself")
            .to_string();
        assert_eq!(
            err,
            "ec2.toml:4: resource aws_vpc: a cannot conflict with itself"
        );
    }

    #[test]
    fn a_conflict_is_found_from_either_argument() {
        let text = format!(
            "{HEAD}\n[[resource]]\ntype = \"aws_launch_template\"\n[[resource.conflict]]\nattribute = \"default_version\"\nwith = \"update_default_version\"\nfollows = \"latest_version\"\n"
        );
        let mut catalog = Catalog::default();
        catalog.add_file("ec2.toml", &text).expect("loads");
        for side in ["default_version", "update_default_version"] {
            let found = catalog.conflicts("aws_launch_template", side);
            assert_eq!(found.len(), 1, "{side}");
            assert_eq!(found[0].follows.as_deref(), Some("latest_version"));
        }
        assert!(catalog.conflicts("aws_launch_template", "name").is_empty());
    }
}
