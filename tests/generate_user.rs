//! What a new user meets with `cargo carve generate` (issue 29), with the real `cargo-carve` on
//! copies of `fixtures/twotests` (a library driven by two integration tests, `a` and `b`): the
//! tests carved from two test targets live side by side, `generate` says what it replaced, an
//! interrupted `generate` leaves `tests/` as it was, and off a terminal progress comes as lines.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{copy_fixture, output_within, stderr, stdout, RECORD_LIMIT};

/// `cargo carve ARGS` in `dir`, as cargo would run it, with the copy's own target directory.
fn cargo_carve(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    common::cargo_carve_in(dir, args, env)
}

fn record(dir: &Path, test: &str) {
    let out = cargo_carve(dir, &["record", "--test", test], &[]);
    assert!(
        out.status.success(),
        "record --test {test}: {}",
        stderr(&out)
    );
}

/// Every file under `dir` (relative path → bytes).
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path.strip_prefix(root).unwrap().display().to_string();
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// The staging directories `generate` left in the package's directory.
fn staging_left(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".carve-generate-"))
        .collect()
}

#[test]
fn two_test_targets_recorded_one_after_the_other_keep_both_sets_of_carved_tests() {
    let (_tmp, dir) = copy_fixture("twotests");
    let tests = dir.join("tests");
    let (carved_a, carved_b) = (
        tests.join("carved_a_twotests.rs"),
        tests.join("carved_b_twotests.rs"),
    );

    // As the README walks through it: record `a`, generate, record `b`, generate.
    record(&dir, "a");
    // Off a terminal, a progress line every 20 ms here (every few seconds by default): the
    // cargo runs of verification alone last longer.
    let first = cargo_carve(&dir, &["generate"], &[("CARVE_PROGRESS_SECONDS", "0.02")]);
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(
        stdout(&first).starts_with(&format!("wrote {}\n", carved_a.display())),
        "{}",
        stdout(&first)
    );
    let progress = stderr(&first);
    assert!(
        progress.contains("carve: verifying carved_a_twotests.rs: ")
            && progress.contains(" runs done (")
            && progress
                .lines()
                .all(|l| l.starts_with("carve: ") && l.ends_with(" s)"))
            && !progress.contains(['\r', '\x1b']),
        "{progress}"
    );
    let a_source = std::fs::read(&carved_a).unwrap();
    assert!(String::from_utf8_lossy(&a_source).contains("twotests::add("));

    record(&dir, "b");
    // --quiet: no progress line at all.
    let second = cargo_carve(
        &dir,
        &["--quiet", "generate"],
        &[("CARVE_PROGRESS_SECONDS", "0.02")],
    );
    assert!(second.status.success(), "{}", stderr(&second));
    assert_eq!(stderr(&second), "");
    assert!(
        stdout(&second).starts_with(&format!("wrote {}\n", carved_b.display())),
        "{}",
        stdout(&second)
    );
    // The tests carved from `a` are still there, untouched.
    assert_eq!(std::fs::read(&carved_a).unwrap(), a_source);
    let b_source = std::fs::read_to_string(&carved_b).unwrap();
    assert!(b_source.contains("twotests::greet("), "{b_source}");
    assert!(!b_source.contains("twotests::add("), "{b_source}");

    // Carving `b` again replaces its file, and says so.
    let again = cargo_carve(&dir, &["generate", "--no-verify"], &[]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(
        stdout(&again).starts_with(&format!(
            "wrote {} (replacing the file that was there)\n",
            carved_b.display()
        )),
        "{}",
        stdout(&again)
    );
    assert_eq!(std::fs::read(&carved_a).unwrap(), a_source);
    assert!(staging_left(&dir).is_empty(), "{:?}", staging_left(&dir));

    // Both carved targets build and pass beside the package's own tests.
    let run = common::cargo_in(&dir, &["test", "--tests"]);
    let output = format!("{}{}", stdout(&run), stderr(&run));
    assert!(run.status.success(), "{output}");
    for target in ["carved_a_twotests", "carved_b_twotests"] {
        assert!(output.contains(&format!("tests/{target}.rs")), "{output}");
    }
}

/// Starts `cargo carve generate` on `dir`, waits until verification has put the carved file in
/// place in `tests/` (replacing the earlier one), sends `signal` and returns what carve did.
fn generate_interrupted_while_verifying(dir: &Path, signal: i32, before: &[u8]) -> Output {
    let carved = dir.join("tests/carved_a_twotests.rs");
    let child = Command::new(env!("CARGO_BIN_EXE_cargo-carve"))
        .args(["carve", "generate"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env_remove("RUSTFLAGS")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if std::fs::read(&carved).is_ok_and(|now| now != before) {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(300),
            "generate never put the carved file in place"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // SAFETY: kill(2) on our own child.
    assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
    child.wait_with_output().unwrap()
}

#[test]
fn an_interrupted_or_failed_generate_leaves_tests_as_it_was() {
    let (_tmp, dir) = copy_fixture("twotests");
    record(&dir, "a");
    let first = cargo_carve(&dir, &["generate", "--no-verify"], &[]);
    assert!(first.status.success(), "{}", stderr(&first));
    // A mark of the earlier file, so that its replacement shows.
    let carved = dir.join("tests/carved_a_twotests.rs");
    let mut marked = std::fs::read(&carved).unwrap();
    marked.extend_from_slice(b"// carved earlier\n");
    std::fs::write(&carved, &marked).unwrap();
    let tests = dir.join("tests");
    let before = tree(&tests);

    for (signal, name) in [(libc::SIGINT, "SIGINT"), (libc::SIGTERM, "SIGTERM")] {
        let out = generate_interrupted_while_verifying(&dir, signal, &marked);
        assert_eq!(out.status.code(), Some(130), "{name}: {}", stderr(&out));
        assert_eq!(
            stderr(&out),
            format!(
                "carve: error: generate was interrupted; {} is as it was before: run it again to carve the tests\n",
                tests.display()
            ),
            "{name}"
        );
        assert_eq!(stdout(&out), "", "{name}");
        // Byte for byte: the earlier carved file back, nothing added, nothing staged left.
        let after = tree(&tests);
        assert_eq!(
            after.keys().collect::<Vec<_>>(),
            before.keys().collect::<Vec<_>>(),
            "{name}"
        );
        assert!(after == before, "{name}: a file of tests/ changed");
        assert!(
            staging_left(&dir).is_empty(),
            "{name}: {:?}",
            staging_left(&dir)
        );
    }

    // A generate that fails during verification: a cargo that answers `--version` and then
    // is gone, so the carved file, already in place to be built, cannot be.
    let cargo = dir.join("vanishing-cargo");
    std::fs::write(&cargo, "#!/bin/sh\nrm -f \"$0\"\necho 'cargo 1.0.0'\n").unwrap();
    std::fs::set_permissions(&cargo, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    // `carve` itself: `cargo carve` would ask this cargo for the package's metadata first.
    let out = output_within(
        common::carve()
            .args(["generate", "--db"])
            .arg(dir.join("target/carve/trace.db"))
            .arg("--out")
            .arg(&tests)
            .current_dir(&dir)
            .env("CARGO", &cargo)
            .env("CARGO_TARGET_DIR", dir.join("target")),
        RECORD_LIMIT,
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with(&format!(
            "carve: error: verifying the carved tests failed: cannot run {} test --no-run",
            cargo.display()
        )) && stderr(&out).lines().count() == 1,
        "{}",
        stderr(&out)
    );
    assert!(tree(&tests) == before, "a file of tests/ changed");
    assert!(staging_left(&dir).is_empty(), "{:?}", staging_left(&dir));
}
