//! Where an attribute's value is written, from its provenance: at the source when the source
//! feeds only this value, at the use site otherwise (with a warning), or nowhere when no single
//! edit can change this instance alone.

use super::entry::{entry_field_shared, for_each_entry};
use super::input::new_input;
use super::instances::{
    in_one_module, in_several_module_instances, resource_block, shared_by_instances,
};
use super::model::{CallArgument, Place, VarHome};
use crate::synthesize::tags::{block_target, split_last_key};
use crate::terraform::config::{Collection, Project, Provenance, ResourceInstance, VariableSource};
use crate::terraform::state::{IndexKey, PathStep};
use knowledge::schema::{Member, ResourceSchema};

/// The path to attribute `name` inside the nested `blocks` of an instance (the first of each
/// block), as [`Project::provenance`] takes it.
pub fn attribute_steps(blocks: &[&str], name: &str) -> Vec<PathStep> {
    blocks
        .iter()
        .flat_map(|block| [PathStep::Key((*block).to_owned()), PathStep::Index(0)])
        .chain([PathStep::Key(name.to_owned())])
        .collect()
}

/// Splits `a.b.c` into the nested blocks (`a`, `b`) and the attribute (`c`), by the schema.
pub fn split_blocks<'p>(schema: Option<&ResourceSchema>, path: &'p str) -> (Vec<&'p str>, String) {
    let parts: Vec<&str> = path.split('.').collect();
    let mut blocks = Vec::new();
    for i in 0..parts.len().saturating_sub(1) {
        let prefix = parts[..=i].join(".");
        match schema.and_then(|s| s.member(&prefix)) {
            Some(Member::Block(_)) => blocks.push(parts[i]),
            _ => break,
        }
    }
    let name = parts[blocks.len()..].join(".");
    (blocks, name)
}

/// The place for the attribute `name` inside the nested `blocks` of an instance.
pub fn place_of(
    project: &Project,
    instance: &ResourceInstance,
    blocks: &[&str],
    name: &str,
) -> Place {
    let steps = attribute_steps(blocks, name);
    let Some(provenance) = project.provenance(&instance.address, &steps) else {
        return Place::Refuse {
            reason: format!("{} is not in the configuration", instance.address),
        };
    };
    if blocks.is_empty()
        && in_several_module_instances(instance)
        && reaches_module_by_no_own_input(project, instance, &provenance)
        && let Ok(input) = new_input(project, instance, name)
    {
        return Place::NewModuleInput {
            why: format!(
                "{} is written in a module used several times and no input carries its {name} alone; a new module input `{}` carries this instance's value",
                instance.address, input.input
            ),
            input,
        };
    }
    let shared = shared_by_instances(project, instance);
    from(project, instance, &provenance, shared)
}

/// Whether the value is set inside the module (or not at all), or comes through an input the
/// module uses for other arguments too: no argument of the call changes it alone.
fn reaches_module_by_no_own_input(
    project: &Project,
    instance: &ResourceInstance,
    provenance: &Provenance,
) -> bool {
    match provenance {
        Provenance::Absent { .. }
        | Provenance::Literal { .. }
        | Provenance::Local { .. }
        | Provenance::Expression { .. } => true,
        Provenance::ModuleInput { argument, .. } => project
            .variable(instance.module.as_deref(), argument)
            .is_some_and(|v| v.uses > 1),
        _ => false,
    }
}

