"""The pure parts of the moto end-to-end check: CloudTrail records to boto3 calls, and id maps.

Nothing here starts a process or talks to a server, so the unit tests
(test_cloud_check.py) can run it with botocore alone.

* `operation_for(record, loader)` finds the botocore service and operation a CloudTrail
  record describes (eventSource + eventName).
* `to_boto_params(request_parameters, input_shape)` turns CloudTrail's `requestParameters`
  into the input dict boto3 takes, guided by the botocore model: member names are matched
  case-insensitively, by name or by their wire name (`locationName`), list wrappers such as
  EC2's `{"items": [...]}` are unwrapped, and leaves are coerced to the shape's type.
* `IdMap` maps the simulator's identifiers to the ones moto gave, and substitutes them in
  any JSON value.
"""

import base64
import datetime
import json
import re

# ---------------------------------------------------------------------------
# Finding the operation
# ---------------------------------------------------------------------------

# CloudTrail names a few S3 operations after the REST sub-resource, not after the SDK
# operation (documented in "Amazon S3 CloudTrail events"). Only S3 needs this table.
S3_EVENT_ALIASES = {
    "PutBucketLifecycle": "PutBucketLifecycleConfiguration",
    "GetBucketLifecycle": "GetBucketLifecycleConfiguration",
    "PutBucketNotification": "PutBucketNotificationConfiguration",
    "GetBucketNotification": "GetBucketNotificationConfiguration",
    "PutBucketPublicAccessBlock": "PutPublicAccessBlock",
    "DeleteBucketPublicAccessBlock": "DeletePublicAccessBlock",
}

# CloudTrail records S3's REST calls with their URI and body parts, not the SDK's member
# names: the bucket is "bucketName", the object "key", a bucket policy "bucketPolicy"
# (parsed JSON). The sub-resource of the URI shows as an empty key ("?tagging" ->
# "tagging": "") and the endpoint as "Host": neither is a parameter.
S3_PARAM_ALIASES = {"bucketName": "Bucket", "key": "Key", "bucketPolicy": "Policy"}


def s3_rest_params(request):
    """CloudTrail's S3 requestParameters with the REST-only keys renamed or dropped."""
    out = {}
    for key, value in request.items():
        if key == "Host" or value == "":
            continue
        out[S3_PARAM_ALIASES.get(key, key)] = value
    return out


# Some services version their operation names in CloudTrail (Lambda:
# UpdateFunctionConfiguration20150331v2). The suffix is an API date, optionally "vN".
_VERSION_SUFFIX = re.compile(r"\d{8}(v\d+)?$")


def service_candidates(event_source, loader_services):
    """The botocore service names whose endpoint prefix (or name) is the eventSource's host.

    `loader_services` maps a service name to its `(endpointPrefix, signingName)`.
    elasticloadbalancing.amazonaws.com gives both elb and elbv2; the caller chooses by fit.
    """
    prefix = event_source.split(".")[0]
    found = [
        name
        for name, (endpoint, signing) in loader_services.items()
        if prefix in (endpoint, signing, name)
    ]
    # The service named like the source first: rds.amazonaws.com is rds, though docdb and
    # neptune share its endpoint prefix (the caller keeps the first of equal fits).
    return sorted(found, key=lambda name: (name != prefix, name))


def operation_names(service, event_name):
    """Operation names to try for a CloudTrail eventName, best first."""
    names = [event_name]
    stripped = _VERSION_SUFFIX.sub("", event_name)
    if stripped != event_name:
        names.append(stripped)
    if service == "s3" and event_name in S3_EVENT_ALIASES:
        names.insert(0, S3_EVENT_ALIASES[event_name])
    return names


# ---------------------------------------------------------------------------
# requestParameters -> boto3 input
# ---------------------------------------------------------------------------


