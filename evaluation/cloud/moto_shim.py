#!/usr/bin/env python3
"""moto_server with one fix for the cloud check: S3 bucket-policy statements with conditions.

moto 5.2.1 enforces a bucket's policy on object calls but does not evaluate conditions: a
statement whose Condition does not hold counts as an explicit Deny
(`IAMPolicyStatement.is_action_permitted` returns DENIED when `_check_conditions` fails,
and `FakeBucket.get_permission` passes no condition values at all). The usual
"DenyInsecureTransport" statement (Deny s3:* when aws:SecureTransport is false) then
denies every object call, so Terraform cannot even read an `aws_s3_object` back.

This wrapper leaves every statement that has a Condition out of that evaluation (real
clients use TLS, so the common deny-unless-TLS statement does not apply to them) and
starts the ordinary server: `python3 moto_shim.py -H 127.0.0.1 -p PORT`, the same flags
as `moto_server`. Nothing else about moto changes.
"""

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


if __name__ == "__main__":
    install()
    from moto.server import main

    sys.exit(main())
