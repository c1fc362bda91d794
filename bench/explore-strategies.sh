#!/usr/bin/env bash
# Seed 004's experiment redone with carve explore (issue 28): for R, BE and BOBW at each
# length, the same number of sequences from the same recording, and how many of the crate's
# mutants the kept tests kill (cargo-mutants, the explored tests alone).
#
# Crates: fixture packages whose binary drives their library (default: fixtures/bounds),
# recorded here (carve record --coverage), mutants over src/lib.rs; or, with --from TQ, the
# crates bench/test-quality.sh --work TQ set up (TQ/CRATE/trace.db, lib, app.lines), mutants
# over the functions the run reached (bench/mutant_scope.py).
# Per crate, for each strategy S and length L:
#   carve explore --db trace.db [--crate lib] --out tests --strategy S --length L --runs RUNS \
#       --seed 1 --no-extend --verify-runs 1
# each configuration's kept tests become a module S_L of one test target, `strategies`, and
# ONE cargo-mutants run judges them all, through cargo-nextest (each test a process of its
# own, so a mutant that aborts one test does not hide the others; a test is stopped after 1 s):
# a mutant is killed by configuration S_L when a test of module S_L fails, crashes or is
# stopped in its log. --judge-only judges the modules a previous run left in WORK.
# Writes WORK/strategies.csv (crate, strategy, length, kept, killed, mutants, timeouts) and
# WORK/strategies.svg (mutants killed against length, one line per strategy and crate).
#
# A benchmark, not a test: not part of .ci/run or of `cargo test`.
#
# Usage: bench/explore-strategies.sh --work DIR [--runs N] [--lengths "1 2 3 5 8 10"] [CRATE_DIR...]
#        bench/explore-strategies.sh --work DIR --from TQ [--runs N] [--lengths ...] [--judge-only] CRATE...
# Environment: CARVE (prebuilt carve; default: built in release here), MUTANT_MEMORY_KB.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=""
FROM=""
RUNS=20000
LENGTHS="1 2 3 5 8 10"
JUDGE_ONLY=0
ARGS=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --work) WORK=$2; shift 2 ;;
        --from) FROM=$2; shift 2 ;;
        --runs) RUNS=$2; shift 2 ;;
        --lengths) LENGTHS=$2; shift 2 ;;
        --judge-only) JUDGE_ONLY=1; shift ;;
        -h|--help) sed -n '2,/^set -uo/p' "$0" | sed 's/^# \{0,1\}//' | head -n -1; exit 0 ;;
        *) ARGS+=("$1"); shift ;;
    esac