def _norm(name):
    """Lower case, letters and digits only: "dBInstanceIdentifier" -> "dbinstanceidentifier"."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _variants(name):
    """Spellings a CloudTrail key may stand for: EC2 calls lists "fooSet" and "foos"."""
    n = _norm(name)
    out = {n}
    if n.endswith("set") and len(n) > 3:
        out.add(n[:-3])
    for v in list(out):
        if v.endswith("s") and len(v) > 1:
            out.add(v[:-1])
        else:
            out.add(v + "s")
    return out


def member_names(name, shape):
    """The names a model member answers to: its own and its wire names."""
    names = {_norm(name)}
    for key in ("name", "queryName"):
        wire = shape.serialization.get(key)
        if wire:
            names.add(_norm(wire))
    return names


def find_member(key, members):
    """The member of a structure a CloudTrail key means, or None.

    An exact (case-insensitive) match of the member's name or wire name wins over a match
    that needs a plural/"Set" variant.
    """
    n = _norm(key)
    for name, shape in members.items():
        if n in member_names(name, shape):
            return name
    variants = _variants(key)
    for name, shape in members.items():
        names = member_names(name, shape)
        if variants & names or any(_variants(x) & variants for x in names):
            return name
    return None


class ConversionError(ValueError):
    """A requestParameters value does not fit the operation's input shape."""


def _unwrap_list(value):
    """A CloudTrail list wrapper's items: {"items": [...]}, {"Tag": [...]}, {} -> []."""
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        keys = [k for k in value if k != "xmlns"]
        if not keys:
            return []
        if len(keys) == 1 and isinstance(value[keys[0]], (list, dict)):
            inner = value[keys[0]]
            # {"items": [...]} / {"Tag": [...]}: the list; {"Rule": {...}}: one element.
            return inner if isinstance(inner, list) else [inner]
        # A lone structure where a list is expected (S3's single <Rule>).
        return [value]
    return [value]


def to_boto_params(value, shape, skipped=None, path=""):
    """Converts a CloudTrail value to the boto3 value of `shape` (a botocore Shape).

    `skipped` collects the paths of keys no member matched (S3's "Host", "xmlns", the
    sub-resource markers such as "versioning": ""), for the report.
    """
    if skipped is None:
        skipped = []
    kind = shape.type_name
    if kind == "structure":
        if not isinstance(value, dict):
            raise ConversionError(f"{path or '<input>'}: expected an object, got {value!r}")
        out = {}
        for key, item in value.items():
            if key == "xmlns":
                continue
            name = find_member(key, shape.members)
            if name is None:
                # A wrapper: EC2's {"CreateLaunchTemplateVersionRequest": {...}} holds the
                # structure itself under one key no member answers to.
                if len(value) == 1 and isinstance(item, dict):
                    return to_boto_params(item, shape, skipped, f"{path}.{key}")
                skipped.append(f"{path}.{key}")
                continue
            member = shape.members[name]
            # S3 marks the sub-resource with an empty query value ("tagging": ""); it is
            # no value for a structure or list member.
            if item == "" and member.type_name in ("structure", "list", "map"):
                skipped.append(f"{path}.{key}")
                continue
            if item is None or _placeholder(item, member):
                continue
            if name in out:
                # Two keys for one member: keep the one that converted first.
                skipped.append(f"{path}.{key}")
                continue
            out[name] = to_boto_params(item, member, skipped, f"{path}.{key}")
        return out
    if kind == "list":
        items = _unwrap_list(value)
        return [
            to_boto_params(_unwrap_scalar(item, shape.member), shape.member, skipped, f"{path}[{i}]")
            for i, item in enumerate(items)
        ]
    if kind == "map":
        if isinstance(value, list):
            # A map written as [{"key": k, "value": v}, ...].
            pairs = {}
            for entry in value:
                low = {_norm(k): v for k, v in entry.items()}
                pairs[low.get("key")] = low.get("value")
            value = pairs
        if not isinstance(value, dict):
            raise ConversionError(f"{path}: expected a map, got {value!r}")
        return {
            str(k): to_boto_params(v, shape.value, skipped, f"{path}.{k}")
            for k, v in value.items()
        }
    return _scalar(value, shape, path)


def _placeholder(value, shape):
    """Whether a value stands for "not set": an empty or zero value the member's model
    forbids (below its min, or not among its enum), such as PutMetricAlarm's
    "thresholdMetricId": "" or "datapointsToAlarm": 0 in a recorded request."""
    if value not in ("", 0) or isinstance(value, bool):
        return False
    meta = shape.metadata
    if value == "" and shape.type_name == "string":
        if meta.get("min", 0) >= 1:
            return True
        enum = meta.get("enum")
        return bool(enum) and "" not in enum
    if value == 0 and shape.type_name in ("integer", "long"):
        return meta.get("min", 0) >= 1
    return False


