//! `--max-calls-per-function N` on the in-process path (issue 15): the entry trampoline of a
//! limited function takes one of its N captures atomically and, once none is left, runs the
//! displaced instructions straight away; its exit trampolines capture until every captured
//! call has ended, then carve turns them off. Each program here is recorded with a limit
//! through the default capture and through `--capture ptrace` (whose entry breakpoint is taken
//! out after N recorded calls): the same calls, the same values, the same program output, and
//! the functions really captured in process.

mod common;

use common::inprocess::*;
use common::*;
use serde_json::Value as Json;

/// `program args` run without carve, then recorded with `extra` through the default capture
/// and through `--capture ptrace`; both keep the program's exit code and output. Returns the
/// default capture's stderr and both runs (default, ptrace).
fn limited(
    label: &str,
    program: &std::path::Path,
    args: &[&str],
    extra: &[&str],
) -> (String, Json, Json) {
    let dir = tempfile::tempdir().unwrap();
    let native = output_within(std::process::Command::new(program).args(args), RECORD_LIMIT);
    let (p_out, p) = recorded(dir.path(), "ptrace", program, args, extra);
    let (a_out, a) = recorded(dir.path(), "auto", program, args, extra);
    for (path, out) in [("ptrace", &p_out), ("auto", &a_out)] {
        assert_eq!(
            out.status.code(),
            native.status.code(),
            "{label} through {path}: the exit code; {}",
            stderr(out)
        );
        assert_eq!(
            out.stdout, native.stdout,
            "{label} through {path}: the program's output"
        );
    }
    (stderr(&a_out), a, p)
}

/// `hotloop 20000` with `--max-calls-per-function 5`: `mix`, `cold` and `main` are captured in
/// process (the default capture says nothing: no function keeps ptrace stops), five calls of
/// `mix` are recorded and the other 19,995 run through the gate, and the trace is the ptrace
/// path's call for call.
#[test]
fn hotloop_with_a_limit_records_the_first_calls_in_process_the_same_as_the_ptrace_path() {
    let program = fixture_bin("hotloop");
    let limit = ["--max-calls-per-function", "5"];
    let (said, a, p) = limited("hotloop", &program, &["20000"], &limit);
    assert!(
        !said.contains("ptrace stops"),
        "every function captured in process: {said}"
    );
    assert_same_trace("hotloop", &p, &a);
    let mix = calls_of_fn(&a, "hotloop::mix");
    let ns: Vec<&Json> = mix
        .iter()
        .map(|c| &c["args"][0]["value"]["value"])
        .collect();
    assert_eq!(ns, [0, 1, 2, 3, 4], "the first five calls of mix");
    assert!(mix.iter().all(|c| c["outcome"]["kind"] == "returned"));
    assert_eq!(calls_of_fn(&a, "hotloop::cold").len(), 1);
    // `--capture inprocess` names the paths: all three in process, with the limit.
    let dir = tempfile::tempdir().unwrap();
    let (out, i) = recorded(dir.path(), "inprocess", &program, &["20000"], &limit);
    assert!(
        stderr(&out).contains("3 of 3 functions captured in process, 0 with ptrace stops"),
        "{}",
        stderr(&out)
    );
    assert_same_trace("hotloop inprocess", &p, &i);
}

/// `walk` recurses; with a limit of 2 the outer call and its first inner call are captured,
/// the three below them are not: their exits reach the tracer (the captured calls are still
/// open, so exits stay on) and must close neither captured frame. The second `walk(5)` is not
/// recorded at all. `risky` panics under `catch_unwind` at its second call (captured, closed
/// `panicked` by the tracer's panic handling); its third call is not recorded. `twice`, called
/// once, stays below the limit.
const LIMITED: &str = r#"
#[inline(never)]
pub fn walk(n: u64, label: &str) -> u64 {
    let here = n * 10 + label.len() as u64;
    if n == 0 {
        return here;
    }
    here + walk(n - 1, label)
}
#[inline(never)]
pub fn risky(v: u64) -> u64 {
    let w = v * 3;
    if w > 100 {
        panic!("too big: {w}");
    }
    w + 1
}
#[inline(never)]
pub fn twice(v: u64) -> u64 {
    let w = v * 2;
    w + 0
}
fn main() {
    println!("walk(4) = {}", walk(4, "abc"));
    println!("walk(5) = {}", walk(5, "de"));
    println!("risky(5) = {}", risky(5));
    std::panic::set_hook(Box::new(|_| eprintln!("panicked")));
    let caught = std::panic::catch_unwind(|| risky(50));
    println!("caught = {}", caught.is_err());
    println!("risky(7) = {}", risky(7));
    println!("twice(8) = {}", twice(8));
    std::process::exit(3);
}
"#;

