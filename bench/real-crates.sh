#!/usr/bin/env bash
# The real-crates benchmark (issue "Real crates"): how much of a real program's use of a published
# crate carve turns into passing tests, judged by carve's own report and by a tool that is not
# carve (valgrind's callgrind: which lines of the crate the program ran, and which of them the
# carved tests run again). Results and how to read them: docs/generator-coverage.md, "Real crates".
#
# For each crate, as a new user would:
#   1. `cargo fetch` a throwaway manifest depending on the pinned version, and copy the published
#      source out of ~/.cargo/registry/src/*/NAME-VERSION/ into SCRATCH/NAME/lib (a local path
#      dependency). What a user has to mend in a published manifest before `cargo test` works in
#      it is mended here, and only that (fix_manifest below):
#        - [[bench]]/[[test]]/[[example]]/[[bin]] entries whose files are not in the package are
#          dropped (cargo refuses the manifest otherwise);
#        - `autotests = false`, which cargo writes into every manifest it publishes with explicit
#          [[test]] entries, is turned back on: with it, the carved tests/carved_*.rs files are no
#          test targets (carve generate refuses such a crate and says this fix);
#        - an empty [workspace] table, so the copy is a workspace of its own.
#      The crate's dev-dependencies stay: `cargo test` builds them, as it would for the user.
#   2. Copy the driver bench/real-crates/NAME (its own workspace, depending on NAME = { path =
#      "../lib" }) beside it as app/ and build it (debug, default dev profile).
#   3. carve record --db trace.db --coverage --filter 'CRATE_IDENT::*' -- <app binary>
#      carve generate --db trace.db --crate lib --out lib/tests --format json   (verifies, and
#      measures the carved tests' line coverage: its `line_coverage`, printed to stderr beside
#      callgrind's figure)
#      If the report says a dev-dependency is missing (mockall), add it with `cargo add --dev`
#      and generate again.
#   4. valgrind --tool=callgrind on the app and on each carved test binary (--test-threads=1);
#      bench/callgrind_lines.py gives the lines of lib/src each run executed.
# and prints one Markdown table row, then the mean over crates.
#
# Columns: recorded = calls recorded in the crate (the trace); public API = recorded calls of
# the crate's public API as carve counts them (JSON `public_api`: what it cannot carve yet
# included); carved = those covered by a passing carved test (and its share of all recorded
# calls); carve % = carve's own headline (carved / public API, as its summary line says); files lost = carved files quarantined whole ("the file does not compile");
# tests = carved tests passing when run here; lines: lib/src lines the app executed, how many of
# them the carved tests executed too, and that share.
#
# A benchmark, not a test: it is not part of .ci/run or of `cargo test`. A crate whose recording
# or generation fails outright gets a row saying so with the error's first line.
#
# The crates of OWN (below) have no driver of ours: their own integration test is the program
# recorded (with `cargo carve record --test`) and run under callgrind.
#
# Usage: bench/real-crates.sh [--keep DIR] [CRATE...]      (default: all 31 crates)
#   --keep DIR   work in DIR and leave it there for inspection (default: a temp dir, removed)
# Environment: CARGO_TARGET_DIR (where carve is built; default <repo>/target), CARVE (prebuilt),
# CARGO_CARVE (default: cargo-carve beside CARVE), OWN_CAP (calls per function, default 5000).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LINES_PY=$ROOT/bench/callgrind_lines.py