fn from(
    project: &Project,
    instance: &ResourceInstance,
    p: &Provenance,
    shared: Option<usize>,
) -> Place {
    match p {
        Provenance::Absent { .. } => match shared {
            None => Place::UseSite {
                why: "the attribute is not set in the configuration yet".into(),
            },
            Some(n) => per_instance(project, instance, n, "not set in the block", false),
        },
        Provenance::Literal { file, .. } => match shared {
            None => Place::UseSite {
                why: format!("the value is written literally in {file}"),
            },
            Some(n) => per_instance(project, instance, n, "a literal", false),
        },
        Provenance::Variable {
            module,
            name,
            source,
            path,
        } => {
            let uses = match path.first() {
                Some(PathStep::Key(field)) => {
                    project.variable_field_uses(module.as_deref(), name, field)
                }
                _ => project
                    .variable(module.as_deref(), name)
                    .map_or(0, |v| v.uses),
            };
            variable(project, instance, name, source, path, uses, shared)
        }
        Provenance::ModuleInput {
            call,
            argument,
            file,
            inner,
            ..
        } => module_input(project, instance, call, argument, file, inner, shared),
        Provenance::Local { module, name, .. } => {
            let uses = project.local(module.as_deref(), name).map_or(0, |l| l.uses);
            override_or_refuse(
                project,
                instance,
                shared,
                format!(
                    "the value comes from local.{name}, which {uses} arguments use; the override keeps the local for them"
                ),
            )
        }
        Provenance::ForEach {
            key,
            file,
            collection,
            path,
            ..
        } => match (
            entry_field_shared(project, instance, false, key, path),
            collection,
        ) {
            (Some(reason), _) => match shared {
                Some(n) => per_instance(project, instance, n, &reason, true),
                None => Place::Refuse { reason },
            },
            (_, Collection::Variable { module: None, .. }) => for_each_entry(
                key,
                file,
                collection,
                path,
                &resource_block(instance),
                "the resource",
            ),
            _ if in_several_module_instances(instance) => Place::Refuse {
                reason: format!(
                    "the value comes from entry \"{key}\" of a collection written in a module that has several instances ({}); editing it would change them all",
                    instance.module.as_deref().unwrap_or_default()
                ),
            },
            _ => for_each_entry(
                key,
                file,
                collection,
                path,
                &resource_block(instance),
                "the resource",
            ),
        },
        Provenance::Expression { reason, .. } => override_or_refuse(
            project,
            instance,
            shared,
            format!("the value was computed by an expression ({reason}); the override replaces it"),
        ),
    }
}

fn variable(
    project: &Project,
    instance: &ResourceInstance,
    name: &str,
    source: &VariableSource,
    path: &[PathStep],
    uses: usize,
    shared: Option<usize>,
) -> Place {
    let read = match path.first() {
        Some(PathStep::Key(field)) => format!("var.{name}.{field}"),
        _ => format!("var.{name}"),
    };
    if uses > 1 || shared.is_some() {
        return override_or_refuse(
            project,
            instance,
            shared,
            format!("{read} is used by {uses} arguments; changing it would change them all"),
        );
    }
    let why = |place: &str| format!("{read} feeds only this argument; edited at its {place}");
    let (file, home, place) = match source {
        VariableSource::Default { file, .. } => (file, VarHome::Default, why("default")),
        VariableSource::Tfvars { file, line, .. } | VariableSource::VarFile { file, line, .. } => (
            file,
            VarHome::Tfvar,
            why(&format!("entry in {file} line {line}")),
        ),
        VariableSource::Cli => {
            return override_or_refuse(
                project,
                instance,
                shared,
                format!("var.{name} is given on the command line (-var)"),
            );
        }
        VariableSource::ModuleArgument { .. } | VariableSource::Unset => {
            return override_or_refuse(
                project,
                instance,
                shared,
                format!("var.{name} has no value the code sets"),
            );
        }
    };
    let (file, name) = (file.clone(), name.to_owned());
    match (path.is_empty(), home) {
        // A path into the variable edits that entry alone, never the whole value.
        (false, _) => Place::CollectionEntry {
            file,
            container: home.container(&name),
            path: path.to_vec(),
            why: place,
        },
        (true, VarHome::Default) => Place::VariableDefault {
            file,
            name,
            why: place,
        },
        (true, _) => Place::Tfvar {
            file,
            name,
            why: place,
        },
    }
}

