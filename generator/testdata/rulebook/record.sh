#!/usr/bin/env bash
# Records trace.db again: builds a copy of this crate (debug, as a user's program is) and records
# its program with carve (every function of the crate, `Display` impls included), leaving
# Tag::append_raw unrecorded (the `text` rule's case: a state no
# recorded call leads to). Run it after changing src/ or when the trace format moves on; the
# generator's tests read trace.db with the recorded source paths pointed here.
# Usage: generator/testdata/rulebook/record.sh [CARVE]   (default: the workspace's release carve)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
carve=${1:-$here/../../../target/release/carve}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/rulebook"
cp -r "$here/Cargo.toml" "$here/src" "$work/rulebook/"
(cd "$work/rulebook" && cargo build --quiet)
rm -f "$here/trace.db"
(cd "$work/rulebook" && "$carve" record -q --db "$here/trace.db" \
    --filter 'rulebook::*' --exclude 'rulebook::Tag::append_raw' -- target/debug/rulebook \
    >/dev/null 2>&1)
# The copy checked in: its journal folded in, on 4 KiB pages (a third of the size).
sqlite3 "$here/trace.db" "PRAGMA journal_mode=DELETE; PRAGMA page_size=4096; VACUUM;" >/dev/null
echo "recorded $here/trace.db"
