//! The in-process capture path's first layer (issue 15): real programs, patched in process,
//! their records checked against what the program itself computes.

use std::path::{Path, PathBuf};
use std::process::Command;

fn build_hotloop(dir: &Path, opt: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/hotloop.c");
    let exe = dir.join(format!("hotloop{opt}"));
    let status = Command::new("cc")
        .args(["-g", opt, "-o"])
        .arg(&exe)
        .arg(&src)
        .status()
        .expect("cc runs");
    assert!(status.success(), "cc {opt} bench/hotloop.c");
    exe
}

/// The checksum line hotloop prints: the wrapping sum of every `mix` return value.
fn checksum(output: &str) -> u64 {
    let line = output
        .lines()
        .find_map(|l| l.strip_prefix("checksum = 0x"))
        .expect("a checksum line");
    u64::from_str_radix(line.trim(), 16).unwrap()
}

fn probe_hotloop(opt: &str, calls: u64, ring: u64) {
    let dir = tempfile::tempdir().unwrap();
    let exe = build_hotloop(dir.path(), opt);
    let native = Command::new(&exe).arg(calls.to_string()).output().unwrap();
    let out = dir.path().join("out.txt");
    let run = carve_recorder::probe(
        &exe,
        &[calls.to_string().into()],
        &["mix"],
        Some(&out),
        ring,
    )
    .expect("probe runs");
    let printed = std::fs::read_to_string(&out).unwrap();
    // The program's behaviour is unchanged.
    assert_eq!(run.exit_code, 0);
    assert_eq!(
        printed.as_bytes(),
        native.stdout.as_slice(),
        "same output as a native run"
    );
    assert!(
        run.refused.is_empty(),
        "mix patched in process: {:?}",
        run.refused
    );
    assert_eq!(run.patched, vec!["mix".to_string()]);
    let entries: Vec<_> = run.records.iter().filter(|r| r.entry).collect();
    let exits: Vec<_> = run.records.iter().filter(|r| !r.entry).collect();
    assert_eq!(entries.len() as u64, calls, "one entry record per call");
    assert_eq!(exits.len() as u64, calls, "one exit record per call");
    // Calls alternate entry/exit (mix calls nothing traced) and carry the loop counter.
    for (i, pair) in run.records.chunks(2).enumerate() {
        assert!(pair[0].entry && !pair[1].entry, "record pair {i}: {pair:?}");
        assert_eq!(
            pair[0].args[0], i as u64,
            "mix's first argument is the loop counter"
        );
        assert_eq!(pair[0].thread, pair[1].thread);
    }
    let sum = exits.iter().fold(0u64, |s, r| s.wrapping_add(r.ret[0]));
    assert_eq!(
        sum,
        checksum(&printed),
        "the return values add up to the program's checksum"
    );
}

#[test]
fn every_call_of_an_unoptimized_c_function_is_captured_in_process_with_its_arguments_and_result() {
    // 3000 calls = 6000 records through a ring of 512: writers wait for the drainer and the
    // ring wraps many times.
    probe_hotloop("-O0", 3000, 512 * 128);
}

#[test]
fn a_function_whose_ret_is_a_branch_target_keeps_the_ptrace_path_and_runs_unchanged() {
    // At -O2, `mix`'s loop exits straight onto its one-byte `ret`: no 5-byte patch fits there.
    let dir = tempfile::tempdir().unwrap();
    let exe = build_hotloop(dir.path(), "-O2");
    let native = Command::new(&exe).arg("50").output().unwrap();
    let out = dir.path().join("out.txt");
    let run = carve_recorder::probe(&exe, &["50".into()], &["mix"], Some(&out), 1 << 16).unwrap();
    assert_eq!(
        run.refused,
        vec![(
            "mix".to_string(),
            "a ret preceded by a branch within 5 bytes"
        )]
    );
    assert!(run.records.is_empty() && run.patched.is_empty());
    assert_eq!(run.exit_code, 0);
    assert_eq!(std::fs::read(&out).unwrap(), native.stdout);
}
