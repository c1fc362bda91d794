//! `carve demo`: the whole job on a built-in example. Writes the `expr` fixture (embedded in the
//! binary, so an installed carve needs no checkout) to a directory, builds it in debug, records a
//! run, carves tests into its `tests/`, and runs them with cargo.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};

use crate::args::{DemoArgs, Format, GenerateArgs, RecordArgs};

/// The example crate's files, relative to its root.
const EXAMPLE: &[(&str, &str)] = &[
    ("Cargo.toml", include_str!("../fixtures/expr/Cargo.toml")),
    ("src/lib.rs", include_str!("../fixtures/expr/src/lib.rs")),
    (
        "src/lexer.rs",
        include_str!("../fixtures/expr/src/lexer.rs"),
    ),
    (
        "src/parser.rs",
        include_str!("../fixtures/expr/src/parser.rs"),
    ),
    ("src/eval.rs", include_str!("../fixtures/expr/src/eval.rs")),
    ("src/main.rs", include_str!("../fixtures/expr/src/main.rs")),
];

pub fn run(a: DemoArgs) -> anyhow::Result<i32> {
    let dir = match a.dir {
        Some(d) => {
            std::fs::create_dir_all(&d)
                .with_context(|| format!("cannot create {}", d.display()))?;
            d
        }
        None => tempfile::Builder::new()
            .prefix("carve-demo-")
            .tempdir()
            .context("cannot create a temporary directory")?
            .keep(),
    };
    let crate_dir = dir.join("expr");
    write_example(&crate_dir)?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());

    step("building the example program `expr` (debug)");
    let target = crate_dir.join("target");
    let status = Command::new(&cargo)
        .args(["build", "--quiet"])
        .current_dir(&crate_dir)
        .env("CARGO_TARGET_DIR", &target)
        .status()
        .context("cannot run cargo: is Rust installed (rustup.rs)?")?;
    if !status.success() {
        bail!(
            "cargo build of the example failed in {}",
            crate_dir.display()
        );
    }

    let db = dir.join("trace.db");
    let program = target.join("debug/expr");
    step(&format!("recording `expr {}` under carve", a.expr));
    let code = crate::record::run(RecordArgs {
        db: db.clone(),
        filters: Vec::new(),
        excludes: Vec::new(),
        crates: Vec::new(),
        cargo_features: Vec::new(),
        max_calls_per_function: None,
        all_calls: false,
        size_warning: 1024,
        depth: 0,
        max_depth: 4,
        max_elements: 256,
        max_string: 4096,
        force_returns: Vec::new(),
        no_pin: false,
        follow_forks: false,
        capture: crate::args::Capture::Auto,
        coverage: false,
        coverage_per_thread: false,
        runs: 1,
        command: vec![program.into(), a.expr.clone().into()],
    })?;
    if code != 0 {
        bail!("the example program exited with {code} under the recorder");
    }

    step("the recorded call tree (carve show), first lines");
    let tree = crate::show::text(&crate::args::ShowArgs {
        db: db.clone(),
        run: None,
        function: None,
        thread: None,
        format: crate::args::ShowFormat::Text,
        all_runs: false,
    })?;
    const SHOWN: usize = 24;
    for line in tree.lines().take(SHOWN) {
        println!("{line}");
    }
    let more = tree.lines().count().saturating_sub(SHOWN);
    if more > 0 {
        println!("… {more} more lines: carve show --db {}", db.display());
    }

    step("carving tests (carve generate; each carved test runs 3 times before it is kept)");
    let tests = crate_dir.join("tests");
    std::fs::create_dir_all(&tests)?;
    let report = crate::generate::generate(&GenerateArgs {
        db: db.clone(),
        out: tests.clone(),
        crate_dir: Some(crate_dir.clone()),
        templates: None,
        run: None,
        format: Format::Text,
        verify: true,
        no_verify: false,
        verify_runs: 3,
        all: false,
        distil: false,
        no_distil: false,
        max_per_function: None,
        whole_trace: false,
        no_coverage: true,
    })?;
    for f in &report.files {
        println!("wrote {}", f.display());
    }
    println!("{}", report.summary_line());
    if let Some(d) = &report.distilled {
        println!("{}", d.line());
    }

    step("running the carved tests (cargo test)");
    let output = Command::new(&cargo)
        .args(["test", "--tests", "--color", "never"])
        .current_dir(&crate_dir)
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .context("cannot run cargo test")?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let (passed, failed) = count_results(&stdout);
    println!();
    println!("example crate: {}", crate_dir.display());
    println!("trace:         {}", db.display());
    println!("carved tests:  {}", tests.display());
    println!("tests passed:  {passed}, failed: {failed}");
    if !output.status.success() || passed == 0 {
        eprint!("{}", String::from_utf8_lossy(&output.stderr));
        print!("{stdout}");
        return Ok(crate::exit::TESTS_FAILED);
    }
    Ok(0)
}

fn write_example(root: &Path) -> anyhow::Result<()> {
    for (rel, text) in EXAMPLE {
        let path: PathBuf = root.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

fn step(what: &str) {
    println!("\n==> {what}");
}

/// Sums cargo's `test result: ok. N passed; M failed` lines.
fn count_results(stdout: &str) -> (usize, usize) {
    let mut passed = 0;
    let mut failed = 0;
    for line in stdout.lines().filter(|l| l.starts_with("test result:")) {
        let number_before = |word: &str| {
            line.split(';')
                .find(|part| part.trim_end().ends_with(word))
                .and_then(|part| part.split_whitespace().rev().nth(1))
                .and_then(|n| n.parse::<usize>().ok())
                .unwrap_or(0)
        };
        passed += number_before("passed");
        failed += number_before("failed");
    }
    (passed, failed)
}

#[cfg(test)]
mod tests {
    use super::count_results;

    #[test]
    fn cargo_test_summaries_are_added_up() {
        let out = "test result: ok. 3 passed; 0 failed; 0 ignored\n\
                   test result: FAILED. 1 passed; 2 failed; 0 ignored";
        assert_eq!(count_results(out), (4, 2));
    }
}