def _unwrap_scalar(item, shape):
    """EC2 writes lists of scalars as lists of one-key objects: [{"resourceId": "sg-1"}]."""
    if shape.type_name not in ("structure", "list", "map") and isinstance(item, dict):
        values = [v for k, v in item.items() if k != "xmlns"]
        if len(values) == 1:
            return values[0]
    return item


def _scalar(value, shape, path):
    """Coerces a leaf to the shape's type: string, integer, boolean, timestamp, blob."""
    kind = shape.type_name
    if isinstance(value, dict):
        # {"value": x} around a scalar (EC2 attribute values), when the model wants the scalar.
        values = {k: v for k, v in value.items() if k != "xmlns"}
        if len(values) == 1 and _norm(next(iter(values))) == "value":
            value = next(iter(values.values()))
        elif kind == "string":
            # A policy document CloudTrail parsed (S3 bucketPolicy): the model wants text.
            return json.dumps(value, separators=(",", ":"))
        elif len(values) == 1:
            value = next(iter(values.values()))
    if kind == "string":
        if isinstance(value, (dict, list)):
            return json.dumps(value, separators=(",", ":"))
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)
    if kind in ("integer", "long"):
        try:
            return int(value)
        except (TypeError, ValueError) as err:
            raise ConversionError(f"{path}: {value!r} is no integer") from err
    if kind in ("float", "double"):
        return float(value)
    if kind == "boolean":
        if isinstance(value, str):
            return value.strip().lower() == "true"
        return bool(value)
    if kind == "timestamp":
        if isinstance(value, (int, float)):
            return datetime.datetime.fromtimestamp(value, datetime.timezone.utc)
        text = str(value).replace("Z", "+00:00")
        try:
            return datetime.datetime.fromisoformat(text)
        except ValueError:
            return datetime.datetime.strptime(str(value), "%b %d, %Y %I:%M:%S %p")
    if kind == "blob":
        if isinstance(value, (bytes, bytearray)):
            return bytes(value)
        text = str(value)
        try:
            return base64.b64decode(text, validate=True)
        except ValueError:
            return text.encode()
    return value


def missing_required(params, shape):
    """Required top-level members the conversion did not fill."""
    return [name for name in shape.required_members if name not in params]


# ---------------------------------------------------------------------------
# Identifier maps
# ---------------------------------------------------------------------------

_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2})?")
_IPV4 = re.compile(r"^\d{1,3}(\.\d{1,3}){3}(/\d+)?$")


def id_like(text):
    """Whether a string looks like an identifier worth mapping (ids, ARNs, suffixed names).

    Short values, prose, timestamps, addresses and plain numbers other than account ids
    are not: replacing "Enabled" or "2" everywhere would corrupt the trail.
    """
    if not isinstance(text, str) or len(text) < 8 or len(text) > 2048:
        return False
    if any(c.isspace() for c in text) or text.startswith("{") or text.startswith("["):
        return False
    if _TIMESTAMP.match(text) or _IPV4.match(text):
        return False
    if text.isdigit():
        return len(text) == 12  # an account id
    if not any(c.isdigit() for c in text):
        return False
    return True


