"""Tests of moto_shim.py's snapshot and restore, in process (moto's mock_aws, no server).

Run: python3 -m unittest discover -s evaluation/cloud   (needs moto; setup.sh's venv has it)
"""

import io
import json
import os
import sys
import threading
import unittest
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

try:
    import boto3
    from moto import mock_aws
except ImportError:  # pragma: no cover - without moto these tests are skipped
    mock_aws = None

import moto_shim  # noqa: E402

def zip_of(name, text):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(name, text)
    return buf.getvalue()


RULE = {"IpProtocol": "tcp", "FromPort": 443, "ToPort": 443, "IpRanges": [{"CidrIp": "10.0.0.0/8"}]}


@unittest.skipIf(mock_aws is None, "moto is not installed")
class SnapshotTest(unittest.TestCase):
    def setUp(self):
        moto_shim._SNAPSHOT = None
        self.mock = mock_aws()
        self.mock.start()
        self.addCleanup(self.mock.stop)
        self.s3 = boto3.client("s3", region_name="us-east-1")
        self.ec2 = boto3.client("ec2", region_name="us-east-1")
        self.iam = boto3.client("iam", region_name="us-east-1")
        self.s3.create_bucket(Bucket="pristine-bucket")
        self.s3.put_object(Bucket="pristine-bucket", Key="k", Body=b"before")
        self.iam.create_role(RoleName="app", AssumeRolePolicyDocument="{}", MaxSessionDuration=7200)
        vpc = self.ec2.describe_vpcs()["Vpcs"][0]["VpcId"]
        self.sg = self.ec2.create_security_group(GroupName="web", Description="d", VpcId=vpc)["GroupId"]
        self.ec2.authorize_security_group_ingress(GroupId=self.sg, IpPermissions=[RULE])

    def drift(self):
        """Out-of-band changes of every kind: update, create, delete, a new service."""
        self.s3.put_object(Bucket="pristine-bucket", Key="k", Body=b"after")
        self.s3.create_bucket(Bucket="created-bucket")
        self.ec2.revoke_security_group_ingress(GroupId=self.sg, IpPermissions=[RULE])
        self.iam.delete_role(RoleName="app")
        boto3.client("sqs", region_name="us-east-1").create_queue(QueueName="created-queue")

    def assert_pristine(self):
        body = self.s3.get_object(Bucket="pristine-bucket", Key="k")["Body"].read()
        self.assertEqual(body, b"before")
        self.assertEqual([b["Name"] for b in self.s3.list_buckets()["Buckets"]], ["pristine-bucket"])
        perms = self.ec2.describe_security_groups(GroupIds=[self.sg])["SecurityGroups"][0]["IpPermissions"]
        self.assertEqual([(p["FromPort"], p["IpRanges"]) for p in perms], [(443, [{"CidrIp": "10.0.0.0/8"}])])
        self.assertEqual(self.iam.get_role(RoleName="app")["Role"]["MaxSessionDuration"], 7200)
        queues = boto3.client("sqs", region_name="us-east-1").list_queues()
        self.assertNotIn("QueueUrls", queues)

    def test_restore_undoes_every_change_and_can_repeat(self):
        self.assertGreater(moto_shim.snapshot(), 0)
        for _ in range(2):  # the snapshot stays usable after a restore
            self.drift()
            self.assertTrue(moto_shim.restore())
            self.assert_pristine()

    def test_bucket_table_of_the_backend_dict_is_restored(self):
        # S3 keeps bucket name -> account on its BackendDict, not in a backend: a bucket made
        # after the snapshot must be free to create again after the restore.
        moto_shim.snapshot()
        self.s3.create_bucket(Bucket="created-bucket")
        moto_shim.restore()
        self.s3.create_bucket(Bucket="created-bucket")
        names = sorted(b["Name"] for b in self.s3.list_buckets()["Buckets"])
        self.assertEqual(names, ["created-bucket", "pristine-bucket"])

    def test_restored_objects_refer_to_the_restored_backends(self):
        # A security-group rule keeps its EC2 backend; after a restore it must be the live
        # one (moto's own __deepcopy__ of a rule would keep the dropped one).
        from moto.ec2.models import ec2_backends

        moto_shim.snapshot()
        self.drift()
        moto_shim.restore()
        backend = ec2_backends["123456789012"]["us-east-1"]
        group = backend.get_security_group_from_id(self.sg)
        self.assertIs(group.ingress_rules[0].ec2_backend, backend)

    def test_objects_pickle_cannot_copy_by_default_come_back_whole(self):
        # Every old version under an S3 key (a dict subclass whose items() gives the latest
        # only), an SSM parameter (a defaultdict subclass that wants constructor arguments,
        # with a lambda factory inside SSM's backend), a KMS key (a cryptography object),
        # a Lambda function (a WeakValueDictionary of ARNs).
        self.s3.put_bucket_versioning(Bucket="pristine-bucket", VersioningConfiguration={"Status": "Enabled"})
        self.s3.put_object(Bucket="pristine-bucket", Key="k", Body=b"second")
        ssm = boto3.client("ssm", region_name="us-east-1")
        ssm.put_parameter(Name="/app/size", Value="3", Type="String")
        kms = boto3.client("kms", region_name="us-east-1")
        key = kms.create_key()["KeyMetadata"]["KeyId"]
        sealed = kms.encrypt(KeyId=key, Plaintext=b"secret")["CiphertextBlob"]
        lam = boto3.client("lambda", region_name="us-east-1")
        role = self.iam.get_role(RoleName="app")["Role"]["Arn"]
        lam.create_function(FunctionName="fn", Runtime="python3.12", Role=role, Handler="index.handler",
                            Code={"ZipFile": zip_of("index.py", "def handler(e, c):\n    return {}\n")})
        moto_shim.snapshot()
        moto_shim.restore()
        versions = self.s3.list_object_versions(Bucket="pristine-bucket")["Versions"]
        self.assertEqual(len(versions), 2)
        self.assertEqual(self.s3.get_object(Bucket="pristine-bucket", Key="k")["Body"].read(), b"second")
        self.assertEqual(ssm.get_parameter(Name="/app/size")["Parameter"]["Value"], "3")
        self.assertEqual(kms.decrypt(CiphertextBlob=sealed)["Plaintext"], b"secret")
        arn = lam.get_function(FunctionName="fn")["Configuration"]["FunctionArn"]
        self.assertEqual(lam.get_function(FunctionName=arn)["Configuration"]["FunctionName"], "fn")

    def test_restore_without_snapshot_says_so(self):
        self.assertFalse(moto_shim.restore())


