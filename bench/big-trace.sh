#!/usr/bin/env bash
# Memory of carve on big traces (issue 14 "Trust", item 3: `generate` on 1,000,000 calls within
# 500 MB, `show` streaming). Builds bench/big-trace (a hot loop of 334 calls per round of a few
# public functions) and records ROUNDS rounds of it twice with `carve record`: once as it is
# (most calls alike: "equivalent"), once with `distinct` (no two calls alike). On each trace it
# measures the wall time and peak resident memory (`/usr/bin/time -v`, "Maximum resident set
# size") of
#   carve record, carve show (text), carve show --format json, carve generate --no-verify
# and prints one Markdown table (docs/performance.md, "Big traces"). A benchmark, not a test.
#
# Usage: bench/big-trace.sh [--keep DIR] [--only equivalent|distinct] [ROUNDS]
#                                          (default 3000 rounds: 1,002,021 calls per trace)
#   --keep DIR   work in DIR and leave it there (default: a temp dir, removed)
#   --only KIND  record and measure one of the two traces
# Environment: CARVE (prebuilt carve; default: the repo's target/release/carve, built if missing),
#   GOAL_MB (the generate goal checked at the end; default 500).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KEEP=""
ONLY=""
ROUNDS=3000
while [[ $# -gt 0 ]]; do
    case "$1" in
        --keep) KEEP=$2; shift 2 ;;
        --only) ONLY=$2; shift 2
                [[ "$ONLY" == equivalent || "$ONLY" == distinct ]] || { echo "big-trace: --only takes equivalent or distinct, not '$ONLY'" >&2; exit 2; } ;;
        -h|--help) sed -n '2,/^set -uo/p' "$0" | sed 's/^# \{0,1\}//' | head -n -1; exit 0 ;;
        *) [[ "$1" =~ ^[0-9]+$ ]] || { echo "big-trace: ROUNDS must be a number, not '$1'" >&2; exit 2; }
           ROUNDS=$1; shift ;;
    esac
done
GOAL_MB=${GOAL_MB:-500}
[[ -x /usr/bin/time ]] || { echo "big-trace: /usr/bin/time is needed (apt-get install time)" >&2; exit 2; }
if [[ -z "${CARVE:-}" ]]; then
    (cd "$ROOT" && cargo build --release --quiet) || exit 2
    CARVE=$ROOT/target/release/carve
fi
if [[ -n "$KEEP" ]]; then
    mkdir -p "$KEEP" && WORK=$(cd "$KEEP" && pwd)
else
    WORK=$(mktemp -d) && trap 'rm -rf "$WORK"' EXIT
fi

rm -rf "$WORK/bigtrace" "$WORK"/*.db*
cp -r "$ROOT/bench/big-trace" "$WORK/bigtrace"
(cd "$WORK/bigtrace" && cargo build --quiet) || { echo "big-trace: the program did not build" >&2; exit 2; }
APP=$WORK/bigtrace/target/debug/bigtrace

# measure NAME COMMAND...: one table row from /usr/bin/time -v; stdout goes to $WORK/NAME.out.
measure() {
    local name=$1; shift
    /usr/bin/time -v "$@" >"$WORK/$name.out" 2>"$WORK/$name.time"
    local code=$?
    local rss wall
    rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$WORK/$name.time")
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$WORK/$name.time")
    printf '| %s | %s | %s | %d |\n' "$name" "$code" "$wall" $((rss / 1024))
    [[ $code -eq 0 ]] || sed -n '1,5p' "$WORK/$name.time" | sed "s/^/    $name: /" >&2
    LAST_MB=$((rss / 1024))
}

FAILED=0
# trace KIND [distinct]: record one trace and measure every reading command on it.
trace() {
    local kind=$1; shift
    local db=$WORK/$kind.db out=$WORK/tests-$kind
    rm -rf "$out" && mkdir -p "$out"
    echo "| $kind: step | exit | wall (m:ss) | peak RSS (MB) |"
    echo "| --- | ---: | ---: | ---: |"
    (cd "$WORK" && measure "$kind-record" "$CARVE" record --db "$db" -- "$APP" "$ROUNDS" "$@")
    local calls
    calls=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT COUNT(*) FROM calls').fetchone()[0])" "$db")
    measure "$kind-show" "$CARVE" show --db "$db"
    measure "$kind-show-json" "$CARVE" show --db "$db" --format json
    measure "$kind-generate" "$CARVE" generate --db "$db" --crate "$WORK/bigtrace" --out "$out" --no-verify
    local generate_mb=$LAST_MB
    echo
    echo "$kind: calls=$calls trace_mb=$(($(stat -c %s "$db") / 1048576)) show_lines=$(wc -l <"$WORK/$kind-show.out") test_files=$(ls "$out" | wc -l) tests=$(cat "$out"/*.rs 2>/dev/null | grep -c '#\[test\]')"
    tail -n 1 "$WORK/$kind-generate.out"
    if [[ $generate_mb -le $GOAL_MB ]]; then
        echo "$kind generate: ${generate_mb} MB at $calls calls, within the ${GOAL_MB} MB goal"
    else
        echo "$kind generate: ${generate_mb} MB at $calls calls, over the ${GOAL_MB} MB goal" >&2
        FAILED=1
    fi
    echo
}

[[ -z "$ONLY" || "$ONLY" == equivalent ]] && trace equivalent
[[ -z "$ONLY" || "$ONLY" == distinct ]] && trace distinct distinct
exit $FAILED
