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

Then it starts the ordinary server: `python3 moto_shim.py -H 127.0.0.1 -p PORT`, the same flags
as `moto_server`. Nothing else about moto changes.
"""

import fnmatch
import json
import sys


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


if __name__ == "__main__":
    install()
    from moto.server import main

    sys.exit(main())
