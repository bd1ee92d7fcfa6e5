#!/usr/bin/env bash
# The newcomer's path, as README.md writes it: clone the committed tree into
# a fresh directory and run the quick-start block there, line by line, as
# written; then the README's checked examples and every subcommand's
# --help. The clone builds into a target directory of its own
# (target/fresh-clone/target, kept between runs): cargo names a workspace's
# build outputs by paths relative to the workspace, so a clone sharing this
# checkout's target/ would leave its test binaries, pointing into the
# clone, in this checkout's place.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
base="$repo/target/fresh-clone"
fresh="$base/ori"
rm -rf "$fresh"
mkdir -p "$base"
git clone --quiet --no-hardlinks "$repo" "$fresh"
export CARGO_TARGET_DIR="$base/target"

# The lines of the ```sh block between <!-- quickstart --> and <!-- /quickstart -->.
mapfile -t commands < <(awk '
  /<!-- quickstart -->/ { on = 1; next }
  /<!-- \/quickstart -->/ { on = 0 }
  on && /^```/ { next }
  on && NF && $1 !~ /^#/ { print }
' "$fresh/README.md")
if [ "${#commands[@]}" -eq 0 ]; then
  echo "quickstart: README.md has no quick-start block" >&2
  exit 1
fi

cd "$fresh"
for c in "${commands[@]}"; do
  echo "quickstart \$ $c"
  start=$(date +%s)
  bash -c "$c"
  echo "quickstart: '$c' took $(( $(date +%s) - start )) s"
done

# The README's other checked examples: each ```sh block after a
# `<!-- ci: run with ori on PATH -->` line, run whole, with the release
# binaries on PATH as an installed ori would be.
export PATH="$CARGO_TARGET_DIR/release:$PATH"
rm -f "$base"/example*.sh
awk '
  /<!-- ci: run with ori on PATH -->/ { want = 1; next }
  want && /^```sh/ { on = 1; want = 0; n++; next }
  on && /^```/ { on = 0; next }
  on { print > (dir "/example" n ".sh") }
 ' dir="$base" "$fresh/README.md"
for ex in "$base"/example*.sh; do
  [ -e "$ex" ] || { echo "quickstart: README.md has no checked example" >&2; exit 1; }
  echo "quickstart: README example:"; cat "$ex"
  bash -euo pipefail "$ex"
done

ori="$CARGO_TARGET_DIR/release/ori"
# (`ori ptxas --help` is the real ptxas's help: its arguments pass through.)
for sub in "" compile scan run explain passes; do
  # shellcheck disable=SC2086
  if ! out="$("$ori" $sub --help 2>&1)" || [ -z "$out" ]; then
    echo "quickstart: 'ori $sub --help' failed:" >&2
    echo "$out" >&2
    exit 1
  fi
done
echo "quickstart: README commands and every --help ran in a fresh clone"