# Pinned versions: bump them on purpose, and say so in docs/generator-coverage.md.
declare -A VERSION=(
    [url]=2.5.8 [glob]=0.3.4 [shlex]=2.0.1 [hex]=0.4.3 [indexmap]=2.14.2 [smallvec]=1.16.6
    [bytesize]=2.7.0 [similar]=3.2.1 [unicode-width]=0.2.3 [pulldown-cmark]=0.13.6 [lru]=0.19.0
    [itoa]=1.0.19
)
ALL=(url glob shlex hex indexmap smallvec bytesize similar unicode-width pulldown-cmark lru itoa)
# Crates driven by their own integration tests (issue 30): written by their authors, so carve
# cannot be tuned to them. VERSION and the test target (tests/NAME.rs); recorded as a user
# would, `cargo carve record --test NAME -- --test-threads=1` in the package (bounded by
# OWN_CAP calls per function: some suites make millions of calls), and run the same way under
# callgrind. The issue's list, with its own substitutes where a package ships no tests/
# (bit-vec, either, ipnet, memchr, unicase, uuid, bitflags: base64, bytes, strsim, fastrand,
# hashbrown, roxmltree, smol_str). toml's `decoder` target is a `harness = false` compliance
# binary reading stdin, which calls no toml function on its own: its `testsuite` tests drive it.
declare -A OWN=(
    [arrayvec]=0.7.8:tests [http]=1.5.0:status_code [httparse]=1.10.1:uri
    [itertools]=0.14.0:test_std [mime]=0.3.18:regressions [num-integer]=0.1.47:roots
    [ordered-float]=4.6.0:test [petgraph]=0.6.5:graph [ryu]=1.0.20:d2s_test
    [semver]=1.0.27:test_version_req [tinyvec]=1.10.0:tinyvec [toml]=0.7.8:testsuite
    [base64]=0.22.1:tests [bytes]=1.10.1:test_bytes [strsim]=0.11.1:lib
    [fastrand]=2.3.0:smoke [hashbrown]=0.15.2:set [roxmltree]=0.20.0:api [smol_str]=0.3.2:test
)
# The features a test target requires (`required-features`): `cargo carve record` turns them on
# itself; the callgrind build below must build the same binary.
declare -A OWN_FEATURES=([tinyvec]=alloc,std)
ALL_OWN=(arrayvec http httparse itertools mime num-integer ordered-float petgraph ryu semver
    tinyvec toml base64 bytes strsim fastrand hashbrown roxmltree smol_str)
for c in "${ALL_OWN[@]}"; do VERSION[$c]=${OWN[$c]%%:*}; done
OWN_CAP=${OWN_CAP:-5000}

KEEP=""
CRATES=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --keep) KEEP=$2; shift 2 ;;
        -h|--help) sed -n '2,/^set -uo/p' "$0" | sed 's/^# \{0,1\}//' | head -n -1; exit 0 ;;
        *) [[ -n "${VERSION[$1]:-}" ]] || { echo "unknown crate $1 (known: ${ALL[*]} ${ALL_OWN[*]})" >&2; exit 2; }
           CRATES+=("$1"); shift ;;
    esac
