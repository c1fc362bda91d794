//! The differential check of issue 15 for the fixtures tests/inprocess_record.rs leaves out:
//! `assessed`, `c_basic`, `carvecargo`, `hotloop` and `pauses`, each run the way its own tests
//! run it (fixtures/README.md), recorded through the ptrace path and through
//! `--capture inprocess` (default selection) and compared through `carve show --format json`.
//! Each must capture something in process; where the program is deterministic the comparison
//! is call for call (values, nesting, threads, outcomes, field effects) with the same function
//! table, exit code and output.

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use common::inprocess::*;
use common::*;
use serde_json::Value as Json;

/// The executable `cargo ARGS` builds in the fixtures workspace (one target: a test binary
/// with `test --no-run`, an example with `build --example`).
fn cargo_built(args: &[&str]) -> PathBuf {
    let out = std::process::Command::new(cargo())
        .args(args)
        .args(["--quiet", "--message-format=json", "--manifest-path"])
        .arg(repo().join("fixtures/Cargo.toml"))
        .arg("--target-dir")
        .arg(repo().join("fixtures/target"))
        .output()
        .expect("cargo runs");
    assert!(out.status.success(), "cargo {args:?}: {}", stderr(&out));
    let built: Vec<PathBuf> = stdout(&out)
        .lines()
        .filter_map(|l| serde_json::from_str::<Json>(l).ok())
        .filter_map(|m| m["executable"].as_str().map(PathBuf::from))
        .collect();
    assert_eq!(
        built.len(),
        1,
        "one executable from cargo {args:?}: {built:?}"
    );
    built[0].clone()
}