fn module_input(
    project: &Project,
    instance: &ResourceInstance,
    call: &str,
    argument: &str,
    file: &str,
    inner: &Provenance,
    shared: Option<usize>,
) -> Place {
    let module_path = instance.module.as_deref();
    let uses = project
        .variable(module_path, argument)
        .map_or(0, |v| v.uses);
    if uses > 1 {
        return override_or_refuse(
            project,
            instance,
            shared,
            format!("the module input {argument} is used by {uses} arguments in the module"),
        );
    }
    let (caller, last) = call.rsplit_once(".module.").unwrap_or(("", call));
    let last = last.trim_start_matches("module.");
    let (module, key) = last.split_once('[').unwrap_or((last, ""));
    // The caller's own file is shared when the caller is one of several module instances.
    let caller_shared = caller.contains('[');
    let site = CallArgument {
        file: file.to_owned(),
        module: module.to_owned(),
        argument: argument.to_owned(),
    };
    let call_key = split_last_key(call).1.filter(|_| !caller_shared);
    // This module instance's own value, looked up by the call's `each.key`/`count.index`.
    let at_call = |what: String, overrides: bool| match &call_key {
        Some(key) => Place::PerInstance {
            call: Some(site.clone()),
            key: key.clone(),
            why: format!(
                "{what}; var.{argument} feeds only this argument in the module, so {call} gets its own value at the call's argument, looked up by {}",
                iterator_of(key)
            ),
            warning: overrides.then(|| format!("{what}; overridden for {call} alone")),
        },
        None => Place::Refuse {
            reason: format!("{what}; a value for {call} alone needs a per-instance entry"),
        },
    };
    match inner {
        Provenance::ForEach {
            key,
            file: at,
            collection,
            path,
            ..
        } => match (
            entry_field_shared(project, instance, true, key, path),
            collection,
        ) {
            (Some(reason), _) => at_call(reason, true),
            (_, Collection::InPlace { .. } | Collection::Local { .. }) if caller_shared => {
                Place::Refuse {
                    reason: format!(
                        "the value comes from entry \"{key}\" of the for_each of module {module}, written in a module that has several instances"
                    ),
                }
            }
            _ => {
                let call_block = block_target(file, "module", &[module]);
                for_each_entry(
                    key,
                    at,
                    collection,
                    path,
                    &call_block,
                    &format!("module {module}"),
                )
            }
        },
        Provenance::Literal { .. } if !key.is_empty() || caller_shared => at_call(
            format!(
                "the value is the literal argument {argument} of module {module}, which every instance of the module call shares"
            ),
            false,
        ),
        Provenance::Literal { .. } => Place::ModuleArgument {
            file: file.to_owned(),
            module: module.to_owned(),
            argument: argument.to_owned(),
            why: format!("the value is the literal argument {argument} of module {module}"),
        },
        _ if call_key.is_some() => at_call(
            format!(
                "the value is argument {argument} of module {module}, which every instance of the module call shares"
            ),
            true,
        ),
        other => from(project, instance, other, shared),
    }
}

fn override_or_refuse(
    project: &Project,
    instance: &ResourceInstance,
    shared: Option<usize>,
    what: String,
) -> Place {
    match shared {
        Some(n) => per_instance(project, instance, n, &what, true),
        None => Place::Override {
            why: what.clone(),
            warning: format!("{what}; overridden at the use site in {}", instance.address),
        },
    }
}

/// The value of one of the `n` instances of a block, written for it alone: a lookup by the
/// block's own `each.key`/`count.index`. A block shared by several instances of a module has
/// no iterator naming the module instance; that needs a new module input.
fn per_instance(
    project: &Project,
    instance: &ResourceInstance,
    n: usize,
    what: &str,
    overrides: bool,
) -> Place {
    match &instance.index {
        Some(key) if in_one_module(project, instance) => {
            let iterator = iterator_of(key);
            Place::PerInstance {
                call: None,
                key: key.clone(),
                why: format!(
                    "{} is one of {n} instances of one block ({what}); this instance's own value is looked up by {iterator}",
                    instance.address
                ),
                warning: overrides.then(|| {
                    format!(
                        "{what}; overridden for {} alone by a lookup on {iterator}",
                        instance.address
                    )
                }),
            }
        }
        _ => Place::Refuse {
            reason: format!(
                "{} is one of {n} instances of one block written in a module used several times ({what}); a value for this module instance alone needs a new module input",
                instance.address
            ),
        },
    }
}

