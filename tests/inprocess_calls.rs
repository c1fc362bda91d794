//! A function whose body starts with a call (the entry patch displaces it): captured in
//! process, the call run from the trampoline as a jump with the function's own return address
//! pushed, so a panic raised in the callee unwinds through the function's frame to the
//! program's `catch_unwind` exactly as without carve, and the trace is the ptrace path's.

mod common;

use common::inprocess::*;
use common::*;

const PROGRAM: &str = r#"
#[inline(never)]
fn check(n: u32) {
    if n % 2 == 1 {
        panic!("odd {n}");
    }
}

/// Its body starts with the call to `check`.
#[inline(never)]
pub fn half(n: u32) -> u32 {
    check(n);
    n / 2
}

fn main() {
    std::panic::set_hook(Box::new(|_| {}));
    let mut out = Vec::new();
    for n in 0..6 {
        match std::panic::catch_unwind(|| half(n)) {
            Ok(h) => out.push(format!("{n}: {h}")),
            Err(_) => out.push(format!("{n}: panicked")),
        }
    }
    println!("{}", out.join(", "));
}
"#;

#[test]
fn a_panic_in_a_call_the_entry_patch_displaced_unwinds_through_the_function_as_without_carve() {
    let dir = tempfile::tempdir().unwrap();
    let bin = rustc_program(dir.path(), "halves", "2021", PROGRAM);
    let native = std::process::Command::new(&bin).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&native.stdout).trim(),
        "0: 0, 1: panicked, 2: 1, 3: panicked, 4: 2, 5: panicked"
    );
    // `half` alone: `check` stays untraced, so its call is the one the patch displaces.
    let filter = ["--filter", "halves::half"];
    let (p_out, p) = recorded(dir.path(), "ptrace", &bin, &[], &filter);
    let (i_out, i) = recorded(dir.path(), "inprocess", &bin, &[], &filter);
    assert_eq!(in_process_count(&i_out.stderr), 1, "{}", stderr(&i_out));
    for out in [&p_out, &i_out] {
        assert!(out.status.success(), "{}", stderr(out));
        assert_eq!(
            out.stdout, native.stdout,
            "the program's output under carve"
        );
    }
    assert_same_trace("halves", &p, &i);
    let outcomes: Vec<String> = calls(&i)
        .iter()
        .map(|c| c["outcome"]["kind"].as_str().unwrap_or("?").to_owned())
        .collect();
    assert_eq!(
        outcomes,
        ["returned", "panicked", "returned", "panicked", "returned", "panicked"],
        "{i}"
    );
}
