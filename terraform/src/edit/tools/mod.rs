//! The tool registry: names, descriptions, input schemas, typed inputs and dispatch.

use super::filter;
use super::instance::{self, Instance};
use super::locate::{
    Located, Place, Step, Target, header, literal, matches_all, span_of, step_text,
};
use super::ops::{self, Doc};
use super::render::{self, BlockText};
use super::tags;
use super::value::{Ordered, Value};
use super::workspace::Workspace;
use super::{EditError, Files};
use hcl::edit::Span;
use hcl::edit::expr::{Expression, FuncCall};
use hcl::edit::structure::Block;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;
use std::ops::Range;

/// An edit tool, declared by its input type: the name a model calls it by, what it does, and
/// the edit it makes. Each tool is this one `impl` beside its input, plus its line in the
/// [`registry!`] below, which makes the [`ToolCall`] variant, the name lookup and the
/// specification from it.
pub trait Tool: JsonSchema + DeserializeOwned + Serialize + Into<ToolCall> {
    /// The name [`ToolCall::parse`] takes.
    const NAME: &'static str;
    /// What the tool does, for the model choosing it, in whole sentences.
    const DESCRIPTION: &'static str;
    /// Makes the edit in `ws` (one step of it); the summary says what was done.
    fn apply(self, ws: &mut Workspace) -> Result<String, EditError>;
}

/// Declares the edit tools, by their input types, in the order the model is shown them:
/// [`ToolCall`] gets a variant per tool (named as its input), and the registry an entry.
macro_rules! registry {
    ($($tool:ident),+ $(,)?) => {
        /// One call of an edit tool with its typed input: what the planner makes and what a
        /// model's tool call is parsed into. As JSON, `{"tool": NAME, "input": {...}}`.
        #[derive(Debug, Clone, PartialEq)]
        pub enum ToolCall {
            $(
                #[doc = concat!("A call of the tool whose input is [`", stringify!($tool), "`].")]
                $tool($tool),
            )+
        }

        $(
            impl From<$tool> for ToolCall {
                fn from(input: $tool) -> ToolCall {
                    ToolCall::$tool(input)
                }
            }
        )+

        impl ToolCall {
            /// The tool's name.
            pub fn name(&self) -> &'static str {
                match self {
                    $(ToolCall::$tool(_) => <$tool as Tool>::NAME,)+
                }
            }

            fn apply(self, ws: &mut Workspace) -> Result<String, EditError> {
                match self {
                    $(ToolCall::$tool(input) => input.apply(ws),)+
                }
            }

            fn serialize_input<S: SerializeStruct>(&self, out: &mut S) -> Result<(), S::Error> {
                match self {
                    $(ToolCall::$tool(input) => out.serialize_field("input", input),)+
                }
            }
        }

        /// Every edit tool, in the order the model is shown them.
        const REGISTRY: &[Entry] = &[$(Entry::of::<$tool>(),)+];
    };
}

registry! {
    SetAttribute,
    RemoveAttribute,
    AddBlock,
    RemoveBlock,
    ReplaceBlock,
    UpdateBlock,
    SetTags,
    ImportResource,
    AddResource,
    AddImport,
    RemoveResource,
    FilterForEach,
    ThreadModuleInput,
    SwitchOff,
    IgnoreChanges,
    SetVariableDefault,
    SetTfvar,
    SetModuleArgument,
    SetCollectionEntry,
    AddCollectionEntry,
    RemoveCollectionEntry,
}

/// A registered tool: its name and description, and its input type's schema and parser.
struct Entry {
    name: &'static str,
    description: &'static str,
    schema: fn() -> serde_json::Value,
    parse: fn(serde_json::Value) -> Result<ToolCall, serde_json::Error>,
}

impl Entry {
    const fn of<T: Tool>() -> Entry {
        Entry {
            name: T::NAME,
            description: T::DESCRIPTION,
            schema: || schemars::schema_for!(T).to_value(),
            parse: |input| serde_json::from_value::<T>(input).map(Into::into),
        }
    }

    /// The registered tool called `name`.
    fn named(name: &str) -> Option<&'static Entry> {
        REGISTRY.iter().find(|entry| entry.name == name)
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name,
            description: self.description,
            input_schema: (self.schema)(),
        }
    }
}

/// A tool's name, what it does and the JSON schema of its input.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ToolSpec {
    /// The name [`ToolCall::parse`] takes.
    pub name: &'static str,
    /// What the tool does, for the model choosing it.
    pub description: &'static str,
    /// The JSON schema of the input object.
    pub input_schema: serde_json::Value,
}

