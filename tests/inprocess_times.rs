//! Call times on the in-process path (issue 15): the trampolines stamp each record with the
//! time stamp counter and carve puts it on the run's clock, so a call's `started_ns` and
//! `ended_ns` are when the program made it, not when carve happened to decode the record.
//! (They were the decoding times: a burst of calls the program made in a fraction of a
//! millisecond spread over the milliseconds carve took to decode it.) On a machine whose
//! kernel clock is not the counter, in-process calls have no times (NULL), never wrong ones.

mod common;

use common::inprocess::in_process_count;
use common::*;

/// A C program: 2,000 calls of `step` in a loop it times itself on CLOCK_MONOTONIC (the
/// clock carve's run times are on), then one `nap` of 30 ms.
const PROGRAM: &str = r#"
#include <stdio.h>
#include <time.h>

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

__attribute__((noinline)) unsigned long step(unsigned long x) {
    return x * 2654435761u + 1;
}

__attribute__((noinline)) long nap(long ms) {
    struct timespec t = {0, ms * 1000000L};
    nanosleep(&t, 0);
    long slept = t.tv_sec * 1000 + ms;
    return slept;
}

int main(void) {
    unsigned long sum = 0;
    long long before = now_ns();
    for (unsigned long i = 0; i < 2000; i++) sum += step(i);
    long long after = now_ns();
    long slept = nap(30);
    printf("loop_ns=%lld\nsum=%lu\nslept=%ld\n", after - before, sum, slept);
    return 0;
}
"#;

/// (function name, started_ns, ended_ns) of every call, in call order.
fn times(db: &std::path::Path) -> Vec<(String, Option<i64>, Option<i64>)> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT f.name, c.started_ns, c.ended_ns FROM calls c \
             JOIN functions f ON f.run_id = c.run_id AND f.id = c.function_id ORDER BY c.id",
        )
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn in_process_calls_are_timed_when_the_program_made_them_not_when_carve_decoded_them() {
    let dir = tempfile::tempdir().unwrap();
    let bin = compiled(dir.path(), "timed.c", "cc", &["-g", "-O0"], PROGRAM);
    let db = dir.path().join("t.db");
    let filters = [
        "--capture",
        "inprocess",
        "--filter",
        "step",
        "--filter",
        "nap",
    ];
    let out = record(&db, &filters, &bin, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(in_process_count(&out.stderr), 2, "{}", stderr(&out));
    let loop_ns: i64 = stdout(&out)
        .lines()
        .find_map(|l| l.strip_prefix("loop_ns="))
        .expect("the program's loop time")
        .parse()
        .unwrap();

    let calls = times(&db);
    assert_eq!(calls.len(), 2001, "{calls:?}");
    let counter_is_the_clock =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .is_ok_and(|s| s.trim() == "tsc");
    if !counter_is_the_clock {
        assert!(
            calls.iter().all(|(_, s, e)| s.is_none() && e.is_none()),
            "no time rather than a wrong one: {:?}",
            &calls[..3]
        );
        return;
    }
    let timed: Vec<(&str, i64, i64)> = calls
        .iter()
        .map(|(f, s, e)| {
            (
                f.as_str(),
                s.expect("a start time"),
                e.expect("an end time"),
            )
        })
        .collect();
    let steps = &timed[..2000];
    assert!(steps.iter().all(|(f, _, _)| *f == "step"));
    // In order, within what putting counter values on the clock may err (each record is
    // timed through the pair of counter and clock read at its drain: tens of nanoseconds).
    const SLACK_NS: i64 = 1_000;
    for (i, w) in steps.windows(2).enumerate() {
        assert!(
            w[0].1 <= w[0].2 + SLACK_NS,
            "call {i} ends before it starts: {w:?}"
        );
        assert!(
            w[0].2 <= w[1].1 + SLACK_NS,
            "call {i} ends after the next starts: {w:?}"
        );
    }
    // Every step call lies inside the loop the program timed (a few microseconds for the
    // clock reads around it and the conversion).
    let span = steps[1999].2 - steps[0].1;
    assert!(
        span <= loop_ns + 20_000,
        "2,000 calls made in {loop_ns} ns are recorded over {span} ns"
    );
    let (f, start, end) = timed[2000];
    assert_eq!(f, "nap");
    assert!(start >= steps[1999].2);
    let slept = end - start;
    assert!(
        (30_000_000..1_000_000_000).contains(&slept),
        "a 30 ms nap recorded as {slept} ns"
    );
}
