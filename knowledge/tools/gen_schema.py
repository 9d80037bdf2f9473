#!/usr/bin/env python3
"""Generate knowledge/data/aws-provider-schema.json from the @cdktf/provider-aws npm package.

Run from the workspace root (Python 3.11, standard library only; npm is needed only when
--package is not given):

    python3 knowledge/tools/gen_schema.py                      # fetches the pinned package with `npm pack`
    python3 knowledge/tools/gen_schema.py --package DIR        # DIR = an unpacked package (holds lib/)

Pinned input: @cdktf/provider-aws 21.22.1, generated from hashicorp/aws provider 6.25.0.

What the package ships: for every resource, `lib/<name>/index.js` (compiled, generated code),
`index.d.ts`, and one `.jsii` assembly for the whole package. The `.jsii` file has types and
docs but cannot tell a list from a set, so the generator reads the compiled JavaScript, whose
generated shape is regular:

* `<struct>ToHclTerraform(struct)` and the resource's `synthesizeHclAttributes()` list every
  settable attribute and block by its Terraform name with `isBlock`, `type` ("simple", "list",
  "set", "map", "struct") and `storageClassType` ("string", "stringList", "<Struct>List", ...).
* A block value mapped with `listMapperHcl(f, true)` is a list/set block with no item limit;
  `listMapperHcl(f, false)` marks an attribute of list/set-of-object type that Terraform lets
  one write in block syntax; a value mapped directly by `f(...)` is a block with max_items 1,
  and type "struct" is a block with nesting mode "single".
* A settable attribute without a `reset<Name>()` method is required; with one, optional.
* Complex members are built in constructors after a comment
  `// name - computed: C, optional: O, required: R`, which gives their flags; `new XList(this,
  "name", wrapsSet)` tells list from set. Computed-only simple attributes have the same
  comment before their getter, whose `get...Attribute` call gives the type.

What the package does not carry is curated, and every curated path is listed in the output's
"curated" member with the reason:

* by rule (`RULES` below): top-level `id`, `region` and `tags_all` are optional+computed where
  the package shows them settable;
* by fact (knowledge/tools/curation.json, which says where each kind of fact came from):
  optional+computed (cdktf renders it exactly like optional), sensitive, write-only, item
  limits other than "required" (min_items 1) and "at most one" (max_items 1), and the
  required fields of set-of-object attributes written as blocks (security group rules).

The generator refuses a curation entry whose path does not exist or that changes nothing, so a
new package version that fixes or renames something shows up as an error, not a silent drift.

The output has one resource per line. Each attribute is `[flags, type]`, where flags is one of
"r" (required), "o" (optional), "c" (computed), "oc" (optional+computed), followed by "s" when
sensitive and "w" when write-only; type is a cty type in the JSON form `terraform providers
schema -json` uses, or, for a list/set/single attribute of objects, {"nesting_mode", "attributes"}.
A block is {"nesting_mode", "min_items", "max_items", "attributes", "blocks"} with empty members
left out.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = "@cdktf/provider-aws"
PACKAGE_VERSION = "21.22.1"
PROVIDER_SOURCE = "registry.terraform.io/hashicorp/aws"
HERE = Path(__file__).resolve().parent
CURATION = HERE / "curation.json"
OUTPUT = HERE.parent / "data" / "aws-provider-schema.json"

# The resource types to emit: the common AWS resources the reconciler meets most.
RESOURCES = """
aws_instance aws_security_group aws_security_group_rule aws_vpc_security_group_ingress_rule
aws_vpc_security_group_egress_rule aws_default_security_group aws_vpc aws_subnet aws_route_table
aws_route aws_route_table_association aws_internet_gateway aws_nat_gateway aws_eip
aws_eip_association aws_network_acl aws_network_acl_rule aws_network_interface aws_vpc_endpoint
aws_vpc_peering_connection aws_key_pair aws_ebs_volume aws_volume_attachment aws_launch_template
aws_s3_bucket aws_s3_bucket_versioning aws_s3_bucket_server_side_encryption_configuration
aws_s3_bucket_policy aws_s3_bucket_public_access_block aws_s3_bucket_lifecycle_configuration
aws_s3_bucket_logging aws_s3_bucket_ownership_controls aws_s3_bucket_acl
aws_s3_bucket_cors_configuration aws_s3_bucket_website_configuration aws_s3_bucket_notification
aws_s3_object aws_iam_role aws_iam_policy aws_iam_role_policy aws_iam_role_policy_attachment
aws_iam_user aws_iam_user_policy aws_iam_user_policy_attachment aws_iam_instance_profile
aws_iam_group aws_iam_group_policy aws_iam_group_policy_attachment aws_iam_group_membership
aws_iam_access_key aws_iam_openid_connect_provider aws_lambda_function aws_lambda_permission
aws_lambda_event_source_mapping aws_lambda_alias aws_lambda_layer_version aws_db_instance
aws_db_subnet_group aws_db_parameter_group aws_rds_cluster aws_rds_cluster_instance
aws_dynamodb_table aws_lb aws_lb_target_group aws_lb_listener aws_lb_listener_rule
aws_lb_target_group_attachment aws_lb_listener_certificate aws_autoscaling_group
aws_autoscaling_policy aws_sns_topic aws_sns_topic_subscription aws_sns_topic_policy
aws_sqs_queue aws_sqs_queue_policy aws_cloudwatch_metric_alarm aws_cloudwatch_log_group
aws_cloudwatch_event_rule aws_cloudwatch_event_target aws_kms_key aws_kms_alias aws_route53_zone
aws_route53_record aws_secretsmanager_secret aws_secretsmanager_secret_version aws_ssm_parameter
aws_ecs_cluster aws_ecs_service aws_ecs_task_definition aws_ecr_repository
aws_ecr_lifecycle_policy aws_eks_cluster aws_eks_node_group aws_cloudfront_distribution
aws_cloudfront_origin_access_control aws_api_gateway_rest_api aws_api_gateway_deployment
aws_api_gateway_stage aws_apigatewayv2_api aws_apigatewayv2_stage aws_apigatewayv2_route
aws_apigatewayv2_integration aws_acm_certificate aws_acm_certificate_validation
aws_elasticache_cluster aws_elasticache_replication_group aws_elasticache_subnet_group
aws_efs_file_system aws_efs_mount_target
""".split()

# Attributes curated by rule, applied to every resource at the top level only.
RULES = {
    "id": "SDKv2 resources carry an implicit `id` that is optional+computed; the package shows "
    "it settable (framework resources, where it is computed only, are left as the package says)",
    "region": "provider 6.x injects `region` into every resource as optional+computed: it "
    "defaults to the provider's region and is stored in state",
    "tags_all": "`tags_all` is optional+computed where settable (tags merged with the provider's "
    "default_tags); where the package shows it computed only, it is left so",
}

GETTER_TYPES = {
    "this.getStringAttribute": "string",
    "this.getNumberAttribute": "number",
    "this.getBooleanAttribute": "bool",
    "this.getListAttribute": ["list", "string"],
    "this.getNumberListAttribute": ["list", "number"],
    "cdktf.Fn.tolist(this.getListAttribute": ["set", "string"],
    "cdktf.Fn.tolist(this.getNumberListAttribute": ["set", "number"],
    "this.getStringMapAttribute": ["map", "string"],
    "this.getNumberMapAttribute": ["map", "number"],
    "this.getBooleanMapAttribute": ["map", "bool"],
}

SETTABLE_TYPES = {
    ("simple", "string"): "string",
    ("simple", "number"): "number",
    ("simple", "boolean"): "bool",
    ("list", "stringList"): ["list", "string"],
    ("list", "numberList"): ["list", "number"],
    ("set", "stringList"): ["set", "string"],
    ("set", "numberList"): ["set", "number"],
    ("map", "stringMap"): ["map", "string"],
    ("map", "numberMap"): ["map", "number"],
    ("map", "booleanMap"): ["map", "bool"],
}

COMPLEX_MAPS = {"cdktf.StringMap": ["map", "string"], "cdktf.NumberMap": ["map", "number"],
                "cdktf.BooleanMap": ["map", "bool"]}

FLAGS_RE = re.compile(r"//\s*(\w+) - computed: (true|false), optional: (true|false), required: (true|false)")
GETTER_RE = re.compile(r"^    get (\w+)\(\) \{\n\s+return (.*?);\n    \}", re.M)
FIELD_RE = re.compile(r'this\._(\w+) = new ([\w.]+)\(this, "(\w+)"(?:, (true|false))?\);')
HCL_ENTRY_RE = re.compile(
    r'(\w+): \{\s*value: (.*?),\s*isBlock: (true|false),\s*type: "(\w+)",\s*storageClassType: "(\w+)",\s*\}')
CLASS_RE = re.compile(r"^class (\w+) extends cdktf\.(\w+) \{$")
FUNCTION_RE = re.compile(r"^function (\w+)ToHclTerraform\(struct\) \{$")


class GenError(Exception):
    """A pattern in the package that the generator does not understand."""


@dataclass
class Member:
    """One member of a class: what its comment, getter and reset method say."""

    flags: tuple[bool, bool, bool] | None = None  # computed, optional, required
    getter: str | None = None
    resettable: bool = False
    complex_class: str | None = None
    wraps_set: bool | None = None


@dataclass
class Module:
    """The parsed pieces of one `lib/<name>/index.js`."""

    classes: dict[str, str] = field(default_factory=dict)
    hcl_functions: dict[str, str] = field(default_factory=dict)


def split_module(text: str) -> Module:
    """Cut a compiled module into its top-level classes and `...ToHclTerraform` functions."""
    module = Module()
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        cls, fun = CLASS_RE.match(lines[i]), FUNCTION_RE.match(lines[i])
        if not (cls or fun):
            i += 1
            continue
        end = lines.index("}", i)
        body = "\n".join(lines[i + 1:end])
        if cls:
            module.classes[cls.group(1)] = body
        else:
            name = fun.group(1)
            module.hcl_functions[name[0].upper() + name[1:]] = body
        i = end + 1
    return module


def class_members(body: str) -> dict[str, Member]:
    """Index a class body by Terraform name: flags comments, getters, resets and complex fields."""
    by_camel: dict[str, Member] = {}
    camel_of: dict[str, str] = {}
    for m in GETTER_RE.finditer(body):
        camel, expr = m.group(1), m.group(2)
        tf = re.search(r"\('(\w+)'\)", expr)
        if tf:
            camel_of[tf.group(1)] = camel
            by_camel.setdefault(camel, Member()).getter = expr
    for m in FIELD_RE.finditer(body):
        camel_of.setdefault(m.group(3), m.group(1))
        member = by_camel.setdefault(m.group(1), Member())
        member.complex_class = m.group(2)
        member.wraps_set = None if m.group(4) is None else m.group(4) == "true"
    members: dict[str, Member] = {}
    for tf, camel in camel_of.items():
        member = by_camel[camel]
        member.resettable = f"    reset{camel[0].upper()}{camel[1:]}() {{" in body
        members[tf] = member
    for m in FLAGS_RE.finditer(body):
        if m.group(1) in members:
            members[m.group(1)].flags = tuple(v == "true" for v in m.group(2, 3, 4))
    return members


def hcl_entries(body: str) -> list[tuple[str, str, bool, str, str]]:
    """The settable members of a struct or resource: name, value, isBlock, type, storage class."""
    return [(m.group(1), m.group(2), m.group(3) == "true", m.group(4), m.group(5))
            for m in HCL_ENTRY_RE.finditer(body)]


def presence(flags: tuple[bool, bool, bool]) -> str:
    """The flags letters for a (computed, optional, required) triple."""
    computed, optional, required = flags
    if required:
        return "r"
    return ("o" if optional else "") + ("c" if computed else "")


class Generator:
    """Turns one parsed module into the compact schema of its resource."""

    def __init__(self, module: Module, where: str):
        self.module = module
        self.where = where

    def fail(self, what: str) -> GenError:
        """An error naming the module being read."""
        return GenError(f"{self.where}: {what}")

    def struct(self, name: str, members_class: str, hcl_body: str | None) -> dict:
        """The attributes and blocks of one struct (or of the resource itself)."""
        members = class_members(self.module.classes.get(members_class, ""))
        attributes: dict = {}
        blocks: dict = {}
        settable = hcl_entries(hcl_body) if hcl_body is not None else []
        for tf, value, is_block, kind, storage in settable:
            member = members.get(tf)
            if member is None:
                raise self.fail(f"{name}.{tf} has no getter or field")
            if is_block:
                self.settable_complex(name, tf, value, kind, member, attributes, blocks)
            else:
                ty = SETTABLE_TYPES.get((kind, storage))
                if ty is None:
                    raise self.fail(f"{name}.{tf}: unknown settable type {kind}/{storage}")
                attributes[tf] = ["o" if member.resettable else "r", ty]
        settable_names = {entry[0] for entry in settable}
        for tf, member in members.items():
            if tf not in settable_names and member.flags is not None:
                attributes[tf] = self.computed_member(name, tf, member)
        return {"attributes": dict(sorted(attributes.items())), "blocks": dict(sorted(blocks.items()))}

    def settable_complex(self, name, tf, value, kind, member, attributes, blocks):
        """File a settable block, or an attribute of objects written in block syntax."""
        child = re.search(r"(\w+)ToHclTerraform", value)
        if child is None or member.flags is None:
            raise self.fail(f"{name}.{tf}: block without mapper or flags")
        child_name = child.group(1)[0].upper() + child.group(1)[1:]
        inner = self.nested(child_name)
        if "listMapperHcl(" in value and value.split("ToHclTerraform, ")[1].startswith("false"):
            attributes[tf] = [presence(member.flags), {"nesting_mode": kind, **only_attributes(inner, tf)}]
            return
        if member.flags[0]:
            raise self.fail(f"{name}.{tf}: computed block")
        block = {"nesting_mode": "single" if kind == "struct" else kind}
        if kind not in ("list", "set", "struct"):
            raise self.fail(f"{name}.{tf}: unknown block type {kind}")
        if member.flags[2]:
            block["min_items"] = 1
        if kind != "struct" and "listMapperHcl(" not in value:
            block["max_items"] = 1
        blocks[tf] = {**block, **inner}

    def nested(self, struct_name: str) -> dict:
        """The schema of a nested struct, read from its HCL function and output reference."""
        return self.struct(struct_name, struct_name + "OutputReference",
                           self.module.hcl_functions.get(struct_name))

    def computed_member(self, name: str, tf: str, member: Member) -> list:
        """A member that is not settable: computed only, with its type."""
        if member.flags != (True, False, False):
            raise self.fail(f"{name}.{tf}: not settable but flags {member.flags}")
        if member.complex_class is not None:
            return ["c", self.computed_complex(name, tf, member)]
        call = (member.getter or "").split("(")[0]
        if call == "cdktf.Fn.tolist":
            call = "cdktf.Fn.tolist(" + member.getter.split("(")[1]
        ty = GETTER_TYPES.get(call)
        if ty is None:
            raise self.fail(f"{name}.{tf}: unknown getter {member.getter}")
        return ["c", ty]

    def computed_complex(self, name: str, tf: str, member: Member):
        """The type of a computed-only complex member (a list, set or object of objects)."""
        cls = member.complex_class or ""
        if cls in COMPLEX_MAPS:
            return COMPLEX_MAPS[cls]
        for suffix, mode in (("List", "list"), ("OutputReference", "single")):
            if cls.endswith(suffix):
                inner = self.nested(cls[: -len(suffix)])
                if mode == "list" and member.wraps_set:
                    mode = "set"
                return {"nesting_mode": mode, **only_attributes(inner, tf)}
        raise self.fail(f"{name}.{tf}: unknown complex class {cls}")


def only_attributes(struct: dict, tf: str) -> dict:
    """The attributes of a struct that is an attribute type, which cannot hold blocks."""
    if struct["blocks"]:
        raise GenError(f"{tf}: an object attribute with blocks inside")
    return {"attributes": struct["attributes"]}


def resource_schema(lib: Path, resource: str) -> dict:
    """Read one resource type's module and return its compact schema."""
    path = lib / resource.removeprefix("aws_").replace("_", "-") / "index.js"
    text = path.read_text()
    if f"terraformResourceType: '{resource}'" not in text:
        raise GenError(f"{path}: is not the module of {resource}")
    module = split_module(text)
    resources = [n for n, b in module.classes.items() if "synthesizeHclAttributes()" in b
                 and f"terraformResourceType: '{resource}'" in b]
    if len(resources) != 1:
        raise GenError(f"{path}: expected one resource class, found {resources}")
    cls = resources[0]
    body = module.classes[cls]
    hcl = body[body.index("    synthesizeHclAttributes() {"):]
    return Generator(module, str(path)).struct(resource, cls, hcl)