class IdMap:
    """Simulator identifier -> moto identifier, substituted as whole tokens.

    A token is bounded by characters other than letters and digits, so "sg-0abc" is not
    replaced inside "sg-0abcd", but is inside an ARN or a policy document.
    """

    def __init__(self):
        self.pairs = {}
        self._pattern = None

    def add(self, old, new, force=False):
        """Records old -> new; a first mapping is kept unless `force`. Returns whether added."""
        if old == new or not id_like(old) or not isinstance(new, str) or not new:
            return False
        if old in self.pairs and not force:
            return False
        self.pairs[old] = new
        self._pattern = None
        return True

    def __len__(self):
        return len(self.pairs)

    def _regex(self):
        if self._pattern is None and self.pairs:
            keys = sorted(self.pairs, key=len, reverse=True)
            alternation = "|".join(re.escape(k) for k in keys)
            self._pattern = re.compile(f"(?<![A-Za-z0-9])(?:{alternation})(?![A-Za-z0-9])")
        return self._pattern

    def sub_text(self, text):
        regex = self._regex()
        if regex is None:
            return text
        return regex.sub(lambda m: self.pairs[m.group(0)], text)

    def sub(self, value):
        """A copy of a JSON value with every string's identifiers substituted."""
        if isinstance(value, str):
            return self.sub_text(value)
        if isinstance(value, list):
            return [self.sub(v) for v in value]
        if isinstance(value, dict):
            return {k: self.sub(v) for k, v in value.items()}
        return value


def _instances(state):
    """(resource address, instance key) -> attributes of every managed instance of a state."""
    out = {}
    for res in state.get("resources", []):
        if res.get("mode") != "managed":
            continue
        address = ".".join(
            x for x in (res.get("module"), res["type"], res["name"]) if x
        )
        for inst in res.get("instances", []):
            key = json.dumps(inst.get("index_key"))
            out[(address, key)] = inst.get("attributes") or {}
    return out


def _walk_pairs(old, new, found, top=True):
    """Collects (old, new) string pairs at corresponding places of two JSON values.

    Lists of several scalars are skipped below the top level: sets come back in another
    order (subnet_ids), so index-wise pairs would cross ids.
    """
    if isinstance(old, str) and isinstance(new, str):
        found.append((old, new))
    elif isinstance(old, dict) and isinstance(new, dict):
        for key, value in old.items():
            if key in new:
                _walk_pairs(value, new[key], found, False)
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        if len(old) > 1 and all(not isinstance(x, (dict, list)) for x in old):
            return
        for a, b in zip(old, new):
            _walk_pairs(a, b, found, False)


def state_id_map(fixture_state, applied_state, idmap=None):
    """The IdMap from a simulator-written state to the state moto's apply wrote.

    Instances are paired by address and instance key. First the top-level string
    attributes (id, arn, name...) of every instance, then nested ones where they add a
    pair not known yet: the resource's own id wins over a copy inside another resource.
    """
    idmap = idmap or IdMap()
    old = _instances(fixture_state)
    new = _instances(applied_state)
    nested = []
    for key in sorted(old):
        if key not in new:
            continue
        a, b = old[key], new[key]
        for attr, value in sorted(a.items()):
            if attr in b and isinstance(value, str) and isinstance(b[attr], str):
                idmap.add(value, b[attr])
            elif attr in b:
                _walk_pairs(value, b[attr], nested, False)
    for a, b in nested:
        idmap.add(a, b)
    return idmap


def response_pairs(simulated, actual, found=None):
    """(simulated, actual) string pairs at corresponding places of two responses.

    `simulated` is CloudTrail's responseElements (camelCase, EC2 item wrappers), `actual`
    the boto3 response (model member names). Keys are matched like request members.
    """
    if found is None:
        found = []
    if isinstance(simulated, str) and isinstance(actual, str):
        found.append((simulated, actual))
    elif isinstance(simulated, dict) and isinstance(actual, dict):
        for key, value in simulated.items():
            match = _match_key(key, actual)
            if match is not None:
                response_pairs(value, actual[match], found)
            elif len(simulated) <= 3 and isinstance(value, dict):
                # A wrapper such as {"CreateLaunchTemplateVersionResponse": {...}}.
                response_pairs(value, actual, found)
    elif isinstance(simulated, dict) and isinstance(actual, list):
        response_pairs(_unwrap_list(simulated), actual, found)
    elif isinstance(simulated, list) and isinstance(actual, list) and len(simulated) == len(actual):
        for a, b in zip(simulated, actual):
            response_pairs(a, b, found)
    return found


def _match_key(key, obj):
    """The key of `obj` that CloudTrail's `key` stands for, or None."""
    n = _norm(key)
    for k in obj:
        if _norm(k) == n:
            return k
    variants = _variants(key)
    for k in obj:
        if _variants(k) & variants:
            return k
    return None
