#!/usr/bin/env bash
# Line coverage from `carve record --coverage` against valgrind's callgrind on the same binary and
# input, and what --coverage costs in wall time (docs/coverage.md).
#
# For each Rust fixture (and, with --crates DIR, each crate a `bench/real-crates.sh --keep DIR`
# left there):
#   1. carve record --coverage, then carve coverage --lcov: the lines with code in the selected
#      functions (DA) and those reached (DA:n,1);
#   2. valgrind --tool=callgrind --dump-instr=no --collect-jumps=no, read by
#      bench/callgrind_lines.py: the lines of the same source directory that ran;
#   3. both sets restricted to the selected code's files (the fixture's or crate's src/), and
#      compared both ways:
#        carve->cg  share of the lines carve reached that callgrind also saw run
#        cg->carve  share of the lines callgrind saw run, among carve's lines with code, that
#                   carve reached
#      `cg outside` counts lines callgrind saw run that carve has no code for (functions outside
#      the selection, such as derived or formatting impls); they are listed, not scored;
#   4. wall time of `record` and `record --coverage`, side by side, REPS times each (median).
# Lines that disagree are written to $OUT/<name>.diff ("carve-only" / "callgrind-only" lines).
#
# Usage: bench/coverage-agreement.sh [--reps N] [--crates DIR] [--out DIR] [FIXTURE...]
#   CARVE=path/to/carve overrides the carve binary (default: this checkout's release build).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LINES_PY=$ROOT/bench/callgrind_lines.py
REPS=5
CRATES=""
OUT=""
while [[ $# -gt 0 ]]; do
    case $1 in
        --reps) REPS=$2; shift 2 ;;
        --crates) CRATES=$(cd "$2" && pwd); shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        *) break ;;
    esac
done
FIXTURES=("$@")
[[ ${#FIXTURES[@]} -gt 0 ]] || FIXTURES=(abc account catalog dao dice expr hotloop mouse returns threads versioned_set)

if ! command -v valgrind >/dev/null; then
    echo "installing valgrind" >&2
    apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >&2 \
        || { echo "cannot install valgrind" >&2; exit 1; }
fi
if [[ -z "${CARVE:-}" ]]; then
    cargo build --release --quiet --manifest-path "$ROOT/Cargo.toml" || exit 1
    CARVE=$ROOT/target/release/carve
fi
WORK=$(mktemp -d -t carve-coverage-agreement-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
OUT=${OUT:-$WORK/out}
mkdir -p "$OUT"
cargo build --quiet --manifest-path "$ROOT/fixtures/Cargo.toml" --target-dir "$ROOT/fixtures/target" || exit 1

# Wall seconds of one command (its output discarded).
seconds() {
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc -l
}

# compare NAME DIR SRC BIN [ARGS...] -- runs in DIR; SRC is the selected code's source directory;
# FILTER (environment) is the --filter to record with, empty for the default selection.
compare() {
    local name=$1 dir=$2 src=$3 bin=$4
    shift 4
    local w=$WORK/$name
    mkdir -p "$w"
    local sel=()
    [[ -n "${FILTER:-}" ]] && sel=(--filter "$FILTER")
    (cd "$dir" && "$CARVE" record --coverage --db "$w/trace.db" "${sel[@]}" -- "$bin" "$@" >/dev/null 2>"$w/record.err") \
        || { echo "| $name | carve record failed: $(tail -1 "$w/record.err") |"; return; }
    "$CARVE" coverage --db "$w/trace.db" --lcov "$w/carve.info" >/dev/null 2>"$w/coverage.err" \
        || { echo "| $name | carve coverage failed: $(tail -1 "$w/coverage.err") |"; return; }
    (cd "$dir" && valgrind --tool=callgrind --dump-instr=no --collect-jumps=no --compress-strings=no \
        --compress-pos=no --callgrind-out-file="$w/cg.out" "$bin" "$@" >/dev/null 2>"$w/cg.err") \
        || true
    python3 "$LINES_PY" --under "$src" "$w/cg.out" >"$w/cg.lines"
    # Wall time, record and record --coverage alternating, into fresh traces.
    local plain=() cov=() i
    for ((i = 0; i < REPS; i++)); do
        rm -f "$w/t1.db" "$w/t2.db"
        plain+=("$(cd "$dir" && seconds "$CARVE" record --db "$w/t1.db" "${sel[@]}" -- "$bin" "$@")")
        cov+=("$(cd "$dir" && seconds "$CARVE" record --coverage --db "$w/t2.db" "${sel[@]}" -- "$bin" "$@")")
    done
    python3 - "$name" "$src" "$w/carve.info" "$w/cg.lines" "$OUT/$name.diff" "${plain[*]}" "${cov[*]}" <<'PY'
import os, statistics, sys
name, src, info, cg_lines, diff_path, plain, cov = sys.argv[1:]
src = os.path.realpath(src)
code, hit = set(), set()
file = None
for line in open(info):
    line = line.strip()
    if line.startswith("SF:"):
        file = os.path.realpath(line[3:])
    elif line.startswith("DA:") and file and (file == src or file.startswith(src + os.sep)):
        n, count = line[3:].split(",")[:2]
        code.add((file, int(n)))
        if int(count) > 0:
            hit.add((file, int(n)))
cg = set()
for line in open(cg_lines):
    f, _, n = line.strip().rpartition(":")
    if f:
        cg.add((os.path.realpath(f), int(n)))
cg_in = cg & code
both = hit & cg_in
a = 100.0 * len(both) / len(hit) if hit else 100.0
b = 100.0 * len(both) / len(cg_in) if cg_in else 100.0
rel = lambda p: os.path.relpath(p[0], src) + f":{p[1]}"
with open(diff_path, "w") as d:
    for p in sorted(hit - cg):
        print("carve-only", rel(p), file=d)
    for p in sorted(cg_in - hit):
        print("callgrind-only", rel(p), file=d)
    for p in sorted(cg - code):
        print("callgrind-outside-selection", rel(p), file=d)
mp = statistics.median(float(x) for x in plain.split())
mc = statistics.median(float(x) for x in cov.split())
print(f"| {name} | {len(code)} | {len(hit)} | {len(cg_in)} | {len(both)} | {a:.1f}% | {b:.1f}% "
      f"| {len(cg - code)} | {mp:.3f} | {mc:.3f} | {mc / mp:.2f}x |")
PY
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs" >&2
echo "| program | lines with code | carve reached | callgrind ran (in code) | both | carve->cg | cg->carve | cg outside | record s | record --coverage s | ratio |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for f in "${FIXTURES[@]}"; do
    args=()
    case $f in
        dice) args=(7) ;;
    esac
    FILTER="" compare "$f" "$ROOT/fixtures/$f" "$ROOT/fixtures/$f/src" "$ROOT/fixtures/target/debug/$f" "${args[@]}"
done
if [[ -n "$CRATES" ]]; then
    for d in "$CRATES"/*/; do
        c=$(basename "$d")
        [[ -d "$d/lib/src" ]] || continue
        bin=$CRATES/target/debug/$c-app
        [[ -x "$bin" ]] || { echo "| $c | no driver binary at $bin |"; continue; }
        FILTER="${c//-/_}::*" compare "$c" "$d" "$d/lib/src" "$bin"
    done
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo "Lines that disagree: $OUT/*.diff" >&2