fn output(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

/// A libtest harness's output without its `finished in 0.01s`: the ptrace path's stops make
/// the run slower, not different.
fn harness_output(out: &[u8]) -> String {
    String::from_utf8_lossy(out)
        .lines()
        .map(|l| match l.find("; finished in ") {
            Some(at) => &l[..at],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The threads' names in the order the calls first show them (libtest names each test's
/// thread after the test).
fn thread_names(run: &Json) -> Vec<String> {
    let mut seen = Vec::new();
    for c in run["calls"].as_array().unwrap() {
        let tid = c["thread"].to_string();
        let name = run["threads"][&tid].as_str().unwrap_or("?").to_owned();
        if !seen.contains(&name) {
            seen.push(name);
        }
    }
    seen
}

/// A libtest binary run with `--test-threads=1`, so its tests (each on a thread of its own)
/// run one after another in name order: call for call, and the same test threads.
fn same_trace_of_tests(label: &str, tests: &std::path::Path, passed: &str) {
    let (out, p, i) = both_paths_of(label, tests, &["--test-threads=1"], harness_output);
    assert!(
        stdout(&out).contains(passed),
        "{label}: {}{}",
        stdout(&out),
        stderr(&out)
    );
    assert_same_trace(label, &p, &i);
    let names = thread_names(&p);
    assert!(names.len() > 2, "{label}: the tests' threads: {names:?}");
    assert_eq!(names, thread_names(&i), "{label}: the same test threads");
}

/// `assessed`'s program (a wallet deposited to, withdrawn from and printed; a countdown; a
/// recursion through `half`), then its own unit tests, `carve assess`'s input: 4 of its 15
/// functions and 11 of the 44 of its test binary are captured in process. The rest keep the
/// ptrace path: a `Wallet` receiver holds its history as a `Vec<String>` (a sequence of values
/// holding pointers, which the capture does not copy), a call within 5 bytes of the break
/// address, or getters too short to patch.
#[test]
fn assessed_records_the_same_trace_through_both_paths_from_its_program_and_its_own_tests() {
    same_trace("assessed", &[]);
    let tests = cargo_built(&["test", "--no-run", "-p", "assessed", "--lib"]);
    same_trace_of_tests("assessed's tests", &tests, "test result: ok. 10 passed");
}

/// `c_basic` is C at `-O0`: every function keeps a frame pointer, so the CFA at the break
/// address is `rbp + 16` and the capture counts `rsp`'s place through the prologue
/// (`inprocess::rsp_cfa_offset`). `scale(long, int)` and the static `abs_int(int)` are
/// captured in process, their `int` slots in the red zone below `rsp`. The other ten keep the
/// ptrace path for what the in-process rule does not take on: a C pointer parameter (`average`,
/// `manhattan`, `count_vowels`, `read_through`, `end_inside`: the pointee is read by the
/// decoder, a copy inside the program would follow a raw pointer), or a `ret` site that cannot
/// be patched (`add`'s epilogue overlaps its entry patch; `is_vowel` and `main` return through
/// a branch target, `sum_then_scale` and `crash_after` right after a `call`). `crash` ends with
/// a segfault inside `read_through`, under `crash_after`: the same open calls both ways.
#[test]
fn c_basic_records_the_same_trace_through_both_paths_with_its_frame_pointer_functions_in_process() {
    let program = c_basic_bin();
    for args in [&[][..], &["crash"]] {
        let label = format!("c_basic {args:?}");
        let (out, p, i) = both_paths_of(&label, &program, args, output);
        let expected = if args.is_empty() {
            Some(0)
        } else {
            Some(128 + 11)
        };
        assert_eq!(out.status.code(), expected, "{label}: {}", stderr(&out));
        assert_same_trace(&label, &p, &i);
        let scaled: Vec<Json> = calls_of_fn(&i, "scale")
            .iter()
            .map(|c| c["ret"]["value"].clone())
            .collect();
        // scale(21, 2) = 42; scale(10, 10) = 100 under sum_then_scale.
        assert_eq!(scaled, [Json::from(42), Json::from(100)], "{label}");
    }
}

/// `carvecargo` has no program of its own: what `cargo carve record --test it` records (its
/// integration tests; with the default selection here, the tests' own functions too) and its
/// example `tour`.
#[test]
fn carvecargo_records_the_same_trace_through_both_paths_from_its_tests_and_its_example() {
    let it = cargo_built(&["test", "--no-run", "-p", "carvecargo", "--test", "it"]);
    same_trace_of_tests("carvecargo's tests", &it, "test result: ok. 5 passed");
    let tour = cargo_built(&["build", "-p", "carvecargo", "--example", "tour"]);
    let (_, p, i) = both_paths_of("carvecargo's tour", &tour, &[], output);
    assert_same_trace("carvecargo's tour", &p, &i);
}

/// The benchmark's loop, long enough for the in-process records to go round the 4 MiB ring
/// (each call writes two, each at least its 184-byte head: more than 7 MB for 20,000 calls):
/// 20,000 calls of `mix(n, &str)`, the same through both paths, and their results add up to
/// the checksum the program printed.
#[test]
fn hotloop_records_the_same_twenty_thousand_calls_through_both_paths_round_the_ring() {
    let (out, p, i) = both_paths("hotloop", &["20000"]);
    assert_same_trace("hotloop", &p, &i);
    let mix = calls_of_fn(&i, "hotloop::mix");
    assert_eq!(mix.len(), 20_000);
    let sum = mix.iter().fold(0u64, |sum, c| {
        sum.wrapping_add(c["ret"]["value"].as_u64().expect("a u64 result"))
    });
    assert!(
        stdout(&out).contains(&format!("checksum = {sum:#018x}")),
        "{sum:#018x} in {}",
        stdout(&out)
    );
}

/// `pauses steps 300 200` (stdin is empty: the wait for a line ends at once) is deterministic:
/// call for call. `pauses exit-while-holding 4` ends the process with `process::exit(3)` while
/// four threads are inside `hold` (captured in process): each thread's calls are the same
/// through both paths, but which thread gets to its calls first changes from run to run, so
/// the call ids, parents and object numbers (given in the order calls start) do too, and so
/// does where a thread's stack is (`hold`'s `running` points into it: in 2 of 18 runs of
/// either path, three at a time, the fourth thread's stack was 12 KiB lower). Compared is each
/// thread's sequence of calls without those, as a set of threads; the values behind the
/// addresses are kept.
#[test]
fn pauses_records_the_same_trace_through_both_paths_and_the_same_calls_per_thread_at_an_exit() {
    same_trace("pauses", &["steps", "300", "200"]);

    fn without_addresses(v: &mut Json) {
        match v {
            Json::Object(m) => {
                m.remove("addr");
                m.values_mut().for_each(without_addresses);
            }
            Json::Array(a) => a.iter_mut().for_each(without_addresses),
            _ => {}
        }
    }
    fn per_thread(run: &Json) -> Vec<Vec<Json>> {
        let mut threads: BTreeMap<String, Vec<Json>> = BTreeMap::new();
        for mut c in calls(run) {
            let thread = c["thread"].to_string();
            let m = c.as_object_mut().unwrap();
            for k in ["id", "parent", "objects", "thread"] {
                m.remove(k);
            }
            without_addresses(&mut c);
            threads.entry(thread).or_default().push(c);
        }
        let mut all: Vec<Vec<Json>> = threads.into_values().collect();
        all.sort_by_key(|t| Json::from(t.clone()).to_string());
        all
    }
    let (out, p, i) = both_paths("pauses", &["exit-while-holding", "4"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let (pt, it) = (per_thread(&p), per_thread(&i));
    assert_eq!(pt.len(), 5, "main and four holding threads: {pt:?}");
    assert_eq!(pt, it, "the same calls on each thread");
    let unfinished = |t: &Vec<Vec<Json>>| {
        t.iter()
            .flatten()
            .filter(|c| c["outcome"]["kind"] == "unfinished")
            .count()
    };
    // main, and on each thread its closure and `hold`.
    assert_eq!(unfinished(&it), 1 + 4 * 2);
}
