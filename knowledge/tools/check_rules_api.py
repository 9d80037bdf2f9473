#!/usr/bin/env python3
"""Check every bundled rule file (knowledge/rules/*.toml) against botocore's service models.

Run from the workspace root with a Python (3.11+) that has botocore:

    python knowledge/tools/check_rules_api.py            # every rule file
    python knowledge/tools/check_rules_api.py --verbose  # also list the rules that pass

For every rule:

* its `api` must be an operation of the service (CloudTrail's event names that differ from the
  API reference's operation names are listed in EVENT_NAMES, with the reason);
* the first segment of every path it reads (identity parts, `set`s, `when`, block elements,
  tags, `requires`, `delete_unless`, `delete_when`, `hidden`) must name a member of the operation's input
  shape, or of its output shape for `from = "response"`. Names compare without case, by the
  member's name or its wire name (`locationName`, `queryName`). EC2 is a query-protocol
  service whose CloudTrail records use its XML names: a list member `Foos` is logged as
  `fooSet` with its elements under `items`, and the newer EC2 APIs are logged as the raw
  request under `<Operation>Request`, so that wrapper is stepped into. Further aliases are in
  ALIASES, each with its reason.

A path's later segments are not checked: CloudTrail's nesting below the first member follows
the service's wire format (S3's XML bodies, EC2's `items`), which the rule tests check against
hand-written records.

Prints one line per problem and a summary, and exits 1 when there is a problem.
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from pathlib import Path

import botocore.session

RULES = Path(__file__).resolve().parent.parent / "rules"

# Rule file `service` -> botocore service name, where they differ.
BOTOCORE_NAMES = {
    "elbv2": "elbv2",
    "cloudwatch": "cloudwatch",
    "opensearch": "opensearch",
    "sfn": "stepfunctions",
    "efs": "efs",
    "cognito-idp": "cognito-idp",
    "cognito-identity": "cognito-identity",
    # Directory buckets' bucket-level calls are operations of botocore's S3 model.
    "s3express": "s3",
}

# CloudTrail event names that are not the API reference's operation names.
EVENT_NAMES = {
    # S3 logs the lifecycle and public access block calls under their older names.
    ("s3", "PutBucketLifecycle"): "PutBucketLifecycleConfiguration",
    ("s3", "DeleteBucketLifecycle"): "DeleteBucketLifecycle",
    ("s3", "PutBucketPublicAccessBlock"): "PutPublicAccessBlock",
    ("s3", "DeleteBucketPublicAccessBlock"): "DeletePublicAccessBlock",
    # CloudWatch Events and EventBridge share one API; older trails use the same names.
}

# Path names CloudTrail uses for a member, by service: logged name (lower case) -> member.
ALIASES = {
    # S3 logs the bucket of every call as `bucketName` (the `Bucket` URI member), and the
    # object key as `key`.
    # The bucket policy document is logged parsed, as `bucketPolicy`.
    "s3": {"bucketname": "Bucket", "key": "Key", "bucketpolicy": "Policy"},
    "s3express": {"bucketname": "Bucket"},
    # EC2 logs the older XML names of some members (AWS's sample CreateVolume record has
    # `zone`; CreateNetworkAclEntry records have `aclProtocol`), instance ids as
    # `instancesSet.items[]` and RunInstances' security groups as `groupSet.items[]`.
    "ec2": {
        "zone": "AvailabilityZone",
        "aclprotocol": "Protocol",
        "instancesset": "InstanceIds",
        "groupset": "SecurityGroupIds",
    },
}

# Rules whose paths are checked by hand instead, with the reason.
EXCEPTIONS = {
    # RunInstances is logged with the launch parameters grouped as `instancesSet.items[]`
    # (one element per MinCount/MaxCount request), a shape the input does not have.
    ("ec2", "RunInstances", "instancesSet"),
    # DeleteBucketTagging and DeleteObjectTagging send no tags: its `replace` path finds nothing on purpose, which
    # removes every tag (README.md, Tags).
    ("s3", "DeleteBucketTagging", "Tagging"),
    ("s3", "DeleteObjectTagging", "Tagging"),
}


def lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def member_names(shape, ec2: bool) -> set[str]:
    """Every name CloudTrail may log a member of `shape` under, in lower case."""
    names: set[str] = set()
    if shape is None:
        return names
    for name, member in shape.members.items():
        wire = member.serialization.get("name") or name
        query = member.serialization.get("queryName")
        for candidate in filter(None, (name, wire, query)):
            names.add(candidate.lower())
            if ec2:
                names.add((candidate + "Set").lower())
                singular = re.sub(r"(e?s)$", "", candidate)
                names.add((singular + "Set").lower())
    return names


def unwrapped_member_names(shape) -> set[str]:
    """The members of a query-protocol output's one structure member: CloudTrail logs such a
    response unwrapped (a real RDS ModifyDBSnapshotAttribute record's response holds
    `dBSnapshotIdentifier` where the model has `DBSnapshotAttributesResult`)."""
    if shape is None or len(shape.members) != 1:
        return set()
    (inner,) = shape.members.values()
    if inner.type_name != "structure":
        return set()
    return member_names(inner, False)


def first_segment(path: str) -> str:
    """The first key of a dotted rule path, without `[]` or `[Field=literal]`."""
    head = path.split(".", 1)[0]
    return re.sub(r"\[.*$", "", head)


def paths_of(value) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return list(value)


def rule_paths(rule: dict) -> list[tuple[str, str]]:
    """(payload, path) for every path a rule reads from a payload's root."""
    out: list[tuple[str, str]] = []

    def add(source: dict | None, key: str = "path") -> None:
        if source is None:
            return
        payload = source.get("from", "request")
        out.extend((payload, p) for p in paths_of(source.get(key)))

    for part in rule.get("identity", []):
        add(part)
    for set_ in rule.get("set", []):
        # A set with `each` reads its path inside each element of that array.
        add(set_, "each" if "each" in set_ else "path")
        add(set_.get("when"))
    requires = rule.get("requires")
    if isinstance(requires, dict):
        add(requires)
    else:
        out.extend(("request", p) for p in paths_of(requires))
    blocks = rule.get("block")
    for block in blocks if isinstance(blocks, list) else [blocks]:
        if block is not None:
            add(block, "each")
    add(rule.get("tags"))
    out.extend(("request", p) for p in paths_of(rule.get("delete_unless")))
    add(rule.get("delete_when"))
    for hidden in rule.get("hidden", []):
        add(hidden)
    return out


