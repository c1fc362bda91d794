#!/usr/bin/env bash
# What carved suites check (issue 27): cargo-mutants' score of each suite bench/test-quality.sh
# kept (WORK/CRATE/suite-full and WORK/CRATE/suite-distilled), over the mutants on the crate
# lines the recorded run executed (WORK/CRATE/app.lines, callgrind's), the carved tests alone.
#
# Per crate and suite: a copy of the crate (WORK/CRATE/lib) with the suite's carved files in its
# tests/, then
#   cargo mutants --list --json                     (the mutants, to keep those on run lines)
#   cargo mutants --no-shuffle -j 1 --timeout 60 --re '^(src/a.rs:(12|13):|...)' \
#       -o OUT -- --test carved_x --test carved_y   (the carved targets only)
# and prints a row: mutants, caught, missed, timeouts, unviable, score = caught+timeouts over
# those that built; the missed mutants' names go to WORK/CRATE/mutants-SUITE/missed.txt.
#
# A benchmark, not a test: not part of .ci/run or of `cargo test`. Hours on big crates.
#
# Any other WORK/CRATE/suite-NAME directory can be scored (bench/explore.sh makes
# suite-explored: the full suite and the explored tests). --scope functions scores the mutants
# of every function the run reached a line of (whole functions), not only those on run lines.
#
# --only-missed-by SUITE scores only the mutants SUITE left alive (WORK/CRATE/mutants-SUITE/
# missed.txt from an earlier run): what another suite adds to it, at a fraction of the cost.
#
# --shard K/N scores one sample of the mutants in scope: cargo-mutants' shard K of N (every
# Nth mutant of its list, from the Kth), for a crate whose whole scope takes hours (url's
# 846); the row says which shard. A later --only-missed-by run scores that sample's
# survivors.
#
# Usage: bench/mutants.sh --work DIR [--suites "full distilled"] [--scope lines|functions]
#        [--only-missed-by SUITE] [--shard K/N] CRATE...
# Environment: MUTANT_MEMORY_KB (address space per run of cargo mutants, default 8 GiB).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

WORK=""
SUITES="full distilled"
SCOPE=lines
ONLY_MISSED_BY=""
SHARD=""
CRATES=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --work) WORK=$2; shift 2 ;;
        --suites) SUITES=$2; shift 2 ;;
        --scope) SCOPE=$2; shift 2 ;;
        --only-missed-by) ONLY_MISSED_BY=$2; shift 2 ;;
        --shard) SHARD=$2; shift 2 ;;
        -h|--help) sed -n '2,/^set -uo/p' "$0" | sed 's/^# \{0,1\}//' | head -n -1; exit 0 ;;
        *) CRATES+=("$1"); shift ;;
    esac
done
if [[ -z "$WORK" || ${#CRATES[@]} -eq 0 ]]; then
    echo "usage: bench/mutants.sh --work DIR CRATE... (DIR as bench/test-quality.sh --work left it)" >&2
    exit 2
fi
command -v cargo-mutants >/dev/null || cargo install --locked cargo-mutants || exit 1

echo "| crate | suite | tests | mutants ($SCOPE the run reached) | caught | missed | timeout | unviable | score |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for c in "${CRATES[@]}"; do
    d=$WORK/$c
    for s in $SUITES; do
        if [[ ! -d "$d/suite-$s" || ! -s "$d/app.lines" ]]; then
            echo "| $c | $s | no $d/suite-$s or $d/app.lines: run bench/test-quality.sh --work $WORK $c first |"
            continue
        fi
        m=$d/mutants-$s
        rm -rf "$m" && mkdir -p "$m"
        tar -C "$d" --exclude=target -cf - lib | tar -C "$m" -xf -
        rm -f "$m"/lib/tests/carved_* "$m"/lib/tests/explored_*
        cp "$d"/suite-"$s"/*.rs "$m"/lib/tests/
        tests=$(cat "$d"/suite-"$s"/*.rs | grep -c '#\[test\]')
        targets=()
        for f in "$d"/suite-"$s"/*.rs; do targets+=(--test "$(basename "$f" .rs)"); done
        (cd "$m/lib" && CARGO_TARGET_DIR=$m/target cargo mutants --list --json >"$m/list.json" 2>"$m/list.err")
        re=$(python3 "$ROOT/bench/mutant_scope.py" "$m/list.json" "$d/app.lines" "$SCOPE")
        if [[ -n "$ONLY_MISSED_BY" ]]; then
            alive=$d/mutants-$ONLY_MISSED_BY/missed.txt
            [[ -f "$alive" ]] || { echo "| $c | $s | no $alive: run the $ONLY_MISSED_BY suite first |"; continue; }
            re=$(python3 -c 'import sys
esc = lambda n: "".join("\\" + ch if ch in "\\.+*?()|[]{}^$" else ch for ch in n)
names = [l.rstrip("\n") for l in open(sys.argv[1]) if l.strip()]
print("^(" + "|".join(esc(n) for n in names) + ")$" if names else "")' "$alive")
            cp "$alive" "$m/alive-before.txt"
        fi
        if [[ -z "$re" ]]; then
            echo "| $c | $s | $tests | 0 | | | | | |"
            continue
        fi
        sample=()
        if [[ -n "$SHARD" && -z "$ONLY_MISSED_BY" ]]; then
            sample=(--shard "$SHARD" --sharding round-robin)
        fi
        # A mutant that allocates without end (a loop that never stops pushing) took 24 GB
        # and the OOM killer took it, and could take anything else running: each run is
        # held to MUTANT_MEMORY_KB of address space (default 8 GiB), so such a mutant fails
        # its tests (caught) on its own.
        (cd "$m/lib" && ulimit -v "${MUTANT_MEMORY_KB:-8388608}" \
            && CARGO_TARGET_DIR=$m/target cargo mutants --no-shuffle -j 1 --timeout 60 \
            --re "$re" "${sample[@]}" -o "$m" -- "${targets[@]}" >"$m/mutants.log" 2>&1)
        label=$s
        [[ ${#sample[@]} -gt 0 ]] && label="$s (shard $SHARD)"
        python3 - "$m/mutants.out/outcomes.json" "$c" "$label" "$tests" "$m/missed.txt" <<'PY'
import json, sys
path, c, s, tests, missed_path = sys.argv[1:]
try:
    outcomes = json.load(open(path))["outcomes"]
except (OSError, ValueError) as e:
    print(f"| {c} | {s} | {tests} | cargo mutants failed: {e} |")
    sys.exit(0)
count = {"CaughtMutant": 0, "MissedMutant": 0, "Timeout": 0, "Unviable": 0}
missed = []
for o in outcomes:
    scenario = o.get("scenario")
    if not isinstance(scenario, dict) or "Mutant" not in scenario:
        continue
    summary = o.get("summary")
    count[summary] = count.get(summary, 0) + 1
    if summary == "MissedMutant":
        missed.append(scenario["Mutant"]["name"])
open(missed_path, "w").write("".join(n + "\n" for n in missed))
built = count["CaughtMutant"] + count["MissedMutant"] + count["Timeout"]
total = built + count["Unviable"]
score = f"{100 * (count['CaughtMutant'] + count['Timeout']) / built:.1f}%" if built else "-"
print(f"| {c} | {s} | {tests} | {total} | {count['CaughtMutant']} | {count['MissedMutant']} | "
      f"{count['Timeout']} | {count['Unviable']} | {score} |")
PY
    done
done
