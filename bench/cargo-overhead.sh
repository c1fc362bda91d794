#!/usr/bin/env bash
# What `carve record` costs cargo's and rustc's own processes (issue 13). Not a test: it measures
# wall time with and without `carve record` around cargo, prints a table and ends with one
# summary line scripts can read:
#   build_ratio=..x norun_ratio=..x test_ratio=..x programs_run=.. runs_recorded=..
#
# Scenarios, on a copy of fixtures/twotests (a library, a binary, two integration tests):
#   build   `cargo build` from clean: cargo, rustc (and the linker) run; none has debug info
#           the selection picks, so carve follows them with no breakpoint.
#   no-run  `cargo test --no-run`, already built: cargo's own work only.
#   test    `cargo test`, already built: cargo plus the four test binaries, which carve does
#           record (their calls cost what a recording costs; shown for scale, not a goal).
# Goal: build and no-run at most 1.1x.
#
# Usage: bench/cargo-overhead.sh
# Environment:
#   ROUNDS  alternating rounds (native, carve, native, ...); every number is a median (default 5)
#   CARVE   a prebuilt release carve (default: build it in <repo>/target)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROUNDS=${ROUNDS:-5}
log() { printf '[bench] %s\n' "$*" >&2; }

if [[ -z ${CARVE:-} ]]; then
    log "building carve (release)"
    (cd "$ROOT" && cargo build --release --quiet)
    CARVE=$ROOT/target/release/carve
fi
CARGO=${CARGO:-cargo}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cp -r "$ROOT/fixtures/twotests" "$WORK/twotests"
rm -rf "$WORK/twotests/target"
cd "$WORK/twotests"
export CARGO_TARGET_DIR=$WORK/twotests/target
unset RUSTFLAGS

# seconds <command...>: wall time of one run, output discarded.
seconds() {
    local start end
    start=$(date +%s.%N)
    "$@" >/dev/null 2>&1 || true
    end=$(date +%s.%N)
    python3 -c "print(f'{$end - $start:.4f}')"
}

median() { python3 -c 'import sys, statistics; print(f"{statistics.median(float(x) for x in sys.argv[1:]):.4f}")' "$@"; }

declare -A times
record() { "$CARVE" record --db "$WORK/trace.db" -- "$@"; }

for ((r = 1; r <= ROUNDS; r++)); do
    log "round $r of $ROUNDS"
    for mode in native carve; do
        wrap=()
        [[ $mode == carve ]] && wrap=(record)
        rm -f "$WORK/trace.db" "$WORK/trace.db-wal" "$WORK/trace.db-shm"
        "$CARGO" clean --quiet
        times[build,$mode]+=" $(seconds "${wrap[@]}" "$CARGO" build --offline --quiet)"
        "$CARGO" test --offline --no-run --quiet >/dev/null 2>&1
        times[norun,$mode]+=" $(seconds "${wrap[@]}" "$CARGO" test --offline --no-run --quiet)"
        rm -f "$WORK/trace.db" "$WORK/trace.db-wal" "$WORK/trace.db-shm"
        times[test,$mode]+=" $(seconds "${wrap[@]}" "$CARGO" test --offline --quiet)"
    done
done

# Machine-independent: how many programs `cargo test` runs (successful execs), against how
# many carve recorded (the test binaries); every other one ran with no breakpoint.
execs=-1
if command -v strace >/dev/null 2>&1; then
    strace -f -e trace=execve -o "$WORK/execs.txt" "$CARGO" test --offline --quiet >/dev/null 2>&1 || true
    execs=$(grep -cE 'execve(\(.*|.* resumed>.*)= 0$' "$WORK/execs.txt" || true)
fi
runs=$(python3 - "$WORK/trace.db" <<'PY'
import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute("select count(*) from runs").fetchone()[0])
PY
)

printf '%-8s %10s %10s %8s\n' scenario native_s carve_s ratio
summary=()
for s in build norun test; do
    # shellcheck disable=SC2086
    n=$(median ${times[$s,native]})
    # shellcheck disable=SC2086
    c=$(median ${times[$s,carve]})
    ratio=$(python3 -c "print(f'{$c / $n:.2f}')")
    printf '%-8s %10s %10s %7sx\n' "$s" "$n" "$c" "$ratio"
    summary+=("${s}_ratio=${ratio}x")
done
echo "${summary[*]} programs_run=$execs runs_recorded=$runs"