/// What a tool changed: the new text of each changed file, and a one-line summary.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ToolResult {
    /// Path → new text, only for files whose text changed.
    pub files: BTreeMap<String, String>,
    /// What was done, or why nothing needed doing.
    pub summary: String,
}

impl Serialize for ToolCall {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_struct("ToolCall", 2)?;
        out.serialize_field("tool", self.name())?;
        self.serialize_input(&mut out)?;
        out.end()
    }
}

impl<'de> Deserialize<'de> for ToolCall {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<ToolCall, D::Error> {
        #[derive(Deserialize)]
        struct Tagged {
            tool: String,
            input: serde_json::Value,
        }
        let Tagged { tool, input } = Tagged::deserialize(deserializer)?;
        let entry = Entry::named(&tool)
            .ok_or_else(|| serde::de::Error::custom(EditError::UnknownTool(tool.clone())))?;
        (entry.parse)(input).map_err(serde::de::Error::custom)
    }
}

impl ToolCall {
    /// Parses a call by tool name and JSON input (a model's tool call): the one place a tool
    /// is named by a string.
    pub fn parse(name: &str, input_json: &str) -> Result<ToolCall, EditError> {
        let entry = Entry::named(name).ok_or_else(|| EditError::UnknownTool(name.to_owned()))?;
        let input: serde_json::Value =
            serde_json::from_str(input_json).map_err(|e| bad_input(name, e.to_string()))?;
        (entry.parse)(input).map_err(|e| bad_input(name, e.to_string()))
    }

    /// Runs the call over `files`; files are not changed, the result holds the new texts.
    pub fn run(&self, files: &Files) -> Result<ToolResult, EditError> {
        let mut workspace = Workspace::new(files.clone());
        let summary = self.run_in(&mut workspace)?;
        let changed: Vec<String> = workspace
            .step_changes()
            .into_iter()
            .map(str::to_owned)
            .collect();
        let mut files = workspace.into_files();
        Ok(ToolResult {
            files: changed
                .into_iter()
                .filter_map(|path| files.remove_entry(&path))
                .collect(),
            summary,
        })
    }

    /// Runs the call as one step of `workspace`, which keeps its changes until the next step
    /// begins or [`Workspace::rollback`] undoes them; a call that fails changes nothing.
    pub fn run_in(&self, workspace: &mut Workspace) -> Result<String, EditError> {
        workspace.begin();
        let summary = self.clone().apply(workspace);
        if summary.is_err() {
            workspace.rollback();
        }
        summary
    }
}

/// Every edit tool's specification: its name, what it does, and the JSON schema derived from
/// its input type.
pub fn tools() -> Vec<ToolSpec> {
    REGISTRY.iter().map(Entry::spec).collect()
}

/// The specification of the edit tool called `name`, if there is one.
pub fn tool(name: &str) -> Option<ToolSpec> {
    Entry::named(name).map(Entry::spec)
}

/// The names of the edit tools, in the order [`tools`] lists them.
pub fn tool_names() -> Vec<&'static str> {
    REGISTRY.iter().map(|entry| entry.name).collect()
}

/// Runs the tool `name` on `input_json` over `files` (a model's tool call); files are not
/// changed, the result holds the new texts.
pub fn run_tool(name: &str, input_json: &str, files: &Files) -> Result<ToolResult, EditError> {
    ToolCall::parse(name, input_json)?.run(files)
}

fn bad_input(tool: &str, message: impl Into<String>) -> EditError {
    EditError::Input {
        tool: tool.to_owned(),
        message: message.into(),
    }
}

fn check_identifier(tool: &str, name: &str) -> Result<(), EditError> {
    if render::is_identifier(name) {
        Ok(())
    } else {
        Err(bad_input(
            tool,
            format!("`{name}` is not an HCL identifier"),
        ))
    }
}

fn changed(did: bool, what: String) -> String {
    if did {
        what
    } else {
        format!("no change: {what} already")
    }
}

fn found(doc: &Doc, target: &Target) -> Result<(Located, Place), EditError> {
    Ok((doc.locate(target)?, doc.place(target)))
}

// ---------------------------------------------------------------------------------------------
// New blocks

/// A block to write, as a tool input.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewBlock {
    /// The block type, e.g. `ingress`.
    pub block: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    /// Its labels.
    pub labels: Vec<String>,
    #[serde(default, skip_serializing_if = "Ordered::is_empty")]
    /// Its attributes, as JSON values, in the order to write them.
    pub attributes: Ordered,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    /// Nested blocks of the same shape.
    pub blocks: Vec<NewBlock>,
}

