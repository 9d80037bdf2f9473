#!/usr/bin/env python3
"""retrace as a system under test for `retrace-eval run --system` (evaluation/src/score/system.rs
describes the contract). Runs `retrace reconcile --write --format json` on the project copy
and turns its findings and rulings into the decisions document the judges read.

    retrace-eval run --system 'python3 evaluation/systems/retrace.py'

The retrace binary: $RETRACE_BIN, else `retrace` on PATH. Exit code: retrace's own.
"""

import json
import os
import subprocess
import sys

KINDS = {"security", "unexplained", "unowned"}


def part_attribute(part):
    """The top-level attribute a ruling's part is about (empty for the whole resource), from
    retrace's `{"part": "attribute"|"block"|"tags"|"resource", "name": ...}`."""
    kind, name = part.get("part"), part.get("name")
    if kind == "attribute":
        return name
    if kind == "block":
        return name["block"]
    if kind == "tags":
        return "tags"
    return ""


def decisions(outcome):
    """The decisions document of retrace's JSON outcome."""
    findings = [
        {
            "kind": f["kind"] if f["kind"] in KINDS else "other",
            "event": "%s:%s" % (f["event_source"], f["api"]),
            "resources": [
                {"address": r.get("address"), "identity": r.get("identity", "")}
                for r in f.get("resources", [])
            ],
        }
        for f in outcome.get("findings", [])
    ]
    ruled = []
    for decided in outcome.get("intents", []):
        for delta, rulings in zip(decided["intent"]["deltas"], decided["rulings"]):
            for ruling in rulings:
                attribute = part_attribute(ruling["part"])
                ruled.append({
                    "address": delta.get("address"),
                    "resource_type": delta["resource"]["resource_type"],
                    "identity": delta["resource"]["identity"],
                    "attribute": attribute,
                    "decision": ruling["decision"],
                })
    return {"findings": findings, "decisions": ruled}


def reconcile(options, flags):
    """Runs `retrace OPTIONS reconcile ... FLAGS` on the contract's inputs, writes the decisions
    document and returns retrace's exit code: `options` are retrace's global options
    (`--config`, `--kb`), `flags` reconcile's own (agent_only.py runs it with others)."""
    env = os.environ
    command = [
        env.get("RETRACE_BIN", "retrace"), *options, "reconcile",
        "--project", env["RETRACE_PROJECT"], "--state", env["RETRACE_STATE"],
        "--observed", env["RETRACE_OBSERVED"], "--logs", env["RETRACE_TRAIL"],
        "--write", "--format", "json", "--no-terraform", *flags,
    ]
    done = subprocess.run(command, capture_output=True, text=True)
    sys.stderr.write(done.stderr)
    if done.returncode not in (0, 2, 3):
        return done.returncode
    with open(env["RETRACE_DECISIONS"], "w") as handle:
        json.dump(decisions(json.loads(done.stdout)), handle)
    return done.returncode


def main():
    return reconcile([], ["--no-record", "--no-agent"])


if __name__ == "__main__":
    sys.exit(main())
