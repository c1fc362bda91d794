#!/usr/bin/env bash
# Differential check of `carve generate` between two carve binaries (issue 14, item 3: bounded
# memory). A change meant to alter only how much memory generate takes (the grouper letting go of
# the values of calls no test makes) must alter nothing it writes. For each kept real-crates
# directory (bench/real-crates.sh --keep DIR: CRATE/trace.db and CRATE/lib), both binaries run
#   carve generate --db COPY/trace.db --crate COPY/lib --out COPY/lib/tests --no-verify \
#                  --no-coverage --format json
# on a fresh copy of lib/ at the same place (WORK/CRATE/lib; the trace is copied and its source
# paths pointed there). The test files written must be byte-identical (the whole tests/ directory
# is compared) and the JSON reports identical, every field. Prints one Markdown row per crate with
# both peak RSS figures (/usr/bin/time) and exits 1 when any crate differs or wrote no tests.
# A benchmark-like check, not a CI test: it needs the kept traces (hundreds of MB to GB).
#
# With --fixtures instead of CRATES_DIR, the same comparison on the Rust fixtures of fixtures/
# (built there as the tests build them): each fixture's program is recorded once (by OLD, with
# the arguments its tests use) and both binaries run
#   carve generate --db TRACE --crate fixtures/NAME --out OUT --no-verify --no-coverage \
#                  --format json [--all]
# twice per fixture, as is and with --all (one test per call), into the same OUT directory.
# One row per fixture and variant.
#
# Usage: bench/generate-differential.sh [--keep DIR] OLD_CARVE NEW_CARVE CRATES_DIR [CRATE...]
#        bench/generate-differential.sh [--keep DIR] --fixtures OLD_CARVE NEW_CARVE [FIXTURE...]
#   CRATES_DIR   a real-crates.sh --keep directory (read only: everything is copied)
#   CRATE...     the crates to check (default: every CRATES_DIR/*/ with trace.db and lib/)
#   FIXTURE...   the fixtures to check (default: every fixture with a program, below)
#   --keep DIR   work in DIR and leave it there (default: a temp dir, removed)
set -uo pipefail