def walk(schema: dict, path: str) -> list:
    """The attribute entry at a dotted path, through blocks and nested attributes."""
    head, _, rest = path.partition(".")
    if not rest:
        entry = schema.get("attributes", {}).get(head)
        if entry is None:
            raise GenError(f"curation path {path!r}: no such attribute")
        return entry
    if head in schema.get("blocks", {}):
        return walk(schema["blocks"][head], rest)
    entry = schema.get("attributes", {}).get(head)
    if entry is None or not isinstance(entry[1], dict):
        raise GenError(f"curation path {path!r}: {head} is neither a block nor nested attributes")
    return walk(entry[1], rest)


def set_presence(entry: list, wanted: str, path: str) -> None:
    """Change an entry's presence letters, keeping its s/w suffix; refuse a no-op."""
    letters = entry[0].rstrip("sw")
    if letters == wanted:
        raise GenError(f"curation of {path}: already {wanted!r} in the package")
    entry[0] = wanted + entry[0][len(letters):]


def add_suffix(entry: list, letter: str, path: str) -> None:
    """Mark an entry sensitive ("s") or write-only ("w")."""
    if letter in entry[0].lstrip("roc"):
        raise GenError(f"curation of {path}: already has {letter!r}")
    suffix = "".join(sorted(entry[0].lstrip("roc") + letter))
    entry[0] = entry[0].rstrip("sw") + suffix


