#!/usr/bin/env bash
# Seed 004's experiment redone with carve explore (issue 28): for R, BE and BOBW at each
# length, the same number of sequences from the same recording, and how many of the crate's
# mutants the kept tests kill (cargo-mutants, the explored tests alone).
#
# Per crate directory (a package whose binary drives its library; default: fixtures/bounds):
#   cargo build; carve record --coverage --db trace.db -- target/debug/BIN
#   for each strategy S and length L:
#     carve explore --db trace.db --out tests --strategy S --length L --runs RUNS --seed 1 --verify-runs 1
#     cargo mutants --no-shuffle -j 1 --timeout 30 --file src/lib.rs -- --test explored_CRATE
# writes WORK/strategies.csv (crate, strategy, length, kept, killed, mutants) and
# WORK/strategies.svg (mutants killed against length, one line per strategy and crate).
#
# A benchmark, not a test: not part of .ci/run or of `cargo test`.
#
# Usage: bench/explore-strategies.sh --work DIR [--runs N] [--lengths "1 2 3 5 8 10"] [CRATE_DIR...]
# Environment: CARVE (prebuilt carve; default: built in release here).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=""
RUNS=20000
LENGTHS="1 2 3 5 8 10"
DIRS=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --work) WORK=$2; shift 2 ;;
        --runs) RUNS=$2; shift 2 ;;
        --lengths) LENGTHS=$2; shift 2 ;;
        -h|--help) sed -n '2,/^set -uo/p' "$0" | sed 's/^# \{0,1\}//' | head -n -1; exit 0 ;;
        *) DIRS+=("$1"); shift ;;
    esac
done
[[ -n "$WORK" ]] || { echo "usage: bench/explore-strategies.sh --work DIR [CRATE_DIR...]" >&2; exit 2; }
[[ ${#DIRS[@]} -gt 0 ]] || DIRS=("$ROOT/fixtures/bounds")
if [[ -z "${CARVE:-}" ]]; then
    (cd "$ROOT" && cargo build --release --quiet) || exit 1
    CARVE=${CARGO_TARGET_DIR:-$ROOT/target}/release/carve
fi
command -v cargo-mutants >/dev/null || cargo install --locked cargo-mutants || exit 1
unset CARGO_TARGET_DIR
mkdir -p "$WORK" && WORK=$(cd "$WORK" && pwd)
CSV=$WORK/strategies.csv
echo "crate,strategy,length,kept,killed,mutants" >"$CSV"

for src in "${DIRS[@]}"; do
    name=$(basename "$src")
    d=$WORK/$name
    rm -rf "$d" && mkdir -p "$d"
    tar -C "$src" --exclude=target -cf - . | tar -C "$d" -xf -
    (cd "$d" && cargo build --quiet 2>"$d/build.err") || { echo "$name: build failed" >&2; continue; }
    bin=$(cd "$d" && cargo metadata --no-deps --format-version 1 | python3 -c '
import json, sys
m = json.load(sys.stdin)
print(next(t["name"] for p in m["packages"] for t in p["targets"] if "bin" in t["kind"]))')
    (cd "$d" && "$CARVE" record --coverage --db trace.db -- "target/debug/$bin" >/dev/null 2>"$d/record.err")
    lib=$(cd "$d" && cargo metadata --no-deps --format-version 1 | python3 -c '
import json, sys
m = json.load(sys.stdin)
print(next(t["name"] for p in m["packages"] for t in p["targets"] if "lib" in t["kind"]))')
    for s in random exhaustive bobw; do
        for l in $LENGTHS; do
            rm -rf "$d/tests" && mkdir -p "$d/tests"
            (cd "$d" && "$CARVE" explore --db trace.db --out tests --strategy "$s" --length "$l" \
                --runs "$RUNS" --seed 1 --verify-runs 1 --format json >"$d/explore-$s-$l.json" \
                2>"$d/explore-$s-$l.err")
            kept=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["tests_kept"])' \
                "$d/explore-$s-$l.json" 2>/dev/null || echo 0)
            killed=0 total=0
            if [[ -f "$d/tests/explored_$lib.rs" ]]; then
                rm -f "$d/tests/explored_${lib}_findings.md"
                (cd "$d" && cargo mutants --no-shuffle -j 1 --timeout 30 --file src/lib.rs \
                    -o "$d/mutants-$s-$l" -- --test "explored_$lib" >"$d/mutants-$s-$l.log" 2>&1)
                read -r killed total < <(python3 - "$d/mutants-$s-$l/mutants.out/outcomes.json" <<'PY'
import json, sys
try:
    o = json.load(open(sys.argv[1]))["outcomes"]
except (OSError, ValueError):
    print(0, 0); sys.exit(0)
m = [x for x in o if isinstance(x.get("scenario"), dict) and "Mutant" in x["scenario"]]
viable = [x for x in m if x["summary"] != "Unviable"]
print(sum(x["summary"] in ("CaughtMutant", "Timeout") for x in viable), len(viable))
PY
)
            fi
            echo "$name,$s,$l,$kept,$killed,$total" | tee -a "$CSV"
        done
    done
done

python3 - "$CSV" "$WORK/strategies.svg" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
W, H, M = 780, 400, 50
lengths = sorted({int(r["length"]) for r in rows}) or [1]
top = max([int(r["killed"]) for r in rows] + [1])
x = lambda l: M + (W - 2 * M - 150) * (lengths.index(l) / max(1, len(lengths) - 1))
y = lambda k: H - M - (H - 2 * M) * k / top
colours = {"random": "#d62728", "exhaustive": "#1f77b4", "bobw": "#2ca02c"}
out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
       f'<line x1="{M}" y1="{H-M}" x2="{W-M-150}" y2="{H-M}" stroke="black"/>',
       f'<line x1="{M}" y1="{M}" x2="{M}" y2="{H-M}" stroke="black"/>',
       f'<text x="{(W-150)/2}" y="{H-10}" text-anchor="middle">sequence length</text>',
       f'<text x="15" y="{H/2}" transform="rotate(-90 15 {H/2})" text-anchor="middle">mutants killed</text>']
for l in lengths:
    out.append(f'<text x="{x(l)}" y="{H-M+15}" text-anchor="middle">{l}</text>')
for k in range(0, top + 1, max(1, top // 5)):
    out.append(f'<text x="{M-5}" y="{y(k)+4}" text-anchor="end">{k}</text>')
series = {}
for r in rows:
    series.setdefault((r["crate"], r["strategy"]), []).append((int(r["length"]), int(r["killed"])))
dash = {}
for i, ((crate, s), pts) in enumerate(sorted(series.items())):
    dash.setdefault(crate, ["", "6,3", "2,2"][len(dash) % 3])
    pts.sort()
    path = " ".join(f"{x(l):.1f},{y(k):.1f}" for l, k in pts)
    out.append(f'<polyline fill="none" stroke="{colours.get(s, "gray")}" stroke-width="2" '
               f'stroke-dasharray="{dash[crate]}" points="{path}"/>')
    out.append(f'<text x="{W-M-140}" y="{M + 15 * i}" fill="{colours.get(s, "gray")}">{crate} {s}</text>')
out.append("</svg>")
open(sys.argv[2], "w").write("\n".join(out))
PY
echo "wrote $CSV and $WORK/strategies.svg" >&2
