#!/usr/bin/env python3
"""The moto end-to-end check ("cloud check") of retrace.

For each benchmark project: start a moto server, `terraform apply` the project into it,
then for each scenario perform the trail's out-of-band calls against moto with boto3,
write the CloudTrail records of those calls (with moto's identifiers), run
`retrace reconcile --write`, and judge the patched code with a refreshing
`terraform plan -detailed-exitcode`: it passes when no resource would change (a plan that
changes only outputs passes). The cloud is restored between scenarios.

Usage:
    python3 evaluation/cloud/cloud_check.py --retrace target/release/retrace \
        [--scenarios ID ...] [--sample N] [--out results.json]

Standard library and boto3/botocore only (evaluation/cloud/setup.sh installs them).
Exit 0 when the harness worked (whatever the scenarios' results), 1 on a harness error.
"""

import argparse
import collections
import glob
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cloudtrail_boto as ctb  # noqa: E402  (the pure conversion code, next to this file)

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PROJECTS = ["web3tier", "serverless", "datalake", "static-site", "containers"]
MOTO_ACCOUNT = "123456789012"  # moto's default account

# The moto gaps known from the issue, by operation: a scenario whose out-of-band writes
# call one of these is excluded (moto cannot perform it faithfully).
GAP_OPERATIONS = {
    ("ec2", "CreateLaunchTemplateVersion"): "moto gap: a new launch-template version",
    ("autoscaling", "PutScalingPolicy"): "moto gap: autoscaling policies",
    ("apigatewayv2", "UpdateStage"): "moto gap: API Gateway v2 stage updates",
    ("ecs", "UpdateClusterSettings"): "moto gap: ECS cluster settings",
    ("ecs", "PutClusterCapacityProviders"): "moto gap: ECS cluster settings",
}
GAP_SERVICES = {"cloudfront": "moto gap: CloudFront distributions"}

# The resource types of those gaps: when the clean plan after the apply still changes one
# of them, that change is the moto gap (recorded as the project's baseline, below).
GAP_TYPES = {
    "aws_cloudfront_distribution": "moto gap: CloudFront distributions",
    "aws_autoscaling_policy": "moto gap: autoscaling policies",
    "aws_launch_template": "moto gap: a new launch-template version",
    "aws_apigatewayv2_stage": "moto gap: API Gateway v2 stage updates",
    "aws_ecs_cluster": "moto gap: ECS cluster settings",
    "aws_s3_bucket_policy": "moto gap: S3 bucket-policy conditions",
}


# Ctrl-C / SIGTERM: the main thread sets STOPPING and stops every project's terraform and
# moto; worker threads see the flag before their next step and unwind.
STOPPING = threading.Event()
ACTIVE = set()  # the ProjectRuns under way
ACTIVE_LOCK = threading.Lock()


def stop_everything():
    STOPPING.set()
    with ACTIVE_LOCK:
        projects = list(ACTIVE)
    for proj in projects:
        if proj.tf:
            proj.tf.kill()
        proj.stop()


def log(*parts):
    print(time.strftime("%H:%M:%S"), *parts, file=sys.stderr, flush=True)


class HarnessError(Exception):
    """The harness itself cannot go on (not a scenario's result)."""


# ---------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------


def find_plugin_dir():
    """The provider mirror: TF_PLUGIN_DIR, else a directory under /opt holding the AWS provider."""
    env = os.environ.get("TF_PLUGIN_DIR")
    if env:
        return env if os.path.isdir(env) else None
    if not os.path.isdir("/opt"):
        return None
    for root, dirs, _files in os.walk("/opt"):
        if os.path.isdir(os.path.join(root, "registry.terraform.io", "hashicorp", "aws")):
            return root
        # Do not descend far: the mirror sits near the top of /opt.
        if root.count(os.sep) >= 3:
            dirs[:] = []
    return None


