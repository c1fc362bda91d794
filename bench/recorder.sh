#!/usr/bin/env bash
# Recorder speed benchmark (issue 6). Not a test: it measures, prints a table and ends with one
# summary line that scripts can read:
#   carve_us_per_call=.. ltrace_us_per_call=.. gdb_us_per_call=.. vs_ltrace=..x vs_gdb=..x \
#   untraced_vs_native=..x dwarf_startup_s=.. carve_c_us_per_call=.. uftrace_us_per_call=.. \
#   vs_uftrace=..x stops_per_call=.. syscalls_per_call=.. inproc_us_per_call=.. \
#   inproc_vs_ltrace=..x inproc_stops_per_call=.. record_inproc_us_per_call=.. \
#   record_inproc_vs_ltrace=..x record_inproc_stops_per_call=.. record_inproc_syscalls_per_call=.. \
#   record_inproc_marginal_us_per_call=.. record_inproc_marginal_vs_ltrace=..x record_inproc_startup_s=.. \
#   record_inproc_c_us_per_call=.. uftrace_c0_us_per_call=.. record_inproc_vs_uftrace=..x \
#   [record_inproc_before_us_per_call=.. record_inproc_before_syscalls_per_call=..]
#
# Usage (from anywhere; paths are relative to the repository):
#   bench/recorder.sh
# Environment:
#   HOTLOOP_CALLS    calls of hotloop::mix for native / carve / ltrace   (default 100000)
#   GDB_CALLS        calls for the gdb scenario (gdb is slow)             (default 5000)
#   UNTRACED_CALLS   calls for the "only the cold function traced" case   (default 20000000)
#   UFTRACE_CALLS    calls for uftrace, ~100x cheaper per call than carve (default 2000000)
#   ROUNDS           alternating rounds; every number is a median        (default 5)
#   CARGO_TARGET_DIR where carve is built (default: <repo>/target); the fixture is built in
#                    $CARGO_TARGET_DIR/bench-fixtures
#   CARVE, CARVE_DEBUG  use these prebuilt release / debug carve binaries instead of building
#   PROBE            prebuilt recorder/examples/inprocess_probe (in-process path, issue 15)
#   CARVE_RECORD_ARGS extra arguments for every `carve record` (default: none = default settings;
#                    not --capture: the ptrace-path rows say `--capture ptrace`, the default being
#                    `auto`, and the in-process rows `--capture inprocess`)
#   CARVE_BEFORE     another release carve (e.g. built from main): its `record --capture
#                    inprocess` runs in the same rounds, beside this carve's, for a before/after
#                    figure from one run (optional)
#
# Every scenario runs once per round, rounds alternate scenarios (native, carve, ltrace, gdb,
# ...), so slow drifts of the machine hit all tools alike. Per-call cost:
#   carve:  (carve(N) - native(N)) / N            -- includes carve's start-up (DWARF of hotloop)
#   ltrace: (ltrace(N) - ltrace(0)) / N           -- ltrace's own start-up excluded
#   gdb:    (gdb(Ng) - gdb(0)) / Ng               -- gdb's start-up (symbol loading) excluded
#   uftrace: (uftrace(N) - uftrace(0)) / N on bench/hotloop.c built with -pg (arguments and
#           return value captured, as carve does), beside carve on the same C loop built with -g;
#           and beside carve's in-process path on hotloop.c -O0 -DBY_INDEX (mix takes the word's
#           index, not a C pointer), -g for carve and -pg for uftrace
# Both choices favour ltrace, gdb and uftrace, so the ratios are conservative for carve.
# Machine-independent: one more carve run under `strace -c` (carve's recording thread only)
# counts carve's wait4 calls (one per ptrace stop) and all its system calls, per traced call.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CALLS=${HOTLOOP_CALLS:-100000}
GDB_CALLS=${GDB_CALLS:-5000}
UNTRACED_CALLS=${UNTRACED_CALLS:-20000000}
UFTRACE_CALLS=${UFTRACE_CALLS:-2000000}
ROUNDS=${ROUNDS:-5}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
read -r -a EXTRA <<<"${CARVE_RECORD_ARGS:-}"

log() { printf '[bench] %s\n' "$*" >&2; }