@unittest.skipIf(mock_aws is None, "moto is not installed")
class FixTest(unittest.TestCase):
    """The shim's fixes to moto's behaviour (install() patches moto for the whole process)."""

    @classmethod
    def setUpClass(cls):
        if not getattr(moto_shim, "_installed_for_tests", False):
            moto_shim.install()
            moto_shim._installed_for_tests = True

    def test_sqs_policy_survives_other_attribute_updates(self):
        policy = json.dumps({"Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "Principal": {"Service": "sns.amazonaws.com"}, "Action": "sqs:SendMessage",
             "Resource": "*"}]})
        with mock_aws():
            sqs = boto3.client("sqs", region_name="eu-west-1")
            url = sqs.create_queue(QueueName="jobs")["QueueUrl"]

            def current():
                return sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["Policy"]).get("Attributes", {})

            sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": policy})
            sqs.set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": "60"})
            self.assertEqual(json.loads(current()["Policy"]), json.loads(policy))
            sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": ""})  # removing it still works
            self.assertNotIn("Policy", current())


@unittest.skipIf(mock_aws is None, "moto is not installed")
class PicklerTest(unittest.TestCase):
    def test_sentinels_keep_identity_and_locks_are_new(self):
        from moto.core.constants import MISSING

        lock = threading.Lock()
        lock.acquire()
        buf = io.BytesIO()
        shared = moto_shim._shared_objects([])
        moto_shim._Pickler(buf, shared).dump({"value": MISSING, "lock": lock})
        loaded = moto_shim._Unpickler(io.BytesIO(buf.getvalue()), shared).load()
        self.assertIs(loaded["value"], MISSING)
        self.assertIsNot(loaded["lock"], lock)
        self.assertTrue(loaded["lock"].acquire(blocking=False))  # a new, free lock


class EndpointTest(unittest.TestCase):
    def call(self, method, path):
        seen = {}

        def start_response(status, headers):
            seen["status"] = status

        body = b"".join(moto_shim._shim_app({"REQUEST_METHOD": method, "PATH_INFO": path}, start_response))
        return seen["status"], json.loads(body)

    def test_routes(self):
        moto_shim._SNAPSHOT = None
        self.assertEqual(self.call("GET", "/moto-shim/snapshot")[0], "405 Method Not Allowed")
        self.assertEqual(self.call("POST", "/moto-shim/nothing")[0], "404 Not Found")
        status, body = self.call("POST", "/moto-shim/restore")
        self.assertEqual(status, "409 Conflict")
        self.assertEqual(body["error"], "no snapshot taken")


if __name__ == "__main__":
    unittest.main()