KEEP=""
if [[ "${1:-}" == --keep ]]; then KEEP=$2; shift 2; fi
FIXTURES=""
if [[ "${1:-}" == --fixtures ]]; then FIXTURES=1; shift; fi
if [[ "${1:-}" == -h || "${1:-}" == --help || $# -lt $((FIXTURES ? 2 : 3)) ]]; then
    sed -n '2,/^set -uo/p' "$0" | sed 's/^# \{0,1\}//' | head -n -1
    [[ $# -ge 3 ]]; exit $?
fi
OLD=$(realpath "$1"); NEW=$(realpath "$2"); shift 2
if [[ -z "$FIXTURES" ]]; then CRATES_DIR=$(realpath "$1"); shift; fi
for bin in "$OLD" "$NEW"; do
    [[ -x "$bin" ]] || { echo "generate-differential: $bin is not an executable carve" >&2; exit 2; }
done
[[ -x /usr/bin/time ]] || { echo "generate-differential: /usr/bin/time is needed (apt-get install time)" >&2; exit 2; }
for tool in jq sqlite3; do
    command -v $tool >/dev/null || { echo "generate-differential: $tool is needed (apt-get install $tool)" >&2; exit 2; }
done
CRATES=("$@")
if [[ -z "$FIXTURES" && ${#CRATES[@]} -eq 0 ]]; then
    for d in "$CRATES_DIR"/*/; do
        [[ -f "$d/trace.db" && -d "$d/lib" ]] && CRATES+=("$(basename "$d")")
    done
fi
if [[ -n "$KEEP" ]]; then
    mkdir -p "$KEEP" && WORK=$(cd "$KEEP" && pwd)
else
    WORK=$(mktemp -d) && trap 'rm -rf "$WORK"' EXIT
fi

# The fixtures' programs and the arguments their tests record them with (tests/snapshots.rs,
# tests/generate.rs): every Rust fixture with a program of its own.
declare -A FIXTURE_ARGS=(
    [abc]="" [account]="" [assessed]="" [catalog]="" [dao]="" [dice]="7" [expr]=""
    [hashorder]="" [hotloop]="300" [mouse]="" [pauses]="steps 3 2" [ping]="" [returns]=""
    [threads]="" [twotests]="" [versioned_set]=""
)

# fixtures: records each fixture once, generates from it with both binaries (as is and --all),
# prints one row per fixture and variant; returns 1 when any differs or wrote no tests.
fixtures() {
    local root names=("$@") status=0 name variant side carve out
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    [[ ${#names[@]} -gt 0 ]] || names=($(printf '%s\n' "${!FIXTURE_ARGS[@]}" | sort))
    cargo build --quiet --manifest-path "$root/fixtures/Cargo.toml" \
        --target-dir "$root/fixtures/target" || { echo "generate-differential: building the fixtures failed" >&2; return 2; }
    echo "| fixture | variant | calls | tests written | tests/ identical | report identical |"
    echo "|---|---|---:|---:|---|---|"
    for name in "${names[@]}"; do
        [[ -v FIXTURE_ARGS[$name] ]] || { echo "generate-differential: no fixture $name" >&2; return 2; }
        mkdir -p "$WORK/fx/$name"
        local db=$WORK/fx/$name/trace.db
        rm -f "$db"
        # shellcheck disable=SC2086 # the arguments are words
        "$OLD" record -q --db "$db" -- "$root/fixtures/target/debug/$name" ${FIXTURE_ARGS[$name]} \
            </dev/null >/dev/null 2>"$WORK/fx/$name/record.err"
        local calls
        calls=$(sqlite3 -readonly "$db" 'select count(*) from calls' 2>/dev/null || echo "?")
        for variant in default all; do
            local extra=()
            [[ $variant == all ]] && extra=(--all)
            for side in old new; do
                carve=$OLD; [[ $side == new ]] && carve=$NEW
                out=$WORK/fx/$name/out
                rm -rf "$out" && mkdir -p "$out" "$WORK/$side/fx"
                "$carve" generate --db "$db" --crate "$root/fixtures/$name" --out "$out" \
                    --no-verify --no-coverage --format json "${extra[@]}" \
                    >"$WORK/fx/$name/report.json" 2>"$WORK/fx/$name/generate.err"
                echo "$?" >"$WORK/fx/$name/code"
                rm -rf "$WORK/$side/fx/$name-$variant" && mkdir -p "$WORK/$side/fx/$name-$variant"
                mv "$out" "$WORK/$side/fx/$name-$variant/tests"
                mv "$WORK/fx/$name/report.json" "$WORK/fx/$name/code" "$WORK/fx/$name/generate.err" \
                    "$WORK/$side/fx/$name-$variant/"
            done
            local o=$WORK/old/fx/$name-$variant n=$WORK/new/fx/$name-$variant files=yes report=yes
            if [[ "$(cat "$o/code")" != 0 || "$(cat "$n/code")" != 0 ]]; then
                files="exit $(cat "$o/code") vs $(cat "$n/code")"; report=no
            fi
            diff -r "$o/tests" "$n/tests" >"$WORK/fx-$name-$variant.tests.diff" 2>&1 || files=no
            diff "$o/report.json" "$n/report.json" >"$WORK/fx-$name-$variant.report.diff" 2>&1 || report=no
            local written
            written=$(jq '.tests_written' "$o/report.json" 2>/dev/null || echo 0)
            [[ "$written" -gt 0 ]] || files="no tests written"
            [[ "$files" == yes && "$report" == yes ]] || status=1
            echo "| $name | $variant | $calls | $written | $files | $report |"
        done
    done
    [[ $status -eq 0 ]] || echo "generate-differential: differences found (diffs in $WORK/fx-*.diff; --keep DIR keeps them)" >&2
    return $status
}
if [[ -n "$FIXTURES" ]]; then
    fixtures "${CRATES[@]}"
    exit $?
fi

# prepare CRATE: WORK/CRATE/trace.db, a copy whose functions' source files name
# WORK/CRATE/lib (generate treats a function declared outside the --crate directory as another
# crate's, so the lib copy must be where the trace says), and WORK/CRATE/pristine, lib as kept.
prepare() {
    local c=$1 dir=$WORK/$1 from
    rm -rf "$dir" && mkdir -p "$dir"
    cp -r "$CRATES_DIR/$c/lib" "$dir/pristine"
    cp "$CRATES_DIR/$c/trace.db" "$dir/trace.db"
    from=$(sqlite3 -readonly "$CRATES_DIR/$c/trace.db" \
        "select substr(decl_file, 1, instr(decl_file, '/lib/src/') + 3) from functions where decl_file like '%/$c/lib/src/%' limit 1")
    [[ -n "$from" ]] && sqlite3 "$dir/trace.db" \
        "update functions set decl_file = replace(decl_file, '$from', '$dir/lib')"
}

# run SIDE CARVE CRATE: generate from a fresh copy of lib at WORK/CRATE/lib, then move what it
# wrote (tests/, report.json) to WORK/SIDE/CRATE; prints the peak RSS in MB.
run() {
    local side=$1 carve=$2 c=$3 dir=$WORK/$3 out=$WORK/$1/$3
    rm -rf "$dir/lib" "$out" && mkdir -p "$out"
    cp -r "$dir/pristine" "$dir/lib"
    /usr/bin/time -f '%M' -o "$out/time" "$carve" generate --db "$dir/trace.db" \
        --crate "$dir/lib" --out "$dir/lib/tests" --no-verify --no-coverage --format json \
        >"$out/report.json" 2>"$out/generate.err"
    echo "$?" >"$out/code"
    mv "$dir/lib/tests" "$out/tests"
    echo $(( $(tail -n 1 "$out/time") / 1024 ))
}

echo "| crate | calls | tests written | peak RSS old (MB) | peak RSS new (MB) | tests/ identical | report identical |"
echo "|---|---:|---:|---:|---:|---|---|"
status=0
for c in "${CRATES[@]}"; do
    prepare "$c"
    old_mb=$(run old "$OLD" "$c")
    new_mb=$(run new "$NEW" "$c")
    calls=$(sqlite3 -readonly "$CRATES_DIR/$c/trace.db" 'select count(*) from calls' 2>/dev/null || echo "?")
    files=yes; report=yes
    if [[ "$(cat "$WORK/old/$c/code")" != 0 || "$(cat "$WORK/new/$c/code")" != 0 ]]; then
        files="exit $(cat "$WORK/old/$c/code") vs $(cat "$WORK/new/$c/code")"; report=no
    fi
    diff -r "$WORK/old/$c/tests" "$WORK/new/$c/tests" >"$WORK/$c.tests.diff" 2>&1 || files=no
    diff "$WORK/old/$c/report.json" "$WORK/new/$c/report.json" >"$WORK/$c.report.diff" 2>&1 || report=no
    [[ "$files" == yes && "$report" == yes ]] || status=1
    # A check that compares nothing proves nothing: the old binary must have written tests.
    written=$(jq '.tests_written' "$WORK/old/$c/report.json" 2>/dev/null || echo 0)
    [[ "$written" -gt 0 ]] || { files="no tests written"; status=1; }
    rm -f "$WORK/$c/trace.db"
    echo "| $c | $calls | $written | $old_mb | $new_mb | $files | $report |"
done
[[ $status -eq 0 ]] || echo "generate-differential: differences found (diffs in $WORK/*.diff; --keep DIR keeps them)" >&2
exit $status
