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
# Per crate: WORK/CRATE/mutants-SUITE/reach.txt (one "shown|not shown<TAB>mutant" line per
# missed mutant) and a row: missed, shown by the run, not shown.
# Drivers of our own (bench/real-crates/CRATE, copied to WORK/CRATE/app) only: a crate driven by
# its own integration test is skipped with a note.
#
# A benchmark, not a test: not part of .ci/run or of `cargo test`.
#
# Usage: bench/mutant-reach.sh --work DIR [--suite distilled] CRATE...
set -uo pipefail

WORK=""
SUITE=distilled
CRATES=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --work) WORK=$2; shift 2 ;;
        --suite) SUITE=$2; shift 2 ;;
        -h|--help) sed -n '2,/^set -uo/p' "$0" | sed 's/^# \{0,1\}//' | head -n -1; exit 0 ;;
        *) CRATES+=("$1"); shift ;;
    esac
done
if [[ -z "$WORK" || ${#CRATES[@]} -eq 0 ]]; then
    echo "usage: bench/mutant-reach.sh --work DIR [--suite S] CRATE... (DIR as bench/mutants.sh left it)" >&2
    exit 2
fi

# The driver's output, exit code last: `run DIR OUT`.
run() {
    local bin
    bin=$(find "$1/target/debug" -maxdepth 1 -type f -executable -name '*-app' | head -1)
    [[ -x "$bin" ]] || { echo "no driver built in $1/target/debug" >"$2"; return; }
    (cd "$1" && timeout 60 "$bin" >"$2" 2>&1; echo "exit $?" >>"$2")
}

echo "| crate | suite | missed | shown by the run | not shown |"
echo "| --- | --- | ---: | ---: | ---: |"
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
    run "$s/app" "$s/base.out"
    # Each missed mutant: (file, diff) from cargo-mutants' outcomes.
    python3 - "$m/mutants.out/outcomes.json" >"$s/missed.tsv" <<'PY'
import json, sys
for o in json.load(open(sys.argv[1]))["outcomes"]:
    m = o.get("scenario", {})
    if not isinstance(m, dict) or "Mutant" not in m or o.get("summary") != "MissedMutant":
        continue
    print(m["Mutant"]["file"], o["diff_path"], m["Mutant"]["name"], sep="\t")
PY
    : >"$m/reach.txt"
    shown=0 not=0
    while IFS=$'\t' read -r file diff name; do
        cp "$s/lib/$file" "$s/orig"
        if ! patch --quiet "$s/lib/$file" "$m/mutants.out/$diff" >/dev/null 2>&1; then
            cp "$s/orig" "$s/lib/$file"
            continue
        fi
        if (cd "$s/app" && cargo build --quiet 2>/dev/null); then
            run "$s/app" "$s/mutant.out"
            if cmp -s "$s/base.out" "$s/mutant.out"; then
                printf 'not shown\t%s\n' "$name" >>"$m/reach.txt"
                not=$((not + 1))
            else
                printf 'shown\t%s\n' "$name" >>"$m/reach.txt"
                shown=$((shown + 1))
            fi
        fi
        cp "$s/orig" "$s/lib/$file"
    done <"$s/missed.tsv"
    echo "| $c | $SUITE | $(wc -l <"$s/missed.tsv") | $shown | $not |"
done
