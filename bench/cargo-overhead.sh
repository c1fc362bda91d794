#!/usr/bin/env bash
# What `carve record` costs cargo's and rustc's own processes (issue 13). Not a test: it measures
# wall time with and without `carve record` around cargo, prints a table and ends with one
# summary line scripts can read:
#   build_outer_ratio=..x ... test_inner_ratio=..x programs_run=.. runs_recorded=..
#
# Scenarios, on a copy of fixtures/twotests (a library, a binary, two integration tests):
#   build   `cargo build` from clean: cargo, rustc (and the linker) run; none has debug info
#           the selection picks, so carve follows them with no breakpoint.
#   no-run  `cargo test --no-run`, already built: cargo's own work only.
#   test    `cargo test`, already built: cargo plus the four test binaries, which carve does
#           record (their calls cost what a recording costs; shown for scale, not a goal).
# Goal: build and no-run at most 1.1x.
#
# Two times per run: the whole command (`outer`: carve's own start-up, its reading of the
# command's programs, its end) and cargo's (`inner`: from bash's fork of cargo to the reaping
# of its exit, taken with $EPOCHREALTIME inside a bash that runs cargo, under carve or not):
# what cargo's and rustc's own processes take, which is what the goal is about. A last line
# gives `carve record -- /bin/true` against `/bin/true`: carve's fixed cost, for scale.
#
# With CARVE_BASELINE (another carve, say the previous commit's), both carves are timed in the
# same alternating rounds (native, baseline, carve, native, ...), so the two columns compare
# like with like on a shared machine. With `perf` (tracepoint raw_syscalls:sys_enter), the
# machine-independent part: system calls made by carve's own threads per scenario, of which
# wait4 (each collects one stop or exit of a followed thread) and ptrace, divided by the
# processes cargo ran in that scenario (counted with strace).
#
# Usage: bench/cargo-overhead.sh
# Environment:
#   ROUNDS         alternating rounds; every time is a median (default 5)
#   CARVE          a prebuilt release carve (default: build it in <repo>/target)
#   CARVE_BASELINE a second carve to measure side by side (optional)
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

modes=(native carve)
declare -A carve_of=([carve]=$CARVE)
if [[ -n ${CARVE_BASELINE:-} ]]; then
    modes=(native baseline carve)
    carve_of[baseline]=$CARVE_BASELINE
fi

# seconds <command...>: "outer inner", the wall time of one run of the command, which ends with
# `bash -c INNER cargo ARGS...`, and of cargo inside it; output discarded.
INNER='s=$EPOCHREALTIME; "$@" >/dev/null 2>&1; e=$EPOCHREALTIME; echo "$s $e" > "$STAMP"'
export STAMP=$WORK/stamp
seconds() {
    local start end
    rm -f "$STAMP"
    start=$(date +%s.%N)
    "$@" >/dev/null 2>&1 || true
    end=$(date +%s.%N)
    python3 -c "s, e = open('$STAMP').read().split(); print(f'{$end - $start:.4f}', f'{float(e) - float(s):.4f}')"
}

median() { python3 -c 'import sys, statistics; print(f"{statistics.median(float(x) for x in sys.argv[1:]):.4f}")' "$@"; }

clean_db() { rm -f "$WORK/trace.db" "$WORK/trace.db-wal" "$WORK/trace.db-shm"; }

# prepare <scenario>: the state the scenario starts from.
prepare() {
    clean_db
    case $1 in
        build) "$CARGO" clean --quiet ;;
        norun | test) "$CARGO" test --offline --no-run --quiet >/dev/null 2>&1 ;;
    esac
}

# cargo_args <scenario>
cargo_args() {
    case $1 in
        build) echo build --offline --quiet ;;
        norun) echo test --offline --no-run --quiet ;;
        test) echo test --offline --quiet ;;
        true) ;;
    esac
}

declare -A times inner
for ((r = 1; r <= ROUNDS; r++)); do
    log "round $r of $ROUNDS"
    for s in build norun test true; do
        for mode in "${modes[@]}"; do
            wrap=()
            [[ $mode != native ]] && wrap=("${carve_of[$mode]}" record --db "$WORK/trace.db" --)
            prepare "$s"
            if [[ $s == true ]]; then
                read -r o i <<<"$(seconds "${wrap[@]}" bash -c "$INNER" bash /bin/true)"
            else
                # shellcheck disable=SC2046
                read -r o i <<<"$(seconds "${wrap[@]}" bash -c "$INNER" bash "$CARGO" $(cargo_args "$s"))"
            fi
            times[$s,$mode]+=" $o"
            inner[$s,$mode]+=" $i"
        done
    done
