#!/usr/bin/env python3
"""Ask the real AWS provider which resource types it cannot import, and write the list.

Run from the workspace root (Python 3.11, standard library only, offline):

    python3 knowledge/tools/probe_import.py                    # every type of the bundled schema
    python3 knowledge/tools/probe_import.py --plugin-dir DIR   # DIR holds registry.terraform.io/hashicorp/aws
    python3 knowledge/tools/probe_import.py --type aws_sqs_queue --type aws_lb_target_group_attachment --dry-run

For each resource type of knowledge/data/aws-provider-schema.json (every type retrace's rules
name, so every type it can create) the script runs `terraform plan -generate-config-out` of a
configuration holding only an `import { to = TYPE.probe, id = "probe" }` block, with dummy
credentials, the provider's account and metadata look-ups switched off and every endpoint
(`AWS_ENDPOINT_URL`) pointed at a closed loopback port. Terraform asks the provider to import
before anything else, so each run ends in one of three ways, told apart by the error:

* `resource TYPE doesn't support import`: the provider has no importer for the type (no AWS
  call is made); the type goes on the list;
* a refused connection to the loopback port: the importer ran and went to read the object, so
  the type can be imported;
* an error about the id (`unexpected format for ID ...`): the importer ran and parsed the id,
  so the type can be imported;
* any error after terraform printed `TYPE.probe: Refreshing state... [id=probe]`: the import
  step passed and the read of the object failed (`Cannot import non-existent remote object`
  where a read takes the failed call for an absent object), so the type can be imported.

Anything else stops the script with the output, so a changed message cannot pass silently.
The provider is started once in its debug mode and terraform attaches to it
(TF_REATTACH_PROVIDERS), which saves building its schema for every run.

Output (unless --dry-run): knowledge/data/not-importable.toml, which the knowledge crate loads
(`knowledge/src/importable.rs`), and evaluation/src/score/not-importable.txt, the same list
for the benchmark's built-in checks, which do not read product code (one type a line). The
run's counts are printed and written into both headers.
"""

from __future__ import annotations

import argparse
import concurrent.futures
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
import time
from pathlib import Path

PROVIDER_VERSION = "5.100.0"
ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "knowledge" / "data" / "aws-provider-schema.json"
KNOWLEDGE_OUT = ROOT / "knowledge" / "data" / "not-importable.toml"
EVALUATION_OUT = ROOT / "evaluation" / "src" / "score" / "not-importable.txt"

PROVIDER_CONFIG = """terraform {
  required_providers {
    aws = { source = "hashicorp/aws", version = "%s" }
  }
}

provider "aws" {
  region                      = "us-east-1"
  access_key                  = "probe"
  secret_key                  = "probe"
  skip_credentials_validation = true
  skip_requesting_account_id  = true
  skip_metadata_api_check     = true
  skip_region_validation      = true
  max_retries                 = 1
}
""" % PROVIDER_VERSION

OUTCOMES = ("unsupported", "refused", "read", "id")
UNSUPPORTED = re.compile(r"resource (aws_[a-z0-9_]+) doesn't support import")
REFUSED = re.compile(r"connect: connection refused")
ID_ERROR = re.compile(r"(?i)(unexpected format|invalid|expected|wrong format|format of ID|in format|parsing)")


class ProbeError(Exception):
    """A problem running the probe; the message says what."""


def plugin_dir(given: str | None) -> str:
    """The directory holding the provider: given, TF_PLUGIN_DIR, or the first under /opt."""
    for candidate in [given, os.environ.get("TF_PLUGIN_DIR"), *sorted(glob.glob("/opt/*"))]:
        if candidate and glob.glob(f"{candidate}/registry.terraform.io/hashicorp/aws/{PROVIDER_VERSION}"):
            return candidate
    raise ProbeError(f"no plugin directory holds hashicorp/aws {PROVIDER_VERSION} (pass --plugin-dir)")


