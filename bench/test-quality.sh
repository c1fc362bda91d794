#!/usr/bin/env bash
# Test quality (issue 27): per crate of bench/real-crates.sh, the full verified suite carve wrote
# before distilling (`carve generate`, the default) against the distilled one (`--distil`): tests,
# lines of test code, and the lines of the recording's run that each suite re-executes (carve's
# own measure: the carved test binaries recorded with --coverage; see docs/coverage.md for how it
# agrees with callgrind). Results: docs/test-quality.md.
#
# Each crate is set up by bench/real-crates.sh --keep WORK CRATE (published source, driver,
# recording; it also runs its own generate and callgrind once) unless WORK/CRATE/trace.db is
# there already. Then, in WORK/CRATE:
#   carve generate --db trace.db --crate lib --out lib/tests --format json --no-distil  > full.json
#   carve generate --db trace.db --crate lib --out lib/tests --format json --distil     > distilled.json
# each into an emptied lib/tests/carved_*, counting `#[test]`s and lines of the files it leaves,
# and copying them to WORK/CRATE/suite-full and WORK/CRATE/suite-distilled (bench/mutants.sh).
# A crate that needs mockall gets it from real-crates.sh's run.
#
# A benchmark, not a test: not part of .ci/run or of `cargo test`.
#
# Usage: bench/test-quality.sh [--work DIR] [CRATE...]   (default: all crates of real-crates.sh)
#   --work DIR   where the crates are set up and left (default: a temp dir, removed)
# Environment: CARVE (prebuilt carve; default: built in release here).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ALL=(url glob shlex hex indexmap smallvec bytesize similar unicode-width pulldown-cmark lru itoa)

WORK=""
CRATES=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --work) WORK=$2; shift 2 ;;
        -h|--help) sed -n '2,/^set -uo/p' "$0" | sed 's/^# \{0,1\}//' | head -n -1; exit 0 ;;
        *) CRATES+=("$1"); shift ;;
    esac
done
[[ ${#CRATES[@]} -gt 0 ]] || CRATES=("${ALL[@]}")
if [[ -z "${CARVE:-}" ]]; then
    (cd "$ROOT" && cargo build --release --quiet) || exit 1
    CARVE=${CARGO_TARGET_DIR:-$ROOT/target}/release/carve
fi
export CARVE
unset CARGO_TARGET_DIR
if [[ -n "$WORK" ]]; then
    mkdir -p "$WORK" && WORK=$(cd "$WORK" && pwd)
else
    WORK=$(mktemp -d -t carve-test-quality-XXXXXX)
    trap 'rm -rf "$WORK"' EXIT
fi

# Generates into an emptied lib/tests with the extra flags; prints "tests lines reached recorded".
suite() {
    local d=$1 name=$2
    shift 2
    rm -f "$d"/lib/tests/carved_*
    (cd "$d" && CARGO_TARGET_DIR=$WORK/target "$CARVE" generate --db trace.db --crate lib \
        --out lib/tests --format json "$@" >"$name.json" 2>"$name.err") || return 1
    # Kept for bench/mutants.sh: WORK/CRATE/suite-full, WORK/CRATE/suite-distilled.
    rm -rf "$d/suite-$name" && mkdir -p "$d/suite-$name"
    cp "$d"/lib/tests/carved_*.rs "$d/suite-$name/" 2>/dev/null
    local tests lines
    tests=$(cat "$d"/lib/tests/carved_*.rs 2>/dev/null | grep -c '#\[test\]')
    lines=$(cat "$d"/lib/tests/carved_*.rs 2>/dev/null | wc -l)
    python3 - "$d/$name.json" "$tests" "$lines" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
lc = r.get("line_coverage") or {}
d = r.get("distilled") or {}
print(sys.argv[2], sys.argv[3], lc.get("reached_lines", "?"), lc.get("recorded_lines", "?"),
      f"{d.get('kept_outcomes', '-')}/{d.get('verified_outcomes', '-')}")
PY
}

echo "carve: $("$CARVE" --version 2>/dev/null || echo "$CARVE"); work: $WORK" >&2
echo "| crate | tests full | tests distilled | fewer | test lines full | test lines distilled | fewer | run lines re-executed full | distilled | outcomes kept |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for c in "${CRATES[@]}"; do
    d=$WORK/$c
    t0=$SECONDS
    if [[ ! -s "$d/trace.db" ]]; then
        "$ROOT/bench/real-crates.sh" --keep "$WORK" "$c" >"$WORK/$c.setup" 2>&1
    fi
    if [[ ! -s "$d/trace.db" ]]; then
        echo "| $c | setup failed: $(grep -m1 -i error "$WORK/$c.setup" || tail -1 "$WORK/$c.setup") |"
        continue
    fi
    if ! full=$(suite "$d" full --no-distil); then
        echo "| $c | carve generate --no-distil failed: $(grep -m1 -i error "$d/full.err") |"; continue
    fi
    if ! dist=$(suite "$d" distilled --distil); then
        echo "| $c | carve generate failed: $(grep -m1 -i error "$d/distilled.err") |"; continue
    fi
    read -r ft fl fr frec _ <<<"$full"
    read -r dt dl dr drec doc <<<"$dist"
    python3 -c '
import sys
c, ft, dt, fl, dl, fr, frec, dr, drec, doc = sys.argv[1:]
x = lambda a, b: f"{int(a) / max(1, int(b)):.1f}x"
print(f"| {c} | {ft} | {dt} | {x(ft, dt)} | {fl} | {dl} | {x(fl, dl)} | {fr} of {frec} | {dr} of {drec} | {doc} |")
' "$c" "$ft" "$dt" "$fl" "$dl" "$fr" "$frec" "$dr" "$drec" "$doc"
    echo "$c: $((SECONDS - t0)) s" >&2
done