# ---------------------------------------------------------------- tools
need=()
command -v ltrace >/dev/null 2>&1 || need+=(ltrace)
command -v uftrace >/dev/null 2>&1 || need+=(uftrace)
command -v strace >/dev/null 2>&1 || need+=(strace)
command -v gdb >/dev/null 2>&1 || need+=(gdb)
if ((${#need[@]})); then
    log "installing ${need[*]} with apt-get"
    SUDO=()
    [[ $(id -u) -eq 0 ]] || SUDO=(sudo)
    "${SUDO[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq "${need[@]}" >/dev/null
fi
command -v python3 >/dev/null 2>&1 || { log "python3 is needed for the sanity check"; exit 1; }

# ---------------------------------------------------------------- build
if [[ -n ${CARVE:-} && -n ${CARVE_DEBUG:-} ]]; then
    log "using prebuilt carve: $CARVE (debug: $CARVE_DEBUG)"
else
    log "building carve (release and debug) in $TARGET"
    (cd "$ROOT" && CARGO_TARGET_DIR=$TARGET cargo build --release --quiet)
    (cd "$ROOT" && CARGO_TARGET_DIR=$TARGET cargo build --quiet)
    CARVE=$TARGET/release/carve
    CARVE_DEBUG=$TARGET/debug/carve
fi
FIXTURE_TARGET=$TARGET/bench-fixtures
log "building the fixtures (debug) in $FIXTURE_TARGET"
cargo build --quiet --manifest-path "$ROOT/fixtures/Cargo.toml" --target-dir "$FIXTURE_TARGET" -p hotloop
HOTLOOP=$FIXTURE_TARGET/debug/hotloop

HOTLOOP_C=$FIXTURE_TARGET/hotloop-c
HOTLOOP_PG=$FIXTURE_TARGET/hotloop-pg
cc -g -O1 -o "$HOTLOOP_C" "$ROOT/bench/hotloop.c"
cc -pg -g -O1 -o "$HOTLOOP_PG" "$ROOT/bench/hotloop.c"
# The in-process path's first layer (issue 15, docs/inprocess-capture.md) patches mix at -O0
# (at -O1 its loop exits straight onto a one-byte ret, which that layer refuses).
HOTLOOP_C0=$FIXTURE_TARGET/hotloop-c0
cc -g -O0 -o "$HOTLOOP_C0" "$ROOT/bench/hotloop.c"
# carve's in-process path beside uftrace on one C loop: mix takes the word's index
# (-DBY_INDEX: the in-process path never follows a C pointer), -O0 for both (at -O1 the loop
# exits onto the ret, which the in-process path refuses to patch), -g for carve, -pg for uftrace.
HOTLOOP_CI0=$FIXTURE_TARGET/hotloop-ci0
HOTLOOP_PGI0=$FIXTURE_TARGET/hotloop-pgi0
cc -g -O0 -DBY_INDEX -o "$HOTLOOP_CI0" "$ROOT/bench/hotloop.c"
cc -pg -g -O0 -DBY_INDEX -o "$HOTLOOP_PGI0" "$ROOT/bench/hotloop.c"
if [[ -z ${PROBE:-} ]]; then
    log "building the in-process probe (recorder example) in $TARGET"
    (cd "$ROOT" && CARGO_TARGET_DIR=$TARGET cargo build --release --quiet -p carve-recorder --example inprocess_probe)
    PROBE=$TARGET/release/examples/inprocess_probe
fi

MIX_SYM=$(nm "$HOTLOOP" | awk '$3 ~ /^_ZN7hotloop3mix17h[0-9a-f]+E$/ && !s {s = $3} END {print s}')
[[ -n $MIX_SYM ]] || { log "no hotloop::mix symbol in $HOTLOOP"; exit 1; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/carve-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

cat >"$WORK/gdb.cmd" <<'EOF'
set pagination off
set confirm off
break hotloop::mix
commands
silent
printf "mix(%lu, ", n
output s
printf ")\n"
continue
end
run
quit
EOF

# ---------------------------------------------------------------- timing
now_ns() { date +%s%N; }
declare -A SAMPLES=()
# run NAME COMMAND... : time COMMAND (stdout/stderr to $WORK/NAME.out), fail loudly on error.
run() {
    local name=$1
    shift
    local t0 t1
    t0=$(now_ns)
    if ! "$@" >"$WORK/$name.out" 2>&1; then
        log "scenario $name failed: $*"
        tail -n 20 "$WORK/$name.out" >&2
        exit 1
    fi
    t1=$(now_ns)
    SAMPLES[$name]+="$(((t1 - t0) / 1000)) " # µs
}
median() { # µs samples -> seconds
    tr ' ' '\n' <<<"${SAMPLES[$1]}" | grep . | sort -n |
        awk '{a[NR]=$1} END {m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; printf "%.4f", m / 1e6}'
}
spread() { # µs samples -> "min-max" in seconds
    tr ' ' '\n' <<<"${SAMPLES[$1]}" | grep . | sort -n |
        awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%.3f-%.3f", lo / 1e6, hi / 1e6}'
}
calc() { awk "BEGIN { printf \"$1\", $2 }"; }

carve_rec() { # DB ARGS... -- PROGRAM...
    carve_rec_with "$CARVE" "$@"
}
carve_rec_with() { # CARVE DB ARGS... -- PROGRAM...
    local carve=$1 db=$2
    shift 2
    rm -f "$db" "$db-wal" "$db-shm"
    "$carve" record --db "$db" ${EXTRA[@]+"${EXTRA[@]}"} "$@"
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
log "hotloop: $CALLS calls (gdb: $GDB_CALLS, untraced: $UNTRACED_CALLS), $ROUNDS rounds"
"$CARVE_DEBUG" --version >/dev/null # warm the page cache for the start-up scenario
for ((r = 1; r <= ROUNDS; r++)); do
    log "round $r/$ROUNDS"
    run native "$HOTLOOP" "$CALLS"
    run carve carve_rec "$WORK/hot.db" --capture ptrace --filter 'hotloop::mix' -- "$HOTLOOP" "$CALLS"
    run ltrace ltrace -o "$WORK/ltrace.txt" -x "$MIX_SYM" "$HOTLOOP" "$CALLS"
    run ltrace0 ltrace -o "$WORK/ltrace0.txt" -x "$MIX_SYM" "$HOTLOOP" 0
    run gdb gdb -q -batch -nx -x "$WORK/gdb.cmd" --args "$HOTLOOP" "$GDB_CALLS"
    run gdb0 gdb -q -batch -nx -x "$WORK/gdb.cmd" --args "$HOTLOOP" 0
    run native_big "$HOTLOOP" "$UNTRACED_CALLS"
    run cold_big carve_rec "$WORK/cold.db" --capture ptrace --filter 'hotloop::cold' -- "$HOTLOOP" "$UNTRACED_CALLS"
    run native0 "$HOTLOOP" 0
    run cold0 carve_rec "$WORK/cold0.db" --capture ptrace --filter 'hotloop::cold' -- "$HOTLOOP" 0
    run version "$CARVE_DEBUG" --version
    run dwarf carve_rec "$WORK/dwarf.db" --capture ptrace --filter 'carve::main' -- "$CARVE_DEBUG" --version
    run native_c "$HOTLOOP_C" "$CALLS"
    run carve_c carve_rec "$WORK/hot_c.db" --capture ptrace --filter 'mix' -- "$HOTLOOP_C" "$CALLS"
    run uftrace uftrace record -d "$WORK/uftrace.data" -A 'mix@arg1,arg2/s' -R 'mix@retval' "$HOTLOOP_PG" "$UFTRACE_CALLS"
    run native_c0 "$HOTLOOP_C0" "$CALLS"
    run carve_c0 carve_rec "$WORK/hot_c0.db" --capture ptrace --filter 'mix' -- "$HOTLOOP_C0" "$CALLS"
    run inproc_c0 "$PROBE" mix "$HOTLOOP_C0" "$CALLS"
    run carve_inproc carve_rec "$WORK/hot_inproc.db" --capture inprocess --filter 'hotloop::mix' -- "$HOTLOOP" "$CALLS"
    run carve_inproc0 carve_rec "$WORK/hot_inproc0.db" --capture inprocess --filter 'hotloop::mix' -- "$HOTLOOP" 0
    if [[ -n ${CARVE_BEFORE:-} ]]; then
        run carve_inproc_before carve_rec_with "$CARVE_BEFORE" "$WORK/hot_inproc_before.db" --capture inprocess \
            --filter 'hotloop::mix' -- "$HOTLOOP" "$CALLS"
    fi
    run uftrace0 uftrace record -d "$WORK/uftrace0.data" -A 'mix@arg1,arg2/s' -R 'mix@retval' "$HOTLOOP_PG" 0
    run native_ci0 "$HOTLOOP_CI0" "$CALLS"
    run carve_inproc_ci carve_rec "$WORK/hot_inproc_ci.db" --capture inprocess --filter 'mix' -- "$HOTLOOP_CI0" "$CALLS"
    run carve_inproc_ci0 carve_rec "$WORK/hot_inproc_ci0.db" --capture inprocess --filter 'mix' -- "$HOTLOOP_CI0" 0
    run uftrace_i uftrace record -d "$WORK/uftrace_i.data" -A 'mix@arg1,arg2' -R 'mix@retval' "$HOTLOOP_PGI0" "$UFTRACE_CALLS"
    run uftrace_i0 uftrace record -d "$WORK/uftrace_i0.data" -A 'mix@arg1,arg2' -R 'mix@retval' "$HOTLOOP_PGI0" 0
done

# ---------------------------------------------------------------- machine-independent counts
# carve's own system calls while it records CALLS calls (strace on carve's main thread, which
# traces the program; the writer thread's SQLite writes are not counted). wait4 returns once per
# ptrace stop of the program.
rm -f "$WORK/strace.db"
strace -c -o "$WORK/strace.txt" "$CARVE" record --db "$WORK/strace.db" ${EXTRA[@]+"${EXTRA[@]}"} \
    --capture ptrace --filter 'hotloop::mix' -- "$HOTLOOP" "$CALLS" >"$WORK/strace.out" 2>&1
read -r stops syscalls < <(awk '$NF == "wait4" {w = $4} $NF == "total" {t = $4} END {print w + 0, t + 0}' "$WORK/strace.txt")
# The same for the in-process probe: strace on its main thread counts the ptrace stops (wait4).
# Its drainer thread cannot be straced with -f (strace would trace the program too, and the
# program's PTRACE_TRACEME would fail), so its system calls are taken from the probe's own
# counts: 4 per drain that found records (read head, read twice, write tail), 2 per empty poll
# (read head, sleep).
strace -c -o "$WORK/strace-inproc.txt" "$PROBE" mix "$HOTLOOP_C0" "$CALLS" >"$WORK/strace-inproc.out" 2>&1
inproc_stops=$(awk '$NF == "wait4" {w = $4} END {print w + 0}' "$WORK/strace-inproc.txt")
inproc_syscalls=$(sed -n 's/.* drains=\([0-9]*\) empty_polls=\([0-9]*\) .*/\1 \2/p' "$WORK/strace-inproc.out" |
    awk '{print $1 * 4 + $2 * 2}')

# carve record --capture inprocess (layer 2): its tracer polls wait4 with WNOHANG between stops,
# so stops are the wait4 calls that returned a pid (strace -e wait4 on carve's main thread).
rm -f "$WORK/strace-rec-inproc.db"
strace -o "$WORK/strace-rec-inproc.txt" -e trace=wait4 "$CARVE" record --db "$WORK/strace-rec-inproc.db" \
    ${EXTRA[@]+"${EXTRA[@]}"} --capture inprocess --filter 'hotloop::mix' -- "$HOTLOOP" "$CALLS" \
    >"$WORK/strace-rec-inproc.out" 2>&1
record_inproc_stops=$(grep -c 'wait4(.*= [1-9][0-9]*' "$WORK/strace-rec-inproc.txt" || true)
# Every system call of the in-process recording, all threads of carve (tracer, writer) and of
# the program (`perf stat` counts the sys_enter tracepoint; strace cannot follow carve's
# threads without tracing the program too). "-" when perf or the tracepoint is missing.
syscalls_of() { # CARVE -> system calls of one --capture inprocess recording
    rm -f "$WORK/perf-sys.db"
    if perf stat -e raw_syscalls:sys_enter -x, -o "$WORK/perf-sys.txt" "$1" record --db "$WORK/perf-sys.db" \
        ${EXTRA[@]+"${EXTRA[@]}"} --capture inprocess --filter 'hotloop::mix' -- "$HOTLOOP" "$CALLS" \
        >/dev/null 2>&1; then
        awk -F, '$3 == "raw_syscalls:sys_enter" {print $1}' "$WORK/perf-sys.txt"
    fi
}
per_call() { [[ $1 =~ ^[0-9]+$ ]] && calc %.3f "$1 / $CALLS" || echo -; }
record_inproc_syscalls_per_call=$(per_call "$(syscalls_of "$CARVE" || true)")
if [[ -n ${CARVE_BEFORE:-} ]]; then
    record_inproc_before_syscalls_per_call=$(per_call "$(syscalls_of "$CARVE_BEFORE" || true)")
fi

# ---------------------------------------------------------------- sanity
# The recording must be right, not only fast: one stored call per call, arguments 0..N-1, and
# the wrapping sum of the recorded return values equal to the checksum the program printed.
checksum=$(awk '/^checksum = / {print $3}' "$WORK/carve.out")
[[ -n $checksum ]] || { log "hotloop printed no checksum under carve"; cat "$WORK/carve.out" >&2; exit 1; }
native_checksum=$(awk '/^checksum = / {print $3}' "$WORK/native.out")
cat >"$WORK/sanity.py" <<'PY'
import json, sqlite3, sys
db, calls, checksum, native = sys.argv[1], int(sys.argv[2]), int(sys.argv[3], 16), int(sys.argv[4], 16)
con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
run = con.execute("SELECT max(id) FROM runs").fetchone()[0]
rows = con.execute(
    """SELECT c.args, c.ret, c.outcome_kind FROM calls c
       JOIN functions f ON f.run_id = c.run_id AND f.id = c.function_id
       WHERE c.run_id = ? AND f.path = 'hotloop::mix' ORDER BY c.id""", (run,)).fetchall()
total = con.execute("SELECT count(*) FROM calls WHERE run_id = ?", (run,)).fetchone()[0]
returned = sum(1 for _, _, o in rows if o == "returned")
ns, acc, strs = [], 0, set()
for args, ret, _ in rows:
    a = {x["name"]: x["value"] for x in json.loads(args)}
    ns.append(a["n"]["value"])
    strs.add(a["s"].get("value"))
    if ret is not None:
        acc = (acc + int(json.loads(ret)["value"])) % (1 << 64)
ok = (len(rows) == calls == total == returned and ns == list(range(calls))
      and acc == checksum == native and strs <= {"alpha", "beta", "gamma", "delta"})
print(f"stored_calls={len(rows)} expected={calls} returned={returned} all_calls_in_run={total} "
      f"args_in_order={ns == list(range(calls))} strings={sorted(strs)} "
      f"ret_sum={acc:#018x} program_checksum={checksum:#018x} native_checksum={native:#018x} "
      f"{'OK' if ok else 'MISMATCH'}")
PY
sanity=$(python3 "$WORK/sanity.py" "$WORK/hot.db" "$CALLS" "$checksum" "$native_checksum")
inproc_checksum=$(awk '/^checksum = / {print $3}' "$WORK/carve_inproc.out")
sanity_inproc=$(python3 "$WORK/sanity.py" "$WORK/hot_inproc.db" "$CALLS" "$inproc_checksum" "$native_checksum")
if [[ -n ${CARVE_BEFORE:-} ]]; then
    before_checksum=$(awk '/^checksum = / {print $3}' "$WORK/carve_inproc_before.out")
    sanity_before=$(python3 "$WORK/sanity.py" "$WORK/hot_inproc_before.db" "$CALLS" "$before_checksum" "$native_checksum")
fi
ltrace_lines=$(grep -c "^$MIX_SYM(" "$WORK/ltrace.txt" || true)
gdb_lines=$(grep -c '^mix(' "$WORK/gdb.out" || true)

# ---------------------------------------------------------------- results
m() { median "$1"; }
native=$(m native) carve=$(m carve) ltrace=$(m ltrace) ltrace0=$(m ltrace0)
gdb=$(m gdb) gdb0=$(m gdb0) native_big=$(m native_big) cold_big=$(m cold_big)
native0=$(m native0) cold0=$(m cold0) version=$(m version) dwarf=$(m dwarf)
native_c=$(m native_c) carve_c=$(m carve_c) uftrace=$(m uftrace) uftrace0=$(m uftrace0)
carve_c_us=$(calc %.1f "($carve_c - $native_c) * 1e6 / $CALLS")
uftrace_us=$(calc %.3f "($uftrace - $uftrace0) * 1e6 / $UFTRACE_CALLS")
vs_uftrace=$(calc %.1f "$carve_c_us / $uftrace_us")
stops_per_call=$(calc %.2f "$stops / $CALLS")
syscalls_per_call=$(calc %.2f "$syscalls / $CALLS")
uftrace_calls=$(uftrace replay -d "$WORK/uftrace.data" 2>/dev/null | grep -c ' mix(' || true)
# The same C loop (-O0 -DBY_INDEX): carve's in-process path (-g) beside uftrace (-pg).
record_inproc_c_us=$(calc %.2f "($(m carve_inproc_ci) - $(m native_ci0)) * 1e6 / $CALLS")
record_inproc_c_marginal_us=$(calc %.2f "($(m carve_inproc_ci) - $(m carve_inproc_ci0)) * 1e6 / $CALLS")
uftrace_c0_us=$(calc %.3f "($(m uftrace_i) - $(m uftrace_i0)) * 1e6 / $UFTRACE_CALLS")
record_inproc_vs_uftrace=$(calc %.1f "$record_inproc_c_us / $uftrace_c0_us")
record_inproc_marginal_vs_uftrace=$(calc %.1f "$record_inproc_c_marginal_us / $uftrace_c0_us")
uftrace_i_calls=$(uftrace replay -d "$WORK/uftrace_i.data" 2>/dev/null | grep -c ' mix(' || true)
inproc_ci_calls=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from calls").fetchone()[0])' "$WORK/hot_inproc_ci.db")
inproc_ci_paths=$(grep -o '[0-9]* of [0-9]* functions captured in process' "$WORK/carve_inproc_ci.out" | head -1)

carve_us=$(calc %.1f "($carve - $native) * 1e6 / $CALLS")
ltrace_us=$(calc %.1f "($ltrace - $ltrace0) * 1e6 / $CALLS")
gdb_us=$(calc %.1f "($gdb - $gdb0) * 1e6 / $GDB_CALLS")
vs_ltrace=$(calc %.1f "$ltrace_us / $carve_us")
vs_gdb=$(calc %.1f "$gdb_us / $carve_us")
carve_c0_us=$(calc %.1f "($(m carve_c0) - $(m native_c0)) * 1e6 / $CALLS")
inproc_us=$(calc %.2f "($(m inproc_c0) - $(m native_c0)) * 1e6 / $CALLS")
inproc_vs_ltrace=$(calc %.0f "$ltrace_us / $inproc_us")
inproc_vs_carve=$(calc %.1f "$carve_c0_us / $inproc_us")
inproc_vs_uftrace=$(calc %.1f "$inproc_us / $uftrace_us")
inproc_stops_per_call=$(calc %.5f "$inproc_stops / $CALLS")
inproc_syscalls_per_call=$(calc %.4f "$inproc_syscalls / $CALLS")
inproc_records=$(sed -n 's/^records=\([0-9]*\) .*/\1/p' "$WORK/strace-inproc.out")
record_inproc_us=$(calc %.2f "($(m carve_inproc) - $native) * 1e6 / $CALLS")
record_inproc_vs_ltrace=$(calc %.1f "$ltrace_us / $record_inproc_us")
record_inproc_vs_carve=$(calc %.1f "$carve_us / $record_inproc_us")
record_inproc_stops_per_call=$(calc %.5f "$record_inproc_stops / $CALLS")
# Per traced call measured as ltrace's and gdb's are: carve's start-up (DWARF, patching,
# opening the trace) removed with its own 0-call run.
record_inproc_marginal_us=$(calc %.2f "($(m carve_inproc) - $(m carve_inproc0)) * 1e6 / $CALLS")
record_inproc_marginal_vs_ltrace=$(calc %.1f "$ltrace_us / $record_inproc_marginal_us")
record_inproc_startup_s=$(calc %.3f "$(m carve_inproc0) - $native0")
if [[ -n ${CARVE_BEFORE:-} ]]; then
    record_inproc_before_us=$(calc %.2f "($(m carve_inproc_before) - $native) * 1e6 / $CALLS")
    record_inproc_speedup=$(calc %.2f "$record_inproc_before_us / $record_inproc_us")
fi
# Untraced: the loop's time under carve (start-up removed with the 0-call run) over its native time.
untraced=$(calc %.2f "($cold_big - $cold0) / ($native_big - $native0)")
untraced_raw=$(calc %.2f "$cold_big / $native_big")
cold_startup=$(calc %.3f "$cold0 - $native0")
dwarf_s=$(calc %.2f "$dwarf - $version")
carve_dwarf_size=$(calc %.0f "$(stat -c %s "$CARVE_DEBUG") / 1048576")

echo
echo "carve recorder benchmark — $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs ($(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)), $ROUNDS rounds, medians"
printf '%-44s %10s %10s %14s %12s\n' scenario calls median_s min-max_s us_per_call
printf '%-44s %10s %10s %14s %12s\n' "native hotloop" "$CALLS" "$native" "$(spread native)" -
printf '%-44s %10s %10s %14s %12s\n' "carve record --filter hotloop::mix" "$CALLS" "$carve" "$(spread carve)" "$carve_us"
printf '%-44s %10s %10s %14s %12s\n' "ltrace -x <mix symbol>" "$CALLS" "$ltrace" "$(spread ltrace)" "$ltrace_us"
printf '%-44s %10s %10s %14s %12s\n' "ltrace -x <mix symbol> (start-up only)" 0 "$ltrace0" "$(spread ltrace0)" -
printf '%-44s %10s %10s %14s %12s\n' "gdb break + commands/printf" "$GDB_CALLS" "$gdb" "$(spread gdb)" "$gdb_us"
printf '%-44s %10s %10s %14s %12s\n' "gdb break + commands/printf (start-up only)" 0 "$gdb0" "$(spread gdb0)" -
printf '%-44s %10s %10s %14s %12s\n' "native hotloop (big)" "$UNTRACED_CALLS" "$native_big" "$(spread native_big)" -
printf '%-44s %10s %10s %14s %12s\n' "carve record --filter hotloop::cold (big)" "$UNTRACED_CALLS" "$cold_big" "$(spread cold_big)" -
printf '%-44s %10s %10s %14s %12s\n' "native hotloop (start-up only)" 0 "$native0" "$(spread native0)" -
printf '%-44s %10s %10s %14s %12s\n' "carve record --filter hotloop::cold" 0 "$cold0" "$(spread cold0)" -
printf '%-44s %10s %10s %14s %12s\n' "carve (debug, ${carve_dwarf_size} MiB) --version" - "$version" "$(spread version)" -
printf '%-44s %10s %10s %14s %12s\n' "carve record --filter carve::main -- same" - "$dwarf" "$(spread dwarf)" -
printf '%-44s %10s %10s %14s %12s\n' "native hotloop.c (-g -O1)" "$CALLS" "$native_c" "$(spread native_c)" -
printf '%-44s %10s %10s %14s %12s\n' "carve record --filter mix -- hotloop.c" "$CALLS" "$carve_c" "$(spread carve_c)" "$carve_c_us"
printf '%-44s %10s %10s %14s %12s\n' "native hotloop.c (-g -O0)" "$CALLS" "$(m native_c0)" "$(spread native_c0)" -
printf '%-44s %10s %10s %14s %12s\n' "carve record --filter mix -- hotloop.c -O0" "$CALLS" "$(m carve_c0)" "$(spread carve_c0)" "$carve_c0_us"
printf '%-44s %10s %10s %14s %12s\n' "in-process probe mix (layer 1, registers)" "$CALLS" "$(m inproc_c0)" "$(spread inproc_c0)" "$inproc_us"
printf '%-44s %10s %10s %14s %12s\n' "carve record --capture inprocess (mix)" "$CALLS" "$(m carve_inproc)" "$(spread carve_inproc)" "$record_inproc_us"
printf '%-44s %10s %10s %14s %12s\n' "carve record --capture inprocess (start-up)" 0 "$(m carve_inproc0)" "$(spread carve_inproc0)" -
if [[ -n ${CARVE_BEFORE:-} ]]; then
    printf '%-44s %10s %10s %14s %12s\n' "CARVE_BEFORE record --capture inprocess" "$CALLS" "$(m carve_inproc_before)" "$(spread carve_inproc_before)" "$record_inproc_before_us"
fi
printf '%-44s %10s %10s %14s %12s\n' "uftrace record -A/-R mix (hotloop.c -pg)" "$UFTRACE_CALLS" "$uftrace" "$(spread uftrace)" "$uftrace_us"
printf '%-44s %10s %10s %14s %12s\n' "uftrace record (start-up only)" 0 "$uftrace0" "$(spread uftrace0)" -
printf '%-44s %10s %10s %14s %12s\n' "native hotloop.c (-g -O0 -DBY_INDEX)" "$CALLS" "$(m native_ci0)" "$(spread native_ci0)" -
printf '%-44s %10s %10s %14s %12s\n' "carve record --capture inprocess (same)" "$CALLS" "$(m carve_inproc_ci)" "$(spread carve_inproc_ci)" "$record_inproc_c_us"
printf '%-44s %10s %10s %14s %12s\n' "carve record --capture inprocess (start-up)" 0 "$(m carve_inproc_ci0)" "$(spread carve_inproc_ci0)" -
printf '%-44s %10s %10s %14s %12s\n' "uftrace record -A/-R mix (same, -pg)" "$UFTRACE_CALLS" "$(m uftrace_i)" "$(spread uftrace_i)" "$uftrace_c0_us"
printf '%-44s %10s %10s %14s %12s\n' "uftrace record (same, start-up only)" 0 "$(m uftrace_i0)" "$(spread uftrace_i0)" -
echo
echo "untraced loop vs native: ${untraced}x (start-up removed; raw ${untraced_raw}x, carve start-up on hotloop ${cold_startup}s)"
echo "DWARF start-up on the carve debug binary: ${dwarf_s}s"
echo "sanity: ltrace saw $ltrace_lines calls (expected $CALLS), gdb printed $gdb_lines (expected $GDB_CALLS), uftrace replayed $uftrace_calls (expected $UFTRACE_CALLS)"
echo "carve vs uftrace on the same C loop: ${vs_uftrace}x slower per traced call (uftrace needs the -pg rebuild, carve does not)"
echo "machine-independent (strace -c of carve, $CALLS traced calls): $stops wait4 = ${stops_per_call} ptrace stops per call, $syscalls system calls = ${syscalls_per_call} per call"
echo "in-process path, layer 1 (registers only: no string copied, nothing decoded or stored): ${inproc_us} us per call on hotloop.c -O0 = ${inproc_vs_carve}x faster than carve's ptrace path on the same binary, ${inproc_vs_ltrace}x faster than ltrace -x (Rust loop), ${inproc_vs_uftrace}x uftrace; $inproc_stops wait4 = ${inproc_stops_per_call} ptrace stops per call, ${inproc_syscalls_per_call} drainer system calls per call; $inproc_records records (expected $((2 * CALLS)))"
echo "carve record --capture inprocess (layer 2: arguments, string and result copied, decoded and stored): ${record_inproc_us} us per call = ${record_inproc_vs_carve}x faster than the ptrace path, ${record_inproc_vs_ltrace}x faster than ltrace -x; $record_inproc_stops ptrace stops = ${record_inproc_stops_per_call} per call"
echo "carve record --capture inprocess per traced call with its start-up removed, as for ltrace and gdb: ${record_inproc_marginal_us} us = ${record_inproc_marginal_vs_ltrace}x faster than ltrace -x (start-up ${record_inproc_startup_s}s over the native program's)"
echo "carve record --capture inprocess vs uftrace on the same C loop (hotloop.c -O0 -DBY_INDEX; -g for carve, -pg for uftrace, arguments and result recorded by both): carve ${record_inproc_c_us} us per call (${record_inproc_c_marginal_us} with its start-up removed), uftrace ${uftrace_c0_us} = ${record_inproc_vs_uftrace}x slower (${record_inproc_marginal_vs_uftrace}x); carve: ${inproc_ci_paths}, $inproc_ci_calls calls stored (expected $CALLS); uftrace replayed $uftrace_i_calls (expected $UFTRACE_CALLS)"
echo "sanity: carve $sanity"
echo "sanity: carve --capture inprocess $sanity_inproc"
if [[ -n ${CARVE_BEFORE:-} ]]; then
    echo "CARVE_BEFORE ($CARVE_BEFORE) record --capture inprocess: ${record_inproc_before_us} us per call, this carve ${record_inproc_us} = ${record_inproc_speedup}x faster; system calls per traced call (all threads, program included): ${record_inproc_before_syscalls_per_call} before, ${record_inproc_syscalls_per_call} now"
    echo "sanity: CARVE_BEFORE --capture inprocess $sanity_before"
fi
echo "load average before/after: $LOAD_BEFORE / $(cut -d' ' -f1-3 /proc/loadavg) (anything else running skews the numbers)"
echo "carve_us_per_call=$carve_us ltrace_us_per_call=$ltrace_us gdb_us_per_call=$gdb_us vs_ltrace=${vs_ltrace}x vs_gdb=${vs_gdb}x untraced_vs_native=${untraced}x dwarf_startup_s=$dwarf_s carve_c_us_per_call=$carve_c_us uftrace_us_per_call=$uftrace_us vs_uftrace=${vs_uftrace}x stops_per_call=$stops_per_call syscalls_per_call=$syscalls_per_call inproc_us_per_call=$inproc_us inproc_vs_ltrace=${inproc_vs_ltrace}x inproc_stops_per_call=$inproc_stops_per_call record_inproc_us_per_call=$record_inproc_us record_inproc_vs_ltrace=${record_inproc_vs_ltrace}x record_inproc_stops_per_call=$record_inproc_stops_per_call record_inproc_syscalls_per_call=$record_inproc_syscalls_per_call record_inproc_marginal_us_per_call=$record_inproc_marginal_us record_inproc_marginal_vs_ltrace=${record_inproc_marginal_vs_ltrace}x record_inproc_startup_s=$record_inproc_startup_s record_inproc_c_us_per_call=$record_inproc_c_us uftrace_c0_us_per_call=$uftrace_c0_us record_inproc_vs_uftrace=${record_inproc_vs_uftrace}x${CARVE_BEFORE:+ record_inproc_before_us_per_call=$record_inproc_before_us record_inproc_before_syscalls_per_call=$record_inproc_before_syscalls_per_call}"
[[ $sanity == *" OK" ]] || exit 1
[[ $sanity_inproc == *" OK" ]] || exit 1
[[ -z ${CARVE_BEFORE:-} || $sanity_before == *" OK" ]] || exit 1
[[ $inproc_records == $((2 * CALLS)) ]] || { log "the in-process probe captured $inproc_records records, expected $((2 * CALLS))"; exit 1; }
