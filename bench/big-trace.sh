#!/usr/bin/env bash
# Memory of carve on a big trace (issue 14 "Trust", item 3: `generate` on 1,000,000 calls within
# 500 MB, `show` streaming). Builds bench/big-trace (a hot loop of 334 calls per round of a few
# public functions, most of them alike), records ROUNDS rounds with `carve record`, then measures
# the wall time and peak resident memory (`/usr/bin/time -v`, "Maximum resident set size") of
#   carve record, carve show (text), carve show --format json, carve generate --no-verify
# and prints one Markdown table (docs/performance.md, "Big traces"). A benchmark, not a test.
#
# Usage: bench/big-trace.sh [--keep DIR] [ROUNDS]      (default 3000 rounds: 1,002,021 calls)
#   --keep DIR   work in DIR and leave it there (default: a temp dir, removed)
# Environment: CARVE (prebuilt carve; default: the repo's target/release/carve, built if missing),
#   GOAL_MB (the generate goal checked at the end; default 500).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KEEP=""
ROUNDS=3000
while [[ $# -gt 0 ]]; do
    case "$1" in
        --keep) KEEP=$2; shift 2 ;;
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

rm -rf "$WORK/bigtrace" "$WORK"/trace.db*
cp -r "$ROOT/bench/big-trace" "$WORK/bigtrace"
(cd "$WORK/bigtrace" && cargo build --quiet) || { echo "big-trace: the program did not build" >&2; exit 2; }
mkdir -p "$WORK/bigtrace/tests"
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

echo "| step | exit | wall (m:ss) | peak RSS (MB) |"
echo "| --- | ---: | ---: | ---: |"
(cd "$WORK" && measure record "$CARVE" record --db trace.db -- "$APP" "$ROUNDS")
calls=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT COUNT(*) FROM calls').fetchone()[0])" "$WORK/trace.db")
measure show "$CARVE" show --db "$WORK/trace.db"
measure show-json "$CARVE" show --db "$WORK/trace.db" --format json
measure generate "$CARVE" generate --db "$WORK/trace.db" --crate "$WORK/bigtrace" \
    --out "$WORK/bigtrace/tests" --no-verify
generate_mb=$LAST_MB
echo
echo "calls=$calls trace_mb=$(($(stat -c %s "$WORK/trace.db") / 1048576)) show_lines=$(wc -l <"$WORK/show.out")"
tail -n 1 "$WORK/generate.out"
if [[ $generate_mb -le $GOAL_MB ]]; then
    echo "generate: ${generate_mb} MB at $calls calls, within the ${GOAL_MB} MB goal"
else
    echo "generate: ${generate_mb} MB at $calls calls, over the ${GOAL_MB} MB goal" >&2
    exit 1
fi
