#!/usr/bin/env bash
# Installs (once) what the browser test of `atomzero serve` needs and prints two lines: the path
# of Debian's chromium and the node_modules directory holding playwright-core.
#
# - chromium: Debian's package (apt-get; with sudo -n when not root), /usr/bin/chromium.
#   Playwright's own browser download is not used (it cannot be fetched here): playwright-core
#   drives the system browser through the DevTools protocol.
# - playwright-core: a pinned version from the npm registry, its tarball checked against the
#   pinned SHA-512 (npm pack), unpacked into $ATOMZERO_CACHE/node (default
#   ~/.cache/atomzero/node). It has no dependencies.
#
# Exits non-zero with the reason on stderr if either cannot be installed.
# Usage: bash scripts/browser-env.sh
set -euo pipefail
version=1.65.1
integrity="sha512-hqPpz7blSMPxWVdoeE1yiBSzXsKiVOd2k+kjCvmUywD2GPO2Dd9HfcWnq9NN0GHbNZDFgZ9JfBFr+X5/BLo0qw=="
cache="${ATOMZERO_CACHE:-$HOME/.cache/atomzero}/node"
modules="$cache/node_modules"
chromium=/usr/bin/chromium

if [ ! -x "$chromium" ]; then
  sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo -n"; fi
  log=$(mktemp)
  echo "browser-env.sh: installing Debian's chromium (apt-get)" >&2
  if ! { $sudo apt-get update -qq && \
         DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
           chromium fonts-dejavu-core; } > "$log" 2>&1 || [ ! -x "$chromium" ]; then
    echo "browser-env.sh: could not install chromium: $(tail -n 1 "$log")" >&2
    rm -f "$log"
    exit 1
  fi
  rm -f "$log"
fi

installed=$(sed -n 's/^ *"version": "\(.*\)",*$/\1/p' "$modules/playwright-core/package.json" 2>/dev/null | head -n 1 || true)
if [ "$installed" != "$version" ]; then
  command -v npm > /dev/null || { echo "browser-env.sh: npm not found (Node.js 20 or newer is needed)" >&2; exit 1; }
  echo "browser-env.sh: installing playwright-core $version into $cache" >&2
  mkdir -p "$cache"
  work=$(mktemp -d "$cache/install.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack --silent "playwright-core@$version" > /dev/null) || {
    echo "browser-env.sh: npm pack playwright-core@$version failed" >&2; exit 1; }
  tarball="$work/playwright-core-$version.tgz"
  got=$(node -e 'const f = require("fs"), c = require("crypto");
  process.stdout.write("sha512-" + c.createHash("sha512").update(f.readFileSync(process.argv[1])).digest("base64"))' "$tarball")
  if [ "$got" != "$integrity" ]; then
    echo "browser-env.sh: $tarball has $got, expected $integrity" >&2
    exit 1
  fi
  mkdir -p "$work/unpacked"
  tar xzf "$tarball" -C "$work/unpacked"
  mkdir -p "$modules"
  rm -rf "$modules/playwright-core"
  mv "$work/unpacked/package" "$modules/playwright-core"
fi
echo "$chromium"
echo "$modules"
