#!/usr/bin/env python3
"""Generate knowledge/data/aws-provider-schema.json from the real AWS provider's schema.

Run from the workspace root (Python 3.11, standard library only):

    python3 knowledge/tools/gen_schema.py                    # runs terraform with the plugin directory
    python3 knowledge/tools/gen_schema.py --plugin-dir DIR   # DIR holds registry.terraform.io/hashicorp/aws
    python3 knowledge/tools/gen_schema.py --schema-json FILE # a saved `terraform providers schema -json`

Input: `terraform providers schema -json` of hashicorp/aws at PROVIDER_VERSION, the provider the
fixture projects pin (`~> 5.0`) and the machines' filesystem mirror holds. Without
`--schema-json` the script writes a one-provider configuration to a temporary directory, runs
`terraform init -plugin-dir=...` (from `--plugin-dir`, `TF_PLUGIN_DIR`, or the first directory
under /opt holding the provider) and `terraform providers schema -json`; nothing is downloaded.

Output: the covered resource types (the ranking's first TOP types of
knowledge/data/resource-ranking.json, plus EXTRA_RESOURCES), one per line, in the compact form the knowledge
crate loads (`knowledge/src/schema/bundled.rs`):

* a resource or block is {"version" (resources only: the provider's schema version),
  "nesting_mode" (nested blocks only), "min_items", "max_items", "attributes", "blocks"},
  empty or zero members left out;
* an attribute is [flags, type]. Flags: "r" required, "o" optional, "c" computed, "oc"
  optional+computed, then "s" when sensitive and "w" when write-only. The type is the cty type
  as the schema JSON writes it;
* an attribute whose type is a list, set or single object (Terraform lets SDKv2 ones be written
  in block syntax, e.g. aws_security_group.ingress), or a nested attribute of a framework
  resource, is [flags, {"nesting_mode", "attributes"}]. The schema JSON gives no per-field flags
  for object-typed attributes: their fields are "o" when the attribute is settable, "c" when it
  is computed only, except the fields listed in curation.json as required (from the provider
  documentation, with the reason there).

Descriptions and deprecation flags are not kept. The script refuses a curation entry whose path
does not exist, so a provider version that renames something fails loudly.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

PROVIDER_SOURCE = "registry.terraform.io/hashicorp/aws"
PROVIDER_VERSION = "5.100.0"
HERE = Path(__file__).resolve().parent
CURATION = HERE / "curation.json"
OUTPUT = HERE.parent / "data" / "aws-provider-schema.json"
RANKING = HERE.parent / "data" / "resource-ranking.json"
TOP = 100

# The resource types to emit besides the ranking's first TOP (resource-ranking.json): those the
# rules name, and the main types of the services the knowledge base covers.
EXTRA_RESOURCES = """
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
aws_efs_file_system aws_efs_mount_target aws_appautoscaling_target aws_cloudtrail aws_db_snapshot
aws_iam_user_login_profile aws_cloudfront_origin_access_identity aws_cloudfront_function
aws_cloudfront_cache_policy aws_cloudfront_response_headers_policy aws_sfn_state_machine
aws_sfn_activity aws_efs_access_point aws_efs_backup_policy aws_efs_file_system_policy
aws_wafv2_web_acl aws_wafv2_ip_set aws_wafv2_rule_group aws_wafv2_web_acl_logging_configuration
aws_cognito_user_pool aws_cognito_user_pool_client aws_cognito_user_pool_domain
aws_cognito_identity_pool aws_kinesis_stream aws_kinesis_firehose_delivery_stream
aws_opensearch_domain aws_opensearch_domain_policy aws_config_configuration_recorder
aws_config_configuration_recorder_status aws_config_delivery_channel aws_config_config_rule
aws_flow_log aws_api_gateway_resource aws_api_gateway_method aws_api_gateway_integration
aws_api_gateway_authorizer aws_api_gateway_api_key aws_api_gateway_usage_plan
aws_elasticache_parameter_group aws_ecs_cluster_capacity_providers aws_ecs_capacity_provider
aws_ecr_repository_policy aws_appautoscaling_policy aws_appautoscaling_scheduled_action
aws_cloudwatch_event_bus aws_network_acl_association aws_secretsmanager_secret_rotation
aws_secretsmanager_secret_policy aws_eks_addon aws_eks_fargate_profile aws_eks_access_entry
aws_eks_access_policy_association aws_eks_identity_provider_config aws_eks_pod_identity_association
aws_sqs_queue_redrive_policy aws_s3_bucket_replication_configuration aws_db_option_group
aws_route53_resolver_query_log_config aws_route53_resolver_query_log_config_association
""".split()


def ranked_types(top: int = TOP) -> list[str]:
    """The first `top` types of the ranking (knowledge/data/resource-ranking.json)."""
    ranking = json.loads(RANKING.read_text())["ranking"]
    return [entry["type"] for entry in ranking[:top]]


def resource_types() -> list[str]:
    """The types to emit: the ranking's first TOP, then the extra ones, each once."""
    return list(dict.fromkeys(ranked_types() + EXTRA_RESOURCES))


