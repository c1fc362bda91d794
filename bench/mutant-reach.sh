#!/usr/bin/env bash
# Could the recorded run's inputs tell a surviving mutant apart at all (issue 27)? For each
# mutant a suite left alive (WORK/CRATE/mutants-SUITE, as bench/mutants.sh left it), the
# crate's driver program is built with the mutant applied and run again; its output (stdout,
# stderr, exit code) is compared with the unchanged build's. A judge that is not carve: the
# program's own output.
#   shown      the driver's output differs (or it hangs past 60 s): the run's inputs reach
#              the mutant and show it; a test carved from the run could catch it
#   not shown  the same output: the run's inputs do not show it (an input the run never gave,
#              a value the program never prints, an inlined helper no recorder sees)
# "not shown" is a lower bound on what no carved test could catch from the output alone: a
# carved test checks values the program may not print.
#
# --judge gate asks carve's own judge instead, side by side: the mutant's driver re-recorded
# with `carve gate --baseline WORK/CRATE/trace.db` (the same selection), call by call against
# the recording:
#   seen       some recorded call, argument, result or state differs: a test carved from the
#              run could catch it
#   not seen   every recorded value is the same: no test carved from this run can tell it
#              apart (but for values the recorder does not read), whatever it asserts
# The unchanged build is gated first; a crate whose unchanged build already diverges (a
# program that is not deterministic) is not judged. Lines go to reach-gate.txt, a seen one
# with the first divergence of each function gate names (`return_changed in f`: a call of f
# with the same arguments answered otherwise, which a test of f can catch if f is public;
# `call_missing`/`call_added`: the run took another path, often a panic, an effect seen
# downstream of the mutated code rather than in the call that runs it).
#
# Per crate: WORK/CRATE/mutants-SUITE/reach.txt (one "shown|not shown<TAB>mutant" line per
# missed mutant) and a row: missed, shown by the run, not shown.
# Drivers of our own (bench/real-crates/CRATE, copied to WORK/CRATE/app) only: a crate driven by
# its own integration test is skipped with a note.
#
# A benchmark, not a test: not part of .ci/run or of `cargo test`.
#
# Usage: bench/mutant-reach.sh --work DIR [--suite distilled] [--judge output|gate] CRATE...
# Environment: CARVE (the carve binary for --judge gate; default target/release/carve).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CARVE=${CARVE:-$ROOT/target/release/carve}
WORK=""
SUITE=distilled
JUDGE=output
CRATES=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --work) WORK=$2; shift 2 ;;
        --suite) SUITE=$2; shift 2 ;;
        --judge) JUDGE=$2; shift 2 ;;
        -h|--help) sed -n '2,/^set -uo/p' "$0" | sed 's/^# \{0,1\}//' | head -n -1; exit 0 ;;
        *) CRATES+=("$1"); shift ;;
    esac
done
if [[ -z "$WORK" || ${#CRATES[@]} -eq 0 ]]; then
    echo "usage: bench/mutant-reach.sh --work DIR [--suite S] CRATE... (DIR as bench/mutants.sh left it)" >&2
    exit 2
fi

WORK=$(cd "$WORK" && pwd)
if [[ $JUDGE != output && $JUDGE != gate ]]; then
    echo "bench/mutant-reach.sh: --judge is output or gate, not $JUDGE" >&2
    exit 2
fi
if [[ $JUDGE == gate && ! -x "$CARVE" ]]; then
    echo "bench/mutant-reach.sh: no carve at $CARVE: cargo build --release, or set CARVE" >&2
    exit 2
fi

# The driver's output, exit code last: `run DIR OUT`.
run() {
    local bin
    bin=$(find "$1/target/debug" -maxdepth 1 -type f -executable -name '*-app' | head -1)
    [[ -x "$bin" ]] || { echo "no driver built in $1/target/debug" >"$2"; return; }
    (cd "$1" && timeout 60 "$bin" >"$2" 2>&1; echo "exit $?" >>"$2")
}

# Whether the driver built in DIR, re-recorded, diverges from TRACE: `diverges DIR TRACE OUT`
# answers 1 (it does), 0 (it does not) or 2 (gate could not tell: OUT says why).
diverges() {
    local bin code
    bin=$(find "$1/target/debug" -maxdepth 1 -type f -executable -name '*-app' | head -1)
    [[ -x "$bin" ]] || { echo "no driver built in $1/target/debug" >"$3"; echo 2; return; }
    (cd "$1" && timeout 300 "$CARVE" gate --baseline "$2" --quiet --format json -- "$bin" \
        >"$3" 2>"$3.err" </dev/null)
    code=$?
    case $code in 0) echo 0 ;; 1) echo 1 ;; *) echo 2 ;; esac
}

