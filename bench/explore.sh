#!/usr/bin/env bash
# carve explore over real crates (issue 28): per crate set up by bench/test-quality.sh --work DIR
# (its recording, WORK/CRATE/trace.db with --coverage; the run's lines by callgrind,
# WORK/CRATE/app.lines; the full carved suite, WORK/CRATE/suite-full):
#   carve explore --db trace.db --crate lib --out lib/tests --budget 60s --seed 1 --format json
# then, judged by tools that are not carve:
#   - callgrind on the explored test binary: the crate lines it runs that the recorded run never
#     ran (bench/callgrind_lines.py), beside carve's own figure from the harness's coverage;
#   - WORK/CRATE/suite-explored (the full carved suite and the explored tests) for
#     bench/mutants.sh --suites "full explored" --scope functions (with --mutants).
#
# A benchmark, not a test: not part of .ci/run or of `cargo test`.
#
# Usage: bench/explore.sh --work DIR [--budget 60s] [--strategy S] [--length N] [--mutants] CRATE...
# Environment: CARVE (prebuilt carve; default: built in release here).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LINES_PY=$ROOT/bench/callgrind_lines.py
WORK=""
BUDGET=60s
STRATEGY=bobw
LENGTH=3
MUTANTS=0
CRATES=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --work) WORK=$2; shift 2 ;;
        --budget) BUDGET=$2; shift 2 ;;
        --strategy) STRATEGY=$2; shift 2 ;;
        --length) LENGTH=$2; shift 2 ;;
        --mutants) MUTANTS=1; shift ;;
        -h|--help) sed -n '2,/^set -uo/p' "$0" | sed 's/^# \{0,1\}//' | head -n -1; exit 0 ;;
        *) CRATES+=("$1"); shift ;;
    esac
done
if [[ -z "$WORK" || ${#CRATES[@]} -eq 0 ]]; then
    echo "usage: bench/explore.sh --work DIR CRATE... (DIR as bench/test-quality.sh --work left it)" >&2
    exit 2
fi
if [[ -z "${CARVE:-}" ]]; then
    (cd "$ROOT" && cargo build --release --quiet) || exit 1
    CARVE=${CARGO_TARGET_DIR:-$ROOT/target}/release/carve
fi
command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
unset CARGO_TARGET_DIR

echo "| crate | explored / left out | calls | calls/s in the harness | kept (verified) | findings | run lines (callgrind) | explored tests' lines beyond the run (callgrind) | carve's count beyond the run |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for c in "${CRATES[@]}"; do
    d=$WORK/$c
    if [[ ! -s "$d/trace.db" || ! -s "$d/app.lines" ]]; then
        echo "| $c | no $d/trace.db or app.lines: run bench/test-quality.sh --work $WORK $c first |"
        continue
    fi
    rm -f "$d"/lib/tests/explored_*
    (cd "$d" && CARGO_TARGET_DIR=$d/target "$CARVE" explore --db trace.db --crate lib --out lib/tests \
        --budget "$BUDGET" --seed 1 --strategy "$STRATEGY" --length "$LENGTH" --format json \
        >"$d/explore.json" 2>"$d/explore.err")
    mkdir -p "$d/cg"
    : >"$d/explored.lines"
    f=$(ls "$d"/lib/tests/explored_*.rs 2>/dev/null | head -1)
    if [[ -n "$f" ]]; then
        t=$(basename "$f" .rs)
        exe=$(cd "$d/lib" && CARGO_TARGET_DIR=$d/target cargo test --quiet --no-run --message-format=json \
            --test "$t" 2>"$d/explored-build.err" | python3 -c '
import json, sys
for line in sys.stdin:
    try: m = json.loads(line)
    except ValueError: continue
    # The test target itself: a package with a binary builds it for its tests too.
    if m.get("reason") == "compiler-artifact" and m.get("executable") \
            and m["target"]["kind"] == ["test"] and m["target"]["name"] == sys.argv[1]:
        print(m["executable"])' "$t" | tail -1)
        if [[ -n "$exe" ]]; then
            (cd "$d/lib" && valgrind --tool=callgrind --dump-instr=no --compress-strings=no \
                --compress-pos=no --callgrind-out-file="$d/cg/explored.out" "$exe" --test-threads=1 \
                >"$d/explored.out" 2>"$d/cg/explored.err")
            python3 "$LINES_PY" --under "$d/lib/src" --relative-to "$d/lib" "$d/cg/explored.out" \
                >"$d/explored.lines"
        fi
        rm -rf "$d/suite-explored" && mkdir -p "$d/suite-explored"
        cp "$d"/suite-full/*.rs "$d/suite-explored/" 2>/dev/null
        cp "$f" "$d/suite-explored/"
    fi
    python3 - "$d" "$c" <<'PY'
import json, sys
d, name = sys.argv[1:3]
try:
    r = json.load(open(f"{d}/explore.json"))
except (OSError, ValueError):
    err = open(f"{d}/explore.err").read().strip().splitlines()
    print(f"| {name} | carve explore failed: {err[-1] if err else '?'} |")
    sys.exit(0)
app = set(open(f"{d}/app.lines").read().split())
explored = set(open(f"{d}/explored.lines").read().split())
beyond = explored - app
hs = r["calls_run"] / r["harness_seconds"] if r.get("harness_seconds") else 0
lines = r.get("lines") or {}
carve_beyond = (f"{len(lines['Ok']['beyond'])} (+{100 * len(lines['Ok']['beyond']) / max(1, lines['Ok']['run']):.0f}%)"
                if "Ok" in lines else f"not counted: {lines.get('Err', '?')}")
print(f"| {name} | {len(r['explored'])} / {len(r['left_out'])} | {r['calls_run']:,} | {hs:,.0f} "
      f"| {r['tests_kept']} of {r['tests_written']} | {len(r['findings'])} | {len(app)} "
      f"| {len(beyond)} (+{100 * len(beyond) / max(1, len(app)):.0f}%) | {carve_beyond} |")
PY
done
if [[ $MUTANTS == 1 ]]; then
    echo
    "$ROOT/bench/mutants.sh" --work "$WORK" --suites "full explored" --scope functions "${CRATES[@]}"
fi