class GenError(Exception):
    """A problem with the input; the message names where."""


def presence(raw: dict) -> str:
    """The presence letters of a schema JSON attribute."""
    if raw.get("required"):
        return "r"
    optional, computed = bool(raw.get("optional")), bool(raw.get("computed"))
    if optional and computed:
        return "oc"
    if optional:
        return "o"
    return "c"


def flags(raw: dict) -> str:
    """Presence, then "s" when sensitive and "w" when write-only."""
    return presence(raw) + ("s" if raw.get("sensitive") else "") + (
        "w" if raw.get("write_only") else "")


def object_nesting(ty) -> tuple[str, dict] | None:
    """(nesting mode, field types) when a cty type is a list, set or single object."""
    if isinstance(ty, list) and ty[0] == "object":
        return "single", ty[1]
    if isinstance(ty, list) and ty[0] in ("list", "set") and isinstance(ty[1], list) \
            and ty[1][0] == "object":
        return ty[0], ty[1][1]
    return None


def attribute(raw: dict) -> list:
    """One attribute in compact form."""
    letters = flags(raw)
    if "nested_type" in raw:
        nested = raw["nested_type"]
        fields = {name: attribute(field) for name, field in sorted(nested["attributes"].items())}
        return [letters, {"nesting_mode": nested["nesting_mode"], "attributes": fields}]
    shape = object_nesting(raw["type"])
    if shape is None:
        return [letters, raw["type"]]
    mode, fields = shape
    field_flags = "c" if presence(raw) == "c" else "o"
    return [letters, {"nesting_mode": mode,
                      "attributes": {name: [field_flags, ty] for name, ty in sorted(fields.items())}}]


def block(raw: dict) -> dict:
    """A block's attributes and nested blocks in compact form."""
    out: dict = {}
    attributes = {name: attribute(a) for name, a in sorted(raw.get("attributes", {}).items())}
    if attributes:
        out["attributes"] = attributes
    blocks = {name: nested_block(b) for name, b in sorted(raw.get("block_types", {}).items())}
    if blocks:
        out["blocks"] = blocks
    return out


def nested_block(raw: dict) -> dict:
    """A nested block: nesting mode, item limits, then its content."""
    out: dict = {"nesting_mode": raw["nesting_mode"]}
    if raw.get("min_items"):
        out["min_items"] = raw["min_items"]
    if raw.get("max_items"):
        out["max_items"] = raw["max_items"]
    out.update(block(raw["block"]))
    return out


def resource(raw: dict) -> dict:
    """A resource type: its schema version, then its block."""
    out: dict = {}
    if raw.get("version"):
        out["version"] = raw["version"]
    out.update(block(raw["block"]))
    return out


def apply_required(resources: dict, curation: dict) -> None:
    """Marks the curated fields of object-typed attributes required."""
    for name, paths in curation["required"].items():
        for path in paths:
            head, _, field = path.partition(".")
            entry = resources.get(name, {}).get("attributes", {}).get(head)
            nested = entry[1] if entry and isinstance(entry[1], dict) else None
            if nested is None or field not in nested["attributes"]:
                raise GenError(f"curation.json: {name}.{path} is not a field of an object attribute")
            nested["attributes"][field][0] = "r"


