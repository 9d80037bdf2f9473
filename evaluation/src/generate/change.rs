//! A change: the write calls one out-of-band action makes, what it targets, how to undo it,
//! and what kind of drift it is. Generators build changes from a state's instances; the
//! session runner executes them in the simulator.

use crate::sim::Request;
use reconciler::terraform::state::Instance;
use serde_json::{Value, json};

/// What a change does to the managed resources.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Changes attributes of an existing resource.
    Modify,
    /// Creates resources Terraform does not manage.
    Create,
    /// Deletes a managed resource (or a nested block of one).
    Delete,
}

/// One out-of-band action.
#[derive(Debug, Clone)]
pub struct Change {
    /// The generator's name, `sg-open-port`.
    pub name: &'static str,
    /// What was done, for the description: `opened TCP 443 from 10.0.0.0/16 on sg-0abc`.
    pub what: String,
    /// The instance the change is about.
    pub address: String,
    /// The attribute paths (dotted, list positions as numbers) the change sets on `address`.
    pub paths: Vec<String>,
    /// The write calls, in order.
    pub calls: Vec<Request>,
    /// Calls that put things back as they were; empty when there is no simple undo.
    pub undo: Vec<Request>,
    /// Modify, create or delete.
    pub kind: Kind,
    /// Whether the default policy should flag the change rather than absorb it.
    pub risky: bool,
    /// The SSM Automation runbook this change is modelled on, if any.
    pub runbook: Option<&'static str>,
    /// Attributes of `address` an automation owns (Auto Scaling, ECS).
    pub owned: Vec<&'static str>,
    /// Resource types the change creates that belong to no workspace: nothing links them to
    /// the project, and neither their tags nor their names are the project's.
    pub unowned: Vec<&'static str>,
    /// Whether the calls create a resource with a value CloudTrail records as hidden (a
    /// parameter's value): code without it would not describe the resource, so a person must
    /// write it and the creation is held.
    pub hides_values: bool,
}

impl Change {
    /// A modification of `instance` by `calls`.
    pub fn modify(
        name: &'static str,
        instance: &Instance,
        what: String,
        paths: &[&str],
        calls: Vec<Request>,
    ) -> Change {
        Change {
            name,
            what,
            address: instance.address.clone(),
            paths: paths.iter().map(|p| (*p).to_owned()).collect(),
            calls,
            undo: Vec::new(),
            kind: Kind::Modify,
            risky: false,
            runbook: None,
            owned: Vec::new(),
            unowned: Vec::new(),
            hides_values: false,
        }
    }

    /// The same with another kind.
    pub fn kind(mut self, kind: Kind) -> Change {
        self.kind = kind;
        self
    }

    /// The same with its undo calls.
    pub fn undo(mut self, undo: Vec<Request>) -> Change {
        self.undo = undo;
        self
    }

    /// The same, creating resources of these types that belong to no workspace.
    pub fn unowned(mut self, types: &[&'static str]) -> Change {
        self.unowned = types.to_vec();
        self
    }

    /// The same, marked as creating a resource with a value CloudTrail hides.
    pub fn hides_values(mut self) -> Change {
        self.hides_values = true;
        self
    }

    /// The same, marked risky.
    pub fn risky(mut self) -> Change {
        self.risky = true;
        self
    }

    /// The same, modelled on a runbook.
    pub fn runbook(mut self, runbook: &'static str) -> Change {
        self.runbook = Some(runbook);
        self
    }

    /// The same, with attributes an automation owns.
    pub fn owned(mut self, owned: &[&'static str]) -> Change {
        self.owned = owned.to_vec();
        self
    }

    /// The top-level attributes of `paths`.
    pub fn top_attributes(&self) -> Vec<String> {
        let mut tops: Vec<String> = self
            .paths
            .iter()
            .map(|p| p.split('.').next().unwrap_or(p).to_owned())
            .chain(self.owned.iter().map(|o| (*o).to_owned()))
            .collect();
        tops.sort();
        tops.dedup();
        tops
    }
}

/// A top-level string attribute, empty when absent.
pub fn text<'a>(instance: &'a Instance, key: &str) -> &'a str {
    instance.string_attribute(key).unwrap_or_default()
}

/// A top-level integer attribute (numbers or numeric strings).
pub fn int(instance: &Instance, key: &str) -> Option<i64> {
    match instance.attributes.get(key)? {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// A top-level boolean attribute, `false` when absent.
pub fn flag(instance: &Instance, key: &str) -> bool {
    instance
        .attributes
        .get(key)
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// The first element of a nested block list, `Null` when absent.
pub fn block<'a>(instance: &'a Instance, key: &str) -> &'a Value {
    instance
        .attributes
        .get(key)
        .and_then(|v| v.get(0))
        .unwrap_or(&Value::Null)
}

/// A request from its parts.
pub fn req(source: &str, name: &str, params: Value) -> Request {
    Request::new(source, name, params)
}

/// An S3 bucket sub-resource request in CloudTrail's shape.
pub fn s3(name: &str, bucket: &str, key: &str, body: Value, marker: &str) -> Request {
    let mut params = json!({"bucketName": bucket, "Host": format!("{bucket}.s3.amazonaws.com")});
    if !key.is_empty() {
        params[key] = body;
    }
    params[marker] = json!("");
    req("s3.amazonaws.com", name, params)
}

/// A resource's description reworded by `call(description)`; `noun` names its kind in the
/// change's description (`cache subnet group`).
pub fn reworded(
    generator: &'static str,
    noun: &str,
    instance: &Instance,
    call: impl Fn(&str) -> Request,
) -> Change {
    let name = text(instance, "name");
    let current = text(instance, "description");
    Change::modify(
        generator,
        instance,
        format!("reworded the description of {noun} {name}"),
        &["description"],
        vec![call(&format!("{current} (reviewed)"))],
    )
    .undo(vec![call(current)])
}

/// The S3 XML namespace CloudTrail keeps in bodies.
pub const XMLNS: &str = "http://s3.amazonaws.com/doc/2006-03-01/";

/// The next size up in an instance family (`db.t3.micro` → `db.t3.small`).
pub fn next_size(class: &str) -> Option<String> {
    const SIZES: [&str; 10] = [
        "nano", "micro", "small", "medium", "large", "xlarge", "2xlarge", "4xlarge", "8xlarge",
        "12xlarge",
    ];
    let (family, size) = class.rsplit_once('.')?;
    let at = SIZES.iter().position(|s| *s == size)?;
    SIZES.get(at + 1).map(|next| format!("{family}.{next}"))
}

/// The smallest value of `ladder` above `current`.
pub fn next_in(ladder: &[i64], current: i64) -> Option<i64> {
    ladder.iter().copied().find(|v| *v > current)
}

/// The retention periods CloudWatch Logs accepts, in days.
pub const LOG_RETENTION_DAYS: [i64; 22] = [
    1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922,
    3288, 3653,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_go_up_one_step() {
        assert_eq!(next_size("db.t3.micro").as_deref(), Some("db.t3.small"));
        assert_eq!(next_size("t3.large").as_deref(), Some("t3.xlarge"));
        assert_eq!(next_size("m5.12xlarge"), None);
        assert_eq!(next_size("weird"), None);
    }

    #[test]
    fn ladders_pick_the_next_value() {
        assert_eq!(next_in(&LOG_RETENTION_DAYS, 14), Some(30));
        assert_eq!(next_in(&LOG_RETENTION_DAYS, 0), Some(1));
        assert_eq!(next_in(&LOG_RETENTION_DAYS, 3653), None);
    }
}