def apply_rules(resources: dict) -> dict:
    """Apply RULES to every resource; return the paths changed per rule."""
    applied: dict = {}
    for name, schema in resources.items():
        for attr in RULES:
            entry = schema["attributes"].get(attr)
            if entry is not None and entry[0] == "o":
                entry[0] = "oc"
                applied.setdefault(attr, []).append(name)
    return {attr: {"why": RULES[attr], "resources": names} for attr, names in applied.items()}


def walk_block(schema: dict, path: str) -> dict:
    """The nested block at a dotted path."""
    block = schema
    for name in path.split("."):
        block = block.get("blocks", {}).get(name)
        if block is None:
            raise GenError(f"curation path {path!r}: no such block")
    return block


def apply_flag(resources: dict, kind: str, resource: str, path: str) -> None:
    """Apply one curated flag fact to the attribute at `resource.path`."""
    entry = walk(resources[resource], path)
    where = f"{resource}.{path}"
    if kind == "optional_computed":
        set_presence(entry, "oc", where)
    elif kind == "required":
        set_presence(entry, "r", where)
    elif kind in ("sensitive", "write_only"):
        add_suffix(entry, kind[0], where)
    else:
        raise GenError(f"unknown curation kind {kind!r}")


def apply_curation(resources: dict, facts: dict) -> None:
    """Apply the facts of knowledge/tools/curation.json to the generated resources."""
    for kind, by_resource in facts.items():
        for resource, paths in by_resource.items():
            if resource not in resources:
                raise GenError(f"curation names {resource}, which is not generated")
            if kind in ("min_items", "max_items"):
                for path, count in paths.items():
                    block = walk_block(resources[resource], path)
                    if block.get(kind) == count:
                        raise GenError(f"curation of {resource}.{path}: {kind} already {count}")
                    block[kind] = count
            else:
                for path in paths:
                    apply_flag(resources, kind, resource, path)


