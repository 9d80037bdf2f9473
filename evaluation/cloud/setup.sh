#!/usr/bin/env bash
# Creates (or reuses) the virtual environment of the moto end-to-end check and installs
# evaluation/cloud/requirements.txt into it. Idempotent: when the venv already holds the
# requirements it was last installed with (a stamp file), it returns at once.
#
# Usage: evaluation/cloud/setup.sh [VENV_DIR]    (default: <repo>/target/cloud-venv)
# Prints the venv's python path on the last line of stdout.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="${1:-${CLOUD_VENV:-$repo/target/cloud-venv}}"
req="$here/requirements.txt"
python="${PYTHON:-python3}"

if [ ! -x "$venv/bin/python" ]; then
    echo "creating the venv $venv" >&2
    mkdir -p "$(dirname "$venv")"
    "$python" -m venv "$venv"
fi

# Already installed? The stamp holds the requirements.txt last installed; moto_server must exist.
stamp="$venv/.cloud-requirements"
if [ -f "$stamp" ] && cmp -s "$stamp" "$req" && [ -x "$venv/bin/moto_server" ]; then
    echo "the venv $venv is up to date" >&2
else
    echo "installing $req into $venv" >&2
    # --no-compile: Python compiles the few modules the check imports when it first runs,
    # instead of pip compiling every file of botocore and moto ahead.
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-compile -r "$req"
    cp "$req" "$stamp"
fi
echo "$venv/bin/python"
