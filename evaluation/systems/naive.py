#!/usr/bin/env python3
"""The naive baseline as a system under test for `retrace-eval run --system`: a language model
given the raw trail and every file of the project whole, asked for the files to change.

    retrace-eval run --system 'python3 evaluation/systems/naive.py'

With RETRACE_MODEL_URL (an OpenAI-compatible chat-completions endpoint), RETRACE_MODEL and
RETRACE_MODEL_KEY set, the model answers. Without an endpoint the scripted stand-in answers
instead: it changes nothing and reports nothing, the floor any system must beat (every
noise-only scenario passes, nearly every other fails). Records the stand-in was used on
standard error, so a result is never mistaken for a model's.
"""

import json
import os
import sys
import urllib.request

PROMPT = (
    "You maintain the Terraform project below. The CloudTrail records show what happened in "
    "the AWS account today. Change the code so a plan against the cloud as it is now shows no "
    "difference, except for changes a person should review (report those instead). Answer "
    'with JSON only: {"files": {"<path>": "<whole new text>"}, "findings": [{"kind": '
    '"security"|"unexplained"|"unowned", "event": "<eventSource>:<eventName>", "resources": '
    '[{"address": "<address or null>", "identity": "<id>"}]}]}'
)


def project_files(root):
    """Every .tf and .tfvars file, by path relative to the project."""
    out = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".terraform")]
        for name in names:
            if name.endswith((".tf", ".tfvars")):
                path = os.path.join(folder, name)
                with open(path) as handle:
                    out[os.path.relpath(path, root)] = handle.read()
    return out


def ask(url, model, key, files, trail):
    """The model's answer to the whole trail and every file."""
    content = PROMPT + "\n\nFILES:\n" + json.dumps(files) + "\n\nTRAIL:\n" + trail
    body = json.dumps({"model": model, "messages": [{"role": "user", "content": content}]})
    request = urllib.request.Request(
        url.rstrip("/") + "/chat/completions", data=body.encode(),
        headers={"Content-Type": "application/json", "Authorization": "Bearer " + key},
    )
    with urllib.request.urlopen(request, timeout=600) as response:
        answer = json.load(response)
    return json.loads(answer["choices"][0]["message"]["content"])


def main():
    env = os.environ
    url = env.get("RETRACE_MODEL_URL")
    if not url:
        sys.stderr.write("naive baseline: no RETRACE_MODEL_URL, the scripted stand-in changes nothing\n")
        return 0
    root = env["RETRACE_PROJECT"]
    with open(env["RETRACE_TRAIL"], "rb") as handle:
        raw = handle.read()
    if env["RETRACE_TRAIL"].endswith(".gz"):
        import gzip
        raw = gzip.decompress(raw)
    answer = ask(url, env.get("RETRACE_MODEL", "gpt-4o"), env.get("RETRACE_MODEL_KEY", ""),
                 project_files(root), raw.decode())
    for path, text in answer.get("files", {}).items():
        target = os.path.normpath(os.path.join(root, path))
        if not target.startswith(os.path.normpath(root) + os.sep):
            sys.stderr.write("naive baseline: ignored a path outside the project: %s\n" % path)
            continue
        with open(target, "w") as handle:
            handle.write(text)
    with open(env["RETRACE_DECISIONS"], "w") as handle:
        json.dump({"findings": answer.get("findings", [])}, handle)
    return 2 if answer.get("files") else 0


if __name__ == "__main__":
    sys.exit(main())