def check_path(service: str, op, payload: str, path: str, ec2: bool) -> str | None:
    """A problem with one path, or None."""
    segment = first_segment(path)
    if not segment:
        return None
    shape = op.output_shape if payload == "response" else op.input_shape
    names = member_names(shape, ec2)
    if payload == "response" and op.service_model.protocol == "query":
        names |= unwrapped_member_names(shape)
    suffix = "Response" if payload == "response" else "Request"
    if ec2 and segment.lower() == f"{op.name}{suffix}".lower():
        # The newer EC2 APIs are logged as the raw request (or response) under a wrapper.
        rest = path.split(".", 1)[1] if "." in path else ""
        inner = first_segment(rest)
        if not inner or inner.lower() in names:
            return None
        side = "output" if payload == "response" else "input"
        return f"{payload} path {path!r}: {inner!r} is not a member of {op.name}'s {side}"
    alias = ALIASES.get(service, {}).get(segment.lower())
    if segment.lower() in names or (alias and alias.lower() in names):
        return None
    if payload == "response" and ec2 and segment.lower() in {"requestid"}:
        return None
    side = "output" if payload == "response" else "input"
    return f"{payload} path {path!r}: {segment!r} is not a member of {op.name}'s {side}"


def check_file(path: Path, session, verbose: bool) -> tuple[int, int]:
    """Checks one rule file; returns (rules checked, problems)."""
    doc = tomllib.loads(path.read_text())
    service = doc["service"]
    model = session.get_service_model(BOTOCORE_NAMES.get(service, service))
    ec2 = model.protocol == "ec2"
    operations = set(model.operation_names)
    problems = 0
    for rule in doc.get("rule", []):
        api = rule["api"]
        name = EVENT_NAMES.get((service, api), api)
        where = f"{path.name}: {service}:{api}"
        if name not in operations:
            print(f"{where}: no operation {name} in botocore's {model.service_name} model")
            problems += 1
            continue
        op = model.operation_model(name)
        found = []
        for payload, rule_path in rule_paths(rule):
            if (service, api, first_segment(rule_path)) in EXCEPTIONS:
                continue
            problem = check_path(service, op, payload, rule_path, ec2)
            if problem:
                found.append(problem)
        for problem in dict.fromkeys(found):
            print(f"{where}: {problem}")
        problems += len(set(found))
        if verbose and not found:
            print(f"{where}: ok")
    return len(doc.get("rule", [])), problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--verbose", action="store_true", help="list the rules that pass too")
    args = parser.parse_args()
    session = botocore.session.get_session()
    rules = problems = 0
    for path in sorted(RULES.glob("*.toml")):
        checked, found = check_file(path, session, args.verbose)
        rules += checked
        problems += found
    print(f"{rules} rules checked against botocore {botocore.__version__}: {problems} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