done

# Machine-independent: the processes each scenario runs (strace of a native run: the first
# process plus every fork or vfork), and the programs among them (successful execs).
declare -A processes
execs=-1
if command -v strace >/dev/null 2>&1; then
    for s in build norun test; do
        prepare "$s"
        # shellcheck disable=SC2046
        strace -f -qq -e trace=execve,clone,clone3,fork,vfork -o "$WORK/strace.$s" \
            "$CARGO" $(cargo_args "$s") >/dev/null 2>&1 || true
        processes[$s]=$(python3 - "$WORK/strace.$s" <<'PY'
import re, sys
forks = 0
for line in open(sys.argv[1]):
    if re.search(r'\b(fork|vfork)\(', line) or (re.search(r'\bclone3?\(', line) and 'CLONE_THREAD' not in line):
        if 'resumed>' not in line or re.search(r'= \d+$', line):
            forks += 1
print(forks + 1)
PY
)
    done
    execs=$(grep -cE 'execve(\(.*|.* resumed>.*)= 0$' "$WORK/strace.test" || true)
fi

# The system calls of carve's own threads (not of the programs it runs) in one run of each
# scenario: perf counts by thread; carve's are those of its process id.
declare -A calls
processes[true]=1
if command -v perf >/dev/null 2>&1; then
    for s in build norun test true; do
        for mode in "${modes[@]}"; do
            [[ $mode == native ]] && continue
            prepare "$s"
            command=("$CARGO")
            [[ $s == true ]] && command=(/bin/true)
            # shellcheck disable=SC2046
            perf record -q -e raw_syscalls:sys_enter -o "$WORK/perf.data" -- \
                sh -c 'echo $$ > "$0"; exec "$@"' "$WORK/carve.pid" \
                "${carve_of[$mode]}" record --db "$WORK/trace.db" -- "${command[@]}" $(cargo_args "$s") \
                >/dev/null 2>&1 || true
            calls[$s,$mode]=$(perf script -i "$WORK/perf.data" -F pid,trace 2>/dev/null |
                python3 -c '
import sys
me = int(open(sys.argv[1]).read())
total = wait4 = ptrace = 0
for line in sys.stdin:
    parts = line.split()
    if len(parts) < 3 or int(parts[0]) != me:
        continue
    nr = int(parts[2])
    total += 1
    wait4 += nr == 61
    ptrace += nr == 101
print(total, wait4, ptrace)
' "$WORK/carve.pid")
        done
    done
fi
clean_db
prepare test
"$CARVE" record --db "$WORK/trace.db" -- "$CARGO" test --offline --quiet >/dev/null 2>&1 || true
runs=$(python3 - "$WORK/trace.db" <<'PY'
import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute("select count(*) from runs").fetchone()[0])
PY
)

summary=()
for what in outer inner; do
    printf '%-8s %-6s %10s' scenario time native_s
    for mode in "${modes[@]:1}"; do printf ' %10s %8s' "${mode}_s" ratio; done
    printf '\n'
    for s in build norun test true; do
        # shellcheck disable=SC2086
        if [[ $what == outer ]]; then
            n=$(median ${times[$s,native]})
        else
            n=$(median ${inner[$s,native]})
        fi
        printf '%-8s %-6s %10s' "$s" "$what" "$n"
        for mode in "${modes[@]:1}"; do
            # shellcheck disable=SC2086
            if [[ $what == outer ]]; then
                c=$(median ${times[$s,$mode]})
            else
                c=$(median ${inner[$s,$mode]})
            fi
            ratio=$(python3 -c "print(f'{$c / $n:.2f}')")
            printf ' %10s %7sx' "$c" "$ratio"
            [[ $mode == carve && $s != true ]] && summary+=("${s}_${what}_ratio=${ratio}x")
        done
        printf '\n'
    done
done
if ((${#calls[@]} > 0)); then
    printf '\ncarve'"'"'s own system calls per followed process (processes: strace of a native run)\n'
    printf '%-8s %9s %-9s %9s %9s %9s\n' scenario processes carve syscalls wait4 ptrace
    for s in build norun test true; do
        for mode in "${modes[@]:1}"; do
            read -r total wait4 ptrace <<<"${calls[$s,$mode]}"
            python3 -c "
p = ${processes[$s]:-0}
print(f'{\"$s\":8s} {p:9d} {\"$mode\":9s} ' + ' '.join(f'{x / p:9.1f}' if p else f'{x:9d}' for x in ($total, $wait4, $ptrace)))"
        done
    done
fi
echo "${summary[*]} programs_run=$execs runs_recorded=$runs"
