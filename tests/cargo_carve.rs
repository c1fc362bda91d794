//! `cargo carve`: the real `cargo-carve` binary, run the way cargo runs it (`cargo-carve carve
//! ARGS`), on temporary copies of `fixtures/carvecargo`, a library whose only drivers are its
//! integration tests and an example. Also the shell completions and when progress is drawn.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::{copy_fixture, stderr, stdout};

/// `cargo carve ARGS` in `dir`, as cargo would run it, with the copy's own target directory.
fn cargo_carve(dir: &Path, args: &[&str]) -> Output {
    common::cargo_carve_in(dir, args, &[])
}

/// Runs `command` (a shell command line) on a pseudo-terminal with `script` (util-linux) and
/// returns everything the terminal showed.
fn on_a_terminal(dir: &Path, command: &str) -> String {
    let out = Command::new("script")
        .args(["-qfec", command, "/dev/null"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env_remove("RUSTFLAGS")
        .stdin(Stdio::null())
        .output()
        .expect("script (util-linux) runs");
    assert!(
        out.status.success(),
        "{command}: {}{}",
        stdout(&out),
        stderr(&out)
    );
    stdout(&out)
}

/// The `test result: ok. N passed` count of a libtest run's output.
fn passed(output: &str) -> usize {
    let line = output
        .lines()
        .find(|l| l.starts_with("test result: ok."))
        .unwrap_or_else(|| panic!("no passing test result in:\n{output}"));
    line.split_whitespace()
        .nth(3)
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count in {line}"))
}

#[test]
fn an_integration_test_is_recorded_carved_into_tests_and_the_tests_pass() {
    let (_tmp, dir) = copy_fixture("carvecargo");

    let record = cargo_carve(&dir, &["record", "--test", "it"]);
    assert!(record.status.success(), "{}", stderr(&record));
    // The test binary ran (its harness output passes through) and was recorded into the
    // default trace in cargo's target directory.
    assert!(
        stdout(&record).contains("test result: ok. 5 passed"),
        "{}",
        stdout(&record)
    );
    let db = dir.join("target/carve/trace.db");
    assert!(
        stderr(&record).contains(&format!("into {}", db.display())),
        "{}",
        stderr(&record)
    );
    let trace = common::load(&db);
    assert!(
        trace.run.info.program.contains("target/debug/deps/it-"),
        "{}",
        trace.run.info.program
    );
    assert!(
        stderr(&record).contains(&format!(
            "carve: recording the integration test `it` of package `carvecargo`: {}\n",
            trace.run.info.program
        )),
        "{}",
        stderr(&record)
    );
    // The default selection is the package's library: its functions, not the tests'.
    assert_eq!(trace.run.info.filters, ["carvecargo::*"]);
    assert!(trace
        .functions
        .iter()
        .all(|f| f.path.starts_with("carvecargo::")));
    let rounds = common::calls_of(&trace, "carvecargo::round_to");
    assert_eq!(rounds.len(), 3);
    assert_eq!(
        common::arg(rounds[0], "cents"),
        &common::int(1234, "i64"),
        "{rounds:?}"
    );
    assert_eq!(
        trace.run.info.cwd,
        dir.canonicalize().unwrap().display().to_string()
    );

    // Generation on a terminal shows the tests carved and the verification runs (every
    // verified test kept, so that the one of round_to(1234, 5) is there).
    let screen = on_a_terminal(
        &dir,
        &format!(
            "{} carve generate --no-distil",
            env!("CARGO_BIN_EXE_cargo-carve")
        ),
    );
    // Named after the integration test it was carved from, so another target's tests can
    // live beside it.
    let carved = dir.join("tests/carved_it_carvecargo.rs");
    assert!(
        screen.contains(&format!("wrote {}", carved.display())),
        "{screen}"
    );
    assert!(
        screen.contains("verifying carved_it_carvecargo.rs"),
        "{screen}"
    );
    assert!(screen.contains("passing after verify (3 runs)"), "{screen}");

    let source = std::fs::read_to_string(&carved).unwrap();
    let tests = source.matches("#[test]").count();
    assert!(tests >= 10, "{source}");
    assert!(
        source.contains("carvecargo::round_to(1234i64, 5i64)"),
        "{source}"
    );
    let run = common::cargo_in(&dir, &["test", "--test", "carved_it_carvecargo"]);
    assert!(run.status.success(), "{}{}", stdout(&run), stderr(&run));
    assert_eq!(passed(&stdout(&run)), tests, "{}", stdout(&run));
}

#[test]
fn an_example_is_built_with_debug_info_even_when_the_package_turned_it_off() {
    let (_tmp, dir) = copy_fixture("carvecargo");
    let manifest = dir.join("Cargo.toml");
    let mut text = std::fs::read_to_string(&manifest).unwrap();
    text.push_str("\n[profile.dev]\ndebug = 0\n");
    std::fs::write(&manifest, text).unwrap();
    let record = cargo_carve(&dir, &["--quiet", "record", "--example", "tour"]);
    assert!(record.status.success(), "{}", stderr(&record));
    assert_eq!(stdout(&record), "20.00\nAMT\nfalse\n");
    // --quiet reaches cargo too: no "Compiling" lines, only carve's own (the summary, and
    // before it how many functions keep ptrace stops: `tour` has one the in-process path
    // cannot patch).
    let lines: Vec<String> = stderr(&record).lines().map(String::from).collect();
    assert!(
        lines.iter().all(|l| l.starts_with("carve: ")),
        "{}",
        stderr(&record)
    );
    assert!(
        lines.last().unwrap().contains("recorded 7 calls"),
        "{}",
        stderr(&record)
    );
    let trace = common::load(&dir.join("target/carve/trace.db"));
    assert!(
        trace
            .run
            .info
            .program
            .ends_with("target/debug/examples/tour"),
        "{}",
        trace.run.info.program
    );
    let leap = common::calls_of(&trace, "carvecargo::is_leap_year");
    assert_eq!(leap.len(), 1);
    assert_eq!(common::arg(leap[0], "year"), &common::uint(2100, "u32"));

    // `gate` records the new build with the `carve` beside `cargo-carve` (whose own `record`
    // would take the program for a cargo target); the example built again is at the path the
    // baseline stored.
    let db = dir.join("target/carve/trace.db");
    let gate = cargo_carve(
        &dir,
        &[
            "gate",
            "--baseline",
            db.to_str().unwrap(),
            "--rerun-recorded-command",
        ],
    );
    assert!(gate.status.success(), "{}", stderr(&gate));
    assert!(
        stdout(&gate).starts_with("carve gate: no divergence"),
        "{}",
        stdout(&gate)
    );
}

/// A target that needs features (`required-features`, as tinyvec's tests) is built with them,
/// and a package whose name another package of the graph shares (an older version of itself
/// among the dev-dependencies, as itertools has) is named with its version.
#[test]
fn a_targets_required_features_are_on_and_a_shared_package_name_is_told_apart() {
    let (_tmp, dir) = copy_fixture("carvecargo");
    let manifest = dir.join("Cargo.toml");
    let mut text = std::fs::read_to_string(&manifest).unwrap();
    text.push_str(
        "\n[features]\nextra = []\n\n[[example]]\nname = \"tour\"\nrequired-features = [\"extra\"]\n\n\
         [dev-dependencies]\nolder = { package = \"carvecargo\", path = \"older\" }\n",
    );
    std::fs::write(&manifest, text).unwrap();
    std::fs::create_dir_all(dir.join("older/src")).unwrap();
    std::fs::write(
        dir.join("older/Cargo.toml"),
        "[package]\nname = \"carvecargo\"\nversion = \"0.0.1\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::write(dir.join("older/src/lib.rs"), "").unwrap();
    let record = cargo_carve(&dir, &["--quiet", "record", "--example", "tour"]);
    assert!(record.status.success(), "{}", stderr(&record));
    assert_eq!(stdout(&record), "20.00\nAMT\nfalse\n");
}

#[test]
fn the_library_unit_tests_are_recorded_with_lib_tests_and_a_test_filter() {
    let (_tmp, dir) = copy_fixture("carvecargo");
    let record = cargo_carve(&dir, &["record", "--lib-tests", "--", "centuries"]);
    assert!(record.status.success(), "{}", stderr(&record));
    assert!(
        stdout(&record).contains("test tests::centuries_are_leap_years_only_every_fourth ... ok"),
        "{}",
        stdout(&record)
    );
    let trace = common::load(&dir.join("target/carve/trace.db"));
    assert!(
        trace
            .run
            .info
            .program
            .contains("target/debug/deps/carvecargo-"),
        "{}",
        trace.run.info.program
    );
    assert_eq!(trace.run.info.args, ["centuries"]);
    let years: Vec<_> = common::calls_of(&trace, "carvecargo::is_leap_year")
        .iter()
        .map(|c| common::arg(c, "year").clone())
        .collect();
    assert_eq!(
        years,
        [common::uint(2100, "u32"), common::uint(2400, "u32")]
    );
    // The harness's own `main` (rustc writes it into the library's root) is not recorded: it
    // is no function of the library's to carve, nor to count.
    assert!(
        trace.functions.iter().all(|f| f.path != "carvecargo::main"),
        "{:?}",
        trace.functions
    );
}

#[test]
fn lib_tests_on_a_library_without_unit_tests_says_so_and_records_nothing() {
    let (_tmp, dir) = copy_fixture("carvecargo");
    let lib = dir.join("src/lib.rs");
    let source = std::fs::read_to_string(&lib).unwrap();
    let without = &source[..source.find("#[cfg(test)]").unwrap()];
    std::fs::write(&lib, without).unwrap();
    let out = cargo_carve(&dir, &["record", "--lib-tests"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let error = stderr(&out).lines().last().unwrap_or_default().to_string();
    assert_eq!(
        error,
        format!(
            "carve: error: the library of package `carvecargo` has no unit tests (#[test] \
             functions in {}): nothing for --lib-tests to record; record what does call it \
             instead: --test NAME (integration tests: it), --example NAME (examples: tour) or \
             --bin NAME (binaries: none)",
            dir.canonicalize().unwrap().join("src/lib.rs").display()
        )
    );
    assert!(!dir.join("target/carve/trace.db").exists());
    // A filter no unit test matches is named too.
    let (_tmp2, dir) = copy_fixture("carvecargo");
    let out = cargo_carve(&dir, &["record", "--lib-tests", "--", "no_such_test"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("has no unit tests matching `no_such_test` (#[test]"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn record_without_a_target_names_the_ones_to_choose_from() {
    let (_tmp, dir) = copy_fixture("carvecargo");
    let out = cargo_carve(&dir, &["record"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "carve: error: choose what of package `carvecargo` to record: --test NAME (integration \
         tests: it), --example NAME (examples: tour), --bin NAME (binaries: none) or --lib-tests\n"
    );
    let out = cargo_carve(&dir, &["record", "--test", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("has no integration test `nope`: its integration tests are it"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn generate_before_any_recording_says_to_record_first() {
    let (_tmp, dir) = copy_fixture("carvecargo");
    std::fs::remove_dir_all(dir.join("tests")).unwrap();
    let out = cargo_carve(&dir, &["generate"]);
    assert_eq!(out.status.code(), Some(2));
    let db = dir.join("target/carve/trace.db");
    assert_eq!(
        stderr(&out),
        format!(
            "carve: error: no trace at {}: record one first (`cargo carve record --test NAME`), or pass --db\n",
            db.display()
        )
    );
    // Nothing was made on the way: no trace, no tests/ directory.
    assert!(!db.exists());
    assert!(!dir.join("tests").exists());
}

#[test]
fn completions_are_a_valid_bash_script_naming_the_commands() {
    let carve = common::carve()
        .args(["completions", "bash"])
        .output()
        .unwrap();
    assert!(carve.status.success(), "{}", stderr(&carve));
    let script = stdout(&carve);
    for word in ["record", "generate", "show", "gate", "coverage", "--filter"] {
        assert!(script.contains(word), "{word} missing from\n{script}");
    }
    let cargo = Command::new(env!("CARGO_BIN_EXE_cargo-carve"))
        .args(["carve", "completions", "bash"])
        .output()
        .unwrap();
    assert!(cargo.status.success(), "{}", stderr(&cargo));
    let cargo_script = stdout(&cargo);
    // cargo-carve's own options are in its script, not in carve's.
    assert!(cargo_script.contains("--lib-tests"), "{cargo_script}");
    assert!(!script.contains("--lib-tests"));
    for script in [script, cargo_script] {
        let check = Command::new("bash")
            .args(["-n", "-c", &script])
            .output()
            .expect("bash runs");
        assert!(check.status.success(), "bash -n: {}", stderr(&check));
    }
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let out = common::carve()
            .args(["completions", shell])
            .output()
            .unwrap();
        assert!(out.status.success() && out.stdout.len() > 100, "{shell}");
    }
    let out = common::carve()
        .args(["completions", "tcsh"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// A recording long enough for the progress display to be drawn several times.
fn long_recording(db: &Path, quiet: bool) -> String {
    format!(
        "{} {}record --db {} -- {} 60000",
        env!("CARGO_BIN_EXE_carve"),
        if quiet { "--quiet " } else { "" },
        db.display(),
        common::fixture_bin("hotloop").display()
    )
}

#[test]
fn progress_is_drawn_on_a_terminal_and_not_with_quiet() {
    let tmp = tempfile::tempdir().unwrap();
    let screen = on_a_terminal(tmp.path(), &long_recording(&tmp.path().join("a.db"), false));
    assert!(screen.contains("recording hotloop: "), "{screen}");
    assert!(screen.contains(" calls ("), "{screen}");
    assert!(screen.contains("carve: recorded 60002 calls"), "{screen}");

    let screen = on_a_terminal(tmp.path(), &long_recording(&tmp.path().join("b.db"), true));
    assert!(!screen.contains("recording hotloop"), "{screen}");
    assert!(screen.contains("carve: recorded 60002 calls"), "{screen}");
}

#[test]
fn progress_is_not_drawn_when_stderr_is_not_a_terminal() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new("sh")
        .args(["-c", &long_recording(&tmp.path().join("a.db"), false)])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    // Only carve's summary: no bar, no carriage return, no terminal escape.
    let err = stderr(&out);
    assert!(
        err.starts_with("carve: recorded 60002 calls of ")
            && err.ends_with(&format!(
                "hotloop into {} (run 1); the program exited with 0\n",
                tmp.path().join("a.db").display()
            ))
            && err.lines().count() == 1
            && !err.contains(['\r', '\x1b']),
        "{err}"
    );
}

#[test]
fn in_a_workspace_of_several_packages_the_package_must_be_named() {
    let (tmp, _dir) = copy_fixture("carvecargo");
    let root = tmp.path();
    common::write_tree(
        root,
        &[
            (
                "Cargo.toml",
                "[workspace]\nmembers = [\"carvecargo\", \"other\"]\nresolver = \"2\"\n",
            ),
            (
                "other/Cargo.toml",
                "[package]\nname = \"other\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
            ),
            ("other/src/lib.rs", "pub fn one() -> u8 {\n    1\n}\n"),
        ],
    );
    let out = cargo_carve(root, &["record", "--test", "it"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        format!(
            "carve: error: the workspace at {} has 2 packages (carvecargo, other): choose one with --package NAME\n",
            root.canonicalize().unwrap().display()
        )
    );
    let out = cargo_carve(root, &["generate", "-p", "nope"]);
    assert!(
        stderr(&out).contains("no package `nope` in the workspace at")
            && stderr(&out).ends_with("choose one of carvecargo, other\n"),
        "{}",
        stderr(&out)
    );
    // Inside a member's directory, that member is the package (as for cargo).
    let out = cargo_carve(&root.join("other"), &["record"]);
    assert!(
        stderr(&out).contains("choose what of package `other` to record"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn tests_carved_from_a_target_that_requires_features_build_with_them_and_say_so() {
    // A library whose API behind a feature only a test target that requires it calls: the
    // carved tests compile only with that feature, as the crate's own test does.
    let (_tmp, dir) = copy_fixture("carvecargo");
    let manifest = dir.join("Cargo.toml");
    let mut text = std::fs::read_to_string(&manifest).unwrap();
    text.push_str(
        "\n[features]\nextra = []\n\n[[test]]\nname = \"gated\"\nrequired-features = [\"extra\"]\n",
    );
    std::fs::write(&manifest, text).unwrap();
    let lib = dir.join("src/lib.rs");
    let mut source = std::fs::read_to_string(&lib).unwrap();
    source.push_str(
        "\n/// Cents with a surcharge of a tenth, rounded down.\n#[cfg(feature = \"extra\")]\n\
         pub fn with_surcharge(cents: i64) -> i64 {\n    cents + cents / 10\n}\n",
    );
    std::fs::write(&lib, source).unwrap();
    std::fs::write(
        dir.join("tests/gated.rs"),
        "#[test]\nfn surcharge() {\n    assert_eq!(carvecargo::with_surcharge(1250), 1375);\n    \
         assert_eq!(carvecargo::with_surcharge(9), 9);\n}\n",
    )
    .unwrap();

    let record = cargo_carve(&dir, &["record", "--test", "gated"]);
    assert!(record.status.success(), "{}", stderr(&record));
    let trace = common::load(&dir.join("target/carve/trace.db"));
    assert_eq!(trace.run.info.features, ["extra"]);

    let generate = cargo_carve(&dir, &["generate", "--no-distil"]);
    assert!(generate.status.success(), "{}", stderr(&generate));
    assert!(
        stdout(&generate).contains("the carved tests run with `cargo test --features extra`"),
        "{}",
        stdout(&generate)
    );
    let carved = dir.join("tests/carved_gated_carvecargo.rs");
    let source = std::fs::read_to_string(&carved).unwrap();
    assert!(source.contains("#![cfg(feature = \"extra\")]"), "{source}");
    assert!(
        source.contains("carvecargo::with_surcharge(1250i64)"),
        "{source}"
    );
    let tests = source.matches("#[test]").count();
    assert_eq!(tests, 2, "{source}");

    // With the feature the tests run and pass; a plain `cargo test` still builds and skips them.
    let with = [
        "test",
        "--features",
        "extra",
        "--test",
        "carved_gated_carvecargo",
    ];
    let run = common::cargo_in(&dir, &with);
    assert!(run.status.success(), "{}{}", stdout(&run), stderr(&run));
    assert_eq!(passed(&stdout(&run)), tests, "{}", stdout(&run));
    let plain = common::cargo_in(&dir, &["test", "--test", "carved_gated_carvecargo"]);
    assert!(
        plain.status.success(),
        "{}{}",
        stdout(&plain),
        stderr(&plain)
    );
    assert_eq!(passed(&stdout(&plain)), 0, "{}", stdout(&plain));

    // And they tell the behaviour apart: a surcharge of a fifth fails them.
    common::edit(&lib, "cents + cents / 10", "cents + cents / 5");
    let run = common::cargo_in(&dir, &with);
    assert!(!run.status.success(), "{}", stdout(&run));
}