done
[[ -n "$WORK" ]] || { echo "usage: bench/explore-strategies.sh --work DIR [--from TQ] [CRATE_DIR or CRATE...]" >&2; exit 2; }
if [[ -z "$FROM" && ${#ARGS[@]} -eq 0 ]]; then ARGS=("$ROOT/fixtures/bounds"); fi
if [[ -z "${CARVE:-}" ]]; then
    (cd "$ROOT" && cargo build --release --quiet) || exit 1
    CARVE=${CARGO_TARGET_DIR:-$ROOT/target}/release/carve
fi
command -v cargo-mutants >/dev/null || cargo install --locked cargo-mutants || exit 1
command -v cargo-nextest >/dev/null || cargo install --locked cargo-nextest || exit 1
unset CARGO_TARGET_DIR
mkdir -p "$WORK" && WORK=$(cd "$WORK" && pwd)
[[ -z "$FROM" ]] || FROM=$(cd "$FROM" && pwd)
CSV=$WORK/strategies.csv
[[ $JUDGE_ONLY -eq 1 && -f "$CSV" ]] && cp "$CSV" "$CSV.before"
echo "crate,strategy,length,kept,killed,mutants,timeouts" >"$CSV"

# The name of the package's first target of KIND (lib or bin), in the current directory.
target_name() {
    cargo metadata --no-deps --format-version 1 | python3 -c '
import json, sys
m = json.load(sys.stdin)
print(next(t["name"].replace("-", "_") for p in m["packages"] for t in p["targets"] if sys.argv[1] in t["kind"]))' "$1"
}

for arg in "${ARGS[@]}"; do
    if [[ $JUDGE_ONLY -eq 1 ]]; then
        name=$(basename "$arg")
        d=$WORK/$name
        pkg=$d/lib
        [[ -n "$FROM" ]] || pkg=$d
    elif [[ -n "$FROM" ]]; then
        name=$arg
        d=$WORK/$name
        rm -rf "$d" && mkdir -p "$d"
        [[ -s "$FROM/$name/trace.db" && -s "$FROM/$name/app.lines" ]] \
            || { echo "$name: no $FROM/$name/trace.db or app.lines (bench/test-quality.sh --work $FROM $name)" >&2; continue; }
        tar -C "$FROM/$name" --exclude=target -cf - lib | tar -C "$d" -xf -
        rm -f "$d"/lib/tests/carved_* "$d"/lib/tests/explored_*
        cp "$FROM/$name/trace.db" "$d/trace.db"
        pkg=$d/lib
        crate_arg=(--crate lib)
        out=lib/tests
    else
        name=$(basename "$arg")
        d=$WORK/$name
        rm -rf "$d" && mkdir -p "$d"
        tar -C "$arg" --exclude=target -cf - . | tar -C "$d" -xf -
        (cd "$d" && cargo build --quiet 2>"$d/build.err") || { echo "$name: build failed" >&2; continue; }
        bin=$(cd "$d" && target_name bin)
        (cd "$d" && "$CARVE" record --coverage --db trace.db -- "target/debug/$bin" >/dev/null 2>"$d/record.err")
        pkg=$d
        crate_arg=()
        out=tests
    fi
    lib=$(cd "$pkg" && target_name lib)
    if [[ $JUDGE_ONLY -eq 0 ]]; then
        mkdir -p "$pkg/tests/strategies"
        mods=$pkg/tests/strategies.rs
        echo "//! Seed 004's experiment: each module the tests one configuration kept." >"$mods"
        for s in random exhaustive bobw; do
            for l in $LENGTHS; do
                rm -f "$pkg/tests/explored_$lib.rs" "$pkg/tests/explored_${lib}_findings.md"
                (cd "$d" && CARGO_TARGET_DIR=$d/target "$CARVE" explore --db trace.db "${crate_arg[@]}" \
                    --out "$out" --strategy "$s" --length "$l" --runs "$RUNS" --seed 1 --no-extend --verify-runs 1 \
                    --format json >"$d/explore-$s-$l.json" 2>"$d/explore-$s-$l.err")
                if [[ -f "$pkg/tests/explored_$lib.rs" ]]; then
                    mv "$pkg/tests/explored_$lib.rs" "$pkg/tests/strategies/${s}_$l.rs"
                    echo "#[path = \"strategies/${s}_$l.rs\"] mod ${s}_$l;" >>"$mods"
                fi
                rm -f "$pkg/tests/explored_${lib}_findings.md"
            done
        done
    fi
    # Each configuration and the tests it kept (as its explore run reported them).
    configs=()
    for s in random exhaustive bobw; do
        for l in $LENGTHS; do
            kept=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["tests_kept"])' \
                "$d/explore-$s-$l.json" 2>/dev/null || echo 0)
            configs+=("$s,$l,$kept")
        done
    done
    # Each test a process (nextest); one that hangs is stopped after 1 s and counts as failed.
    mkdir -p "$pkg/.config"
    printf '[profile.default]\nslow-timeout = { period = "1s", terminate-after = 1 }\nfail-fast = false\n' \
        >"$pkg/.config/nextest.toml"
    m=$d/mutants
    rm -rf "$m" && mkdir -p "$m"
    scope=(--file src/lib.rs)
    if [[ -n "$FROM" ]]; then
        (cd "$pkg" && CARGO_TARGET_DIR=$d/target cargo mutants --list --json >"$m/list.json" 2>"$m/list.err")
        scope=(--re "$(python3 "$ROOT/bench/mutant_scope.py" "$m/list.json" "$FROM/$name/app.lines" functions)")
    fi
    (cd "$pkg" && ulimit -v "${MUTANT_MEMORY_KB:-8388608}" \
        && CARGO_TARGET_DIR=$d/target cargo mutants --test-tool nextest --no-shuffle -j 1 \
        --timeout 1800 "${scope[@]}" -o "$m" -- --test strategies --no-fail-fast >"$m/mutants.log" 2>&1)
    python3 - "$m/mutants.out" "$name" "${configs[@]}" <<'PY' | tee -a "$CSV"
import json, os, re, sys
out, name, configs = sys.argv[1], sys.argv[2], sys.argv[3:]
try:
    outcomes = json.load(open(os.path.join(out, "outcomes.json")))["outcomes"]
except (OSError, ValueError):
    outcomes = []
mutants = [o for o in outcomes if isinstance(o.get("scenario"), dict) and "Mutant" in o["scenario"]]
viable = [o for o in mutants if o["summary"] != "Unviable"]
timeouts = sum(o["summary"] == "Timeout" for o in viable)
# nextest: `    SIGABRT [   0.172s] (  6/629) itoa::strategies bobw_10::explored_002_format_boundary`
failed = re.compile(r"^\s*(?:FAIL|SIG\w+|TIMEOUT|ABORT)\s+\[[^]]*\]\s+(?:\([^)]*\)\s+)?\S+\s+(\w+)::", re.M)
killed = {}
for o in viable:
    if o["summary"] not in ("CaughtMutant", "Timeout"):
        continue
    log = open(os.path.join(out, o["log_path"]), errors="replace").read()
    for module in set(failed.findall(log)):
        killed[module] = killed.get(module, 0) + 1
for c in configs:
    s, l, kept = c.split(",")
    print(f"{name},{s},{l},{kept},{killed.get(f'{s}_{l}', 0)},{len(viable)},{timeouts}")
PY
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
