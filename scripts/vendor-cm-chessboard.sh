#!/usr/bin/env bash
# Re-vendors the board library of `atomzero serve`: cm-chessboard (MIT, by Stefan Haack) from
# the npm registry at a pinned version with its published SHA-512, copied into
# crates/serve/assets/vendor/cm-chessboard/ (the files the pages use: the core, the markers,
# arrows and promotion-dialog extensions, their CSS and sprites, the standard piece sprite and
# the licence). The files are committed and embedded in the binary, so neither a build nor the
# page needs the network; run this only to move to another version (then update the pin here
# and the version in that folder's README.md).
#
# Not vendored: the "staunty" piece sprite (CC BY-NC-SA 4.0, not compatible with the project's
# licence) and the extensions the pages do not use.
#
# Usage: bash scripts/vendor-cm-chessboard.sh
set -euo pipefail
cd "$(dirname "$0")/.."
version=8.15.1
integrity="sha512-oaRmOYskBqkVvY8cPO5J3EhWB/UTncDU8028iM2nG0PLPv9dMZTT0W4Zm7IKvTWrHVvGpc/KbKbeFAuxb8uMFg=="
dest=crates/serve/assets/vendor/cm-chessboard

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "cm-chessboard@$version" > /dev/null)
tarball="$work/cm-chessboard-$version.tgz"
got=$(node -e 'const f = require("fs"), c = require("crypto");
  process.stdout.write("sha512-" + c.createHash("sha512").update(f.readFileSync(process.argv[1])).digest("base64"))' "$tarball")
if [ "$got" != "$integrity" ]; then
  echo "vendor-cm-chessboard.sh: $tarball has $got, expected $integrity" >&2
  exit 1
fi
tar xzf "$tarball" -C "$work"
files=(
  LICENSE
  src/Chessboard.js
  src/lib/Svg.js src/lib/Utils.js
  src/model/ChessboardState.js src/model/Extension.js src/model/Position.js
  src/view/ChessboardView.js src/view/PositionAnimationsQueue.js src/view/VisualMoveInput.js
  src/extensions/markers/Markers.js
  src/extensions/arrows/Arrows.js
  src/extensions/promotion-dialog/PromotionDialog.js
  assets/chessboard.css
  assets/pieces/standard.svg
  assets/extensions/markers/markers.css assets/extensions/markers/markers.svg
  assets/extensions/arrows/arrows.css assets/extensions/arrows/arrows.svg
  assets/extensions/promotion-dialog/promotion-dialog.css
)
for f in "${files[@]}"; do
  mkdir -p "$dest/$(dirname "$f")"
  cp "$work/package/$f" "$dest/$f"
done
echo "vendored cm-chessboard $version into $dest (${#files[@]} files)"
