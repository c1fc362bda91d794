#!/usr/bin/env bash
# The recorder's reliability goals (issue 32), measured: not a test (tests/reliability.rs holds
# the CI-sized checks). Prints one Markdown table per goal (docs/reliability.md) and exits 1 when
# a goal does not hold.
#   1. rows 31: `stress hammer 50000` (8 threads x 50,000 in-process calls) and
#      `hotloop 1000000 --capture inprocess`, each REPEAT times: no hang (HANG_AFTER s each), every
#      call stored.
#   2. row 32: `stress exitbusy` (8 threads busy in process, main exits 5 after 300 ms) with the
#      default capture beside `--capture ptrace`, RUNS times alternately: the default's median
#      time within 2x ptrace's, every run with all 8 threads' calls.
#   3. rows 27, 40, 44, 45: exit code and output as native, RUNS50 runs each per capture
#      (exitbusy on ptrace and default; vfork exit/exec, the program's own SIGTRAP by raise,
#      int3 and kill, sbrk in a non-PIE program), no run stored as lost, no call unwound or open.
#   4. row 46: `stress deep 100000` beside `stress flat 100000`, ROUNDS times alternately: the
#      median ratio (goal <= 2x), and the size of `carve show` of the deep trace (goal < 100 MB).
#
# Usage: bench/reliability.sh [GOAL...]        (goals: hang exitbusy native deep; default all)
# Environment:
#   CARVE       a release carve (default: built into $CARGO_TARGET_DIR or target/)
#   REPEAT      runs of each hang case (default 200)       HANG_AFTER  seconds (default 120)
#   RUNS        exitbusy timing runs (default 20)          RUNS50      runs per native case (50)
#   ROUNDS      deep/flat rounds (default 5)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
REPEAT=${REPEAT:-200}; HANG_AFTER=${HANG_AFTER:-120}; RUNS=${RUNS:-20}; RUNS50=${RUNS50:-50}
ROUNDS=${ROUNDS:-5}
GOALS=("$@"); [[ ${#GOALS[@]} -eq 0 ]] && GOALS=(hang exitbusy native deep)
for tool in sqlite3 /usr/bin/time cc; do
    command -v $tool >/dev/null || { echo "reliability: $tool is needed (apt-get install sqlite3 time gcc)" >&2; exit 2; }
done
log() { echo "reliability: $*" >&2; }

if [[ -z "${CARVE:-}" ]]; then
    log "building carve (release) in $TARGET"
    (cd "$ROOT" && CARGO_TARGET_DIR=$TARGET cargo build --release --quiet) || exit 2
    CARVE=$TARGET/release/carve
fi
FIX=$TARGET/bench-fixtures
log "building the fixtures (debug) in $FIX"
cargo build --quiet --manifest-path "$ROOT/fixtures/Cargo.toml" --target-dir "$FIX" -p stress -p hotloop || exit 2
STRESS=$FIX/debug/stress; HOTLOOP=$FIX/debug/hotloop
WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT
for c in vfork trap; do cc -g -O0 -o "$WORK/$c" "$ROOT/fixtures/c_reliability/$c.c" || exit 2; done
cc -g -O0 -no-pie -o "$WORK/sbrk" "$ROOT/fixtures/c_reliability/sbrk.c" || exit 2
DB=$WORK/t.db
failed=0
q() { sqlite3 -readonly "$DB" "$1"; }
calls_of() { q "select count(*) from calls c join functions f on f.run_id = c.run_id and f.id = c.function_id where f.path = '$1'"; }
median() { sort -g | awk '{a[NR]=$1} END {printf "%.2f\n", (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
# rec SECONDS ARGS...: carve record into $DB (fresh), within SECONDS; sets $t (wall seconds)
# and $rc (124: still running after SECONDS, killed)
rec() {
    local limit=$1; shift
    rm -f "$DB" "$DB"-*
    local t0=$(date +%s.%N)
    timeout "$limit" "$CARVE" record -q --db "$DB" "$@" >"$WORK/out" 2>"$WORK/err"; rc=$?
    t=$(echo "$(date +%s.%N) - $t0" | bc -l)
}

echo "carve: $("$CARVE" --version 2>/dev/null || echo "$CARVE"); $(nproc) CPUs; $(date -u '+%Y-%m-%d %H:%M UTC')"

if [[ " ${GOALS[*]} " == *" hang "* ]]; then
    echo; echo "| case (row 31) | runs | hung | calls short | median s |"; echo "|---|---|---|---|---|"
    for case in hammer hotloop; do
        hung=0; short=0; times=()
        for i in $(seq 1 "$REPEAT"); do
            if [[ $case == hammer ]]; then
                rec "$HANG_AFTER" --capture inprocess -- "$STRESS" hammer 50000; n=$(calls_of stress::hit); want=400000
            else
                rec "$HANG_AFTER" --capture inprocess --filter hotloop::mix -- "$HOTLOOP" 1000000; n=$(calls_of hotloop::mix); want=1000000
            fi
            [[ $rc == 124 ]] && { hung=$((hung + 1)); log "$case run $i HUNG ($n calls stored)"; continue; }
            [[ $rc == 0 && $n == "$want" ]] || { short=$((short + 1)); log "$case run $i: rc $rc, $n of $want calls"; }
            times+=("$t")
        done
        echo "| \`${case}\` | $REPEAT | $hung | $short | $(printf '%s\n' "${times[@]}" | median) |"
        [[ $hung == 0 && $short == 0 ]] || failed=1
    done
fi

if [[ " ${GOALS[*]} " == *" exitbusy "* ]]; then
    echo; echo "| capture (row 32) | runs | median s | all 8 threads' calls | exit 5 |"; echo "|---|---|---|---|---|"
    declare -A T ALL EXIT5
    for i in $(seq 1 "$RUNS"); do
        for cap in ptrace auto; do
            rec 300 --capture $cap -- "$STRESS" exitbusy
            T[$cap]+="$t "
            [[ $(calls_of 'stress::exit_busy::{{closure}}') == 8 ]] && ALL[$cap]=$(( ${ALL[$cap]:-0} + 1 ))
            [[ $rc == 5 ]] && EXIT5[$cap]=$(( ${EXIT5[$cap]:-0} + 1 ))
        done
    done
    for cap in ptrace auto; do
        M=$(echo ${T[$cap]} | tr ' ' '\n' | median); eval "med_$cap=$M"
        echo "| \`--capture $cap\` | $RUNS | $M | ${ALL[$cap]:-0} of $RUNS | ${EXIT5[$cap]:-0} of $RUNS |"
    done
    ratio=$(echo "$med_auto / $med_ptrace" | bc -l)
    printf '\ndefault / ptrace: %.2fx (goal <= 2x)\n' "$ratio"
    (( $(echo "$ratio <= 2" | bc -l) )) && [[ ${ALL[auto]:-0} == "$RUNS" ]] || failed=1
fi

if [[ " ${GOALS[*]} " == *" native "* ]]; then
    echo; echo "| program (row) | capture | runs | as native | lost runs | calls unwound or open |"; echo "|---|---|---|---|---|---|"
    check() { # ROW PROGRAM ARGS... ; captures from $CAPS
        local row=$1 prog=$2; shift 2
        local want_out want_rc
        want_out=$("$prog" "$@" 2>/dev/null); want_rc=$?
        for cap in $CAPS; do
            local same=0 lost=0 bad=0
            for i in $(seq 1 "$RUNS50"); do
                rec 60 --capture $cap -- "$prog" "$@"
                [[ $rc == "$want_rc" && "$(cat "$WORK/out")" == "$want_out" ]] && same=$((same + 1))
                lost=$((lost + $(q "select count(*) from runs where exit_kind = 'lost'")))
                bad=$((bad + $(q "select count(*) from calls where outcome_kind is null or outcome_kind = 'unwound'")))
            done
            echo "| \`$(basename "$prog")${*:+ $*}\` ($row) | $cap | $RUNS50 | $same | $lost | $bad |"
            [[ $same == "$RUNS50" && $lost == 0 && $bad == 0 ]] || failed=1
        done
    }
    CAPS="ptrace auto" check 27 "$STRESS" exitbusy
    CAPS="ptrace auto" check 40 "$WORK/vfork" exit
    CAPS="ptrace auto" check 40 "$WORK/vfork" exec
    for how in raise int3 kill; do CAPS="ptrace auto" check 44 "$WORK/trap" $how; done
    CAPS="ptrace auto inprocess" check 45 "$WORK/sbrk"
fi

if [[ " ${GOALS[*]} " == *" deep "* ]]; then
    echo; echo "| shape (row 46) | calls | median s |"; echo "|---|---|---|"
    deep=(); flat=()
    for i in $(seq 1 "$ROUNDS"); do
        rec 600 -- "$STRESS" deep 100000; deep+=("$t")
        rec 600 -- "$STRESS" flat 100000; flat+=("$t")
    done
    md=$(printf '%s\n' "${deep[@]}" | median); mf=$(printf '%s\n' "${flat[@]}" | median)
    rec 600 -- "$STRESS" deep 100000
    echo "| \`stress deep 100000\` | $(calls_of stress::down) | $md |"
    echo "| \`stress flat 100000\` | 100001 | $mf |"
    ratio=$(echo "$md / $mf" | bc -l)
    printf '\ndeep / flat: %.2fx (goal <= 2x)\n' "$ratio"
    shown=$("$CARVE" show --db "$DB" | wc -c)
    printf 'carve show of the deep trace: %d bytes (goal < 100 MB)\n' "$shown"
    (( $(echo "$ratio <= 2" | bc -l) )) && (( shown < 100000000 )) || failed=1
fi
exit $failed
