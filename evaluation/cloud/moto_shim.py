#!/usr/bin/env python3
"""moto_server with three fixes for the cloud check: two about S3 bucket policies, one IAM.

moto 5.2.1 enforces a bucket's policy on object calls but does not evaluate conditions: a
statement whose Condition does not hold counts as an explicit Deny
(`IAMPolicyStatement.is_action_permitted` returns DENIED when `_check_conditions` fails,
and `FakeBucket.get_permission` passes no condition values at all). The usual
"DenyInsecureTransport" statement (Deny s3:* when aws:SecureTransport is false) then
denies every object call, so Terraform cannot even read an `aws_s3_object` back.

Fix 1: this wrapper leaves every statement that has a Condition out of that evaluation
(real clients use TLS, so the common deny-unless-TLS statement does not apply to them).

Fix 2 (below): PutBucketLogging's check of the target bucket's policy no longer crashes
on a "Principal": "*" statement and accepts a grant whose Resource pattern covers the prefix.

Fix 3 (below): IAM UpdateRole keeps the MaxSessionDuration and Description the call does
not give (moto resets them to 3600 and none).

Fix 4 (below): SQS SetQueueAttributes keeps the queue's Policy when the call does not give one
(moto drops it).

Snapshot and restore (below): `POST /moto-shim/snapshot` keeps a copy of moto's whole
in-memory state, `POST /moto-shim/restore` puts that copy back (as often as wanted). The cloud
check takes a snapshot after a project's first apply and restores it after each scenario,
instead of a restoring `terraform apply`.

Then it starts the ordinary server: `python3 moto_shim.py -H 127.0.0.1 -p PORT`, the same flags
as `moto_server`. Nothing else about moto changes.
"""

import collections
import fnmatch
import io
import json
import pickle
import sys
import threading
import time
import traceback
import types
import weakref


def install():
    from moto.iam.access_control import IAMPolicy, PermissionResult
    from moto.s3.models import FakeBucket

    def get_permission(self, action, resource):
        if self.policy is None:
            return PermissionResult.NEUTRAL
        document = json.loads(self.policy.decode())
        statements = document.get("Statement", [])
        if isinstance(statements, dict):
            statements = [statements]
        kept = [s for s in statements if "Condition" not in s]
        if not kept:
            return PermissionResult.NEUTRAL
        document["Statement"] = kept
        return IAMPolicy(json.dumps(document)).is_action_permitted(action, resource)

    FakeBucket.get_permission = get_permission

    # PutBucketLogging checks the target bucket's policy for the logging service's grant,
    # but (a) crashes (AttributeError, a 500 the provider retries) on a statement whose
    # Principal is the string "*", and (b) wants the grant's Resource to be exactly
    # "bucket/<prefix>*" or "bucket/*", so a grant on "bucket/s3-access/*" does not cover
    # the prefix "s3-access/raw/". AWS itself does not refuse such a call. The check below
    # accepts an Allow of s3:PutObject to the logging service whose Resource pattern covers
    # an object under the target prefix.
    def log_permissions_enabled_policy(target_bucket, target_prefix):
        if not target_bucket.policy:
            return False
        document = json.loads(target_bucket.policy.decode())
        statements = document.get("Statement", [])
        if isinstance(statements, dict):
            statements = [statements]
        sample = f"arn:{target_bucket.partition}:s3:::{target_bucket.name}/{target_prefix or ''}object"
        for stmt in statements:
            principal = stmt.get("Principal")
            services = principal.get("Service") if isinstance(principal, dict) else None
            services = services if isinstance(services, list) else [services]
            actions = stmt.get("Action", [])
            actions = actions if isinstance(actions, list) else [actions]
            resources = stmt.get("Resource", [])
            resources = resources if isinstance(resources, list) else [resources]
            if (
                stmt.get("Effect") == "Allow"
                and "logging.s3.amazonaws.com" in services
                and any(fnmatch.fnmatchcase("s3:PutObject", a) for a in actions)
                and any(fnmatch.fnmatchcase(sample, r) for r in resources)
            ):
                return True
        return False

    FakeBucket._log_permissions_enabled_policy = staticmethod(log_permissions_enabled_policy)

    # Fix 3: IAM UpdateRole resets what the call leaves out: MaxSessionDuration to 3600 and
    # Description to none. AWS keeps the role's current values; so does this.
    from moto.iam.responses import IamResponse

    original_update_role = IamResponse.update_role

    def update_role(self):
        role = self.backend.get_role(self._get_param("RoleName"))
        kept = (role.description, role.max_session_duration)
        given_description = self._get_param("Description") is not None
        given_duration = self._get_param("MaxSessionDuration") is not None
        result = original_update_role(self)
        if not given_description:
            role.description = kept[0]
        if not given_duration:
            role.max_session_duration = kept[1]
        return result

    IamResponse.update_role = update_role

    # Fix 4: SQS SetQueueAttributes drops the queue's policy when the call does not give a
    # Policy (`Queue._set_attributes` assigns `attributes.get("Policy")`). AWS changes only
    # the attributes given; so does this.
    from moto.sqs.models import SQSBackend

    original_set_queue_attributes = SQSBackend.set_queue_attributes

    def set_queue_attributes(self, queue_name, attributes):
        kept = self.get_queue(queue_name)._policy_json
        queue = original_set_queue_attributes(self, queue_name, attributes)
        if "Policy" not in attributes:
            queue._policy_json = kept
        return queue

    SQSBackend.set_queue_attributes = set_queue_attributes


