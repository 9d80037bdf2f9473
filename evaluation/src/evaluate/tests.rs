//! Loads of small projects, each expectation worked out by hand from Terraform's documented
//! semantics.

use super::Project;
use super::functions::is_unknown;
use hcl::Value;
use reconciler::terraform::state::{IndexKey, PathStep, State};
use serde_json::json;
use std::path::Path;

/// A state holding `aws_vpc.main` with only an `id`.
const STATE: &str = r#"{"version": 4, "terraform_version": "1.9.0", "serial": 1, "lineage": "l",
  "outputs": {}, "resources": [{"mode": "managed", "type": "aws_vpc", "name": "main",
  "provider": "provider[\"registry.terraform.io/hashicorp/aws\"]",
  "instances": [{"schema_version": 1, "attributes": {"id": "vpc-1"}}]}]}"#;

/// Loads a project made of `files` (path, text) against [`STATE`].
fn load(files: &[(&str, &str)]) -> Project {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let state = State::parse(STATE.as_bytes(), "test").unwrap();
    Project::load(dir.path(), &state).unwrap()
}

/// The JSON of an instance's known attributes.
fn json(project: &Project, address: &str) -> serde_json::Value {
    let instance = project.instance(address).unwrap_or_else(|| {
        let all: Vec<&str> = project.instances().map(|i| i.address.as_str()).collect();
        panic!("no {address} in {all:?}")
    });
    instance.json().unwrap()
}

#[test]
fn variables_take_defaults_then_variable_files_in_order_converted_to_their_type() {
    let p = load(&[
        (
            "main.tf",
            r#"
variable "size" {
  type    = number
  default = 1
}
variable "name" {
  default = "a"
}
variable "cfg" {
  type    = object({ x = string, y = optional(number, 7) })
  default = { x = "v" }
}
variable "kept" {
  default  = "k"
  nullable = false
}
variable "nulled" {
  default = "n"
}
resource "aws_thing" "t" {
  size   = var.size
  name   = var.name
  y      = var.cfg.y
  kept   = var.kept
  nulled = var.nulled
}
"#,
        ),
        (
            "terraform.tfvars",
            "size = \"3\"\nname = \"t\"\nkept = null\nnulled = null\n",
        ),
        ("b.auto.tfvars", "name = \"c\"\n"),
        ("a.auto.tfvars", "name = \"b\"\n"),
        ("extra.tfvars", "name = \"never\"\n"),
    ]);
    assert_eq!(
        json(&p, "aws_thing.t"),
        json!({"size": 3, "name": "c", "y": 7, "kept": "k", "nulled": null})
    );
    let files: Vec<&String> = p.files().keys().collect();
    assert_eq!(
        files,
        [
            "a.auto.tfvars",
            "b.auto.tfvars",
            "main.tf",
            "terraform.tfvars"
        ]
    );
}

#[test]
fn locals_in_any_order_count_and_for_each_expand_instances() {
    let p = load(&[(
        "main.tf",
        r#"
locals {
  b = "${local.a}-b"
  a = "x"
}
resource "aws_c" "c" {
  count = 2
  name  = "${local.b}-${count.index}"
}
resource "aws_e" "e" {
  for_each = toset(["q", "p", "q"])
  name     = each.key
  value    = each.value
}
resource "aws_m" "m" {
  for_each = { one = 1, two = 2 }
  n        = each.value * 10
}
"#,
    )]);
    assert_eq!(json(&p, "aws_c.c[0]"), json!({"name": "x-b-0"}));
    assert_eq!(json(&p, "aws_c.c[1]"), json!({"name": "x-b-1"}));
    assert_eq!(
        json(&p, "aws_e.e[\"p\"]"),
        json!({"name": "p", "value": "p"})
    );
    assert_eq!(json(&p, "aws_m.m[\"two\"]"), json!({"n": 20}));
    assert_eq!(p.instances().count(), 6);
    let c = p.instance("aws_c.c[1]").unwrap();
    assert_eq!(c.index, Some(IndexKey::Int(1)));
    assert_eq!(c.file, "main.tf");
    let text = &p.files()["main.tf"][c.span.clone()];
    assert!(text.starts_with("resource \"aws_c\" \"c\" {") && text.ends_with('}'));
}

