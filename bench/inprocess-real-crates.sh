#!/usr/bin/env bash
# The in-process capture path (issue 15) on real crates: the drivers of bench/real-crates.sh
# recorded with carve's default capture (in process where the function allows it; run as
# `--capture inprocess`, the same capture as the default `auto`, which always prints how many
# functions took which path) and with `--capture ptrace`, alternating, ROUNDS times each. Per crate: how many of the
# crate's functions each path took, whether the two traces are the same call for call (through
# `carve show --format json`, times, pids and thread ids aside: bench/same_trace.py, the rule of
# tests/common/inprocess.rs; when they differ, whether two ptrace recordings differ as well,
# i.e. the program is not the same from run to run), and the median wall time of each
# recording. A trace too large to load as JSON (pulldown-cmark's 1.2 GB) shows "?".
#
# A benchmark, not a test (not in .ci/run). It needs the drivers built by a kept run of
# bench/real-crates.sh:
#   bench/real-crates.sh --keep DIR [CRATE...]         # builds DIR/target/debug/CRATE-app
#   bench/inprocess-real-crates.sh DIR [CRATE...]      # default: every CRATE-app in DIR
# Environment: CARVE (default <repo>/target/release/carve), ROUNDS (default 3).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=${1:?usage: bench/inprocess-real-crates.sh DIR [CRATE...] (DIR: a --keep dir of bench/real-crates.sh)}
shift
CARVE=$(realpath "${CARVE:-$ROOT/target/release/carve}")
ROUNDS=${ROUNDS:-3}
CRATES=("$@")
if ((${#CRATES[@]} == 0)); then
    for app in "$DIR"/target/debug/*-app; do
        [[ -x $app ]] && CRATES+=("$(basename "$app" -app)")
    done
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

now_ns() { date +%s%N; }
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

echo "in-process path on real crates — $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, $ROUNDS rounds, carve $CARVE"
echo
echo "| crate | functions in process / with ptrace stops | calls | same trace as --capture ptrace | ptrace s | in process s | speed-up |"
echo "| --- | --- | ---: | --- | ---: | ---: | ---: |"
for c in "${CRATES[@]}"; do
    app=$DIR/target/debug/$c-app
    ident=${c//-/_}
    [[ -x $app ]] || { echo "| $c | no driver at $app | | | | | |"; continue; }
    declare -A T=([inprocess]="" [ptrace]="")
    for r in $(seq "$ROUNDS"); do
        for mode in ptrace inprocess; do
            db=$WORK/$c-$mode.db
            rm -f "$db" "$db-wal" "$db-shm"
            t0=$(now_ns)
            (cd "$DIR/$c" 2>/dev/null || cd "$DIR"
             "$CARVE" record --db "$db" --capture "$mode" --filter "$ident::*" \
                 -- "$app" >"$WORK/$c-$mode.out" 2>"$WORK/$c-$mode.err") 2>/dev/null
            t1=$(now_ns)
            T[$mode]+="$(( (t1 - t0) / 1000000 )) "
            if [[ $mode == ptrace && $r == 1 ]]; then
                "$CARVE" show --format json --db "$db" >"$WORK/$c-ptrace-first.json" 2>/dev/null
            fi
        done
    done
    # Both recordings of the last round.
    paths=$(grep -o '[0-9]* of [0-9]* functions captured in process, [0-9]* with ptrace stops[^)]*)\?' \
        "$WORK/$c-inprocess.err" | head -1)
    for mode in ptrace inprocess; do
        "$CARVE" show --format json --db "$WORK/$c-$mode.db" >"$WORK/$c-$mode.json" 2>>"$WORK/$c-$mode.err"
    done
    same=$(python3 "$ROOT/bench/same_trace.py" "$WORK/$c-ptrace.json" "$WORK/$c-inprocess.json")
    # A program whose calls differ from run to run (hash seeds, addresses of its own
    # allocations, the clock) differs between two ptrace recordings as well: said so.
    if [[ $same != yes && $ROUNDS -gt 1 ]]; then
        again=$(python3 "$ROOT/bench/same_trace.py" "$WORK/$c-ptrace-first.json" "$WORK/$c-ptrace.json")
        [[ $again == yes ]] || same="$same; but two --capture ptrace recordings differ too ($again)"
    fi
    calls=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["calls"]))' "$WORK/$c-inprocess.json" 2>/dev/null || echo "?")
    p=$(echo "${T[ptrace]}" | median) a=$(echo "${T[inprocess]}" | median)
    speed=$(awk -v p="$p" -v a="$a" 'BEGIN {printf "%.1fx", p / a}')
    printf '| %s | %s | %s | %s | %.2f | %.2f | %s |\n' "$c" "${paths:-?}" "$calls" "$same" \
        "$(awk -v x="$p" 'BEGIN {print x / 1000}')" "$(awk -v x="$a" 'BEGIN {print x / 1000}')" "$speed"
done