impl NewBlock {
    fn check(&self, tool: &str) -> Result<(), EditError> {
        check_identifier(tool, &self.block)?;
        for (name, _) in &self.attributes.0 {
            check_identifier(tool, name)?;
        }
        self.blocks.iter().try_for_each(|b| b.check(tool))
    }

    fn text(&self) -> BlockText<'_> {
        BlockText {
            kind: &self.block,
            labels: &self.labels,
            attributes: &self.attributes.0,
            blocks: self.blocks.iter().map(NewBlock::text).collect(),
        }
    }
}

mod attribute;
mod block;
mod collection;
mod module;
mod module_input;
mod resource;
mod tagging;

pub use attribute::*;
pub use block::*;
pub use collection::*;
pub use module::*;
pub use module_input::{SwitchOff, ThreadModuleInput};
pub use resource::*;
pub use tagging::*;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::is_sentence;
    use serde_json::json;

    #[test]
    fn every_schema_is_derived_from_its_input_and_closed() {
        let specs = tools();
        let mut names: Vec<&str> = specs.iter().map(|t| t.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), specs.len(), "tool names are unique");
        for spec in &specs {
            let schema = &spec.input_schema;
            assert_eq!(schema["type"], "object", "{}", spec.name);
            assert_eq!(schema["additionalProperties"], false, "{}", spec.name);
            assert!(!spec.description.is_empty(), "{}", spec.name);
        }
        let set = specs
            .iter()
            .find(|t| t.name == "set_attribute")
            .expect("set_attribute");
        let required = set.input_schema["required"].as_array().expect("required");
        assert_eq!(
            required,
            &vec![json!("target"), json!("name"), json!("value")]
        );
        assert!(set.input_schema["properties"]["instance"].is_object());
    }

    /// One valid input per tool, written by hand from the input types.
    fn examples() -> Vec<(&'static str, serde_json::Value)> {
        let bucket = json!({"block_type": "resource", "labels": ["aws_s3_bucket", "b"]});
        let call = json!({"file": "main.tf", "block_type": "module", "labels": ["fn"]});
        let role = json!({"file": "modules/fn/main.tf", "block_type": "resource", "labels": ["aws_iam_role", "this"]});
        let queues = json!({"kind": "tfvar", "name": "queues"});
        vec![
            (
                "set_attribute",
                json!({"target": bucket, "name": "acl", "value": "private", "instance": "a"}),
            ),
            ("remove_attribute", json!({"target": bucket, "name": "acl"})),
            (
                "add_block",
                json!({"target": bucket, "block": {"block": "ingress", "attributes": {"from_port": 80}}}),
            ),
            (
                "remove_block",
                json!({"target": bucket, "block": "ingress", "match": {"from_port": 80}}),
            ),
            (
                "replace_block",
                json!({"target": bucket, "block": "ingress", "with": {"block": "ingress"}}),
            ),
            (
                "update_block",
                json!({"target": bucket, "block": "ingress", "attributes": {"to_port": 81}}),
            ),
            (
                "set_tags",
                json!({"target": bucket, "tags": {"Owner": "ops"}, "remove": ["Team"]}),
            ),
            (
                "import_resource",
                json!({"file": "main.tf", "resource_type": "aws_sqs_queue", "name": "q", "id": "https://sqs/q"}),
            ),
            (
                "add_resource",
                json!({"file": "main.tf", "resource_type": "aws_lb_target_group_attachment", "name": "t"}),
            ),
            (
                "add_import",
                json!({"file": "main.tf", "to": "module.sg.aws_security_group_rule.in[1]", "id": "sg-1_ingress_tcp_80_80_0.0.0.0/0"}),
            ),
            (
                "remove_resource",
                json!({"target": bucket, "keep_in_state": true}),
            ),
            ("filter_for_each", json!({"target": bucket, "keys": ["a"]})),
            (
                "thread_module_input",
                json!({"call": call, "resource": role, "attribute": "tags", "input": "role_tags", "type": "map(string)", "merge": true, "instance": "a", "value": {"Owner": "x"}}),
            ),
            (
                "switch_off_in_module_instance",
                json!({"call": call, "resource": role, "input": "create_role", "instance": 0}),
            ),
            (
                "ignore_changes",
                json!({"target": bucket, "attributes": ["tags"]}),
            ),
            ("set_variable_default", json!({"name": "size", "value": 3})),
            (
                "set_tfvar",
                json!({"file": "a.tfvars", "name": "size", "value": 3}),
            ),
            (
                "set_module_argument",
                json!({"module": "fn", "name": "size", "value": 3}),
            ),
            (
                "set_collection_entry",
                json!({"file": "x.tfvars", "in": queues, "path": ["a", "timeout"], "value": 45}),
            ),
            (
                "add_collection_entry",
                json!({"file": "x.tfvars", "in": {"kind": "tfvar", "name": "rules"}, "value": {"port": 443}}),
            ),
            (
                "remove_collection_entry",
                json!({"file": "x.tfvars", "in": queues, "path": ["a"]}),
            ),
        ]
    }

    #[test]
    fn every_registered_name_parses_back_to_its_own_tool() {
        let examples = examples();
        let mut named: Vec<&str> = examples.iter().map(|(name, _)| *name).collect();
        named.sort_unstable();
        let mut registered = tool_names();
        registered.sort_unstable();
        assert_eq!(named, registered, "one example per registered tool");
        for (name, input) in examples {
            let call =
                ToolCall::parse(name, &input.to_string()).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(call.name(), name);
            let value = serde_json::to_value(&call).expect("serialises");
            assert_eq!(value["tool"], name);
            let back: ToolCall = serde_json::from_value(value.clone()).expect("deserialises");
            assert_eq!(back, call, "{name}");
            let again = ToolCall::parse(name, &value["input"].to_string()).expect("parses");
            assert_eq!(again, call, "{name}");
            assert_eq!(tool(name).map(|t| t.name), Some(name));
        }
    }

    #[test]
    fn every_description_is_whole_sentences() {
        for spec in tools() {
            assert!(
                is_sentence(spec.description),
                "{}: {}",
                spec.name,
                spec.description
            );
            let schema = &spec.input_schema;
            let own = schema["description"].as_str().unwrap_or_default();
            assert!(is_sentence(own), "{}: {own:?}", spec.name);
            let properties = schema["properties"].as_object().expect("properties");
            for (field, property) in properties {
                let text = property["description"].as_str().unwrap_or_default();
                assert!(is_sentence(text), "{}.{field}: {text:?}", spec.name);
            }
        }
        assert!(!is_sentence("Add a nested block (e.g."));
        assert!(!is_sentence("the attribute"));
    }

    #[test]
    fn a_tool_call_round_trips_through_json_and_parses_by_name() {
        let call = ToolCall::IgnoreChanges(IgnoreChanges {
            target: Target {
                file: Some("main.tf".into()),
                block_type: "resource".into(),
                labels: vec!["aws_autoscaling_group".into(), "web".into()],
                path: Vec::new(),
            },
            attributes: vec!["desired_capacity".into()],
        });
        let value = serde_json::to_value(&call).expect("serialises");
        assert_eq!(value["tool"], "ignore_changes");
        assert_eq!(value["input"]["attributes"], json!(["desired_capacity"]));
        let back: ToolCall = serde_json::from_value(value.clone()).expect("deserialises");
        assert_eq!(back, call);
        let parsed = ToolCall::parse("ignore_changes", &value["input"].to_string());
        assert_eq!(parsed.expect("parses"), call);
    }

    #[test]
    fn an_unknown_tool_or_field_is_refused_by_name() {
        assert!(matches!(
            ToolCall::parse("set_everything", "{}"),
            Err(EditError::UnknownTool(name)) if name == "set_everything"
        ));
        let err = ToolCall::parse(
            "set_tfvar",
            r#"{"file": "a.tfvars", "name": "x", "value": 1, "extra": 2}"#,
        )
        .expect_err("unknown field");
        assert!(err.to_string().contains("set_tfvar"), "{err}");
        assert!(err.to_string().contains("extra"), "{err}");
    }

    fn run(
        tool: &str,
        input: serde_json::Value,
        file: &str,
        text: &str,
    ) -> Result<String, EditError> {
        let files = Files::from([(file.to_owned(), text.to_owned())]);
        let result = run_tool(tool, &input.to_string(), &files)?;
        Ok(result
            .files
            .get(file)
            .cloned()
            .unwrap_or_else(|| text.to_owned()))
    }

    fn bucket() -> serde_json::Value {
        json!({"block_type": "resource", "labels": ["aws_s3_bucket", "b"]})
    }

    #[test]
    fn merge_without_a_trailing_literal_map_gets_one() {
        let text =
            "resource \"aws_s3_bucket\" \"b\" {\n  bucket = \"b\"\n  tags   = merge(var.tags)\n}\n";
        let out = run(
            "set_tags",
            json!({"target": bucket(), "tags": {"Owner": "ops"}}),
            "main.tf",
            text,
        );
        assert_eq!(
            out.ok().as_deref(),
            Some(
                "resource \"aws_s3_bucket\" \"b\" {\n  bucket = \"b\"\n  tags = merge(var.tags, {\n    Owner = \"ops\"\n  })\n}\n"
            )
        );
    }

    #[test]
    fn merge_filters_out_a_key_another_argument_supplies() {
        let text =
            "resource \"aws_s3_bucket\" \"b\" {\n  tags = merge(local.tags, { Name = \"b\" })\n}\n";
        let input = json!({"target": bucket(), "remove": ["Team"]});
        assert_eq!(
            run("set_tags", input, "main.tf", text).ok().as_deref(),
            Some(
                "resource \"aws_s3_bucket\" \"b\" {\n  tags = { for k, v in merge(local.tags, { Name = \"b\" }) : k => v if k != \"Team\" }\n}\n"
            )
        );
        let input = json!({"target": bucket(), "remove": ["Name"]});
        assert_eq!(
            run("set_tags", input, "main.tf", text).ok().as_deref(),
            Some("resource \"aws_s3_bucket\" \"b\" {\n  tags = merge(local.tags, {})\n}\n")
        );
    }

    #[test]
    fn collection_entries_in_tfvars_and_for_each() {
        let tfvars = "queues = {\n  a = { timeout = 30 }\n  b = {\n    timeout = 60\n  }\n}\n";
        let input = json!({"file": "x.tfvars", "in": {"kind": "tfvar", "name": "queues"}, "path": ["a", "timeout"], "value": 45});
        assert_eq!(
            run("set_collection_entry", input, "x.tfvars", tfvars)
                .ok()
                .as_deref(),
            Some("queues = {\n  a = { timeout = 45 }\n  b = {\n    timeout = 60\n  }\n}\n")
        );
        // A key the entry lacks is added to it.
        let input = json!({"file": "x.tfvars", "in": {"kind": "tfvar", "name": "queues"}, "path": ["b", "delay"], "value": 5});
        assert_eq!(
            run("set_collection_entry", input, "x.tfvars", tfvars)
                .ok()
                .as_deref(),
            Some(
                "queues = {\n  a = { timeout = 30 }\n  b = {\n    timeout = 60\n    delay   = 5\n  }\n}\n"
            )
        );
        let main = "resource \"aws_sqs_queue\" \"q\" {\n  for_each = {\n    a = 30\n  }\n  visibility_timeout_seconds = each.value\n}\n";
        let target = json!({"block_type": "resource", "labels": ["aws_sqs_queue", "q"]});
        let input = json!({"file": "main.tf", "in": {"kind": "for_each", "target": target}, "path": ["a"], "value": 90});
        assert_eq!(
            run("set_collection_entry", input, "main.tf", main)
                .ok()
                .as_deref(),
            Some(main.replace("a = 30", "a = 90").as_str())
        );
        // An entry that is an expression is refused.
        let input = json!({"file": "x.tfvars", "in": {"kind": "tfvar", "name": "other"}, "path": ["a"], "value": 1});
        assert!(run("set_collection_entry", input, "x.tfvars", tfvars).is_err());
    }

    #[test]
    fn an_output_block_is_removed_but_never_kept_in_state() {
        let text = "output \"a\" {\n  value = 1\n}\n\noutput \"b\" {\n  value = 2\n}\n";
        let target = json!({"file": "outputs.tf", "block_type": "output", "labels": ["a"]});
        let input = json!({"target": target});
        assert_eq!(
            run("remove_resource", input, "outputs.tf", text)
                .ok()
                .as_deref(),
            Some("output \"b\" {\n  value = 2\n}\n")
        );
        let input = json!({"target": target, "keep_in_state": true});
        assert!(run("remove_resource", input, "outputs.tf", text).is_err());
    }

    #[test]
    fn list_elements_are_added_in_the_lists_layout_once() {
        let rules = |to: &str, value: serde_json::Value, text: &str| {
            let input =
                json!({"file": "x.tfvars", "in": {"kind": "tfvar", "name": to}, "value": value});
            run("add_collection_entry", input, "x.tfvars", text).unwrap_or_else(|e| panic!("{e}"))
        };
        let lines = "rules = [\n  { port = 80, cidr = \"10.0.0.0/8\" },\n]\n";
        let https = json!({"port": 443, "cidr": "10.1.0.0/16"});
        let added = rules("rules", https.clone(), lines);
        assert_eq!(
            added,
            "rules = [\n  { port = 80, cidr = \"10.0.0.0/8\" },\n  { port = 443, cidr = \"10.1.0.0/16\" },\n]\n"
        );
        // The same element again changes nothing.
        assert_eq!(rules("rules", https, &added), added);
        // A one-line list stays on one line; a list of strings gets a string.
        assert_eq!(
            rules("zones", json!("c"), "zones = [\"a\", \"b\"]\n"),
            "zones = [\"a\", \"b\", \"c\"]\n"
        );
        // A list inside a map, reached by `path`, and the end of a path that is not a list.
        let nested = "sets = {\n  web = [\n    \"a\",\n  ]\n}\n";
        let input = json!({"file": "x.tfvars", "in": {"kind": "tfvar", "name": "sets"}, "path": ["web"], "value": "b"});
        assert_eq!(
            run("add_collection_entry", input, "x.tfvars", nested)
                .ok()
                .as_deref(),
            Some("sets = {\n  web = [\n    \"a\",\n    \"b\",\n  ]\n}\n")
        );
        let input =
            json!({"file": "x.tfvars", "in": {"kind": "tfvar", "name": "sets"}, "value": "b"});
        assert!(run("add_collection_entry", input, "x.tfvars", nested).is_err());
    }

    #[test]
    fn for_each_keys_are_filtered_out_and_later_keys_join_the_filter() {
        let block = |for_each: &str| {
            format!(
                "resource \"aws_sqs_queue\" \"q\" {{\n  for_each = {for_each}\n  name     = each.key\n}}\n"
            )
        };
        let drop = |text: &str, key: &str| {
            let target = json!({"block_type": "resource", "labels": ["aws_sqs_queue", "q"]});
            run(
                "filter_for_each",
                json!({"target": target, "keys": [key]}),
                "main.tf",
                text,
            )
            .unwrap_or_else(|e| panic!("{e}"))
        };
        let once = drop(&block("var.queues"), "a");
        assert_eq!(
            once,
            block("{ for k, v in var.queues : k => v if k != \"a\" }")
        );
        assert_eq!(
            drop(&once, "b"),
            block("{ for k, v in var.queues : k => v if !contains([\"a\", \"b\"], k) }")
        );
        assert_eq!(
            drop(&once, "a"),
            once,
            "a key dropped before is not added twice"
        );
        // A set built with toset loses the key with setsubtract, then keeps one list.
        let set = drop(&block("toset(var.names)"), "a");
        assert_eq!(set, block("setsubtract(toset(var.names), [\"a\"])"));
        assert_eq!(
            drop(&set, "b"),
            block("setsubtract(toset(var.names), [\"a\", \"b\"])")
        );
        // The block's own for expression gets the test in its condition.
        let own = block("{ for q in var.list : q.name => q if q.enabled }");
        assert_eq!(
            drop(&own, "a"),
            block("{ for q in var.list : q.name => q if q.enabled && q.name != \"a\" }")
        );
        let bare = block("{ for q in var.list : q.name => q }");
        assert_eq!(
            drop(&bare, "a"),
            block("{ for q in var.list : q.name => q if q.name != \"a\" }")
        );
        let target = json!({"block_type": "resource", "labels": ["aws_sqs_queue", "q"]});
        let without = "resource \"aws_sqs_queue\" \"q\" {\n  name = \"x\"\n}\n";
        assert!(
            run(
                "filter_for_each",
                json!({"target": target, "keys": ["a"]}),
                "main.tf",
                without
            )
            .is_err()
        );
    }

    #[test]
    fn a_new_module_input_carries_one_instances_value() {
        let main = "module \"fn\" {\n  source   = \"./modules/fn\"\n  for_each = var.functions\n\n  name = each.key\n  tags = local.tags\n}\n";
        let module = "variable \"tags\" {}\n\nresource \"aws_iam_role\" \"this\" {\n  name = \"x\"\n  tags = var.tags\n}\n\nresource \"aws_lambda_function\" \"this\" {\n  memory_size = 128\n}\n";
        let files = Files::from([
            ("main.tf".to_owned(), main.to_owned()),
            ("modules/fn/main.tf".to_owned(), module.to_owned()),
        ]);
        let call = json!({"file": "main.tf", "block_type": "module", "labels": ["fn"]});
        let thread = |files: &Files,
                      labels: [&str; 2],
                      attribute: &str,
                      input: &str,
                      ty: &str,
                      merge: bool,
                      key: &str,
                      value: serde_json::Value| {
            let resource =
                json!({"file": "modules/fn/main.tf", "block_type": "resource", "labels": labels});
            let input = json!({"call": call, "resource": resource, "attribute": attribute, "input": input, "type": ty, "merge": merge, "instance": key, "value": value});
            let result = run_tool("thread_module_input", &input.to_string(), files)
                .unwrap_or_else(|e| panic!("{e}"));
            let mut next = files.clone();
            next.extend(result.files);
            next
        };
        let once = thread(
            &files,
            ["aws_iam_role", "this"],
            "tags",
            "iam_role_tags",
            "map(string)",
            true,
            "a",
            json!({"Owner": "x"}),
        );
        let twice = thread(
            &once,
            ["aws_iam_role", "this"],
            "tags",
            "iam_role_tags",
            "map(string)",
            true,
            "b",
            json!({"Owner": "y"}),
        );
        let sized = thread(
            &twice,
            ["aws_lambda_function", "this"],
            "memory_size",
            "lambda_function_memory_size",
            "number",
            false,
            "b",
            json!(512),
        );
        // A new one-line-started argument joins the arguments before the first multi-line one.
        assert_eq!(
            sized["main.tf"],
            "module \"fn\" {\n  source   = \"./modules/fn\"\n  for_each = var.functions\n\n  name = each.key\n  tags = local.tags\n  lambda_function_memory_size = lookup({\n    b = 512\n  }, each.key, null)\n  iam_role_tags = lookup({\n    a = {\n      Owner = \"x\"\n    }\n    b = {\n      Owner = \"y\"\n    }\n  }, each.key, {})\n}\n"
        );
        let module = &sized["modules/fn/main.tf"];
        assert!(
            module.contains("  tags = merge(var.tags, var.iam_role_tags)\n"),
            "{module}"
        );
        assert!(
            module.contains("  memory_size = var.lambda_function_memory_size == null ? 128 : var.lambda_function_memory_size\n"),
            "{module}"
        );
        // Each variable is declared once, with a neutral default.
        assert_eq!(
            module.matches("variable \"iam_role_tags\" {").count(),
            1,
            "{module}"
        );
        assert!(
            module.contains("  type        = map(string)\n  default     = {}\n}"),
            "{module}"
        );
        assert!(
            module.contains("  type        = number\n  default     = null\n}"),
            "{module}"
        );
        // Threading the same value again changes nothing.
        let again = thread(
            &sized,
            ["aws_lambda_function", "this"],
            "memory_size",
            "lambda_function_memory_size",
            "number",
            false,
            "b",
            json!(512),
        );
        assert_eq!(again, sized);
    }

    #[test]
    fn a_resource_is_switched_off_for_one_module_instance() {
        let main = "module \"fn\" {\n  source   = \"./modules/fn\"\n  for_each = var.functions\n\n  name = each.key\n}\n";
        let module = "resource \"aws_iam_role_policy\" \"this\" {\n  name = \"x\"\n}\n";
        let files = Files::from([
            ("main.tf".to_owned(), main.to_owned()),
            ("modules/fn/main.tf".to_owned(), module.to_owned()),
        ]);
        let input = json!({
            "call": {"file": "main.tf", "block_type": "module", "labels": ["fn"]},
            "resource": {"file": "modules/fn/main.tf", "block_type": "resource", "labels": ["aws_iam_role_policy", "this"]},
            "input": "create_iam_role_policy",
            "instance": "a",
        });
        let result = run_tool("switch_off_in_module_instance", &input.to_string(), &files)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            result.files["modules/fn/main.tf"],
            "resource \"aws_iam_role_policy\" \"this\" {\n  count = var.create_iam_role_policy ? 1 : 0\n\n  name = \"x\"\n}\n\nvariable \"create_iam_role_policy\" {\n  description = \"Whether this instance of the module has aws_iam_role_policy.this; set per instance by the caller\"\n  type        = bool\n  default     = true\n}\n\nmoved {\n  from = aws_iam_role_policy.this\n  to   = aws_iam_role_policy.this[0]\n}\n"
        );
        assert_eq!(
            result.files["main.tf"],
            "module \"fn\" {\n  source   = \"./modules/fn\"\n  for_each = var.functions\n\n  name = each.key\n  create_iam_role_policy = lookup({\n    a = false\n  }, each.key, true)\n}\n"
        );
        // A second instance joins the lookup; the count and the variable stay as they are.
        let mut next = files.clone();
        next.extend(result.files);
        let input = json!({
            "call": {"file": "main.tf", "block_type": "module", "labels": ["fn"]},
            "resource": {"file": "modules/fn/main.tf", "block_type": "resource", "labels": ["aws_iam_role_policy", "this"]},
            "input": "create_iam_role_policy",
            "instance": "b",
        });
        let again = run_tool("switch_off_in_module_instance", &input.to_string(), &next)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(again.files.keys().collect::<Vec<_>>(), vec!["main.tf"]);
        assert!(again.files["main.tf"].contains("    a = false\n    b = false\n"));
    }

    #[test]
    fn collection_entries_are_removed_from_maps_and_sets() {
        let remove = |file: &str, text: &str, container: serde_json::Value, key: &str| {
            let input = json!({"file": file, "in": container, "path": [key]});
            run("remove_collection_entry", input, file, text)
        };
        let tfvars = "queues = {\n  a = { timeout = 30 }\n  b = {\n    timeout = 60\n  }\n}\n";
        let queues = json!({"kind": "tfvar", "name": "queues"});
        assert_eq!(
            remove("x.tfvars", tfvars, queues.clone(), "b")
                .ok()
                .as_deref(),
            Some("queues = {\n  a = { timeout = 30 }\n}\n")
        );
        assert_eq!(
            remove("x.tfvars", tfvars, queues.clone(), "a")
                .ok()
                .as_deref(),
            Some("queues = {\n  b = {\n    timeout = 60\n  }\n}\n")
        );
        // A missing key is refused rather than ignored.
        assert!(remove("x.tfvars", tfvars, queues, "c").is_err());

        let main = "resource \"aws_sns_topic\" \"t\" {\n  for_each = toset([\"x\", \"y\", \"z\"])\n  name     = each.key\n}\n";
        let topics = json!({"kind": "for_each", "target": {"block_type": "resource", "labels": ["aws_sns_topic", "t"]}});
        assert_eq!(
            remove("main.tf", main, topics.clone(), "y").ok().as_deref(),
            Some(main.replace("\"x\", \"y\", \"z\"", "\"x\", \"z\"").as_str())
        );
        assert_eq!(
            remove("main.tf", main, topics, "z").ok().as_deref(),
            Some(main.replace("\"x\", \"y\", \"z\"", "\"x\", \"y\"").as_str())
        );

        let list = "names = [\n  \"x\",\n  \"y\",\n]\n";
        let names = json!({"kind": "tfvar", "name": "names"});
        assert_eq!(
            remove("x.tfvars", list, names, "x").ok().as_deref(),
            Some("names = [\n  \"y\",\n]\n")
        );
        // A set of numbers: the element is named by its text.
        let ports = json!({"kind": "tfvar", "name": "ports"});
        assert_eq!(
            remove("x.tfvars", "ports = [443, 22]\n", ports, "22")
                .ok()
                .as_deref(),
            Some("ports = [443]\n")
        );
    }

    #[test]
    fn update_block_drops_stale_attributes_and_keeps_unset_ones() {
        let text = "resource \"aws_security_group\" \"g\" {\n  ingress {\n    from_port       = 80\n    to_port         = 80\n    protocol        = \"tcp\"\n    security_groups = [\"sg-1\"]\n    self            = false\n  }\n}\n";
        let input = json!({
            "target": {"block_type": "resource", "labels": ["aws_security_group", "g"]},
            "block": "ingress",
            "match": {"from_port": 80},
            "attributes": {"from_port": 80, "to_port": 80, "protocol": "tcp", "cidr_blocks": ["10.0.0.0/8"]}
        });
        assert_eq!(
            run("update_block", input, "main.tf", text).ok().as_deref(),
            Some(
                "resource \"aws_security_group\" \"g\" {\n  ingress {\n    from_port   = 80\n    to_port     = 80\n    protocol    = \"tcp\"\n    self        = false\n    cidr_blocks = [\"10.0.0.0/8\"]\n  }\n}\n"
            )
        );
    }

    #[test]
    fn new_arguments_join_the_leading_run_except_in_variables() {
        let main = "resource \"aws_sqs_queue\" \"q\" {\n  for_each = var.q\n\n  name = \"q\"\n\n  policy = jsonencode({\n    a = 1\n  })\n}\n";
        let target = json!({"block_type": "resource", "labels": ["aws_sqs_queue", "q"]});
        let input = json!({"target": target, "name": "delay_seconds", "value": 5});
        assert_eq!(
            run("set_attribute", input, "main.tf", main).ok().as_deref(),
            Some(
                "resource \"aws_sqs_queue\" \"q\" {\n  for_each = var.q\n\n  name          = \"q\"\n  delay_seconds = 5\n\n  policy = jsonencode({\n    a = 1\n  })\n}\n"
            )
        );
        let vars = "variable \"q\" {\n  description = \"Queues.\"\n  type = map(object({\n    t = number\n  }))\n}\n";
        let input = json!({"name": "q", "value": {}});
        assert_eq!(
            run("set_variable_default", input, "variables.tf", vars)
                .ok()
                .as_deref(),
            Some(
                "variable \"q\" {\n  description = \"Queues.\"\n  type = map(object({\n    t = number\n  }))\n  default = {}\n}\n"
            )
        );
    }
}