/// The expression naming the current instance of a block indexed by `key`.
fn iterator_of(key: &IndexKey) -> &'static str {
    match key {
        IndexKey::Int(_) => "count.index",
        IndexKey::Str(_) => "each.key",
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::synthesize::edit::Container;

    /// A project with an object variable, a for_each resource over a tfvars map, a module
    /// called with for_each over another, and a literal set.
    pub(in crate::synthesize::place) fn project() -> Project {
        let temp = tempfile::tempdir().expect("a temporary directory");
        let dir = temp.path().to_path_buf();
        let files = [
            (
                "main.tf",
                r#"variable "asg" {}
variable "queues" {}
variable "functions" {}
variable "retention" {}
variable "services" {}

resource "aws_ecr_repository" "svc" {
  for_each = var.services
  name     = each.key
}

resource "aws_cloudwatch_log_group" "svc" {
  for_each = var.services
  name     = each.key
}

resource "aws_autoscaling_group" "web" {
  min_size = var.asg.min
  max_size = var.asg.max
}

resource "aws_autoscaling_group" "batch" {
  min_size = var.asg.min
}

resource "aws_sqs_queue" "q" {
  for_each                   = var.queues
  visibility_timeout_seconds = each.value.timeout
}

resource "aws_sns_topic" "t" {
  for_each = toset(["x", "y"])
  name     = each.key
}

variable "azs" {}

resource "aws_subnet" "a" {
  count = length(var.azs)
}

resource "aws_route_table_association" "a" {
  count     = length(var.azs)
  subnet_id = aws_subnet.a[count.index].id
}

resource "aws_eip" "nat" {
  count = 2
}

module "fn" {
  source    = "./modules/fn"
  for_each  = var.functions
  timeout   = each.value.timeout
  retention = var.retention
}
"#,
            ),
            (
                "terraform.tfvars",
                "asg = { min = 1, max = 3 }\nqueues = {\n  a = { timeout = 30 }\n  b = { timeout = 60 }\n}\nfunctions = {\n  f = { timeout = 10 }\n  g = { timeout = 20 }\n}\nretention = 30\nservices = {\n  api = {}\n  web = {}\n}\nazs = [\"a\", \"b\", \"c\"]\n",
            ),
            (
                "modules/fn/main.tf",
                "variable \"timeout\" {}\nvariable \"retention\" {}\n\nresource \"aws_lambda_function\" \"this\" {\n  timeout     = var.timeout\n  memory_size = 128\n}\n\nresource \"aws_cloudwatch_log_group\" \"this\" {\n  retention_in_days = var.retention\n}\n",
            ),
        ];
        for (name, text) in files {
            let path = dir.join(name);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("a directory");
            std::fs::write(path, text).expect("written");
        }
        Project::load(&dir, &Default::default()).expect("loads")
    }

    fn place(project: &Project, address: &str, name: &str) -> Place {
        let instance = project.instance(address).expect("an instance");
        place_of(project, instance, &[], name)
    }

    pub(in crate::synthesize::place) fn entry(
        file: &str,
        home: VarHome,
        name: &str,
        path: &[&str],
    ) -> (String, Container, Vec<PathStep>) {
        (
            file.to_owned(),
            home.container(name),
            path.iter()
                .map(|k| PathStep::Key((*k).to_owned()))
                .collect(),
        )
    }

    fn as_entry(place: Place) -> Option<(String, Container, Vec<PathStep>)> {
        match place {
            Place::CollectionEntry {
                file,
                container,
                path,
                ..
            } => Some((file, container, path)),
            _ => None,
        }
    }

    #[test]
    fn a_field_of_an_object_variable_is_edited_when_only_this_argument_reads_it() {
        let project = project();
        // var.asg.max feeds web's max_size alone: its field in the tfvars object.
        assert_eq!(
            as_entry(place(&project, "aws_autoscaling_group.web", "max_size")),
            Some(entry("terraform.tfvars", VarHome::Tfvar, "asg", &["max"]))
        );
        // var.asg.min feeds two arguments: overridden at the use site, never set whole.
        let min = place(&project, "aws_autoscaling_group.web", "min_size");
        assert!(
            matches!(&min, Place::Override { why, .. } if why.contains("var.asg.min is used by 2")),
            "{min:?}"
        );
    }

    #[test]
    fn values_in_a_module_called_with_for_each_are_edited_in_the_callers_entry() {
        let project = project();
        assert_eq!(
            as_entry(place(
                &project,
                "module.fn[\"g\"].aws_lambda_function.this",
                "timeout"
            )),
            Some(entry(
                "terraform.tfvars",
                VarHome::Tfvar,
                "functions",
                &["g", "timeout"]
            ))
        );
        // var.retention feeds both instances through the call's argument: this instance's
        // own value is looked up there by each.key.
        let retention = place(
            &project,
            "module.fn[\"g\"].aws_cloudwatch_log_group.this",
            "retention_in_days",
        );
        let Place::PerInstance {
            call: Some(call),
            key,
            warning: Some(_),
            ..
        } = retention
        else {
            panic!("{retention:?}");
        };
        assert_eq!(
            (
                call.file.as_str(),
                call.module.as_str(),
                call.argument.as_str()
            ),
            ("main.tf", "fn", "retention")
        );
        assert_eq!(key, IndexKey::Str("g".to_owned()));
        // A literal inside the module, or an argument the module does not set, gets a new
        // module input set for this instance at the call.
        for (address, name, input) in [
            (
                "module.fn[\"g\"].aws_lambda_function.this",
                "memory_size",
                "lambda_function_memory_size",
            ),
            (
                "module.fn[\"g\"].aws_lambda_function.this",
                "description",
                "lambda_function_description",
            ),
        ] {
            let got = place(&project, address, name);
            let Place::NewModuleInput { input: new, .. } = &got else {
                panic!("{name}: {got:?}");
            };
            assert_eq!(new.input, input);
            assert_eq!(new.key, IndexKey::Str("g".to_owned()));
            assert_eq!(new.call.labels, ["fn"]);
            assert_eq!(new.resource.file.as_deref(), Some("modules/fn/main.tf"));
            assert_eq!(new.variables_file, None);
        }
    }
}
