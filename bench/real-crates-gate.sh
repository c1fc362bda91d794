#!/usr/bin/env bash
# Does `carve gate` stay quiet on an unchanged build of a real crate? (issue "Trust": a gate that
# cries wolf gets switched off.) For each crate of a scratch dir kept by
#   bench/real-crates.sh --keep DIR [CRATE...]
# this records a baseline of the driver with `--runs 3` (so values that change from run to run
# are known), rebuilds the driver unchanged (its sources touched, so cargo really builds it
# again), then runs `carve gate --baseline` on the new build TIMES times in a row and counts the
# exits: every one must be 0. A gate that exits 1 prints its first divergences here.
#
# Usage: bench/real-crates-gate.sh --from DIR [--times N] [CRATE...]   (default: every crate in DIR, 10 times)
# Environment: CARVE (prebuilt carve; default: the repo's target/release/carve, built if missing).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FROM=""
TIMES=10
CRATES=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --from) FROM=$2; shift 2 ;;
        --times) TIMES=$2; shift 2 ;;
        -h|--help) sed -n '2,/^set -uo/p' "$0" | sed 's/^# \{0,1\}//' | head -n -1; exit 0 ;;
        *) CRATES+=("$1"); shift ;;
    esac
done
[[ -n "$FROM" && -d "$FROM" ]] || { echo "real-crates-gate: --from DIR must name a scratch dir kept by bench/real-crates.sh --keep DIR" >&2; exit 2; }
if [[ ${#CRATES[@]} -eq 0 ]]; then
    for d in "$FROM"/*/; do
        [[ -f "$d/trace.db" ]] && CRATES+=("$(basename "$d")")
    done
fi
if [[ -z "${CARVE:-}" ]]; then
    (cd "$ROOT" && cargo build --release --quiet) || exit 2
    CARVE=$ROOT/target/release/carve
fi
TARGET=$FROM/target

echo "| crate | baseline calls | gates run | exit 0 | exit 1 | other |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
total_bad=0
for c in "${CRATES[@]}"; do
    d=$FROM/$c
    ident=${c//-/_}
    app=$TARGET/debug/$c-app
    [[ -x "$app" ]] || { echo "| $c | no driver binary at $app | | | | |"; continue; }
    rm -f "$d/base.db" "$d/base.db-wal" "$d/base.db-shm"
    if ! (cd "$d" && "$CARVE" record --runs 3 --db base.db --filter "$ident::*" -- "$app" >/dev/null 2>"$d/base.err"); then
        echo "| $c | baseline failed: $(head -c 200 "$d/base.err" | head -n 1) | | | | |"
        continue
    fi
    calls=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT COUNT(*) FROM calls WHERE run_id = (SELECT MAX(id) FROM runs)').fetchone()[0])" "$d/base.db")
    # An unchanged rebuild: same sources, built again.
    touch "$d/app/src/main.rs"
    (cd "$d/app" && CARGO_TARGET_DIR=$TARGET cargo build --quiet 2>"$d/rebuild.err") || { echo "| $c | rebuild failed | | | | |"; continue; }
    ok=0 diverged=0 other=0
    for ((i = 1; i <= TIMES; i++)); do
        (cd "$d" && "$CARVE" gate --baseline base.db --new-db "gate-$i.db" -- "$app" >"$d/gate-$i.out" 2>"$d/gate-$i.err")
        case $? in
            0) ok=$((ok + 1)) ;;
            1) diverged=$((diverged + 1))
               [[ $diverged -eq 1 ]] && sed -n '1,12p' "$d/gate-$i.out" | sed "s/^/    $c gate $i: /" >&2 ;;
            *) other=$((other + 1))
               [[ $other -eq 1 ]] && sed -n '1,3p' "$d/gate-$i.err" | sed "s/^/    $c gate $i: /" >&2 ;;
        esac
        rm -f "$d/gate-$i.db" "$d/gate-$i.db-wal" "$d/gate-$i.db-shm"
    done
    echo "| $c | $calls | $TIMES | $ok | $diverged | $other |"
    total_bad=$((total_bad + diverged + other))
done
echo "gates that did not exit 0: $total_bad" >&2
[[ $total_bad -eq 0 ]]