# ---------------------------------------------------------------------------
# Snapshot and restore of moto's state
# ---------------------------------------------------------------------------
#
# moto keeps every service's state in BackendDict objects (service -> account ->
# AccountSpecificBackend, itself region -> backend object); `BackendDict._instances` lists
# the ones in use, and `/moto-api/reset` empties them. A snapshot pickles, in one go, every
# backend object of every BackendDict in use plus the BackendDict's own attributes (S3's
# bucket -> account table lives there), so references between backends (an ELB's to EC2's)
# stay one consistent graph. The BackendDict and AccountSpecificBackend objects themselves
# are not copied: request handlers look them up by module-level name, so a restore refills
# them in place with a fresh unpickled copy of the backends. moto's sentinels (compared with
# `is`) keep their identity the same way; locks are pickled as new locks.
#
# Pickle, not copy.deepcopy: moto's own __deepcopy__ of a security-group rule keeps the
# original EC2 backend by reference, which a restore would leave pointing at a dropped
# backend; pickle follows __getstate__/__dict__ everywhere.

_SNAPSHOT = None  # (the BackendDicts in use, their accounts, functions kept, the pickle)
# Lock types and the factories that make a new one (the types cannot be pickled by name).
_LOCKS = {type(threading.Lock()): threading.Lock, type(threading.RLock()): threading.RLock}


def _shared_objects(backend_dicts):
    """{id: (key, object)} of what a snapshot refers to instead of copying."""
    from moto.core import constants
    from moto.core import parse
    from moto.events import models as events_models

    shared = {}
    for i, bd in enumerate(backend_dicts):
        shared[id(bd)] = (("bd", i), bd)
        for account, asb in bd.items():
            shared[id(asb)] = (("asb", i, account), asb)
    sentinels = {"MISSING": constants.MISSING, "parse.UNDEFINED": parse.UNDEFINED,
                 "events.UNDEFINED": events_models.UNDEFINED}
    for name, obj in sentinels.items():
        shared[id(obj)] = (("sentinel", name), obj)
    return shared


class _Pickler(pickle.Pickler):
    """Pickles moto's state; what is shared, and functions pickle cannot name (lambdas in
    defaultdicts, closures), are kept by reference in `shared`, as copy.deepcopy would."""

    def __init__(self, file, shared):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.shared = shared

    def persistent_id(self, obj):
        found = self.shared.get(id(obj))
        if found:
            return found[0]
        if isinstance(obj, types.FunctionType) and "<" in obj.__qualname__:
            key = ("function", id(obj))
            self.shared[id(obj)] = (key, obj)
            return key
        return None

    def reducer_override(self, obj):
        factory = _LOCKS.get(type(obj))
        if factory:
            return (factory, ())
        # Weak references: to the copies of what they referred to (kept alive, if at all,
        # by the rest of the copy, as the originals were).
        if isinstance(obj, weakref.ref):
            target = obj()
            return (weakref.ref, (target,)) if target is not None else (_dead_ref, ())
        if isinstance(obj, (weakref.WeakValueDictionary, weakref.WeakKeyDictionary, weakref.WeakSet)):
            items = list(obj.items()) if hasattr(obj, "items") else list(obj)
            return (type(obj), (items,))
        if type(obj).__module__.startswith("cryptography."):
            return _crypto_reduce(obj)
        if isinstance(obj, dict) and type(obj) not in _PLAIN_DICTS:
            # moto's dict subclasses override __setitem__ and items() (S3's key store keeps
            # every version under a key but iterates the latest only; SSM's parameter dict
            # wants constructor arguments): pickle their raw storage and set it back raw.
            factory = obj.default_factory if isinstance(obj, collections.defaultdict) else None
            state = (getattr(obj, "__dict__", None), list(dict.items(obj)))
            return (_new_dict, (type(obj), factory), state, None, None, _set_dict_state)
        return NotImplemented


_PLAIN_DICTS = (dict, collections.defaultdict, collections.OrderedDict)


def _new_dict(cls, factory):
    """An empty instance of a dict subclass, without running its __init__."""
    obj = cls.__new__(cls)
    if factory is not None:
        collections.defaultdict.__init__(obj, factory)
    return obj


def _set_dict_state(obj, state):
    attrs, items = state
    dict.update(obj, items)
    if attrs:
        vars(obj).update(attrs)


class _Gone:
    pass


def _dead_ref():
    """A weak reference whose object is gone (what a dead one pickles as)."""
    return weakref.ref(_Gone())


