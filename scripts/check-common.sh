# Sourced by the Python-backed checks in scripts/checks/ (not run on its own): moves to the
# repository root, points cargo at the shared target dir, makes a work dir `$work` removed on
# exit, and defines `python_or_skip CHECK PACKAGES [REQUIREMENTS]`, which sets `$python` to the project's venv
# (scripts/python-env.sh) or prints `SKIP CHECK: ...` with the installer's last error line and
# ends the check with exit 0.
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/atomzero/target}"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python_or_skip() {
  if ! python=$(bash scripts/python-env.sh "${3:-scripts/requirements.txt}" 2> "$work/env.err"); then
    local reason
    reason=$(grep -v '^[[:space:]]*$' "$work/env.err" | tail -n 1)
    echo "SKIP $1: could not install $2 (${reason:-scripts/python-env.sh failed})"
    exit 0
  fi
}