# The first divergence of each function gate reports in OUT, as `kind in function`, each once:
# `return_changed in bytesize::display::Format::unit_base; call_missing in bytesize::kib`.
first_divergences() {
    python3 - "$1" <<'PY'
import json, sys
try:
    groups = json.load(open(sys.argv[1])).get("groups", [])
except (OSError, ValueError):
    groups = []
seen = []
for g in groups:
    f = g.get("first")
    if f:
        k = f"{f.get('kind')} in {f.get('function') or g.get('function')}"
        if k not in seen:
            seen.append(k)
print("; ".join(seen))
PY
}

if [[ $JUDGE == gate ]]; then
    echo "| crate | suite | missed | seen by the recording (carve gate) | not seen | not judged |"
    echo "| --- | --- | ---: | ---: | ---: | ---: |"
else
    echo "| crate | suite | missed | shown by the run | not shown |"
    echo "| --- | --- | ---: | ---: | ---: |"
fi
for c in "${CRATES[@]}"; do
    d=$WORK/$c
    m=$d/mutants-$SUITE
    if [[ ! -s "$m/mutants.out/outcomes.json" ]]; then
        echo "| $c | $SUITE | no $m/mutants.out: run bench/mutants.sh --work $WORK $c first |"
        continue
    fi
    if [[ ! -d "$d/app" ]]; then
        echo "| $c | $SUITE | driven by its own integration test: not judged here |"
        continue
    fi
    s=$m/reach
    rm -rf "$s" && mkdir -p "$s"
    tar -C "$d" --exclude=target -cf - lib app | tar -C "$s" -xf -
    rm -f "$s"/lib/tests/carved_* "$s"/lib/tests/explored_*
    export CARGO_TARGET_DIR=$s/app/target
    if ! (cd "$s/app" && cargo build --quiet 2>"$s/build.err"); then
        echo "| $c | $SUITE | the driver does not build: $s/build.err |"
        continue
    fi
    if [[ $JUDGE == gate ]]; then
        if [[ $(diverges "$s/app" "$d/trace.db" "$s/base.json") != 0 ]]; then
            echo "| $c | $SUITE | the unchanged driver already diverges from trace.db (or gate failed): $s/base.json |"
            continue
        fi
    else
        run "$s/app" "$s/base.out"
    fi
    # Each missed mutant: (file, diff) from cargo-mutants' outcomes.
    python3 - "$m/mutants.out/outcomes.json" >"$s/missed.tsv" <<'PY'
import json, sys
for o in json.load(open(sys.argv[1]))["outcomes"]:
    m = o.get("scenario", {})
    if not isinstance(m, dict) or "Mutant" not in m or o.get("summary") != "MissedMutant":
        continue
    print(m["Mutant"]["file"], o["diff_path"], m["Mutant"]["name"], sep="\t")
PY
    out=$m/reach.txt
    [[ $JUDGE == gate ]] && out=$m/reach-gate.txt
    : >"$out"
    shown=0 not=0 unjudged=0
    while IFS=$'\t' read -r file diff name; do
        cp "$s/lib/$file" "$s/orig"
        if ! patch --quiet "$s/lib/$file" "$m/mutants.out/$diff" >/dev/null 2>&1; then
            cp "$s/orig" "$s/lib/$file"
            continue
        fi
        if [[ $JUDGE == gate ]] && (cd "$s/app" && cargo build --quiet 2>/dev/null); then
            case $(diverges "$s/app" "$d/trace.db" "$s/mutant.json") in
                1) printf 'seen\t%s\t%s\n' "$name" "$(first_divergences "$s/mutant.json")" >>"$out"
                   shown=$((shown + 1)) ;;
                0) printf 'not seen\t%s\n' "$name" >>"$out"; not=$((not + 1)) ;;
                *) printf 'not judged\t%s\n' "$name" >>"$out"; unjudged=$((unjudged + 1)) ;;
            esac
        elif [[ $JUDGE == output ]] && (cd "$s/app" && cargo build --quiet 2>/dev/null); then
            run "$s/app" "$s/mutant.out"
            if cmp -s "$s/base.out" "$s/mutant.out"; then
                printf 'not shown\t%s\n' "$name" >>"$out"
                not=$((not + 1))
            else
                printf 'shown\t%s\n' "$name" >>"$out"
                shown=$((shown + 1))
            fi
        fi
        cp "$s/orig" "$s/lib/$file"
    done <"$s/missed.tsv"
    if [[ $JUDGE == gate ]]; then
        echo "| $c | $SUITE | $(wc -l <"$s/missed.tsv") | $shown | $not | $unjudged |"
    else
        echo "| $c | $SUITE | $(wc -l <"$s/missed.tsv") | $shown | $not |"
    fi
done
