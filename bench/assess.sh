#!/usr/bin/env bash
# carve assess against cargo mutants on the same crates: agreement of the verdicts on the
# transformations both make, and the wall time of each (issue 12). Not a test: it measures and
# prints a table (and one line per disagreement).
#
# cargo mutants runs only its function-value mutants ("replace f -> T with V", genre FnValue:
# the binary-operator mutants are excluded by name); both tools start from a fresh copy of the
# crate with no target directory, so both times include building the tests.
# Caught and timeout are "detected", missed is "undetected"; unviable mutants (they do not
# compile) are left out; carve's skipped functions make no transformation.
#
# Usage: bench/assess.sh [CRATE_DIR...]        (default: fixtures/assessed)
# Environment: CARGO_TARGET_DIR (where carve is built; default <repo>/target), CARVE (prebuilt).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
if [[ -z "${CARVE:-}" ]]; then
    cargo build --release --quiet --manifest-path "$ROOT/Cargo.toml"
    CARVE=$TARGET/release/carve
fi
if ! command -v cargo-mutants >/dev/null; then
    cargo install --locked cargo-mutants
fi
CRATES=("$@")
[[ ${#CRATES[@]} -gt 0 ]] || CRATES=("$ROOT/fixtures/assessed")

WORK=$(mktemp -d -t carve-assess-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
unset CARGO_TARGET_DIR

printf '%-12s %6s %6s %9s %10s %10s %7s\n' crate both agree agree% mutants_s carve_s ratio
for dir in "${CRATES[@]}"; do
    name=$(basename "$dir")
    mkdir -p "$WORK/m" "$WORK/c"
    cp -r "$dir" "$WORK/m/$name"
    cp -r "$dir" "$WORK/c/$name"
    rm -rf "$WORK/m/$name/target" "$WORK/c/$name/target"
    start=$(date +%s.%N)
    (cd "$WORK/m/$name" && cargo mutants --exclude-re ' in [A-Za-z0-9_:<>]+$' >mutants.txt 2>&1) || true
    mid=$(date +%s.%N)
    "$CARVE" assess --crate "$WORK/c/$name" --format json >"$WORK/c/$name.json" 2>"$WORK/c/$name.err" || true
    end=$(date +%s.%N)
    python3 - "$name" "$WORK/m/$name/mutants.out/outcomes.json" "$WORK/c/$name.json" \
        "$(echo "$mid - $start" | bc)" "$(echo "$end - $mid" | bc)" <<'PY'
import json, sys
name, mutants_file, carve_file, t_mutants, t_carve = sys.argv[1:6]
t_mutants, t_carve = float(t_mutants), float(t_carve)
theirs = {}
for o in json.load(open(mutants_file))["outcomes"]:
    m = o["scenario"]
    if not isinstance(m, dict) or m["Mutant"]["genre"] != "FnValue":
        continue
    m = m["Mutant"]
    verdict = {"CaughtMutant": "detected", "Timeout": "detected",
               "MissedMutant": "undetected"}.get(o["summary"])
    if verdict is None:
        continue  # unviable
    fn = m["function"]["function_name"] if m.get("function") else "?"
    theirs[(fn, m["replacement"])] = verdict
ours = {}
report = json.load(open(carve_file))
for f in report["functions"]:
    # carve's paths start with the crate: cargo mutants names functions from the crate's root.
    fn = f["function"].split("::", 1)[1] if "::" in f["function"] else f["function"]
    for t in f["transformations"]:
        v = t["verdict"]["verdict"]
        if v in ("detected", "undetected"):
            ours[(fn, t["value"])] = v
both = sorted(set(theirs) & set(ours))
agree = [k for k in both if theirs[k] == ours[k]]
pct = 100.0 * len(agree) / len(both) if both else 100.0
print(f"{name:<12} {len(both):>6} {len(agree):>6} {pct:>8.1f}% {t_mutants:>10.1f} {t_carve:>10.1f} {t_mutants / t_carve:>6.1f}x")
for k in both:
    if theirs[k] != ours[k]:
        print(f"  disagree: {k[0]} -> {k[1]}: cargo mutants {theirs[k]}, carve {ours[k]}")
only_theirs = sorted(set(theirs) - set(ours))
only_ours = sorted(set(ours) - set(theirs))
print(f"  only cargo mutants: {len(only_theirs)} ({', '.join(f'{a} -> {b}' for a, b in only_theirs)})")
print(f"  only carve: {len(only_ours)} ({', '.join(f'{a} -> {b}' for a, b in only_ours)})")
PY
done