def provider_binary(plugins: str) -> str:
    found = glob.glob(f"{plugins}/registry.terraform.io/hashicorp/aws/{PROVIDER_VERSION}/*/terraform-provider-aws_*")
    if not found:
        raise ProbeError(f"no provider binary under {plugins}")
    return found[0]


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def probe_env(port: int) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("AWS_CA_BUNDLE", None)
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"):
        env.pop(name, None)
    env.update(
        AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}",
        AWS_EC2_METADATA_DISABLED="true",
        TF_IN_AUTOMATION="1",
        TF_LOG_PROVIDER="ERROR",
        TF_LOG_SDK="ERROR",
        TF_LOG_PROVIDER_AWS="ERROR",
        CHECKPOINT_DISABLE="1",
    )
    return env


def start_provider(binary: str, env: dict[str, str], logpath: Path) -> tuple[subprocess.Popen, str]:
    """Starts the provider in its debug mode; returns it and its TF_REATTACH_PROVIDERS value."""
    with open(logpath, "w") as log:
        proc = subprocess.Popen([binary, "-debug"], stdout=log, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)
    deadline = time.time() + 60
    while time.time() < deadline:
        if proc.poll() is not None:
            raise ProbeError(f"the provider exited with {proc.returncode} (see {logpath})")
        found = re.findall(r"TF_REATTACH_PROVIDERS='([^']+)'", logpath.read_text())
        if found:
            return proc, found[-1]
        time.sleep(0.2)
    stop(proc)
    raise ProbeError(f"the provider did not start within 60 s (see {logpath})")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


def init_dir(directory: Path, plugins: str, env: dict[str, str]) -> None:
    directory.mkdir(parents=True)
    (directory / "provider.tf").write_text(PROVIDER_CONFIG)
    run = subprocess.run(["terraform", "init", "-input=false", "-no-color", f"-plugin-dir={plugins}"],
                         cwd=directory, env=env, capture_output=True, text=True)
    if run.returncode != 0:
        raise ProbeError(f"terraform init failed in {directory}:\n{run.stdout}{run.stderr}")


def classify(resource_type: str, output: str) -> str:
    """`unsupported`, `refused`, `read` or `id`, from one plan's output; ProbeError for anything else."""
    unsupported = UNSUPPORTED.search(output)
    if unsupported and unsupported.group(1) == resource_type:
        return "unsupported"
    errors = output.split("Error: ", 1)
    if len(errors) < 2:
        raise ProbeError(f"{resource_type}: the plan ended without an error:\n{output}")
    if REFUSED.search(errors[1]):
        return "refused"
    if f"{resource_type}.probe: Refreshing state... [id=probe]" in output:
        return "read"
    if "Preparing import" in output and ID_ERROR.search(errors[1]):
        return "id"
    raise ProbeError(f"{resource_type}: an outcome the probe does not know:\n{output}")


def probe(resource_type: str, directory: Path, env: dict[str, str]) -> tuple[str, str]:
    """Runs one import plan in a directory terraform was initialised in; (outcome, error line)."""
    (directory / "main.tf").write_text(f'import {{\n  to = {resource_type}.probe\n  id = "probe"\n}}\n')
    generated = directory / "generated.tf"
    generated.unlink(missing_ok=True)
    run = subprocess.run(
        ["terraform", "plan", "-input=false", "-no-color", "-refresh=false", "-lock=false",
         "-generate-config-out=generated.tf"],
        cwd=directory, env=env, capture_output=True, text=True, timeout=300,
    )
    output = run.stdout + run.stderr
    generated.unlink(missing_ok=True)
    try:
        outcome = classify(resource_type, output)
    except ProbeError as e:
        return "unknown", str(e)
    line = output.split("Error: ", 1)[1].splitlines()[0]
    return outcome, line


