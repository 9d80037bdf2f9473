"""Loads a retrace-drift dataset (the export of `retrace-eval dataset`) with the Python
standard library only.

    from load import Dataset
    ds = Dataset("target/dataset")          # checks MANIFEST.json's checksums of small files
    for sc in ds.scenarios():
        sc.meta["category"], sc.meta["expect"]   # the ground truth (scenario.json)
        sc.project_dir                           # the fixture project (code + terraform.tfstate)
        sc.post_state()                          # the whole post-drift state, as a dict
        for record in sc.trail():                # every CloudTrail record, delivery order
            ...

Running `python3 load.py DIR` checks every file, the trails included, and prints counts.
"""

import gzip
import hashlib
import json
import os
import sys


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class Scenario:
    """One scenario: its metadata, project, post-drift state and trail."""

    def __init__(self, root, line):
        self.root = root
        self.index = line
        self.dir = os.path.join(root, line["dir"])
        with open(os.path.join(self.dir, "scenario.json")) as handle:
            self.meta = json.load(handle)
        self.project_dir = os.path.join(root, "projects", self.meta["project"])

    def trail(self):
        """Every record the system under test reads, in delivery order."""
        with gzip.open(os.path.join(self.dir, "trail.jsonl.gz"), "rt") as handle:
            for line in handle:
                yield json.loads(line)

    def post_state(self):
        """The post-drift state: the project's state with the delta applied (changed
        instances replaced, removed ones dropped, created ones added)."""
        with open(os.path.join(self.project_dir, "terraform.tfstate")) as handle:
            base = json.load(handle)
        with open(os.path.join(self.dir, "post.tfstate")) as handle:
            delta = json.load(handle)
        removed = set(delta.get("removed", []))
        changed = {}
        for resource in delta.get("resources", []):
            for instance in resource.get("instances", []):
                changed[_address(resource, instance)] = (resource, instance)
        resources = []
        for resource in base.get("resources", []):
            kept = []
            for instance in resource.get("instances", []):
                address = _address(resource, instance)
                if address in removed:
                    continue
                kept.append(changed.pop(address, (None, instance))[1])
            if kept:
                resources.append(dict(resource, instances=kept))
        for resource, instance in changed.values():
            resources.append(dict(resource, instances=[instance]))
        return dict(base, resources=resources)


def _address(resource, instance):
    """The instance address Terraform prints: module path, type.name, index key."""
    address = "%s.%s" % (resource["type"], resource["name"])
    if resource.get("mode") == "data":
        address = "data." + address
    if resource.get("module"):
        address = resource["module"] + "." + address
    key = instance.get("index_key")
    if isinstance(key, str):
        address += '["%s"]' % key
    elif key is not None:
        address += "[%d]" % key
    return address


class Dataset:
    """A dataset directory: its manifest and scenarios."""

    def __init__(self, root):
        self.root = root
        with open(os.path.join(root, "MANIFEST.json")) as handle:
            self.manifest = json.load(handle)
        for path, entry in self.manifest["files"].items():
            if not path.endswith("trail.jsonl.gz"):
                self._check(path, entry)

    def _check(self, path, entry):
        actual = _sha256(os.path.join(self.root, path))
        if actual != entry["sha256"]:
            raise ValueError("%s: SHA-256 %s, manifest names %s" % (path, actual, entry["sha256"]))

    def verify_trails(self):
        """Checks every trail against the manifest (reads them all)."""
        for path, entry in self.manifest["files"].items():
            if path.endswith("trail.jsonl.gz"):
                self._check(path, entry)

    def scenarios(self):
        """Every scenario, in the index's order."""
        with open(os.path.join(self.root, "index.jsonl")) as handle:
            for line in handle:
                if line.strip():
                    yield Scenario(self.root, json.loads(line))


def main(root):
    dataset = Dataset(root)
    dataset.verify_trails()
    scenarios = records = 0
    for scenario in dataset.scenarios():
        scenarios += 1
        records += sum(1 for _ in scenario.trail())
        scenario.post_state()
    manifest = dataset.manifest
    print("%s %s: %d scenarios, %d records, every checksum matches"
          % (manifest["name"], manifest["version"], scenarios, records))
    if records != manifest["records"] or scenarios != manifest["scenarios"]:
        raise SystemExit("counts differ from the manifest's")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "target/dataset")
