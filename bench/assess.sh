#!/usr/bin/env bash
# carve assess against cargo mutants on the same crates: agreement of the verdicts on the
# transformations both make, and the wall time of each (issue 12). Not a test: it measures and
# prints a table (and one line per disagreement).
#
# cargo mutants runs only its function-value mutants ("replace f -> T with V", genre FnValue:
# operator and match-arm mutants, "replace == with != in f" and "delete ... in f", are excluded
# by name); both tools start from a fresh copy of the
# crate with no target directory, so both times include building the tests (cold, the default).
# With WARM=1 each tool's copy has its tests built already by `cargo test --no-run` (not timed),
# so only each tool's own per-crate work is timed: cargo mutants runs `--in-place` in its copy,
# its documented way to reuse a built target/ (a copy of the tree it makes elsewhere rebuilds
# everything; book/src/in-place.md), carve assesses its copy where it is.
# Caught and timeout are "detected", missed is "undetected"; unviable mutants (they do not
# compile) are left out; carve's skipped functions make no transformation. cargo test runs the
# lib, bin and integration tests (not doctests, which carve does not run).
#
# Caught and timeout are "detected", missed is "undetected", and so is carve's "not reached"
# (a function no test reaches: cargo mutants lists its mutants as missed).
#
# Usage: bench/assess.sh [CRATE_DIR | NAME...]
#   a directory is used as it is; NAME is a published crate at the version bench/real-crates.sh
#   pins, or strsim 0.11.1, the string-similarity crate of issue 29 (its source from cargo's
#   registry, through `cargo fetch`, tests as published).
#   Default: fixtures/assessed shlex hex bytesize strsim.
# Environment: CARGO_TARGET_DIR (where carve is built; default <repo>/target), CARVE (prebuilt),
# KEEP=1 (leave the scratch directory, with both tools' outputs), WARM=1 (see above), RUNS (carve's --runs; default
# 1, the one run per mutant cargo mutants makes; carve's own default is 3), CARVE_BEFORE (another
# carve, an earlier build, timed the same way on a copy of its own right after carve: its time
# and ratio are added to the line). Flaky verdicts (runs that disagree) count as neither
# detected nor undetected.
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
[[ ${#CRATES[@]} -gt 0 ]] || CRATES=("$ROOT/fixtures/assessed" shlex hex bytesize strsim)
# The versions bench/real-crates.sh pins, and issue 29's string-similarity crate.
eval "$(sed -n '/^declare -A VERSION=(/,/^)/p' "$ROOT/bench/real-crates.sh")"
VERSION[strsim]=0.11.1
REGISTRY=${CARGO_HOME:-$HOME/.cargo}/registry/src

WORK=$(mktemp -d -t carve-assess-XXXXXX)
if [[ -n "${KEEP:-}" ]]; then echo "work: $WORK" >&2; else trap 'rm -rf "$WORK"' EXIT; fi
unset CARGO_TARGET_DIR

# The published source of crate $1 at its pinned version: a directory path.
fetch() {
    local c=$1 v=${VERSION[$1]:?no pinned version for $1 in bench/real-crates.sh}
    local d=$WORK/fetch-$c
    mkdir -p "$d/src"
    printf '[package]\nname = "fetch-%s"\nversion = "0.0.0"\nedition = "2021"\n[workspace]\n[dependencies]\n%s = "=%s"\n' \
        "$c" "$c" "$v" >"$d/Cargo.toml"
    echo 'fn main() {}' >"$d/src/main.rs"
    cargo fetch --quiet --manifest-path "$d/Cargo.toml" >&2
    ls -d "$REGISTRY"/*/"$c-$v" | head -1
}

# Failing tests capture a backtrace when this is set (cargo mutants inherits it; carve assess
# sets RUST_BACKTRACE=0 for the tests it runs): say which it was.
echo "RUST_BACKTRACE=${RUST_BACKTRACE-unset}" >&2
WARM=${WARM:-}
if [[ -n "$WARM" ]]; then echo "mode: warm (tests built before timing)" >&2; else echo "mode: cold (no target/)" >&2; fi
if [[ -n "${CARVE_BEFORE:-}" ]]; then
    printf '%-12s %6s %6s %9s %10s %10s %7s %10s %7s\n' crate both agree agree% mutants_s carve_s ratio before_s ratio
else
    printf '%-12s %6s %6s %9s %10s %10s %7s\n' crate both agree agree% mutants_s carve_s ratio
fi
for dir in "${CRATES[@]}"; do
    [[ -d "$dir" ]] || dir=$(fetch "$dir")
    name=$(basename "$dir")
    mkdir -p "$WORK/m" "$WORK/c" "$WORK/b"
    cp -r "$dir" "$WORK/m/$name"
    cp -r "$dir" "$WORK/c/$name"
    rm -rf "$WORK/m/$name/target" "$WORK/c/$name/target"
    if [[ -n "${CARVE_BEFORE:-}" ]]; then
        cp -r "$dir" "$WORK/b/$name"
        rm -rf "$WORK/b/$name/target"
    fi
    in_place=()
    if [[ -n "$WARM" ]]; then
        # What both tools' builds need, built once (dependencies) per copy: cargo mutants
        # builds with `cargo test --no-run --package=NAME`, carve with `cargo test --no-run`.
        (cd "$WORK/m/$name" && cargo test --no-run --quiet >/dev/null 2>&1)
        cp -a "$WORK/m/$name/target" "$WORK/c/$name/target"
        # The copied target/ would take the crate itself as built (its debug info naming the
        # other copy's files): touched, it is built again here, its dependencies are not.
        find "$WORK/c/$name" -path "$WORK/c/$name/target" -prune -o -name '*.rs' -exec touch {} +
        (cd "$WORK/c/$name" && cargo test --no-run --quiet >/dev/null 2>&1)
        if [[ -n "${CARVE_BEFORE:-}" ]]; then
            cp -a "$WORK/m/$name/target" "$WORK/b/$name/target"
            find "$WORK/b/$name" -path "$WORK/b/$name/target" -prune -o -name '*.rs' -exec touch {} +
            (cd "$WORK/b/$name" && cargo test --no-run --quiet >/dev/null 2>&1)
        fi
        in_place=(--in-place)
    fi
    echo "$name: load average $(cut -d' ' -f1-3 /proc/loadavg) at $(date -u +%H:%M:%S)" >&2
    start=$(date +%s.%N)
    # The same tests carve runs: the lib's, the bins' and the integration tests (no doctests).
    (cd "$WORK/m/$name" && cargo mutants "${in_place[@]}" --exclude-re ': (delete |replace [^ ]+ with [^ ]+ in )' -- --lib --bins --tests \
        >mutants.txt 2>&1) || true
    mid=$(date +%s.%N)
    "$CARVE" assess --crate "$WORK/c/$name" --runs "${RUNS:-1}" --format json >"$WORK/c/$name.json" 2>"$WORK/c/$name.err" || true
    end=$(date +%s.%N)
    t_before=""
    if [[ -n "${CARVE_BEFORE:-}" ]]; then
        "$CARVE_BEFORE" assess --crate "$WORK/b/$name" --runs "${RUNS:-1}" --format json >"$WORK/b/$name.json" 2>"$WORK/b/$name.err" || true
        t_before=$(echo "$(date +%s.%N) - $end" | bc)
    fi
    echo "$name: load average $(cut -d' ' -f1-3 /proc/loadavg) at $(date -u +%H:%M:%S)" >&2
    python3 - "$name" "$WORK/m/$name/mutants.out/outcomes.json" "$WORK/c/$name.json" \
        "$(echo "$mid - $start" | bc)" "$(echo "$end - $mid" | bc)" "$t_before" <<'PY'
import json, os, sys
name, mutants_file, carve_file, t_mutants, t_carve, t_before = sys.argv[1:7]
t_mutants, t_carve = float(t_mutants), float(t_carve)
# Both tools' transformations are matched by source file, function and value: cargo mutants
# names functions its own way (`Shlex<'a>::next_char`, `<impl Iterator for Shlex<'_>>::next`),
# so a function is its span there and the line DWARF declares it at here.
theirs, spans = {}, {}
for o in json.load(open(mutants_file))["outcomes"]:
    m = o["scenario"]
    if not isinstance(m, dict) or m["Mutant"]["genre"] != "FnValue":
        continue
    m = m["Mutant"]
    verdict = {"CaughtMutant": "detected", "Timeout": "detected",
               "MissedMutant": "undetected"}.get(o["summary"])
    if verdict is None:
        continue  # unviable
    f = m.get("function") or {}
    span = f.get("span", m["span"])
    key = (m["file"], span["start"]["line"], span["end"]["line"])
    spans[key] = f.get("function_name", "?")
    theirs[(key, m["replacement"])] = verdict
ours = {}
report = json.load(open(carve_file))
root = os.path.dirname(carve_file)
for f in report["functions"]:
    file, line = f.get("file") or "", f.get("line") or 0
    rel = os.path.relpath(file, os.path.join(root, name)) if file else ""
    key = next((k for k in spans if k[0] == rel and k[1] <= line <= k[2]), None)
    if key is None:
        key = (rel, line, line)
        spans[key] = f["function"]
    for t in f["transformations"]:
        v = t["verdict"]["verdict"]
        if v == "not_reached":
            v = "undetected"
        if v in ("detected", "undetected"):
            ours[(key, t["value"])] = v
both = sorted(set(theirs) & set(ours))
agree = [k for k in both if theirs[k] == ours[k]]
pct = 100.0 * len(agree) / len(both) if both else 100.0
line = f"{name:<12} {len(both):>6} {len(agree):>6} {pct:>8.1f}% {t_mutants:>10.1f} {t_carve:>10.1f} {t_mutants / t_carve:>6.1f}x"
if t_before:
    line += f" {float(t_before):>10.1f} {t_mutants / float(t_before):>6.1f}x"
print(line)
for k in both:
    if theirs[k] != ours[k]:
        print(f"  disagree: {spans[k[0]]} -> {k[1]}: cargo mutants {theirs[k]}, carve {ours[k]}")
only_theirs = sorted(set(theirs) - set(ours))
only_ours = sorted(set(ours) - set(theirs))
print(f"  only cargo mutants: {len(only_theirs)} ({', '.join(f'{spans[a]} -> {b}' for a, b in only_theirs)})")
print(f"  only carve: {len(only_ours)} ({', '.join(f'{spans[a]} -> {b}' for a, b in only_ours)})")
PY
done