def schema_types() -> list[str]:
    schema = json.loads(SCHEMA.read_text())
    if schema["provider_version"] != PROVIDER_VERSION:
        raise ProbeError(f"{SCHEMA} is of provider {schema['provider_version']}, not {PROVIDER_VERSION}")
    return sorted(schema["resources"])


def header(counts: dict[str, int], total: int, comment: str) -> str:
    lines = [
        f"The AWS provider's resource types that cannot be imported (hashicorp/aws {PROVIDER_VERSION},",
        "terraform 1.11): `terraform plan` of an `import` block for one stops with \"resource TYPE",
        "doesn't support import\" before any AWS call. Written by knowledge/tools/probe_import.py",
        f"(see its header for how), which probed {total} types, every type of the bundled schema:",
        f"{counts['unsupported']} not importable; importable: {counts['refused']} (the read went to AWS and",
        f"found the port closed), {counts['read']} (the import passed, the read failed otherwise), {counts['id']}",
        "(the importer refused the probe's id). Do not edit by hand.",
    ]
    return "".join(f"{comment} {line}\n" for line in lines)


def write(types: list[str], counts: dict[str, int], total: int) -> None:
    listed = "".join(f'  "{t}",\n' for t in types)
    KNOWLEDGE_OUT.write_text(
        header(counts, total, "#")
        + "#\n# The knowledge crate checks each type against the bundled schema\n"
        + "# (knowledge/src/importable.rs).\n\n"
        + f'provider_version = "{PROVIDER_VERSION}"\n'
        + f"not_importable = [\n{listed}]\n"
    )
    EVALUATION_OUT.write_text(
        header(counts, total, "#")
        + "# The benchmark's own copy (the evaluation reads no product code): one type a line.\n"
        + "".join(f"{t}\n" for t in types)
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plugin-dir")
    parser.add_argument("--type", action="append", help="probe only this type (repeatable)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--dry-run", action="store_true", help="print the outcomes, write nothing")
    args = parser.parse_args()
    if shutil.which("terraform") is None:
        raise ProbeError("terraform is not on PATH")
    plugins = plugin_dir(args.plugin_dir)
    types = args.type or schema_types()
    work = Path(tempfile.mkdtemp(prefix="probe-import-"))
    env = probe_env(closed_port())
    proc, reattach = start_provider(provider_binary(plugins), env, work / "provider.log")
    try:
        dirs = [work / f"w{i}" for i in range(args.jobs)]
        for d in dirs:
            init_dir(d, plugins, env)
        env["TF_REATTACH_PROVIDERS"] = reattach
        results: dict[str, tuple[str, str]] = {}
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            free = list(dirs)

            def one(t: str) -> tuple[str, tuple[str, str]]:
                d = free.pop()
                try:
                    return t, probe(t, d, env)
                finally:
                    free.append(d)

            for t, result in pool.map(one, types):
                results[t] = result
                print(f"{t}\t{result[0]}\t{result[1][:140]}", flush=True)
    finally:
        stop(proc)
    shutil.rmtree(work, ignore_errors=True)
    counts = {k: sum(1 for o, _ in results.values() if o == k) for k in OUTCOMES}
    not_importable = sorted(t for t, (o, _) in results.items() if o == "unsupported")
    print(f"{len(results)} types: {counts['unsupported']} not importable, {counts['refused']} importable "
          f"(connection refused), {counts['read']} importable (the read failed otherwise), {counts['id']} "
          "importable (id refused)", file=sys.stderr)
    print("not importable: " + " ".join(not_importable), file=sys.stderr)
    unknown = [f"{t}: {line}" for t, (o, line) in results.items() if o == "unknown"]
    if unknown:
        raise ProbeError("outcomes the probe does not know, nothing written:\n" + "\n".join(unknown))
    if not args.dry_run:
        if args.type:
            raise ProbeError("--type probes a few types; write the list only from a full run (add --dry-run)")
        write(not_importable, counts, len(results))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ProbeError as e:
        print(f"probe_import: {e}", file=sys.stderr)
        sys.exit(1)