#[test]
fn nested_and_dynamic_blocks_are_lists_of_objects_without_meta_blocks() {
    let p = load(&[(
        "main.tf",
        r#"
resource "aws_sg" "s" {
  ingress {
    from = 1
  }
  dynamic "ingress" {
    for_each = [22, 443]
    content {
      from = ingress.value
    }
  }
  dynamic "egress" {
    for_each = { a = 1 }
    iterator = e
    content {
      k = e.key
    }
  }
  dynamic "port" {
    for_each = toset([443, 22])
    content {
      k = port.key
      v = port.value
    }
  }
  set_keys = [for k, v in toset(["b", "a"]) : k]
  dynamic "none" {
    for_each = []
    content {}
  }
  lifecycle {
    ignore_changes = [tags]
  }
}
"#,
    )]);
    assert_eq!(
        json(&p, "aws_sg.s"),
        json!({
            "ingress": [{"from": 1}, {"from": 22}, {"from": 443}],
            "egress": [{"k": "a"}],
            // A set's elements are their own keys.
            "port": [{"k": 22, "v": 22}, {"k": 443, "v": 443}],
            "set_keys": ["a", "b"],
        })
    );
}

#[test]
fn module_calls_expand_take_inputs_and_give_outputs() {
    let p = load(&[
        (
            "main.tf",
            r#"
module "m" {
  source   = "./mod"
  for_each = { a = "x" }
  name     = each.value
}
resource "aws_r" "r" {
  v = module.m["a"].out
}
"#,
        ),
        (
            "mod/main.tf",
            r#"
variable "name" {}
resource "aws_i" "i" {
  name = var.name
  p    = path.module
}
module "inner" {
  source = "../inner"
  n      = var.name
}
output "out" {
  value = "${var.name}!"
}
"#,
        ),
        (
            "inner/main.tf",
            "variable \"n\" {}\nresource \"aws_j\" \"j\" {\n  n = var.n\n}\n",
        ),
    ]);
    assert_eq!(json(&p, "aws_r.r"), json!({"v": "x!"}));
    assert_eq!(
        json(&p, "module.m[\"a\"].aws_i.i"),
        json!({"name": "x", "p": "mod"})
    );
    let j = p.instance("module.m[\"a\"].module.inner.aws_j.j").unwrap();
    assert_eq!(j.module.as_deref(), Some("module.m[\"a\"].module.inner"));
    assert_eq!(j.file, "inner/main.tf");
    assert_eq!(j.json(), Some(json!({"n": "x"})));
}

#[test]
fn references_read_the_state_and_what_neither_it_nor_the_configuration_gives_is_unknown() {
    let p = load(&[(
        "main.tf",
        r#"
resource "aws_vpc" "main" {
  cidr_block = "10.0.0.0/16"
}
resource "aws_vpc" "other" {
  cidr_block = "10.1.0.0/16"
}
resource "aws_subnet" "s" {
  planned = aws_vpc.other.cidr_block
  vpc_id  = aws_vpc.main.id
  other   = aws_vpc.other.id
  missing = aws_vpc.main.arn
  derived = "${aws_vpc.other.id}-x"
  eq      = aws_vpc.other.id == "x"
  tags    = { a = aws_vpc.other.id, b = "known" }
  t1      = try(aws_vpc.other.id, "d")
  t2      = try({ a = 1 }.b, "fallback")
  c1      = can({ a = 1 }.b)
  c2      = can(aws_vpc.main.id)
  n       = length([aws_vpc.other.id])
}
"#,
    )]);
    let s = p.instance("aws_subnet.s").unwrap();
    let get = |k: &str| s.attributes.as_object().unwrap()[k].clone();
    assert_eq!(get("vpc_id"), Value::from("vpc-1"));
    // An instance not in the state yet is planned: what its configuration sets is known.
    assert_eq!(get("planned"), Value::from("10.1.0.0/16"));
    for unknown in ["other", "missing", "derived", "eq", "t1"] {
        assert!(is_unknown(&get(unknown)), "{unknown}: {}", get(unknown));
    }
    assert!(is_unknown(&get("tags").as_object().unwrap()["a"]));
    assert_eq!(get("tags").as_object().unwrap()["b"], Value::from("known"));
    assert_eq!(get("t2"), Value::from("fallback"));
    assert_eq!(get("c1"), Value::from(false));
    assert_eq!(get("c2"), Value::from(true));
    assert_eq!(get("n"), Value::from(1));
    assert_eq!(s.value("vpc_id"), Some(json!("vpc-1")));
    assert_eq!(s.value("tags"), None);
    assert_eq!(s.value("unset"), Some(json!(null)));
    assert_eq!(s.json(), None);
}

