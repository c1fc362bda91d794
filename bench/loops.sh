#!/usr/bin/env bash
# A trace grows with behaviour, not with loops (issue 29: a test calling a few library
# functions 10M times in a loop gives a trace under 100 MB by default).
#
# Records the `loops` fixture's integration test (tests/many.rs: rounds of `classify(i % 10)`,
# `percent(i % 4, i % 3)`, `Window::contains(i % 10)` and a derived `Size == Size`) with
# LOOPS_CALLS=10,000,000 (13.3M recorded calls) by default, where alike calls are counted as
# repeats, not stored; then the same test with --all-calls at 1,000,000 (every call stored; the
# size per call it shows is what the default saves). Prints one Markdown row per recording:
# calls, calls stored, wall time, peak RSS of carve, trace size. A benchmark, not a CI test.
#
# Usage: bench/loops.sh [CALLS]      Environment: CARVE (default target/release/carve)
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CALLS=${1:-10000000}
CARVE=${CARVE:-$ROOT/target/release/carve}
[[ -x "$CARVE" ]] || (cd "$ROOT" && cargo build --release --quiet) || exit 1
CARVE=$(realpath "$CARVE")
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
cp -r "$ROOT/fixtures/loops" "$W/loops"
printf '\n[workspace]\n' >>"$W/loops/Cargo.toml"
BIN=$(cd "$W/loops" && cargo test --no-run --offline --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("target", {}).get("name") == "many" and m.get("executable"): print(m["executable"])')
[[ -x "$BIN" ]] || { echo "could not build the loops fixture's test" >&2; exit 1; }

echo "| recording | LOOPS_CALLS | calls recorded | calls stored | wall (s) | peak RSS (MB) | trace (MB) | bytes per recorded call |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
row() { # LABEL CALLS ARGS...
    local label=$1 calls=$2; shift 2
    rm -f "$W/t.db"*
    LOOPS_CALLS=$calls /usr/bin/time -f "%e %M" -o "$W/time.txt" \
        "$CARVE" record --db "$W/t.db" --crate loops "$@" -- "$BIN" >/dev/null 2>"$W/err.txt" || {
        cat "$W/err.txt" >&2; return 1; }
    read -r wall rss <"$W/time.txt"
    local recorded stored bytes
    recorded=$(grep -o 'recorded [0-9]* calls' "$W/err.txt" | grep -o '[0-9]*')
    stored=$(sqlite3 "$W/t.db" 'SELECT count(*) FROM calls')
    bytes=$(cat "$W/t.db"* | wc -c)
    echo "| $label | $calls | $recorded | $stored | $wall | $((rss / 1024)) | $((bytes / 1048576)) | $((bytes / recorded)) |"
}
row "default (alike calls counted)" "$CALLS"
row "--all-calls" $((CALLS / 10)) --all-calls