def find_plugin_dir(given: str | None) -> Path:
    """The plugin directory holding the AWS provider."""
    candidates = [given, os.environ.get("TF_PLUGIN_DIR")]
    candidates += sorted(str(p) for p in Path("/opt").iterdir()) if Path("/opt").is_dir() else []
    for candidate in filter(None, candidates):
        if (Path(candidate) / PROVIDER_SOURCE / PROVIDER_VERSION).is_dir():
            return Path(candidate)
    raise GenError(f"no plugin directory holds {PROVIDER_SOURCE} {PROVIDER_VERSION}; "
                   "give --plugin-dir or --schema-json")


def run_terraform(plugin_dir: Path) -> dict:
    """`terraform providers schema -json` of the pinned provider, offline."""
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "main.tf").write_text(
            'terraform {\n  required_providers {\n    aws = {\n'
            f'      source  = "hashicorp/aws"\n      version = "{PROVIDER_VERSION}"\n'
            '    }\n  }\n}\n')
        env = dict(os.environ, TF_IN_AUTOMATION="1", CHECKPOINT_DISABLE="1")
        subprocess.run(["terraform", "init", "-input=false", f"-plugin-dir={plugin_dir}"],
                       cwd=tmp, env=env, check=True, capture_output=True)
        shown = subprocess.run(["terraform", "providers", "schema", "-json"], cwd=tmp, env=env,
                               check=True, capture_output=True)
        return json.loads(shown.stdout)


def render(document: dict, resources: dict) -> str:
    """The document with one resource per line."""
    head = json.dumps(document, indent=1)[:-2]
    lines = [f"  {json.dumps(name)}:{json.dumps(resources[name], separators=(',', ':'))}"
             for name in sorted(resources)]
    return head + ',\n "resources": {\n' + ",\n".join(lines) + "\n }\n}\n"


def generate(schema: dict, output: Path) -> None:
    """Writes the compact schema of the covered types."""
    provider = schema["provider_schemas"].get(PROVIDER_SOURCE)
    if provider is None:
        raise GenError(f"the schema JSON has no {PROVIDER_SOURCE}")
    known = provider["resource_schemas"]
    missing = [name for name in EXTRA_RESOURCES if name not in known]
    if missing:
        raise GenError(f"the provider has no resource type {', '.join(missing)}")
    absent = [name for name in ranked_types() if name not in known]
    names = [name for name in resource_types() if name in known]
    resources = {name: resource(provider["resource_schemas"][name]) for name in names}
    curation = json.loads(CURATION.read_text())
    apply_required(resources, curation)
    document = {
        "format": "retrace-provider-schema/1",
        "provider": PROVIDER_SOURCE,
        "provider_version": PROVIDER_VERSION,
        "source": f"terraform providers schema -json, hashicorp/aws {PROVIDER_VERSION}",
        "generator": "knowledge/tools/gen_schema.py (see its header for the format)",
        "notes": [
            "Do not edit by hand: re-run knowledge/tools/gen_schema.py.",
            "Attributes are [flags, type]: r required, o optional, c computed, oc "
            "optional+computed, then s sensitive, w write-only.",
            "Object-typed attributes are [flags, {nesting_mode, attributes}]; their fields are "
            "o (or c when the attribute is computed only) except the required ones curated in "
            "knowledge/tools/curation.json.",
            "ranked_types_absent: types of the ranking's first "
            f"{TOP} this provider version does not have (newer provider releases added them).",
        ],
        "curated": curation,
        "ranked_types_absent": absent,
    }
    output.write_text(render(document, resources))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plugin-dir", help="a directory holding registry.terraform.io/hashicorp/aws")
    parser.add_argument("--schema-json", type=Path, help="a saved `terraform providers schema -json`")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args()
    try:
        if args.schema_json:
            schema = json.loads(args.schema_json.read_text())
        else:
            schema = run_terraform(find_plugin_dir(args.plugin_dir))
        generate(schema, args.output)
    except (GenError, subprocess.CalledProcessError, OSError) as error:
        print(f"gen_schema: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