fn steps(path: &str) -> Vec<PathStep> {
    path.split('.')
        .map(|s| match s.parse::<u64>() {
            Ok(n) => PathStep::Index(n),
            Err(_) => PathStep::Key(s.to_owned()),
        })
        .collect()
}

#[test]
fn values_written_in_variables_locals_and_literal_for_each_entries_are_indirect() {
    let p = load(&[
        (
            "main.tf",
            r#"
variable "size" {
  default = 1
}
locals {
  lit  = 5
  expr = "${var.size}x"
  obj  = { k = var.size }
}
resource "aws_t" "t" {
  a    = var.size
  b    = 3
  c    = local.lit
  d    = local.expr
  e    = local.obj
  f    = upper("x")
  tags = { Name = var.size, Fixed = "x" }
  block {
    g = var.size
  }
}
resource "aws_f" "f" {
  for_each = { one = { v = 1 } }
  v        = each.value.v
}
resource "aws_k" "k" {
  for_each = toset(["a"])
  v        = each.value
}
module "m" {
  source = "./m"
  lit    = 4
  expr   = upper("x")
}
"#,
        ),
        (
            "m/main.tf",
            "variable \"lit\" {}\nvariable \"expr\" {}\nvariable \"d\" {\n  default = 2\n}\nresource \"aws_u\" \"u\" {\n  lit  = var.lit\n  expr = var.expr\n  d    = var.d\n}\n",
        ),
    ]);
    let indirect = |address: &str, path: &str| p.written_indirectly(address, &steps(path));
    for path in ["a", "c", "e.k", "tags.Name", "block.0.g"] {
        assert!(indirect("aws_t.t", path), "{path}");
    }
    for path in [
        "b",
        "d",
        "f",
        "tags.Fixed",
        "tags.Other",
        "unset",
        "block.1.g",
    ] {
        assert!(!indirect("aws_t.t", path), "{path}");
    }
    assert!(indirect("aws_f.f[\"one\"]", "v"));
    assert!(!indirect("aws_k.k[\"a\"]", "v"));
    // A module argument written as a literal is written away from the block; a variable
    // the call leaves to its default is a variable.
    assert!(indirect("module.m.aws_u.u", "lit"));
    assert!(indirect("module.m.aws_u.u", "d"));
    assert!(!indirect("module.m.aws_u.u", "expr"));
    assert!(!indirect("aws_t.nothing", "a"));
}

#[test]
fn an_unparsable_file_fails_the_load_and_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.tf"), "resource \"a\" {").unwrap();
    let state = State::parse(STATE.as_bytes(), "test").unwrap();
    let error = Project::load(Path::new(dir.path()), &state).unwrap_err();
    assert!(error.to_string().starts_with("bad.tf:"), "{error}");
}

#[test]
fn a_module_argument_may_read_another_output_of_the_same_module() {
    // Terraform orders outputs and arguments one by one: `b` needs `var.x`, which needs the
    // caller's `local.a`, which needs output `a`, which needs nothing.
    let p = load(&[
        (
            "main.tf",
            r#"
locals {
  a = module.m.a
}
module "m" {
  source = "./m"
  x      = "${local.a}-x"
}
resource "aws_r" "r" {
  v = module.m.b
}
"#,
        ),
        (
            "m/main.tf",
            "variable \"x\" {}\noutput \"a\" {\n  value = \"A\"\n}\noutput \"b\" {\n  value = var.x\n}\n",
        ),
    ]);
    assert_eq!(json(&p, "aws_r.r"), json!({"v": "A-x"}));
}

#[test]
fn values_that_depend_on_themselves_fail_the_load() {
    let dir = tempfile::tempdir().unwrap();
    let text = "locals {\n  a = local.b\n  b = \"${local.a}!\"\n}\nresource \"aws_r\" \"r\" {\n  v = local.a\n}\n";
    std::fs::write(dir.path().join("main.tf"), text).unwrap();
    let state = State::parse(STATE.as_bytes(), "test").unwrap();
    let error = Project::load(dir.path(), &state).unwrap_err();
    assert!(error.to_string().starts_with("cycle: local."), "{error}");
}

#[test]
fn a_name_declared_twice_fails_the_load() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.tf"), "resource \"aws_r\" \"r\" {}\n").unwrap();
    std::fs::write(dir.path().join("b.tf"), "resource \"aws_r\" \"r\" {}\n").unwrap();
    let state = State::parse(STATE.as_bytes(), "test").unwrap();
    let error = Project::load(dir.path(), &state).unwrap_err();
    assert_eq!(
        error.to_string(),
        "b.tf: resource aws_r.r is declared twice"
    );
}
