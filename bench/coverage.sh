#!/usr/bin/env bash
# How much of each fixture's recording `carve generate` turns into passing tests (issue 4).
# For every fixture: copy it to a temp dir, build it (debug), record its main, generate tests
# into its tests/, run `cargo test`, and report in-scope calls, calls carved, the percentage and
# whether every generated test passed. Not a test: it measures and prints a table; it exits 1
# when a generated test fails (carved tests must pass on the version they were carved from).
#
# Usage: bench/coverage.sh [FIXTURE...]     (default: every Rust fixture)
# Environment: CARGO_TARGET_DIR (where carve is built; default <repo>/target), CARVE (prebuilt).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
if [[ -z "${CARVE:-}" ]]; then
    cargo build --release --quiet --manifest-path "$ROOT/Cargo.toml"
    CARVE=$TARGET/release/carve
fi
FIXTURES=("$@")
[[ ${#FIXTURES[@]} -gt 0 ]] || FIXTURES=(abc dao mouse dice ping expr account versioned_set threads returns catalog)

WORK=$(mktemp -d -t carve-coverage-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
export CARGO_TARGET_DIR_FIXTURES="$WORK/target"

printf '%-14s %9s %7s %6s %6s %7s  %s\n' fixture in_scope carved pct tests passed "skipped (reason: calls)"
failed_any=0
for f in "${FIXTURES[@]}"; do
    cp -r "$ROOT/fixtures/$f" "$WORK/$f"
    (
        cd "$WORK/$f"
        CARGO_TARGET_DIR="$WORK/target" cargo build --quiet
        "$CARVE" record --db trace.db -- "$WORK/target/debug/$f" >/dev/null 2>record.err || true
        mkdir -p tests
        "$CARVE" generate --db trace.db --out tests --format json >report.json
        CARGO_TARGET_DIR="$WORK/target" cargo test --tests --no-fail-fast >test.out 2>&1 || true
    )
    python3 - "$WORK/$f" "$f" <<'PY' || failed_any=1
import json, re, sys
d, name = sys.argv[1], sys.argv[2]
r = json.load(open(f"{d}/report.json"))
out = open(f"{d}/test.out").read()
passed = sum(int(m) for m in re.findall(r"test result: \w+\. (\d+) passed", out))
failed = sum(int(m) for m in re.findall(r"(\d+) failed", out))
pct = 100.0 * r["calls_carved"] / max(1, r["in_scope"])
skipped = ", ".join(f"{k}: {v}" for k, v in sorted(r["skipped"].items())) or "-"
print(f"{name:<14} {r['in_scope']:>9} {r['calls_carved']:>7} {pct:>5.0f}% {r['tests_written']:>6} {passed:>7}  {skipped}")
if failed:
    print(f"  {name}: {failed} generated test(s) FAILED", file=sys.stderr)
    sys.exit(1)
PY
done
exit $failed_any