def _crypto_reduce(obj):
    """Keys and certificates (KMS, ACM) pickle as PEM and load back from it."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization as ser

    if isinstance(obj, x509.Certificate):
        return (_load_pem, ("certificate", obj.public_bytes(ser.Encoding.PEM)))
    if hasattr(obj, "private_bytes"):
        pem = obj.private_bytes(ser.Encoding.PEM, ser.PrivateFormat.PKCS8, ser.NoEncryption())
        return (_load_pem, ("private", pem))
    if hasattr(obj, "public_bytes"):
        return (_load_pem, ("public", obj.public_bytes(ser.Encoding.PEM, ser.PublicFormat.SubjectPublicKeyInfo)))
    return NotImplemented


def _load_pem(kind, pem):
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization as ser

    if kind == "certificate":
        return x509.load_pem_x509_certificate(pem)
    if kind == "private":
        return ser.load_pem_private_key(pem, None)
    return ser.load_pem_public_key(pem)


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, shared):
        super().__init__(file)
        self.by_key = {key: obj for key, obj in shared.values()}

    def persistent_load(self, key):
        return self.by_key[key]


def _in_use():
    """The BackendDicts in use, each once, in a fixed order."""
    from moto.core.base_backend import BackendDict

    seen = {}
    for bd in BackendDict._instances:
        seen.setdefault(id(bd), bd)
    return list(seen.values())


def snapshot():
    """Keeps a copy of moto's whole state (replacing an earlier one); returns its size in bytes."""
    global _SNAPSHOT
    from moto.core.base_backend import backend_lock

    with backend_lock:
        backend_dicts = _in_use()
        accounts = [dict(bd) for bd in backend_dicts]  # account -> AccountSpecificBackend
        state = [
            (dict(vars(bd)), {account: dict(asb) for account, asb in bd.items()})
            for bd in backend_dicts
        ]
        shared = _shared_objects(backend_dicts)
        buf = io.BytesIO()
        _Pickler(buf, shared).dump(state)
    functions = {i: entry for i, entry in shared.items() if entry[0][0] == "function"}
    _SNAPSHOT = (backend_dicts, accounts, functions, buf.getvalue())
    return len(buf.getvalue())


def restore():
    """Puts the snapshot's state back (a fresh copy: the snapshot stays for the next restore).
    Returns False when there is no snapshot."""
    from moto.core.base_backend import BackendDict, backend_lock
    from moto.core.model_instances import reset_model_data
    from moto.s3.models import FakeKey, FakeMultipart

    if _SNAPSHOT is None:
        return False
    backend_dicts, accounts, functions, blob = _SNAPSHOT
    with backend_lock:
        # S3 objects hold temporary files: the ones of the state going away are closed, as
        # moto's reset does. moto tracks every model instance it makes (for its dashboard);
        # since the last restore, that is exactly the state going away, and the copies
        # unpickled below start the list again.
        for obj in [*FakeKey.instances_tracked, *FakeMultipart.instances_tracked]:
            obj.dispose()
        reset_model_data()
        for bd in _in_use():
            dict.clear(bd)  # services and accounts first used after the snapshot go
        for bd, asbs in zip(backend_dicts, accounts):
            dict.update(bd, asbs)
        shared = _shared_objects(backend_dicts)
        shared.update(functions)
        state = _Unpickler(io.BytesIO(blob), shared).load()
        for bd, asbs, (attrs, regions_by_account) in zip(backend_dicts, accounts, state):
            vars(bd).clear()
            vars(bd).update(attrs)
            for account, regions in regions_by_account.items():
                dict.clear(asbs[account])
                dict.update(asbs[account], regions)
        BackendDict._instances[:] = backend_dicts
    return True


def _shim_app(environ, start_response):
    """POST /moto-shim/snapshot and /moto-shim/restore; JSON answers."""
    path = environ.get("PATH_INFO", "")
    t0 = time.time()
    try:
        status, body = _shim_answer(environ.get("REQUEST_METHOD"), path)
    except Exception as err:  # the harness reads the reason; the traceback goes to the log
        traceback.print_exc()
        status, body = "500 Internal Server Error", {"error": f"{type(err).__name__}: {err}"}
    body["seconds"] = round(time.time() - t0, 3)
    data = json.dumps(body).encode()
    start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
    return [data]


def _shim_answer(method, path):
    """(HTTP status, JSON body) of a /moto-shim/ request."""
    if method != "POST":
        return "405 Method Not Allowed", {"error": "POST only"}
    if path == "/moto-shim/snapshot":
        return "200 OK", {"bytes": snapshot()}
    if path == "/moto-shim/restore":
        if restore():
            return "200 OK", {"restored": True}
        return "409 Conflict", {"error": "no snapshot taken"}
    return "404 Not Found", {"error": f"unknown {path}"}


def install_snapshots():
    """Routes /moto-shim/... to the snapshot endpoints, everything else to moto."""
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication

    original_call = DomainDispatcherApplication.__call__

    def call(self, environ, start_response):
        if environ.get("PATH_INFO", "").startswith("/moto-shim/"):
            return _shim_app(environ, start_response)
        return original_call(self, environ, start_response)

    DomainDispatcherApplication.__call__ = call


if __name__ == "__main__":
    install()
    install_snapshots()
    from moto.server import main

    sys.exit(main())