done
[[ ${#CRATES[@]} -gt 0 ]] || CRATES=("${ALL[@]}" "${ALL_OWN[@]}")

# Tools: valgrind from Debian if missing, python3 for the parsing, carve built in release.
if ! command -v valgrind >/dev/null; then
    echo "installing valgrind" >&2
    apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >&2 \
        || { echo "cannot install valgrind" >&2; exit 1; }
fi
command -v python3 >/dev/null || { echo "python3 is needed" >&2; exit 1; }
if [[ -z "${CARVE:-}" ]]; then
    (cd "$ROOT" && cargo build --release --quiet) || exit 1
    CARVE=${CARGO_TARGET_DIR:-$ROOT/target}/release/carve
fi
CARGO_CARVE=${CARGO_CARVE:-$(dirname "$CARVE")/cargo-carve}
[[ -x "$CARGO_CARVE" ]] || { echo "no cargo-carve beside $CARVE (set CARGO_CARVE)" >&2; exit 1; }
unset CARGO_TARGET_DIR   # carve's target dir is not the crates' one (set per build below)

if [[ -n "$KEEP" ]]; then
    mkdir -p "$KEEP" && WORK=$(cd "$KEEP" && pwd)
else
    WORK=$(mktemp -d -t carve-real-crates-XXXXXX)
    trap 'rm -rf "$WORK"' EXIT
fi
# One target dir for every driver and every lib's tests: the dev-dependencies the crates share
# (serde, serde_json...) are built once.
TARGET=$WORK/target
REGISTRY=${CARGO_HOME:-$HOME/.cargo}/registry/src

# Drops manifest entries whose files the package lacks, turns autotests back on, makes the crate
# its own workspace; prints what it changed.
fix_manifest() {
    python3 - "$1" <<'PY'
import os, re, sys
path = sys.argv[1]
root = os.path.dirname(path)
text = open(path).read()
kept, notes = [], []
default_dir = {"bench": "benches", "test": "tests", "example": "examples", "bin": "src/bin"}
for part in re.split(r"(?m)^(?=\[)", text):
    m = re.match(r"\[\[(bench|test|example|bin)\]\]", part)
    if m:
        name = re.search(r'(?m)^name\s*=\s*"([^"]*)"', part)
        p = re.search(r'(?m)^path\s*=\s*"([^"]*)"', part)
        d = default_dir[m.group(1)]
        candidates = [p.group(1)] if p else [f"{d}/{name.group(1)}.rs", f"{d}/{name.group(1)}/main.rs"]
        if not any(os.path.exists(os.path.join(root, c)) for c in candidates):
            notes.append(f"dropped [[{m.group(1)}]] {candidates[0]} (not in the package)")
            continue
    kept.append(part)
text = "".join(kept)
text, n = re.subn(r"(?m)^autotests\s*=\s*false\s*$", "autotests = true", text)
if n:
    notes.append("autotests = false -> true (so tests/carved_*.rs are test targets)")
if not re.search(r"(?m)^\[workspace\]", text):
    text += "\n[workspace]\n"
open(path, "w").write(text)
print("; ".join(notes) or "no change")
PY
}

# Prints a failure row: crate, version, what failed, the error's first line.
fail_row() {
    local first
    first=$(grep -v '^\s*$' "$4" 2>/dev/null | grep -m1 -i 'error' || grep -m1 -v '^\s*$' "$4" 2>/dev/null)
    printf '| %s | %s | %s failed: %s |\n' "$1" "$2" "$3" "${first:-no output}"
}

run_crate() {
    local c=$1 v=${VERSION[$1]} ident=${1//-/_}
    local d=$WORK/$c
    rm -rf "$d" && mkdir -p "$d/fetch/src" "$d/cg"
    # 1. the published source, through cargo fetch
    printf '[package]\nname = "fetch-%s"\nversion = "0.0.0"\nedition = "2021"\n[workspace]\n[dependencies]\n%s = "=%s"\n' \
        "$c" "$c" "$v" >"$d/fetch/Cargo.toml"
    echo 'fn main() {}' >"$d/fetch/src/main.rs"
    if ! cargo fetch --quiet --manifest-path "$d/fetch/Cargo.toml" 2>"$d/fetch.err"; then
        fail_row "$c" "$v" "cargo fetch" "$d/fetch.err"; return
    fi
    local src
    src=$(ls -d "$REGISTRY"/*/"$c-$v" 2>/dev/null | head -1)
    [[ -n "$src" ]] || { echo "no $c-$v under $REGISTRY" >"$d/fetch.err"; fail_row "$c" "$v" "copy" "$d/fetch.err"; return; }
    cp -r "$src" "$d/lib" && rm -rf "$d/lib/target"
    echo "$c: manifest: $(fix_manifest "$d/lib/Cargo.toml")" >&2
    # 2. the driver: ours beside it, or the crate's own integration test
    local app app_dir=$d app_args=() rc
    if [[ -n "${OWN[$c]:-}" ]]; then
        local t=${OWN[$c]#*:}
        local features=()
        [[ -n "${OWN_FEATURES[$c]:-}" ]] && features=(--features "${OWN_FEATURES[$c]}")
        app=$(cd "$d/lib" && CARGO_TARGET_DIR=$TARGET cargo test --quiet --no-run --test "$t" \
            "${features[@]}" --message-format=json 2>"$d/build.err" | python3 -c '
import json, sys
for line in sys.stdin:
    try: m = json.loads(line)
    except ValueError: continue
    # The test target itself: a package with a binary builds it for its tests too.
    if m.get("reason") == "compiler-artifact" and m.get("executable") \
            and m["target"]["kind"] == ["test"] and m["target"]["name"] == sys.argv[1]:
        print(m["executable"])' "$t" | tail -1)
        [[ -x "$app" ]] || { fail_row "$c" "$v" "building its test $t" "$d/build.err"; return; }
        app_dir=$d/lib app_args=(--test-threads=1)
        # 3. record (as a user would: cargo carve, in the package) and generate
        (cd "$d/lib" && CARGO_TARGET_DIR=$TARGET "$CARGO_CARVE" carve record --test "$t" \
            --db "$d/trace.db" --coverage --max-calls-per-function "$OWN_CAP" -q \
            -- --test-threads=1 >"$d/app.out" 2>"$d/record.err")
        rc=$?
    else
        cp -r "$ROOT/bench/real-crates/$c" "$d/app"
        if ! (cd "$d/app" && CARGO_TARGET_DIR=$TARGET cargo build --quiet 2>"$d/build.err"); then
            fail_row "$c" "$v" "building the driver" "$d/build.err"; return
        fi
        app=$TARGET/debug/$c-app
        # 3. record and generate
        (cd "$d" && "$CARVE" record --db trace.db --coverage --filter "$ident::*" -- "$app" >app.out 2>record.err)
        rc=$?
    fi
    if [[ ! -s "$d/trace.db" ]] || ! grep -q 'carve: recorded' "$d/record.err"; then
        fail_row "$c" "$v" "carve record (exit $rc)" "$d/record.err"; return
    fi
    mkdir -p "$d/lib/tests"
    generate() {
        (cd "$d" && CARGO_TARGET_DIR=$TARGET "$CARVE" generate --db trace.db --crate lib \
            --out lib/tests --format json >report.json 2>generate.err)
    }
    if ! generate; then fail_row "$c" "$v" "carve generate" "$d/generate.err"; return; fi
    local mockall
    mockall=$(python3 -c 'import json,re,sys; h=json.load(open(sys.argv[1])).get("missing_dev_dependency") or ""; m=re.search(r"mockall = \"([^\"]+)\"", h); print(m.group(1) if m else "")' "$d/report.json")
    if [[ -n "$mockall" ]]; then
        echo "$c: carve asks for mockall $mockall: adding it as a dev-dependency, generating again" >&2
        (cd "$d/lib" && cargo add --quiet --dev "mockall@$mockall") 2>>"$d/generate.err"
        rm -f "$d"/lib/tests/carved_*
        if ! generate; then fail_row "$c" "$v" "carve generate (with mockall)" "$d/generate.err"; return; fi
    fi
    # 4. callgrind: the app, then every carved test binary
    local vg=(valgrind --tool=callgrind --dump-instr=no --compress-strings=no --compress-pos=no)
    (cd "$app_dir" && "${vg[@]}" --callgrind-out-file="$d/cg/app.out" "$app" "${app_args[@]}" \
        >/dev/null 2>"$d/cg/app.err")
    python3 "$LINES_PY" --under "$d/lib/src" --relative-to "$d/lib" "$d/cg/app.out" >"$d/app.lines"
    local tests=() f
    for f in "$d"/lib/tests/carved_*.rs; do [[ -e "$f" ]] && tests+=(--test "$(basename "$f" .rs)"); done
    : >"$d/tests.out"
    local outs=()
    # The carved files compile only with the features the recorded program was built with.
    local carved_features
    carved_features=$(python3 -c 'import json,sys; print(",".join(json.load(open(sys.argv[1])).get("features", [])))' "$d/report.json")
    [[ -n "$carved_features" && ${#tests[@]} -gt 0 ]] && tests+=(--features "$carved_features")
    if [[ ${#tests[@]} -gt 0 ]]; then
        local exe i=0
        (cd "$d/lib" && CARGO_TARGET_DIR=$TARGET cargo test --quiet --no-run --message-format=json "${tests[@]}" \
            2>"$d/tests-build.err") | python3 -c '
import json, sys
for line in sys.stdin:
    try: m = json.loads(line)
    except ValueError: continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"].startswith("carved_"):
        print(m["executable"])' >"$d/test-binaries"
        while read -r exe; do
            i=$((i + 1))
            (cd "$d/lib" && "${vg[@]}" --callgrind-out-file="$d/cg/test$i.out" "$exe" --test-threads=1 \
                >>"$d/tests.out" 2>>"$d/cg/tests.err")
            outs+=("$d/cg/test$i.out")
        done <"$d/test-binaries"
    fi
    if [[ ${#outs[@]} -gt 0 ]]; then
        python3 "$LINES_PY" --under "$d/lib/src" --relative-to "$d/lib" "${outs[@]}" >"$d/tests.lines"
    else
        : >"$d/tests.lines"
    fi
    python3 - "$d" "$c" "$v" <<'PY'
import json, re, sqlite3, sys
d, name, version = sys.argv[1:4]
db = sqlite3.connect(f"{d}/trace.db")
recorded = db.execute("SELECT COUNT(*) FROM calls WHERE run_id = (SELECT MAX(id) FROM runs)").fetchone()[0]
r = json.load(open(f"{d}/report.json"))
# carve's headline: recorded public-API calls carved into passing tests (older carve: in scope).
in_scope, carved = r.get("public_api", r["in_scope"]), r["calls_carved"]
headline = 100.0 * carved / max(1, in_scope)
lost = len({q["file"] for q in r.get("quarantined", []) if q["reason"].startswith("the file does not compile")})
out = open(f"{d}/tests.out").read()
passed = sum(int(n) for n in re.findall(r"test result: \w+\. (\d+) passed", out))
failed = sum(int(n) for n in re.findall(r"; (\d+) failed", out))
a = set(open(f"{d}/app.lines").read().split())
b = set(open(f"{d}/tests.lines").read().split())
both = len(a & b)
tests = f"{passed}" + (f" ({failed} failed)" if failed else "")
print(f"| {name} | {version} | {recorded} | {in_scope} | {carved} ({100.0 * carved / max(1, recorded):.0f}%) "
      f"| {headline:.0f}% | {lost} | {tests} | {len(a)} | {both} | {100.0 * both / max(1, len(a)):.0f}% |")
lc = r.get("line_coverage")
if lc:
    print(f"{name}: carve's own measure: carved tests reach {lc['reached_lines']} of the {lc['recorded_lines']} lines "
          f"the recording reached (callgrind: {both} of {len(a)})", file=sys.stderr)
else:
    print(f"{name}: carve's own measure: {r.get('line_coverage_note')}", file=sys.stderr)
json.dump({"recorded": recorded, "in_scope": in_scope, "carved": carved, "headline": headline, "lost": lost,
           "passed": passed, "lines": len(a), "lines_rerun": both,
           "carve_lines": lc and lc["recorded_lines"], "carve_lines_rerun": lc and lc["reached_lines"]},
          open(f"{d}/row.json", "w"))
PY
}

echo "carve: $("$CARVE" --version 2>/dev/null || echo "$CARVE"); scratch: $WORK" >&2
echo "| crate | version | recorded | public API | carved (% of recorded) | carve % | files lost | tests passing | lines recorded | lines re-run | line % |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
start=$SECONDS
for c in "${CRATES[@]}"; do
    t0=$SECONDS
    run_crate "$c"
    echo "$c: $((SECONDS - t0)) s" >&2
done
python3 - "$WORK" "${CRATES[@]}" <<'PY'
import json, os, sys
work, crates = sys.argv[1], sys.argv[2:]
rows = [json.load(open(p)) for c in crates if os.path.exists(p := f"{work}/{c}/row.json")]
if rows:
    n = len(rows)
    mean = lambda k: sum(r[k] for r in rows) / n
    share = sum(100.0 * r["carved"] / max(1, r["recorded"]) for r in rows) / n
    line_share = sum(100.0 * r["lines_rerun"] / max(1, r["lines"]) for r in rows) / n
    print(f"| mean of {n} | | {mean('recorded'):.0f} | {mean('in_scope'):.0f} | {mean('carved'):.0f} ({share:.0f}%) "
          f"| {mean('headline'):.0f}% | {mean('lost'):.1f} | {mean('passed'):.0f} | {mean('lines'):.0f} "
          f"| {mean('lines_rerun'):.0f} | {line_share:.0f}% |")
PY
echo "total: $((SECONDS - start)) s for ${#CRATES[@]} crates" >&2