def compact(schema: dict) -> dict:
    """Drop empty members so the data file stays small."""
    out = {}
    for key, value in schema.items():
        if key == "blocks":
            value = {name: compact(block) for name, block in value.items()}
        if value not in ({}, None):
            out[key] = value
    return out


def fetch_package(into: Path) -> Path:
    """Fetch the pinned package with `npm pack` into a directory and unpack it there."""
    subprocess.run(["npm", "pack", "--silent", f"{PACKAGE}@{PACKAGE_VERSION}"], cwd=into, check=True,
                   stdout=subprocess.DEVNULL)
    tarball = next(into.glob("*.tgz"))
    with tarfile.open(tarball) as archive:
        archive.extractall(into, filter="data")
    return into / "package"


def check_version(package: Path) -> str:
    """Refuse a package other than the pinned version; return the provider version it wraps."""
    meta = json.loads((package / "package.json").read_text())
    if meta.get("version") != PACKAGE_VERSION:
        raise GenError(f"package is {meta.get('version')}, the generator is pinned to {PACKAGE_VERSION}")
    sample = (package / "lib" / "instance" / "index.js").read_text()
    found = re.search(r"providerVersion: '([\d.]+)'", sample)
    if found is None:
        raise GenError("cannot find the provider version in lib/instance/index.js")
    return found.group(1)