#[test]
fn a_limit_on_recursive_and_panicking_functions_keeps_the_open_captured_calls_exact() {
    let dir = tempfile::tempdir().unwrap();
    let program = rustc_program(dir.path(), "limited", "2021", LIMITED);
    let flags = [
        "--filter",
        "limited::walk",
        "--filter",
        "limited::risky",
        "--filter",
        "limited::twice",
        "--max-calls-per-function",
        "2",
    ];
    let (said, a, p) = limited("limited", &program, &[], &flags);
    assert!(!said.contains("ptrace stops"), "all in process: {said}");
    assert_same_trace("limited", &p, &a);
    let (out, i) = recorded(dir.path(), "inprocess", &program, &[], &flags);
    assert!(
        stderr(&out).contains("3 of 3 functions captured in process"),
        "{}",
        stderr(&out)
    );
    assert_same_trace("limited inprocess", &p, &i);
    let walk = calls_of_fn(&a, "limited::walk");
    let shown: Vec<(i64, &Json, &Json)> = walk
        .iter()
        .map(|c| {
            (
                c["depth"].as_i64().unwrap(),
                &c["args"][0]["value"]["value"],
                &c["ret"]["value"],
            )
        })
        .collect();
    // walk(4, "abc") = 43 + 33 + 23 + 13 + 3 = 115; walk(3, "abc") = 72.
    assert_eq!(
        shown,
        [
            (0, &Json::from(4), &Json::from(115)),
            (1, &Json::from(3), &Json::from(72))
        ]
    );
    let outcomes: Vec<String> = calls_of_fn(&a, "limited::risky")
        .iter()
        .map(|c| c["outcome"]["kind"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(outcomes, ["returned", "panicked"]);
    assert_eq!(calls_of_fn(&a, "limited::twice").len(), 1);
}

/// Eight threads call `tick` 2,000 times each at once; with a limit of 100 exactly 100 calls
/// are recorded whichever threads made them (the entry gate takes each capture with one
/// atomic step), each with its own result, through both paths. Which thread made which call
/// varies from run to run, so the calls are compared by their arguments and results as a
/// multiset per path, and each must be a call the program made.
const THREADED: &str = r#"
#[inline(never)]
pub fn tick(thread: u64, i: u64) -> u64 {
    let v = thread * 1_000_000 + i;
    v * 3 + 1
}
fn main() {
    let handles: Vec<_> = (0..8u64)
        .map(|t| {
            std::thread::spawn(move || {
                let mut sum = 0u64;
                for i in 0..2000 {
                    sum = sum.wrapping_add(tick(t, i));
                }
                sum
            })
        })
        .collect();
    let total: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
    println!("total = {total}");
}
"#;

#[test]
fn threads_entering_a_limited_function_at_once_record_exactly_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let program = rustc_program(dir.path(), "ticks", "2021", THREADED);
    let flags = ["--filter", "ticks::tick", "--max-calls-per-function", "100"];
    let (said, a, p) = limited("ticks", &program, &[], &flags);
    assert!(!said.contains("ptrace stops"), "in process: {said}");
    for (path, run) in [("auto", &a), ("ptrace", &p)] {
        let ticks = calls_of_fn(run, "ticks::tick");
        assert_eq!(ticks.len(), 100, "{path}: exactly the limit");
        let mut seen = std::collections::HashSet::new();
        for c in &ticks {
            assert_eq!(c["outcome"]["kind"], "returned", "{path}: {c}");
            let t = c["args"][0]["value"]["value"].as_u64().unwrap();
            let i = c["args"][1]["value"]["value"].as_u64().unwrap();
            assert!(t < 8 && i < 2000, "{path}: a call the program made: {c}");
            let ret = c["ret"]["value"].as_u64().unwrap();
            assert_eq!(
                ret,
                (t * 1_000_000 + i) * 3 + 1,
                "{path}: its own result: {c}"
            );
            assert!(seen.insert((t, i)), "{path}: recorded once: {c}");
        }
    }
}

/// `threads` (the fixture: eight threads calling `fib`, `checksum`, `work_item` and
/// `thread_name`, which threads reach them first varies) with a limit of 3: per function, the
/// same number of calls through both paths, each `returned`, and the program's output and exit
/// code unchanged.
#[test]
fn the_threads_fixture_with_a_limit_records_as_many_calls_per_function_through_both_paths() {
    let program = fixture_bin("threads");
    let flags = ["--max-calls-per-function", "3"];
    let dir = tempfile::tempdir().unwrap();
    let (p_out, p) = recorded(dir.path(), "ptrace", &program, &[], &flags);
    let (a_out, a) = recorded(dir.path(), "auto", &program, &[], &flags);
    assert_eq!(p_out.status.code(), Some(0), "{}", stderr(&p_out));
    assert_eq!(a_out.status.code(), Some(0), "{}", stderr(&a_out));
    let lines = |o: &std::process::Output| {
        let mut l: Vec<String> = stdout(o).lines().map(str::to_owned).collect();
        l.sort();
        l
    };
    assert_eq!(lines(&a_out), lines(&p_out), "the program's output lines");
    let per_function = |run: &Json| {
        let mut n = std::collections::BTreeMap::new();
        for (path, _, outcome, _) in shape(run) {
            assert_eq!(outcome, "returned", "{path}");
            *n.entry(path).or_insert(0) += 1;
        }
        n
    };
    let (pn, an) = (per_function(&p), per_function(&a));
    assert_eq!(an, pn, "calls per function");
    assert_eq!(pn["threads::fib"], 3, "{pn:?}");
    assert!(
        stderr(&a_out).contains("captured in process"),
        "some functions keep ptrace stops, and the rest are in process: {}",
        stderr(&a_out)
    );
}

/// `step` runs three times, then the program forks: the child makes three calls, the parent
/// (after waiting for it) three more. With `--follow-forks` the child's in-process functions
/// get entry breakpoints (nobody drains its copy of the ring), but only while their count in
/// the child's copy is not used up, as the ptrace path's child inherits the entry breakpoint
/// only while the parent has not reached the limit. Limit 4: the parent's first four calls,
/// the child's three (it counts its own). Limit 3: the parent's three, none in the child.
const FORKS: &str = r#"
extern "C" {
    fn fork() -> i32;
    fn waitpid(pid: i32, status: *mut i32, options: i32) -> i32;
}
#[inline(never)]
pub fn step(i: u64, label: &str) -> u64 {
    let v = i * 3 + label.len() as u64;
    v + 1
}
fn main() {
    let mut sum = 0;
    for i in 0..3 {
        sum += step(i, "parent");
    }
    let child = unsafe { fork() };
    if child == 0 {
        for i in 10..13 {
            sum += step(i, "child");
        }
        println!("child sum = {sum}");
        std::process::exit(0);
    }
    let mut status = 0;
    unsafe { waitpid(child, &mut status, 0) };
    for i in 20..23 {
        sum += step(i, "parent");
    }
    println!("parent sum = {sum}");
}
"#;

#[test]
fn a_forked_child_records_a_limited_function_only_while_the_parent_had_calls_left() {
    let dir = tempfile::tempdir().unwrap();
    let program = rustc_program(dir.path(), "forks", "2021", FORKS);
    for (limit, parent, child) in [("4", 4, 3), ("3", 3, 0)] {
        let flags = [
            "--follow-forks",
            "--filter",
            "forks::step",
            "--max-calls-per-function",
            limit,
        ];
        let run = |mode: &str| {
            let db = dir.path().join(format!("{mode}-{limit}.db"));
            let mut extra = vec!["--capture", mode];
            extra.extend_from_slice(&flags);
            let out = record(&db, &extra, &program, &[]);
            assert_eq!(out.status.code(), Some(0), "{mode}: {}", stderr(&out));
            let runs: Vec<Vec<Json>> = ["1", "2"]
                .iter()
                .map(|n| {
                    let shown = output_within(
                        carve()
                            .args(["show", "--format", "json", "--run", n, "--db"])
                            .arg(&db),
                        RECORD_LIMIT,
                    );
                    assert!(shown.status.success(), "carve show: {shown:?}");
                    calls(&serde_json::from_slice(&shown.stdout).unwrap())
                })
                .collect();
            (out, runs)
        };
        let (p_out, p) = run("ptrace");
        let (i_out, i) = run("inprocess");
        assert_eq!(i_out.stdout, p_out.stdout, "limit {limit}: the output");
        assert!(
            stderr(&i_out).contains("1 of 1 functions captured in process"),
            "{}",
            stderr(&i_out)
        );
        assert_eq!(i, p, "limit {limit}: the same calls in each process");
        assert_eq!((i[0].len(), i[1].len()), (parent, child), "limit {limit}");
    }
}
