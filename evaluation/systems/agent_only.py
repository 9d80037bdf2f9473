#!/usr/bin/env python3
"""retrace without its knowledge base, as a system under test for `retrace-eval run --system`:
the `retrace` binary with no shipped rules (`reconcile --no-shipped-rules`) and an empty
knowledge store of its own, so every out-of-band call goes to the drift learner and then to
the agent.

    retrace-eval run --system 'python3 evaluation/systems/agent_only.py'

The agent's model: with RETRACE_MODEL_URL (an OpenAI-compatible API's base URL, as naive.py
reads it), RETRACE_MODEL and RETRACE_MODEL_KEY set, that endpoint; with RETRACE_SCRIPTED_MODEL=1
and no URL, the scripted model `retrace-eval model` serves on its default port (start it
first). With neither the agent is absent and the calls the drift learner cannot explain stay
unexplained; that is said on standard error, so a result is never mistaken for a model's.
The retrace binary: $RETRACE_BIN, else `retrace` on PATH. The decisions document is
retrace.py's. Exit code: retrace's own.
"""

import json
import os
import sys
import tempfile

from retrace import reconcile

SCRIPTED_URL = "http://127.0.0.1:8399/v1"


def agent_table(env):
    """The `[agent]` table for the configured endpoint, or None when there is none."""
    url = env.get("RETRACE_MODEL_URL")
    model = env.get("RETRACE_MODEL", "gpt-4o")
    if not url and env.get("RETRACE_SCRIPTED_MODEL") == "1":
        url, model = SCRIPTED_URL, env.get("RETRACE_MODEL", "scripted")
    if not url:
        return None
    lines = [
        "[agent]",
        'api = "openai"',
        "endpoint = %s" % json.dumps(url.rstrip("/") + "/chat/completions"),
        "model = %s" % json.dumps(model),
    ]
    if env.get("RETRACE_MODEL_KEY"):
        lines.append('api_key_env = "RETRACE_MODEL_KEY"')
    return "\n".join(lines) + "\n"


def main():
    table = agent_table(os.environ)
    if table is None:
        sys.stderr.write(
            "agent only: no RETRACE_MODEL_URL or RETRACE_SCRIPTED_MODEL=1, the agent is absent "
            "(calls the drift learner cannot explain stay unexplained)\n"
        )
    with tempfile.TemporaryDirectory(prefix="retrace-agent-only-") as work:
        config = os.path.join(work, "retrace.toml")
        with open(config, "w") as handle:
            handle.write(table or "")
        options = ["--config", config, "--kb", os.path.join(work, "knowledge.sqlite")]
        flags = ["--no-shipped-rules"] + ([] if table else ["--no-agent"])
        return reconcile(options, flags)


if __name__ == "__main__":
    sys.exit(main())
