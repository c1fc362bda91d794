//! Issue 15's last done-when: a segfault inside a call traced in process leaves the program's
//! behaviour unchanged (killed by SIGSEGV, the same output) and costs none of the calls
//! recorded before it; the calls open at the crash end `unfinished`, exactly as on the ptrace
//! path.

mod common;

use std::path::Path;

use common::*;
use serde_json::Value as Json;

/// `check` and `scale` are captured in process; `scale(0, ..)` writes through a null pointer,
/// so the third `check` crashes with both frames open.
const CRASHES: &str = r#"
#[inline(never)]
pub fn scale(n: u64, into: *mut u64) -> u64 {
    let v = n * 3;
    if n == 0 {
        unsafe { std::ptr::write_volatile(into, v) };
    }
    v + 1
}
#[inline(never)]
pub fn check(n: u64, label: &str) -> u64 {
    let mut slot = 0u64;
    let target = if n == 0 { std::ptr::null_mut() } else { &mut slot as *mut u64 };
    scale(n, target) + label.len() as u64
}
fn main() {
    println!("check(3) = {}", check(3, "abc"));
    println!("check(20) = {}", check(20, "xy"));
    println!("crashing");
    println!("check(0) = {}", check(0, "never"));
}
"#;

/// Records the program with `--capture MODE`; carve's output and the run as JSON.
fn recorded(dir: &Path, mode: &str, program: &Path) -> (std::process::Output, Json) {
    let db = dir.join(format!("{mode}.db"));
    let flags = [
        "--capture",
        mode,
        "--filter",
        "crashes::check",
        "--filter",
        "crashes::scale",
    ];
    let out = record(&db, &flags, program, &[]);
    let shown = output_within(
        carve().args(["show", "--format", "json", "--db"]).arg(&db),
        RECORD_LIMIT,
    );
    assert!(shown.status.success(), "carve show: {shown:?}");
    (out, serde_json::from_slice(&shown.stdout).unwrap())
}

/// Each call as (function name, outcome, return value), in the order they were made.
fn summary(run: &Json) -> Vec<(String, String, Json)> {
    let names: std::collections::HashMap<i64, String> = run["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["id"].as_i64().unwrap(),
                f["path"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    run["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                names[&c["function"].as_i64().unwrap()].clone(),
                c["outcome"]["kind"].as_str().unwrap().to_owned(),
                c["ret"].clone(),
            )
        })
        .collect()
}

#[test]
fn a_segfault_inside_an_in_process_call_keeps_the_calls_before_it_and_the_program_s_behaviour() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let program = rustc_program(dir.path(), "crashes", "2021", CRASHES);
    let native = std::process::Command::new(&program).output().unwrap();
    assert_eq!(native.status.signal(), Some(11), "{native:?}");

    let (p_out, p) = recorded(dir.path(), "ptrace", &program);
    let (i_out, i) = recorded(dir.path(), "inprocess", &program);
    let stderr = String::from_utf8_lossy(&i_out.stderr);
    assert!(
        stderr.contains("2 of 2 functions captured in process"),
        "{stderr}"
    );
    assert_eq!(i_out.stdout, native.stdout, "the program's output");
    assert_eq!(
        i_out.status.code(),
        Some(128 + 11),
        "carve exits like a shell would"
    );
    assert_eq!(p_out.status.code(), i_out.status.code());
    for run in [&p, &i] {
        let exit = &run["run"]["end"]["exit"];
        assert_eq!(exit["kind"], "signaled", "{exit}");
        assert_eq!(exit["name"], "SIGSEGV", "{exit}");
    }

    let (ps, is) = (summary(&p), summary(&i));
    assert_eq!(ps, is, "the same calls through both paths");
    let outcomes: Vec<(&str, &str)> = is
        .iter()
        .map(|(f, o, _)| (f.as_str(), o.as_str()))
        .collect();
    assert_eq!(
        outcomes,
        [
            ("crashes::check", "returned"),
            ("crashes::scale", "returned"),
            ("crashes::check", "returned"),
            ("crashes::scale", "returned"),
            ("crashes::check", "unfinished"),
            ("crashes::scale", "unfinished"),
        ]
    );
    // check(3, "abc") = scale(3) + 3 = 10 + 3.
    assert_eq!(is[0].2["value"], 13, "{}", is[0].2);
}
