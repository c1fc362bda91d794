#!/usr/bin/env bash
# How `carve generate` scales with the calls of a trace (issue 29: <= 60 s with --no-verify and
# <= 5 min with verification at 100,000 calls, memory <= 1 GB, time linear in the calls).
#
# The trace comes from a real crate's own integration tests, written by its authors, not by us:
# unicode-width 0.2.2's tests/tests.rs (fetched through cargo, copied out of the registry, its
# manifest given an empty [workspace] and `autotests` back on, as bench/real-crates.sh does).
# Its test binary is recorded three times with `--max-calls-per-function K` (K = 400, 2000,
# 5000: about 11k, 50k and 117k calls; a bound per function, so each trace is the same program
# run cut off at another place), and on each:
#   carve generate --db uwK.db --crate COPY --out COPY/tests --no-verify     (wall s, peak RSS)
# then, on the largest, the same with verification (the default: build, 3 runs, take out).
# Prints one Markdown row per trace. A benchmark, not a CI test.
#
# Usage: bench/generate-scale.sh [--keep DIR]      Environment: CARVE (default target/release/carve)
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KEEP=""
if [[ "${1:-}" == --keep ]]; then KEEP=$2; shift 2; fi
CARVE=${CARVE:-$ROOT/target/release/carve}
[[ -x "$CARVE" ]] || (cd "$ROOT" && cargo build --release --quiet) || exit 1
CARVE=$(realpath "$CARVE")
if [[ -n "$KEEP" ]]; then W=$KEEP; mkdir -p "$W"; else W=$(mktemp -d); trap 'rm -rf "$W"' EXIT; fi
NAME=unicode-width; VERSION=0.2.2; IDENT=unicode_width

mkdir -p "$W/fetch/src"
printf '[package]\nname = "fetch-scale"\nversion = "0.0.0"\nedition = "2021"\n[workspace]\n[dependencies]\n%s = "=%s"\n' \
    "$NAME" "$VERSION" >"$W/fetch/Cargo.toml"
echo 'fn main() {}' >"$W/fetch/src/main.rs"
cargo fetch --quiet --manifest-path "$W/fetch/Cargo.toml" || exit 1
SRC=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"$NAME-$VERSION" | head -1)
rm -rf "$W/lib" && cp -r "$SRC" "$W/lib" && rm -rf "$W/lib/target"
sed -i 's/^autotests = false/autotests = true/' "$W/lib/Cargo.toml"
printf '\n[workspace]\n' >>"$W/lib/Cargo.toml"
(cd "$W/lib" && cargo test --no-run --quiet --test tests 2>/dev/null) || exit 1
BIN=$(ls "$W/lib/target/debug/deps/tests-"* | grep -v '\.d$' | head -1)

measure() { # OUT_LABEL ARGS... : runs carve generate, prints "wall_s rss_mb"
    local out=$1; shift
    /usr/bin/time -f "%e %M" -o "$W/time.txt" "$CARVE" generate -q "$@" >"$W/$out.out" 2>&1
    local rc=$?
    read -r wall kb <"$W/time.txt"
    echo "$wall $((kb / 1024)) $rc"
}

echo "| calls recorded | trace (MB) | tests written | generate --no-verify (s) | peak RSS (MB) | with verification (s) | peak RSS (MB) | tests kept |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|"
for K in 400 2000 5000; do
    DB=$W/uw$K.db
    rm -f "$DB"
    # From the package's directory, as cargo runs its tests (one reads tests/emoji-test.txt).
    (cd "$W/lib" && "$CARVE" record -q --db "$DB" --filter "$IDENT::*" --max-calls-per-function $K \
        -- "$BIN" --test-threads=1 >/dev/null 2>"$W/record$K.err") ||
        { echo "recording failed (the tests must pass): $(tail -1 "$W/record$K.err")" >&2; exit 1; }
    CALLS=$(sqlite3 "$DB" 'select count(*) from calls')
    MB=$(( $(stat -c %s "$DB") / 1048576 ))
    C=$W/crate$K
    rm -rf "$C" && cp -r "$W/lib" "$C" && rm -rf "$C/target"
    read -r NV_S NV_MB NV_RC < <(measure nv$K --db "$DB" --crate "$C" --out "$C/tests" --no-verify --format json)
    WRITTEN=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['tests_written'])" "$W/nv$K.out" 2>/dev/null || echo "?")
    V_S="-"; V_MB="-"; KEPT="-"
    if [[ $K == 5000 ]]; then
        rm -rf "$C" && cp -r "$W/lib" "$C" && rm -rf "$C/target"
        read -r V_S V_MB V_RC < <(measure v$K --db "$DB" --crate "$C" --out "$C/tests" --format json)
        # The tests verification kept: those left in the files it wrote.
        KEPT=$(cat "$C"/tests/carved_*.rs 2>/dev/null | grep -c '#\[test\]')
        [[ $V_RC == 0 ]] || KEPT="exit $V_RC"
    fi
    [[ $NV_RC == 0 ]] || WRITTEN="exit $NV_RC"
    echo "| $CALLS | $MB | $WRITTEN | $NV_S | $NV_MB | $V_S | $V_MB | $KEPT |"
done