def find_moto_server(plain=False):
    """The command that starts moto: this Python running moto_shim.py when it can import
    moto (the venv of setup.sh), else moto_server next to this Python or on PATH (without
    the shim's bucket-policy fix). None when there is no moto."""
    if not plain:
        try:
            import moto  # noqa: F401

            return [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "moto_shim.py")]
        except ImportError:
            pass
    local = os.path.join(os.path.dirname(sys.executable), "moto_server")
    if os.access(local, os.X_OK):
        return [local]
    found = shutil.which("moto_server")
    return [found] if found else None


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class MotoServer:
    """A moto_server process on a free loopback port; a context manager that stops it."""

    def __init__(self, command, logdir):
        self.command = command
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.logfile = open(os.path.join(logdir, f"moto-{self.port}.log"), "w")
        env = dict(os.environ, MOTO_IAM_LOAD_MANAGED_POLICIES="true")
        self.proc = subprocess.Popen(
            [*command, "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=self.logfile,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,  # Ctrl-C in the terminal reaches us, we stop it
        )
        self._wait_ready()

    def _wait_ready(self):
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise HarnessError(f"moto_server exited with {self.proc.returncode}")
            try:
                urllib.request.urlopen(self.url + "/moto-api/data.json", timeout=2).read()
                return
            except (urllib.error.URLError, OSError):
                time.sleep(0.3)
        raise HarnessError("moto_server did not answer within 60 s")

    def reset(self):
        self._post("/moto-api/reset")

    def snapshot(self):
        """Has moto_shim.py keep a copy of moto's whole state; returns its answer."""
        return json.loads(self._post("/moto-shim/snapshot"))

    def restore(self):
        """Has moto_shim.py put the last snapshot back; returns its answer."""
        return json.loads(self._post("/moto-shim/restore"))

    def _post(self, path):
        """POSTs to moto; raises HarnessError with moto's answer when it refuses."""
        req = urllib.request.Request(self.url + path, method="POST", data=b"")
        try:
            with urllib.request.urlopen(req, timeout=120) as answer:
                return answer.read()
        except urllib.error.HTTPError as err:
            raise HarnessError(f"{path}: HTTP {err.code}: {err.read()[:300].decode(errors='replace')}") from err

    def stop(self):
        if self.logfile.closed:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.logfile.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


# ---------------------------------------------------------------------------
# Scenarios and sampling
# ---------------------------------------------------------------------------


def load_scenarios(root):
    """Every scenario under scenarios/<project>/<id>/, sorted by id."""
    found = []
    for project in PROJECTS:
        pdir = os.path.join(root, project)
        if not os.path.isdir(pdir):
            continue
        for sid in sorted(os.listdir(pdir)):
            meta_path = os.path.join(pdir, sid, "scenario.json")
            if os.path.isfile(meta_path):
                with open(meta_path) as f:
                    meta = json.load(f)
                found.append(
                    {
                        "id": meta.get("id", sid),
                        "project": project,
                        "category": meta.get("category", "?"),
                        "description": meta.get("description", ""),
                        "expect": meta.get("expect", {}),  # reported, never used to decide
                        "dir": os.path.join(pdir, sid),
                    }
                )
    return found


def stratified_sample(scenarios, n):
    """A fixed sample of about n scenarios across projects and categories.

    Strata are (project, category). Quotas are handed out one at a time, round-robin over
    the strata ordered category-major (so every project gets one of a category before any
    gets a second), and a stratum of m scenarios with quota q contributes its sorted ids at
    positions floor(i*m/q): every k-th. The same inputs always give the same sample.
    """
    strata = collections.defaultdict(list)
    for s in scenarios:
        strata[(s["category"], s["project"])].append(s)
    keys = sorted(strata)
    quota = {k: 0 for k in keys}
    total = 0
    while total < min(n, len(scenarios)):
        for key in keys:
            if total >= n:
                break
            if quota[key] < len(strata[key]):
                quota[key] += 1
                total += 1
    picked = []
    for key in keys:
        members = sorted(strata[key], key=lambda s: s["id"])
        q = quota[key]
        picked.extend(members[(i * len(members)) // q] for i in range(q))
    return sorted(picked, key=lambda s: (PROJECTS.index(s["project"]), s["id"]))


def is_terraform(record):
    agent = (record.get("userAgent") or "").lower()
    return "terraform" in agent


def is_read_only(record):
    flag = record.get("readOnly")
    if isinstance(flag, bool):
        return flag
    if isinstance(flag, str):
        return flag.lower() == "true"
    return re.match(r"^(Get|Describe|List|Head|Lookup)", record.get("eventName", "")) is not None


def out_of_band_writes(records):
    """The drift: successful, not read-only, not Terraform's own calls, in time order."""
    writes = [
        r
        for r in records
        if not is_read_only(r) and not is_terraform(r) and not r.get("errorCode")
    ]
    return sorted(writes, key=lambda r: r.get("eventTime", ""))


# ---------------------------------------------------------------------------
# Terraform
# ---------------------------------------------------------------------------


OVERRIDE = """# Written by evaluation/cloud/cloud_check.py: point the AWS provider at moto.
# The endpoint and the dummy keys come from the environment (AWS_ENDPOINT_URL...).
provider "aws" {
  skip_credentials_validation = true
  skip_requesting_account_id  = true
  skip_metadata_api_check     = true
  s3_use_path_style           = true
  # moto answers at once; a 500 (a moto crash) must not be retried for minutes.
  max_retries = 2
}
"""


class ProviderServer:
    """The AWS provider, started once in its debug mode; terraform attaches to it
    (TF_REATTACH_PROVIDERS) instead of starting the provider for every command, which costs
    seconds each time (it builds its whole schema). Restarted when it has died. It reads its
    credentials and endpoint from its own environment, so it gets terraform's (`env`), and
    resolves relative paths (a Lambda's `filename`) from its working directory, so it runs
    in the project's (`workdir`), as terraform would start it."""

    def __init__(self, binary, env, workdir, logdir):
        self.binary = binary
        self.workdir = workdir
        # In its debug mode the provider logs every call, and every HTTP exchange with moto,
        # unless told not to (the last variable is the one for the HTTP exchanges).
        self.env = dict(env, TF_LOG_PROVIDER="ERROR", TF_LOG_SDK="ERROR", TF_LOG_PROVIDER_AWS="ERROR")
        # A CA bundle makes the provider's second configuration in one process fail ("unable
        # to add custom RootCAs HTTPClient"); moto is plain http, no CA is needed.
        self.env.pop("AWS_CA_BUNDLE", None)
        self.logpath = os.path.join(logdir, "provider.log")
        self.proc = None
        self.value = None

    def reattach(self):
        """The TF_REATTACH_PROVIDERS value, starting the provider if it is not running."""
        if self.proc is None or self.proc.poll() is not None:
            if self.proc is not None:
                log(f"the provider {self.proc.pid} exited with {self.proc.returncode}; starting it again")
            self._start()
        return self.value

    def _start(self):
        # stdout and stderr to a file, read back for the reattach line: a pipe nobody reads
        # would stall the provider once its buffer is full.
        start = os.path.getsize(self.logpath) if os.path.exists(self.logpath) else 0
        with open(self.logpath, "a") as logfile:
            self.proc = subprocess.Popen(
                [self.binary, "-debug"], stdout=logfile, stderr=subprocess.STDOUT, env=self.env,
                cwd=self.workdir, start_new_session=True,
            )
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise HarnessError(f"the AWS provider exited with {self.proc.returncode} (see {self.logpath})")
            with open(self.logpath) as f:
                f.seek(start)
                found = re.findall(r"TF_REATTACH_PROVIDERS='([^']+)'", f.read())
            if found:
                self.value = found[-1]
                return
            time.sleep(0.2)
        self.stop()
        raise HarnessError(f"the AWS provider did not start within 60 s (see {self.logpath})")

    def stop(self):
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def provider_binary(workdir):
    """The AWS provider `terraform init` installed in workdir, or None."""
    pattern = os.path.join(workdir, ".terraform", "providers", "registry.terraform.io", "hashicorp", "aws", "*", "*", "terraform-provider-aws*")
    found = sorted(glob.glob(pattern))
    return found[-1] if found else None


class Terraform:
    """terraform in one project directory, with the environment pointing at moto."""

    def __init__(self, workdir, moto_url, region, plugin_dir, logdir):
        self.dir = workdir
        self.plugin_dir = plugin_dir
        self.logdir = logdir
        self.env = dict(
            os.environ,
            AWS_ENDPOINT_URL=moto_url,
            AWS_ACCESS_KEY_ID="testing",
            AWS_SECRET_ACCESS_KEY="testing",
            AWS_DEFAULT_REGION=region,
            AWS_REGION=region,
            TF_IN_AUTOMATION="1",
            TF_INPUT="0",
            CHECKPOINT_DISABLE="1",
        )
        for key in ("AWS_PROFILE", "AWS_SESSION_TOKEN"):
            self.env.pop(key, None)
        self.proc = None  # the terraform under way
        self.provider = None  # a ProviderServer to attach to, if any

    def kill(self):
        """Ends the terraform under way with its provider plugins (its process group)."""
        proc = self.proc
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def run(self, args, name, timeout=900, stdout_only=False):
        """Runs terraform ARGS; returns (exit code, output). Output is kept in the log dir.

        The output is stdout and stderr together, or stdout alone with `stdout_only` (for
        `show -json`: terraform warns on stderr, e.g. of a missing CLI configuration file).
        """
        if STOPPING.is_set():
            raise KeyboardInterrupt()
        env = self.env
        if self.provider and args[0] != "init":
            env = dict(env, TF_REATTACH_PROVIDERS=self.provider.reattach())
        # Its own process group, so a timeout or Ctrl-C also ends the provider plugins.
        proc = self.proc = subprocess.Popen(
            ["terraform", *args],
            cwd=self.dir,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if stdout_only else subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        err_text = ""
        try:
            out, err_text = proc.communicate(timeout=timeout)
            code = proc.returncode
        except BaseException as err:  # a timeout, Ctrl-C or SIGTERM: end terraform too
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                out, _ = proc.communicate(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                out, _ = proc.communicate()
            if not isinstance(err, subprocess.TimeoutExpired):
                raise
            out += f"\nError: terraform {args[0]} timed out after {timeout} s (cloud check)\n"
            code = 1
        with open(os.path.join(self.logdir, name + ".log"), "w") as f:
            f.write(out)
            f.write(err_text or "")
        return code, out

    def init(self):
        return self.run(["init", "-input=false", "-no-color", f"-plugin-dir={self.plugin_dir}"], "init")

    def apply(self, name, targets=()):
        """terraform apply; only the given resource addresses (and what they need) if any."""
        extra = [f"-target={t}" for t in targets]
        return self.run(["apply", "-auto-approve", "-input=false", "-no-color", "-parallelism=20", *extra], name)

    def plan(self, name):
        """A refreshing plan: (exit code, output, changes) with changes from the JSON plan."""
        planfile = os.path.join(self.logdir, name + ".tfplan")
        code, out = self.run(
            ["plan", "-detailed-exitcode", "-input=false", "-no-color", "-parallelism=20", f"-out={planfile}"],
            name,
        )
        changes = set()
        if code == 2:
            scode, shown = self.run(["show", "-json", planfile], name + "-show", stdout_only=True)
            if scode == 0:
                changes = plan_changes(json.loads(shown))
        if os.path.exists(planfile):
            os.remove(planfile)
        return code, out, changes


def _leaf_diffs(before, after, unknown, path, out):
    """Paths (as strings) where two JSON values differ; unknown-after counts as differing."""
    if unknown is True:
        out.add((path, json.dumps(before, sort_keys=True), "(known after apply)"))
        return
    if isinstance(before, dict) and isinstance(after, dict):
        unknown = unknown if isinstance(unknown, dict) else {}
        for key in sorted(set(before) | set(after) | set(unknown)):
            _leaf_diffs(before.get(key), after.get(key), unknown.get(key), f"{path}.{key}", out)
    elif before != after:
        out.add((path, json.dumps(before, sort_keys=True), json.dumps(after, sort_keys=True)))


def plan_changes(plan):
    """The resource changes of a JSON plan as comparable tuples (address, action, path,
    before, after).

    Updates are broken down to the top-level attributes that differ (with their values), so
    a scenario's change to a resource is told apart from a moto gap on another attribute.
    The plan's `output_changes` are left out: `-detailed-exitcode` exits 2 for a plan that
    changes only outputs (an output that read a deleted resource, until an apply writes the
    state's outputs anew), but with every resource change a no-op the code and the cloud
    agree.
    """
    out = set()
    for rc in plan.get("resource_changes", []):
        change = rc.get("change", {})
        actions = change.get("actions", [])
        if actions in (["no-op"], ["read"]) and not change.get("importing"):
            continue
        if actions == ["no-op"] and change.get("importing"):
            # An import the patch added that plans as no change: what a creation patch does.
            continue
        action = "/".join(actions)
        if actions == ["update"]:
            diffs = set()
            before = change.get("before") or {}
            after = change.get("after") or {}
            unknown = change.get("after_unknown") or {}
            for key in sorted(set(before) | set(after)):
                if key in ("tags_all",):
                    continue  # a copy of tags plus the provider's defaults
                _leaf_diffs(before.get(key), after.get(key), unknown.get(key), key, diffs)
            for path, b, a in diffs:
                out.add((rc["address"], action, path, b, a))
        else:
            out.add((rc["address"], action, "", "", ""))
    return out


def describe_changes(changes, limit=6):
    """A short text of plan changes for the report."""
    items = sorted(changes)
    text = "; ".join(
        f"{a} {act}" + (f" {p}: {b} -> {af}" if p else "") for a, act, p, b, af in items[:limit]
    )
    if len(items) > limit:
        text += f"; ... ({len(items)} in all)"
    return text


def first_errors(output, lines=4):
    """The first lines of terraform's errors, for a reason."""
    found = [l.strip() for l in output.splitlines() if l.strip().startswith("Error")]
    if not found:
        found = [l.strip() for l in output.splitlines() if l.strip()][-lines:]
    return " | ".join(found[:lines])[:600]


# ---------------------------------------------------------------------------
# Performing the calls
# ---------------------------------------------------------------------------


class Cloud:
    """boto3 clients on moto, one per (service, region)."""

    def __init__(self, moto_url):
        import boto3
        import botocore.config
        import botocore.session

        self.url = moto_url
        self.session = boto3.session.Session(
            aws_access_key_id="testing", aws_secret_access_key="testing"
        )
        self.config = botocore.config.Config(
            retries={"max_attempts": 1}, s3={"addressing_style": "path"}
        )
        loader = botocore.session.get_session()
        self.models = {}
        self.services = {}
        for name in loader.get_available_services():
            model = loader.get_service_model(name)
            self.models[name] = model
            meta = model.metadata
            self.services[name] = (meta.get("endpointPrefix"), meta.get("signingName"))
        self.clients = {}

    def client(self, service, region):
        key = (service, region)
        if key not in self.clients:
            self.clients[key] = self.session.client(
                service, region_name=region, endpoint_url=self.url, config=self.config
            )
        return self.clients[key]

    def resolve(self, record):
        """(service, operation model, params, skipped keys) for a record, or raises ValueError.

        Where several services share the event source (elb and elbv2), the one whose
        operation input takes the most of the record's parameters wins.
        """
        source = record.get("eventSource", "")
        event = record.get("eventName", "")
        best = None
        for service in ctb.service_candidates(source, self.services):
            model = self.models[service]
            request = record.get("requestParameters") or {}
            if service == "s3":
                request = ctb.s3_rest_params(request)
            for op_name in ctb.operation_names(service, event):
                if op_name not in model.operation_names:
                    continue
                op = model.operation_model(op_name)
                skipped = []
                try:
                    params = ctb.to_boto_params(request, op.input_shape, skipped) if op.input_shape else {}
                except ctb.ConversionError as err:
                    candidate = (0, service, op, None, str(err))
                else:
                    missing = ctb.missing_required(params, op.input_shape) if op.input_shape else []
                    score = len(params) - 10 * len(missing)
                    candidate = (score, service, op, params, skipped if not missing else f"missing {missing}")
                if best is None or candidate[0] > best[0]:
                    best = candidate
                break
        if best is None:
            raise ValueError(f"no botocore operation for {source} {event}")
        _score, service, op, params, extra = best
        if params is None:
            raise ValueError(f"{service}.{op.name}: {extra}")
        if isinstance(extra, str):
            raise ValueError(f"{service}.{op.name}: {extra}")
        return service, op, params, extra

    def perform(self, record, service, op, params):
        import botocore

        client = self.client(service, record.get("awsRegion") or "us-east-1")
        method = getattr(client, botocore.xform_name(op.name))
        return method(**params)


def gap_reason(record, cloud):
    """The known moto gap a write record needs, or None."""
    source = record.get("eventSource", "").split(".")[0]
    if source in GAP_SERVICES:
        return GAP_SERVICES[source]
    for service in ctb.service_candidates(record.get("eventSource", ""), cloud.services):
        for name in ctb.operation_names(service, record.get("eventName", "")):
            if (service, name) in GAP_OPERATIONS:
                return GAP_OPERATIONS[(service, name)]
    return None


# ---------------------------------------------------------------------------
# A project in moto
# ---------------------------------------------------------------------------

PROJECT_KEEP = {".terraform", ".terraform.lock.hcl", "terraform.tfstate", "terraform.tfstate.backup", "zz_cloud_check_override.tf"}


def project_region(state):
    """The region most of the fixture state's ARNs name."""
    counts = collections.Counter()

    def walk(v):
        if isinstance(v, str) and v.startswith("arn:aws:"):
            parts = v.split(":")
            if len(parts) > 3 and parts[3]:
                counts[parts[3]] += 1
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(state)
    return counts.most_common(1)[0][0] if counts else "us-east-1"


def copy_project(src, dst):
    """Copies the project's code (not its state) to dst."""
    shutil.copytree(
        src,
        dst,
        ignore=shutil.ignore_patterns("terraform.tfstate", "terraform.tfstate.backup", ".terraform"),
        dirs_exist_ok=True,
    )


def restore_code(pristine, work):
    """Makes work's code the pristine code again: removes what a patch added, re-copies."""
    for name in os.listdir(work):
        if name in PROJECT_KEEP:
            continue
        path = os.path.join(work, name)
        if os.path.isdir(path):
            shutil.rmtree(path)
        else:
            os.remove(path)
    copy_project(pristine, work)


def snapshot_code(work):
    """{relative path: bytes} of the project's code files, to see what a patch changed."""
    out = {}
    for root, dirs, files in os.walk(work):
        dirs[:] = [d for d in dirs if d != ".terraform"]
        for name in files:
            if name.endswith(".tf") or name.endswith(".tfvars") or name.endswith(".tf.json"):
                path = os.path.join(root, name)
                with open(path, "rb") as f:
                    out[os.path.relpath(path, work)] = f.read()
    return out


class ProjectRun:
    """One project applied into its own moto server, and its scenarios."""

    def __init__(self, name, args, tools, workroot, cloud_factory):
        self.name = name
        self.args = args
        self.tools = tools
        self.src = os.path.join(REPO, "fixtures", "projects", name)
        with open(os.path.join(self.src, "terraform.tfstate")) as f:
            self.fixture_state = json.load(f)
        self.region = project_region(self.fixture_state)
        self.root = os.path.join(workroot, name)
        self.pristine = os.path.join(self.root, "pristine")
        self.work = os.path.join(self.root, "work")
        self.logs = os.path.join(self.root, "logs")
        os.makedirs(self.logs, exist_ok=True)
        for stale in ("terraform.tfstate", "terraform.tfstate.backup"):  # a reused --workdir
            if os.path.exists(os.path.join(self.work, stale)):
                os.remove(os.path.join(self.work, stale))
        copy_project(self.src, self.pristine)
        copy_project(self.src, self.work)
        with open(os.path.join(self.work, "zz_cloud_check_override.tf"), "w") as f:
            f.write(OVERRIDE)
        self.cloud_factory = cloud_factory
        self.moto = None
        self.tf = None
        self.cloud = None
        self.baseline = set()  # plan changes moto leaves after a clean apply (its gaps)
        self.baseline_note = ""
        self.unusable = None  # reason the project cannot be used
        self.apply_seconds = None
        # Snapshot restores: the state file that goes with moto's snapshot (None: restore
        # by apply), restores since the snapshot, and the checks of restores done so far.
        self.snapshot_state = None
        self.restores = 0
        self.restore_checks = {"checked": 0, "not clean": 0}

    def start(self):
        with ACTIVE_LOCK:
            ACTIVE.add(self)
        self.moto = MotoServer(self.tools["moto_server"], self.logs)
        self.tf = Terraform(self.work, self.moto.url, self.region, self.tools["plugin_dir"], self.logs)
        self.cloud = self.cloud_factory(self.moto.url)

    def stop(self):
        if self.tf and self.tf.provider:
            self.tf.provider.stop()
        if self.moto:
            self.moto.stop()
        with ACTIVE_LOCK:
            ACTIVE.discard(self)

    def state(self):
        with open(os.path.join(self.work, "terraform.tfstate")) as f:
            return json.load(f)

    def bring_up(self, label="apply"):
        """Init, apply and plan the pristine project; sets the baseline or `unusable`."""
        t0 = time.time()
        if not os.path.isdir(os.path.join(self.work, ".terraform")):
            code, out = self.tf.init()
            if code != 0:
                self.unusable = "terraform init failed: " + first_errors(out)
                return False
        if self.tools.get("shared_provider") and self.tf.provider is None:
            binary = provider_binary(self.work)
            if binary:
                self.tf.provider = ProviderServer(binary, self.tf.env, self.work, self.logs)
        code, out = self.tf.apply(label)
        # A failed apply is tried again, twice at most: once the build artifacts it names
        # are written, or when resources had to wait for others (moto checks an S3 logging
        # target's bucket policy, which the code creates in parallel).
        for again in ("again", "again2"):
            if code == 0:
                break
            self.make_packages(out)
            code, out = self.tf.apply(f"{label}-{again}")
        if code != 0:
            self.unusable = "terraform apply in moto failed: " + first_errors(out)
            return False
        code, out, changes = self.tf.plan(label + "-plan")
        self.apply_seconds = round(time.time() - t0, 1)
        if code == 0:
            self.baseline = set()
            return True
        if code != 2:
            self.unusable = "the plan after the apply failed: " + first_errors(out)
            return False
        # The plan is not clean: moto does not round-trip some resources. Those changes
        # become the baseline every later plan may repeat (and no more), and scenarios
        # touching those resources are excluded. Only a few resources may be affected:
        # past a quarter of the instances the project would prove little.
        addresses = {c[0] for c in changes}
        instances = sum(
            len(r.get("instances", []))
            for r in self.state().get("resources", [])
            if r.get("mode") == "managed"
        )
        if len(addresses) * 4 > max(instances, 1):
            self.unusable = "the plan after the apply changes too many resources: " + describe_changes(changes)
            return False
        self.baseline = changes
        self.baseline_note = describe_changes(changes, limit=20)
        return True

    def keep_snapshot(self):
        """After a clean bring-up: moto keeps a copy of its state, and this the state file
        that goes with it. Nothing when snapshots are off (`--restore apply`, plain moto)."""
        if not self.tools.get("snapshots"):
            return
        try:
            answer = self.moto.snapshot()
        except HarnessError as err:
            log(f"{self.name}: no moto snapshot ({err}); restoring by apply")
            self.snapshot_state = None
            return
        self.snapshot_state = os.path.join(self.root, "snapshot.tfstate")
        shutil.copyfile(os.path.join(self.work, "terraform.tfstate"), self.snapshot_state)
        self.restores = 0
        log(f"{self.name}: moto snapshot taken ({answer['bytes'] // 1000} kB, {answer['seconds']} s)")

    def make_packages(self, output):
        """Writes the build artifacts the code names but the repository does not hold.

        Lambda functions read a deployment package (build/<name>.zip) that a build step
        makes; the apply says which ones are missing. Each gets a tiny zip (in the work and
        pristine copies, so a restore keeps it). Returns whether any was written.
        """
        import zipfile

        missing = sorted(set(re.findall(r"reading ZIP file \(([^)]+)\): open [^:]+: no such file", output)))
        for rel in missing:
            for base in (self.work, self.pristine):
                path = os.path.join(base, rel)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                # A fixed timestamp: both copies get the same bytes, so the same hash.
                entry = zipfile.ZipInfo("index.py", date_time=(2020, 1, 1, 0, 0, 0))
                with zipfile.ZipFile(path, "w") as zf:
                    zf.writestr(entry, "def handler(event, context):\n    return {}\n")
        if missing:
            log(f"{self.name}: wrote placeholder packages {missing}")
        return bool(missing)

    def gap_resources(self):
        """Baseline addresses of the known gap types, with their reasons.

        A scenario calling on one of these is excluded. Baseline changes on other types
        (moto quirks on an attribute, seen here but not in the issue's list) exclude
        nothing: plans are compared attribute by attribute, so the quirk is subtracted and
        a scenario's own change on that resource still shows.
        """
        return {
            c[0]: f"{GAP_TYPES[_rtype(c[0])]} (the plan after a clean apply changes {c[0]})"
            for c in self.baseline
            if _rtype(c[0]) in GAP_TYPES
        }

    def clean_plan(self, label):
        """Whether the cloud matches the current code, modulo the baseline."""
        code, out, changes = self.tf.plan(label)
        residual = self.residual(changes)
        if code == 0 or (code == 2 and not residual):
            return True, ""
        if code == 2:
            return False, describe_changes(residual)
        return False, first_errors(out)

    def residual(self, changes):
        """The plan changes beyond the baseline. A baseline change is known by resource,
        action and attribute, not by value: the values of a moto quirk can move with each
        apply (a launch template's version numbers)."""
        known = {c[:3] for c in self.baseline}
        return {c for c in changes if c[:3] not in known}


def _rtype(address):
    """The resource type of an address: module.x.aws_foo.bar["k"] -> aws_foo."""
    parts = re.sub(r"\[[^\]]*\]", "", address).split(".")
    return parts[-2] if len(parts) >= 2 else address


# ---------------------------------------------------------------------------
# One scenario
# ---------------------------------------------------------------------------

ALREADY_EXISTS = re.compile(r"AlreadyExists|Duplicate|InUse|already exists", re.I)


def fixture_account(state):
    """The account id most of the fixture state's ARNs name."""
    counts = collections.Counter(re.findall(r"arn:aws[a-z-]*:[a-z0-9-]+:[a-z0-9-]*:(\d{12}):", json.dumps(state)))
    return counts.most_common(1)[0][0] if counts else MOTO_ACCOUNT


def identity_values(state, addresses):
    """The id and arn of the instances at these addresses (to see what a call touches)."""
    wanted = set(addresses)
    out = set()
    for res in state.get("resources", []):
        if res.get("mode") != "managed":
            continue
        base = ".".join(x for x in (res.get("module"), res["type"], res["name"]) if x)
        for inst in res.get("instances", []):
            key = inst.get("index_key")
            address = base if key is None else f"{base}[{json.dumps(key)}]"
            if address in wanted:
                attrs = inst.get("attributes") or {}
                for attr in ("id", "arn"):
                    if isinstance(attrs.get(attr), str) and attrs[attr]:
                        out.add(attrs[attr])
    return out


def mentions(value, needles):
    """The needle (an id or ARN) that a string leaf of the request parameters equals, if any.

    Whole leaves only, and not inside policy documents: a role policy granting
    cloudfront:CreateInvalidation on a distribution's ARN does not call on the distribution.
    """
    if isinstance(value, str):
        return value if value in needles else None
    if isinstance(value, dict):
        for key, item in value.items():
            if "policy" in key.lower() or "document" in key.lower():
                continue
            hit = mentions(item, needles)
            if hit:
                return hit
    if isinstance(value, list):
        for item in value:
            hit = mentions(item, needles)
            if hit:
                return hit
    return None


def summarize_retrace(stdout):
    """The top of retrace's JSON report: scalar fields and list lengths."""
    try:
        doc = json.loads(stdout)
    except ValueError:
        return {"unparsed": stdout[:300]}
    if not isinstance(doc, dict):
        return {"value": str(doc)[:300]}
    out = {}
    for key, value in doc.items():
        if isinstance(value, str):
            out[key] = value if len(value) <= 300 else value[:300] + "..."  # the diff is in patch.diff
        elif isinstance(value, (int, float, bool)) or value is None:
            out[key] = value
        elif isinstance(value, list):
            out[key] = len(value)
        elif isinstance(value, dict):
            out[key] = {k: v for k, v in value.items() if isinstance(v, (str, int, float, bool))}
    return out


def run_scenario(proj, scenario, retrace, retry_collisions=True):
    """Runs one scenario on a clean project; returns its result record.

    With `retry_collisions`, a call refused because something is in the way ends the
    scenario as "retry" (the caller resets moto and runs it again without)."""
    t0 = time.time()
    result = {
        "id": scenario["id"],
        "project": scenario["project"],
        "category": scenario["category"],
        "description": scenario["description"],
        "expect": scenario["expect"],
        "status": None,
        "retrace_exit": None,
        "plan_exit": None,
        "passed": False,
        "flagged": False,
        "reason": "",
        "performed": 0,
        "drift_visible": None,
    }
    with open(os.path.join(scenario["dir"], "trail.json")) as f:
        records = json.load(f).get("Records", [])
    writes = out_of_band_writes(records)

    # Exclusions: a call moto cannot perform, or a resource moto does not round-trip.
    applied = proj.state()
    idmap = ctb.state_id_map(proj.fixture_state, applied)
    idmap.add(fixture_account(proj.fixture_state), MOTO_ACCOUNT)
    gap_ids = identity_values(applied, proj.gap_resources())
    gaps = proj.gap_resources()
    for rec in writes:
        reason = gap_reason(rec, proj.cloud)
        if reason is None:
            hit = mentions(idmap.sub(rec.get("requestParameters") or {}), gap_ids)
            if hit:
                addr = next(a for a in gaps if hit in identity_values(applied, [a]))
                reason = gaps[addr]
        if reason:
            result.update(status="excluded", reason=f"{rec['eventName']}: {reason}")
            return finish(result, t0)

    # Perform the drift against moto, learning the ids moto gives new resources.
    sdir = os.path.join(proj.logs, scenario["id"])
    os.makedirs(sdir, exist_ok=True)
    calls = []
    for rec in writes:
        sub = idmap.sub(rec)
        try:
            service, op, params, skipped = proj.cloud.resolve(sub)
        except ValueError as err:
            result.update(status="not-reproducible", reason=f"{rec['eventName']}: cannot convert: {err}")
            return finish(result, t0)
        try:
            response = proj.cloud.perform(sub, service, op, params)
        except Exception as err:  # botocore's ClientError, ParamValidationError...
            text = f"{type(err).__name__}: {err}"
            if retry_collisions and ALREADY_EXISTS.search(text):
                # A resource an earlier scenario created out of band is in the way: reset
                # moto, re-apply, and try this scenario once more.
                result["retry"] = text[:300]
                result["status"] = "retry"
                return finish(result, t0)
            result.update(status="not-reproducible", reason=f"{service}.{op.name} failed in moto: {text[:400]}")
            result["performed"] = len(calls)
            if calls and proj.snapshot_state:
                result["restore"] = restore_snapshot(proj, scenario["id"])
            return finish(result, t0)
        response.pop("ResponseMetadata", None)
        calls.append({"service": service, "operation": op.name, "params": params, "skipped": skipped})
        for old, new in ctb.response_pairs(rec.get("responseElements") or {}, response):
            idmap.add(old, new)
    result["performed"] = len(calls)
    with open(os.path.join(sdir, "calls.json"), "w") as f:
        json.dump(calls, f, indent=1, default=str)

    # The trail retrace reads: every record, ids substituted, in the moto account.
    trail = []
    for rec in records:
        sub = idmap.sub(rec)
        if sub.get("recipientAccountId") in (fixture_account(proj.fixture_state), None):
            sub["recipientAccountId"] = MOTO_ACCOUNT
        ident = sub.get("userIdentity") or {}
        if ident.get("accountId") == fixture_account(proj.fixture_state):
            ident["accountId"] = MOTO_ACCOUNT
        trail.append(sub)
    trail_path = os.path.join(sdir, "trail.json")
    with open(trail_path, "w") as f:
        json.dump({"Records": trail}, f, indent=1)
    with open(os.path.join(sdir, "idmap.json"), "w") as f:
        json.dump(idmap.pairs, f, indent=1, sort_keys=True)

    # Is the drift visible at all? A plan of the untouched code now: when the calls ran but
    # Terraform sees no change beyond the baseline, moto did not keep what they changed (or
    # the change nets out, as in noise), and a pass below proves little: reported.
    drift_targets = set()
    if calls:
        dcode, dout, dchanges = proj.tf.plan(f"{scenario['id']}-drift")
        drift_targets = {c[0] for c in proj.residual(dchanges)}
        result["drift_visible"] = dcode == 2 and bool(proj.residual(dchanges))
        result["drift"] = describe_changes(proj.residual(dchanges)) if dcode == 2 else ("" if dcode == 0 else first_errors(dout))
    else:
        result["drift_visible"] = False

    # retrace on the moto-applied project, with a throwaway knowledge base.
    state_path = os.path.join(proj.work, "terraform.tfstate")
    saved_state = os.path.join(sdir, "pre.tfstate")
    shutil.copyfile(state_path, saved_state)
    before = snapshot_code(proj.work)
    kb = os.path.join(sdir, "kb.sqlite")
    cmd = [
        retrace, "--kb", kb, "reconcile", "--logs", trail_path, "--project", proj.work,
        "--state", state_path, "--write", "--format", "json", "--no-terraform",
    ]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
    with open(os.path.join(sdir, "retrace.json"), "w") as f:
        f.write(proc.stdout)
    with open(os.path.join(sdir, "retrace.stderr"), "w") as f:
        f.write(proc.stderr)
    result["retrace_exit"] = proc.returncode
    result["flagged"] = proc.returncode == 3
    result["retrace"] = summarize_retrace(proc.stdout)
    after = snapshot_code(proj.work)
    result["patched_files"] = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    with open(os.path.join(sdir, "patch.diff"), "w") as f:
        for name in result["patched_files"]:
            f.write(f"=== {name}\n{after.get(name, b'').decode(errors='replace')}\n")

    # The judge: a refreshing plan of the patched code against moto.
    code, out, changes = proj.tf.plan(f"{scenario['id']}-judge")
    result["plan_exit"] = code
    residual = proj.residual(changes)
    if code == 0 or (code == 2 and not residual):
        result["passed"] = True
        result["status"] = "passed"
    else:
        result["status"] = "failed"
        if proc.returncode == 1:
            result["reason"] = "retrace error: " + (proc.stderr.strip().splitlines() or ["?"])[-1][:300]
        elif code == 2:
            result["reason"] = "plan still changes: " + describe_changes(residual)
        else:
            result["reason"] = "plan error: " + first_errors(out)

    # Restore: pristine code and pre-scenario state; the cloud back to the pristine code.
    restore_code(proj.pristine, proj.work)
    shutil.copyfile(saved_state, state_path)
    if calls and proj.snapshot_state:
        # Every scenario that changed anything starts the next from the snapshot, creations
        # (which no plan sees) included.
        result["restore"] = restore_snapshot(proj, scenario["id"], drift_targets)
        return finish(result, t0)
    unchanged = not result["patched_files"]
    if not calls or not result["drift_visible"] or (unchanged and result["passed"]):
        # Nothing done, or the cloud already matches the pristine code (a plan said so).
        return finish(result, t0)
    result["restore"] = restore(proj, scenario["id"], drift_targets)
    return finish(result, t0)


def restore(proj, sid, targets=()):
    """Brings the cloud back to the pristine code: apply, else moto reset and a fresh apply.

    `targets` are the resources the drift plan showed changed: applying only those first is
    much quicker (a full apply re-applies every moto quirk of the baseline, and the provider
    waits on some). A clean plan of the whole project is required all the same; when the
    targeted apply does not give one, a full apply is tried before the reset.
    Returns how ("targeted apply", "apply" or "reset"); sets proj.unusable when nothing worked.
    """
    if targets:
        code, out = proj.tf.apply(f"{sid}-restore-targeted", sorted(targets))
        if code == 0 and proj.clean_plan(f"{sid}-restore-targeted-plan")[0]:
            return "targeted apply"
    code, out = proj.tf.apply(f"{sid}-restore")
    if code == 0:
        clean, why = proj.clean_plan(f"{sid}-restore-plan")
        if clean:
            return "apply"
        log(f"{proj.name}: not clean after restoring {sid} ({why}); resetting moto")
    else:
        log(f"{proj.name}: restoring apply after {sid} failed ({first_errors(out)}); resetting moto")
    return reset_project(proj, sid)


def restore_snapshot(proj, sid, targets=()):
    """Brings the cloud back to the pristine code by restoring moto's snapshot.

    The first restore after a snapshot, and every `--check-restore-every`-th after it, is
    checked: the pristine code's refreshing plan must be clean (modulo the baseline). When
    it is not, the project restores by apply from then on (counted in the report).
    Returns how: "snapshot", "snapshot, checked", or the apply's way after a failed check.
    """
    shutil.copyfile(proj.snapshot_state, os.path.join(proj.work, "terraform.tfstate"))
    try:
        proj.moto.restore()
    except HarnessError as err:
        log(f"{proj.name}: the snapshot restore after {sid} failed ({err}); restoring by apply from now on")
        proj.snapshot_state = None
        return "snapshot failed, then " + restore(proj, sid, targets)
    proj.restores += 1
    if (proj.restores - 1) % proj.args.check_restore_every:
        return "snapshot"
    proj.restore_checks["checked"] += 1
    clean, why = proj.clean_plan(f"{sid}-restore-check")
    if clean:
        return "snapshot, checked"
    proj.restore_checks["not clean"] += 1
    log(f"{proj.name}: the pristine plan after the snapshot restore of {sid} is not clean ({why}); restoring by apply from now on")
    proj.snapshot_state = None
    return "snapshot not clean, then " + restore(proj, sid, targets)


def reset_project(proj, sid):
    proj.moto.reset()
    state_path = os.path.join(proj.work, "terraform.tfstate")
    for path in (state_path, state_path + ".backup"):
        if os.path.exists(path):
            os.remove(path)
    baseline = proj.baseline
    if not proj.bring_up(f"{sid}-reapply"):
        proj.unusable = f"after {sid}: " + (proj.unusable or "re-apply failed")
        return "failed"
    if proj.snapshot_state:
        proj.keep_snapshot()
    if not proj.baseline <= baseline and proj.baseline:
        log(f"{proj.name}: the baseline changed after the reset")
    return "reset"


def finish(result, t0):
    result["seconds"] = round(time.time() - t0, 1)
    return result


def run_project(name, scenarios, args, tools, workroot):
    """Applies one project into its own moto and runs its scenarios; returns (info, results)."""
    results = []
    info = {"project": name, "usable": False, "reason": "", "apply_seconds": None, "baseline": ""}
    proj = ProjectRun(name, args, tools, workroot, Cloud)
    try:
        proj.start()
        log(f"{name}: applying into moto at {proj.moto.url} (region {proj.region})")
        ok = proj.bring_up()
        info["apply_seconds"] = proj.apply_seconds
        info["baseline"] = proj.baseline_note
        info["gap_resources"] = proj.gap_resources()
        if not ok:
            info["reason"] = proj.unusable
            log(f"{name}: unusable: {proj.unusable}")
            for s in scenarios:
                results.append(not_run(s, f"project unusable: {proj.unusable}"))
            return info, results
        info["usable"] = True
        log(f"{name}: applied in {proj.apply_seconds} s; baseline: {proj.baseline_note or 'clean'}")
        proj.keep_snapshot()
        for s in scenarios:
            if STOPPING.is_set():
                raise KeyboardInterrupt()
            if proj.unusable:
                results.append(not_run(s, proj.unusable))
                continue
            # From a snapshot every scenario starts from the same cloud: nothing an earlier
            # one created can be in the way, so a collision is not retried.
            result = guarded(proj, s, tools["retrace"], retry_collisions=not proj.snapshot_state)
            if result["status"] == "retry":
                log(f"{name}: {s['id']}: {result['retry']}; reset and retry")
                reset_project(proj, s["id"])
                if proj.unusable:
                    results.append(not_run(s, proj.unusable))
                    continue
                result = guarded(proj, s, tools["retrace"], retry_collisions=False)
            log(
                f"{name}: {s['id']}: {result['status']} (retrace {result['retrace_exit']}, "
                f"plan {result['plan_exit']}, {result['seconds']} s) {result['reason'][:200]}"
            )
            results.append(result)
        info["restore_checks"] = dict(proj.restore_checks, restores_by_snapshot=sum(
            1 for r in results if r.get("restore", "").startswith("snapshot")))
        return info, results
    finally:
        proj.stop()


def guarded(proj, scenario, retrace, retry_collisions):
    """run_scenario, with a harness fault recorded as the scenario's "harness-error" (the
    run goes on after a reset, and exits 1 at the end)."""
    try:
        return run_scenario(proj, scenario, retrace, retry_collisions)
    except (KeyboardInterrupt, HarnessError):
        raise
    except Exception as err:
        import traceback

        traceback.print_exc()
        result = not_run(scenario, f"harness error: {type(err).__name__}: {err}"[:400])
        result["status"] = "harness-error"
        restore_code(proj.pristine, proj.work)
        reset_project(proj, scenario["id"])
        return result


def not_run(scenario, reason):
    return {
        "id": scenario["id"], "project": scenario["project"], "category": scenario["category"],
        "description": scenario["description"], "expect": scenario["expect"],
        "status": "not-run", "retrace_exit": None, "plan_exit": None, "passed": False,
        "flagged": False, "reason": reason, "performed": 0, "seconds": 0.0,
    }


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------


def table(results, infos):
    """The text report: per project counts, then the excluded, failed and unreproducible."""
    lines = []
    head = (
        f"{'project':<12} {'run':>4} {'passed':>6} {'failed':>6} {'flag-pass':>9} {'flag-fail':>9} {'no-drift':>8} "
        f"{'excluded':>8} {'not-repro':>9} {'not-run':>7}"
    )
    lines.append(head)
    lines.append("-" * len(head))
    totals = collections.Counter()
    for project in PROJECTS:
        rows = [r for r in results if r["project"] == project]
        if not rows:
            continue
        c = collections.Counter(r["status"] for r in rows)
        run = c["passed"] + c["failed"]
        judged = [r for r in rows if r["status"] in ("passed", "failed")]
        fpass = sum(1 for r in judged if r["flagged"] and r["passed"])
        ffail = sum(1 for r in judged if r["flagged"] and not r["passed"])
        nodrift = sum(1 for r in judged if not r.get("drift_visible"))
        counts = dict(run=run, passed=c["passed"], failed=c["failed"], fpass=fpass, ffail=ffail, nodrift=nodrift,
                      excluded=c["excluded"], notrepro=c["not-reproducible"], notrun=c["not-run"])
        totals.update(counts)
        lines.append(
            f"{project:<12} {run:>4} {c['passed']:>6} {c['failed']:>6} {fpass:>9} {ffail:>9} {nodrift:>8} "
            f"{c['excluded']:>8} {c['not-reproducible']:>9} {c['not-run']:>7}"
        )
    lines.append("-" * len(head))
    t = totals
    lines.append(
        f"{'total':<12} {t['run']:>4} {t['passed']:>6} {t['failed']:>6} {t['fpass']:>9} {t['ffail']:>9} {t['nodrift']:>8} "
        f"{t['excluded']:>8} {t['notrepro']:>9} {t['notrun']:>7}"
    )
    lines.append("")
    lines.append("run = passed + failed (judged by the plan). flag-pass / flag-fail = of those, retrace")
    lines.append("  exited 3 (flags for a person) and the plan was clean / not clean.")
    lines.append("no-drift = run, but the plan of the untouched code saw no change after the calls")
    lines.append("  (noise that nets out, or a change moto does not keep); counted in passed/failed.")
    for info in infos:
        checks = info.get("restore_checks")
        if checks and checks["restores_by_snapshot"]:
            lines.append(
                f"{info['project']}: {checks['restores_by_snapshot']} snapshot restore(s), {checks['checked']} checked "
                f"by a plan of the pristine code, {checks['not clean']} not clean"
            )
        if not info["usable"]:
            lines.append(f"{info['project']}: unusable: {info['reason']}")
        elif info.get("baseline"):
            lines.append(f"{info['project']}: moto baseline (subtracted by attribute; scenarios naming a known-gap resource excluded): {info['baseline']}")
    for status in ("failed", "excluded", "not-reproducible", "not-run", "harness-error"):
        rows = [r for r in results if r["status"] == status]
        if rows:
            lines.append("")
            lines.append(f"{status}:")
            for r in rows:
                lines.append(f"  {r['id']}: retrace {r['retrace_exit']}, plan {r['plan_exit']}: {r['reason']}")
    quiet = [r for r in results if r["status"] in ("passed", "failed") and not r.get("drift_visible")]
    if quiet:
        lines.append("")
        lines.append("no drift visible after the calls:")
        for r in quiet:
            lines.append(f"  {r['id']} ({r['category']}): {r['performed']} call(s) performed, {r['status']}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--retrace", help="path to the retrace binary (required unless --report)")
    p.add_argument("--report", metavar="FILE", help="only print the table of an earlier --out JSON")
    p.add_argument("--scenarios", nargs="+", metavar="ID", help="only these scenario ids")
    p.add_argument("--sample", type=int, metavar="N", help="a fixed stratified sample of about N scenarios")
    p.add_argument("--projects", nargs="+", choices=PROJECTS, help="only these projects")
    p.add_argument("--out", help="write the per-scenario JSON here")
    p.add_argument("--jobs", type=int, default=1, help="projects run at once, each with its own moto (default 1)")
    p.add_argument("--plain-moto", action="store_true", help="run moto_server without moto_shim.py's bucket-policy fix")
    p.add_argument("--restore", choices=["snapshot", "apply"], default="snapshot",
                   help="how the cloud is brought back after a scenario: moto_shim.py's snapshot (default) "
                   "or a terraform apply of the pristine code (always with --plain-moto)")
    p.add_argument("--provider-per-command", action="store_true",
                   help="let terraform start the AWS provider for every command (default: one provider per "
                   "project, started once, that terraform attaches to)")
    p.add_argument("--check-restore-every", type=int, default=10, metavar="N",
                   help="check the 1st, (N+1)th, ... snapshot restore with a plan of the pristine code (default 10; 1: every one)")
    p.add_argument("--scenario-root", default=os.path.join(REPO, "scenarios"))
    p.add_argument("--workdir", help="keep the work here (default: a temp dir, deleted at the end)")
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    started = time.time()
    if args.report:
        # Only print the table of an earlier run's --out JSON.
        with open(args.report) as f:
            doc = json.load(f)
        print(table(doc["scenarios"], doc["projects"]))
        print(f"\nwall time {doc.get('wall_seconds')} s ({doc.get('date')})")
        return 0

    # Tools: without terraform or the provider the check cannot run anywhere: skip.
    plugin_dir = find_plugin_dir()
    if not shutil.which("terraform") or not plugin_dir:
        print("cloud check skipped: " + ("terraform is not on PATH" if not shutil.which("terraform")
              else "no AWS provider mirror (set TF_PLUGIN_DIR)"))
        return 0
    moto = find_moto_server(plain=args.plain_moto)
    if not moto:
        print("cloud check: moto_server not found; run evaluation/cloud/setup.sh and use its python", file=sys.stderr)
        return 1
    if not args.retrace:
        print("cloud check: --retrace PATH is required", file=sys.stderr)
        return 1
    retrace = os.path.abspath(args.retrace)
    if not os.access(retrace, os.X_OK):
        print(f"cloud check: {retrace} is not an executable", file=sys.stderr)
        return 1
    if args.check_restore_every < 1:
        print("cloud check: --check-restore-every must be at least 1", file=sys.stderr)
        return 1
    shim = moto[-1].endswith("moto_shim.py")
    if args.restore == "snapshot" and not shim:
        log("no moto_shim.py: restoring by apply")
    snapshots = args.restore == "snapshot" and shim
    tools = {
        "plugin_dir": plugin_dir, "moto_server": moto, "retrace": retrace, "snapshots": snapshots,
        "shared_provider": not args.provider_per_command,
    }

    scenarios = load_scenarios(args.scenario_root)
    if args.projects:
        scenarios = [s for s in scenarios if s["project"] in args.projects]
    if args.scenarios:
        wanted = set(args.scenarios)
        unknown = wanted - {s["id"] for s in scenarios}
        if unknown:
            print(f"cloud check: unknown scenarios: {sorted(unknown)}", file=sys.stderr)
            return 1
        scenarios = [s for s in scenarios if s["id"] in wanted]
    if args.sample:
        scenarios = stratified_sample(scenarios, args.sample)
    by_project = collections.OrderedDict()
    for s in scenarios:
        by_project.setdefault(s["project"], []).append(s)
    log(f"{len(scenarios)} scenarios in {len(by_project)} projects; moto {' '.join(moto)}; provider {plugin_dir}")

    # SIGTERM behaves like Ctrl-C (which is also restored when the shell ignored it, as for
    # a background job): unwind, stopping terraform and the moto servers.
    def interrupt(*_):
        raise KeyboardInterrupt()

    signal.signal(signal.SIGTERM, interrupt)
    signal.signal(signal.SIGINT, interrupt)
    workroot = args.workdir or tempfile.mkdtemp(prefix="cloud-check-")
    os.makedirs(workroot, exist_ok=True)
    infos, results = [], []
    try:
        if args.jobs > 1:
            from concurrent.futures import ThreadPoolExecutor, wait

            pool = ThreadPoolExecutor(max_workers=args.jobs)
            futures = []
            try:
                futures = [pool.submit(run_project, name, ss, args, tools, workroot) for name, ss in by_project.items()]
                # Wait in short steps: the main thread must stay free to take Ctrl-C.
                while wait(futures, timeout=1).not_done:
                    pass
                for fut in futures:
                    info, rows = fut.result()
                    infos.append(info)
                    results.extend(rows)
            finally:
                if not all(f.done() for f in futures):
                    stop_everything()
                pool.shutdown(wait=True, cancel_futures=True)
        else:
            for name, ss in by_project.items():
                info, rows = run_project(name, ss, args, tools, workroot)
                infos.append(info)
                results.extend(rows)
    except KeyboardInterrupt:
        stop_everything()
        log("interrupted")
        return 1
    except Exception as err:  # a harness fault: say so, exit 1
        log(f"harness error: {type(err).__name__}: {err}")
        import traceback

        traceback.print_exc()
        return 1
    finally:
        if not args.workdir:
            shutil.rmtree(workroot, ignore_errors=True)

    wall = round(time.time() - started, 1)
    harness_errors = sum(1 for r in results if r["status"] == "harness-error")
    print(table(results, infos))
    print(f"\nwall time {wall} s")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(
                {"date": time.strftime("%Y-%m-%d"), "wall_seconds": wall, "projects": infos, "scenarios": results},
                f, indent=1, default=str,
            )
    return 1 if harness_errors else 0


if __name__ == "__main__":
    sys.exit(main())