def render(document: dict, resources: dict) -> str:
    """The data file text: the header members, then one resource per line."""
    head = json.dumps(document, indent=1, sort_keys=False)[:-2]
    lines = [f"  {json.dumps(name)}:{json.dumps(resources[name], separators=(',', ':'))}"
             for name in sorted(resources)]
    return head + ',\n "resources":{\n' + ",\n".join(lines) + "\n }\n}\n"


def generate(package: Path, output: Path) -> None:
    """Generate the data file from an unpacked package."""
    provider_version = check_version(package)
    resources = {name: resource_schema(package / "lib", name) for name in RESOURCES}
    curation = json.loads(CURATION.read_text())
    rules = apply_rules(resources)
    apply_curation(resources, curation["facts"])
    document = {
        "format": "retrace-provider-schema/1",
        "provider": PROVIDER_SOURCE,
        "provider_version": provider_version,
        "source": f"npm {PACKAGE} {PACKAGE_VERSION}",
        "generator": "knowledge/tools/gen_schema.py (see its header for the format)",
        "notes": curation["notes"],
        "curated": {"rules": rules, "facts": curation["facts"], "why": curation["why"]},
    }
    compacted = {name: compact(schema) for name, schema in resources.items()}
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(render(document, compacted))
    print(f"wrote {output}: {len(compacted)} resource types", file=sys.stderr)


def main() -> int:
    """Parse the command line, fetch the package unless given, and generate."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--package", type=Path, help="an unpacked @cdktf/provider-aws package")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args()
    if args.package is not None:
        generate(args.package, args.output)
        return 0
    with tempfile.TemporaryDirectory(prefix="cdktf-provider-aws-") as tmp:
        generate(fetch_package(Path(tmp)), args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
