#!/usr/bin/env bash
# Creates (once) the Python virtual environment used by the cross-check scripts and installs
# the pinned packages of scripts/requirements.txt (or of the requirements file given as the
# first argument, e.g. scripts/requirements-s3.txt with ATOMZERO_VENV set to its own venv) from
# the package index. Prints the path of the
# environment's python on success; exits non-zero (with the reason on stderr) if the install
# fails, so callers can skip with a printed reason.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${ATOMZERO_VENV:-$HOME/.cache/atomzero/venv}"
req="${1:-scripts/requirements.txt}"
stamp="$venv/.requirements.sha256"
want=$(sha256sum "$req" | cut -d' ' -f1)
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" >&2
fi
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req" >&2
  echo "$want" > "$stamp"
fi
echo "$venv/bin/python"
