//! Builds the harness once: a package of its own in `target/carve/explore/` of the explored
//! crate, depending on it by path (its `Cargo.lock` copied, so the same versions build),
//! unoptimised with overflow checks and debug assertions on, as the tests that keep its
//! findings run (cargo's release profile with `opt-level = 0`: optimised code merges lines,
//! and a line the run's coverage counts would not be seen), and with edge coverage (LLVM's SanitizerCoverage, whose callbacks the
//! harness's runtime package defines, built optimised: `runtime.rs`) and line tables, so what each call runs is placed by source line. A dispatch arm that does not compile (a call spelled as the source
//! declares it that rustc refuses here) is taken out, as verification takes out carved
//! tests: the compiler's errors are placed by line (the generator's `compile_error_lines`)
//! and the arm holding each goes, then it builds again.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::api::Explorable;
use crate::error::ExploreError;
use crate::harness::{runtime, source, Part};
use crate::pools::Pools;

/// Rounds of taking out arms before giving up.
const MAX_ROUNDS: usize = 6;

const PACKAGE: &str = "carve_explore_harness";

/// A built harness.
#[derive(Debug, Clone)]
pub struct Built {
    pub bin: PathBuf,
    /// The callables it runs (those whose arms compiled).
    pub explorable: Explorable,
    /// Built with edge coverage (`c` answers; `--pcs`), or why not.
    pub coverage: Result<(), String>,
}

/// rustc's flags for edge coverage: LLVM's SanitizerCoverage pass, one guard per edge and a
/// table of their addresses (the callbacks are the harness's own, see `harness.rs`).
const COVERAGE_FLAGS: [&str; 4] = [
    "-Cpasses=sancov-module",
    "-Cllvm-args=-sanitizer-coverage-level=3",
    "-Cllvm-args=-sanitizer-coverage-trace-pc-guard",
    "-Cllvm-args=-sanitizer-coverage-pc-table",
];

/// And a call per integer comparison, on x86-64 hosts (where the harness's trampolines add
/// each call's site).
const COMPARES_FLAG: &str = "-Cllvm-args=-sanitizer-coverage-trace-compares";

/// The coverage flags for host `triple`.
fn coverage_flags(triple: &str) -> String {
    let mut flags = COVERAGE_FLAGS.to_vec();
    if triple.starts_with("x86_64-") {
        flags.push(COMPARES_FLAG);
    }
    flags.join("\u{1f}")
}

/// The host's target triple (`rustc -vV`): with `--target` given, cargo applies the
/// coverage flags to the harness and the crates it links, not to build scripts and proc
/// macros (which would not link without the callbacks).
fn host_triple(cargo: &Path) -> Option<String> {
    let rustc = cargo.with_file_name("rustc");
    let rustc = if rustc.is_file() {
        rustc
    } else {
        PathBuf::from("rustc")
    };
    let out = Command::new(rustc).arg("-vV").output().ok()?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(str::to_string)
}

/// The package name in `crate_dir/Cargo.toml`.
fn package_name(crate_dir: &Path) -> Result<String, ExploreError> {
    let path = crate_dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| ExploreError::io(format!("read {}", path.display()), e))?;
    let mut in_package = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_package = line == "[package]";
        } else if let Some(rest) = line.strip_prefix("name").filter(|_| in_package) {
            if let Some(v) = rest.trim_start().strip_prefix('=') {
                return Ok(v.trim().trim_matches('"').to_string());
            }
        }
    }
    Err(ExploreError::Harness(format!(
        "{} has no [package] name",
        path.display()
    )))
}

/// The `Cargo.lock` that pins the crate's dependencies: its own or its workspace's.
fn lock_file(crate_dir: &Path) -> Option<PathBuf> {
    crate_dir
        .ancestors()
        .map(|d| d.join("Cargo.lock"))
        .find(|p| p.is_file())
}

/// Writes the harness package for `ex` into `dir`.
/// (`crate_dir` with the features the crate is built with.)
fn write_package(
    dir: &Path,
    (crate_dir, features): (&Path, &[String]),
    krate: &str,
    main: &str,
) -> Result<(), ExploreError> {
    let package = package_name(crate_dir)?;
    let manifest = format!(
        "[package]\nname = \"{PACKAGE}\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
         [dependencies]\n{krate} = {{ package = {package:?}, path = {:?}, features = {features:?} }}\n\
         {}\n[profile.release]\nopt-level = 0\ndebug-assertions = true\noverflow-checks = true\n\
         debug = \"line-tables-only\"\n\n{}\n[workspace]\n",
        crate_dir.display().to_string(),
        runtime::IN_HARNESS,
        runtime::PROFILE,
    );
    let write = |path: PathBuf, text: &str| {
        std::fs::write(&path, text)
            .map_err(|e| ExploreError::io(format!("write {}", path.display()), e))
    };
    for src in [dir.join("src"), dir.join("rt/src")] {
        std::fs::create_dir_all(&src)
            .map_err(|e| ExploreError::io(format!("create {}", src.display()), e))?;
    }
    write(dir.join("Cargo.toml"), &manifest)?;
    write(dir.join("src/main.rs"), main)?;
    write(dir.join("rt/Cargo.toml"), runtime::MANIFEST)?;
    write(dir.join("rt/src/lib.rs"), runtime::LIB)?;
    if let Some(lock) = lock_file(crate_dir) {
        let _ = std::fs::copy(lock, dir.join("Cargo.lock"));
    }
    Ok(())
}

/// `cargo build` of the harness package in `dir`, for the host `triple` with edge coverage
/// when it is given.
fn cargo_build(cargo: &Path, dir: &Path, triple: Option<&String>) -> Command {
    let mut command = Command::new(cargo);
    command
        .args([
            "build",
            "--release",
            "--message-format=json",
            "--color",
            "never",
        ])
        .arg("--target-dir")
        .arg(dir.join("target"))
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .current_dir(dir);
    if let Some(triple) = triple {
        command
            .args(["--target", triple])
            .env("CARGO_ENCODED_RUSTFLAGS", coverage_flags(triple));
    }
    command
}

/// Builds the harness for `ex` in `dir` (created), taking out what does not compile; the crate
/// with the features given beside its directory.
pub fn build(
    dir: &Path,
    crate_dir: (&Path, &[String]),
    cargo: &Path,
    mut ex: Explorable,
    pools: &Pools,
) -> Result<Built, ExploreError> {
    let mut defaults: Vec<bool> = ex.objects.iter().map(|o| o.default).collect();
    let mut coverage = match host_triple(cargo) {
        Some(triple) => Ok(triple),
        None => Err("rustc -vV did not name the host".to_string()),
    };
    for _ in 0..MAX_ROUNDS {
        let src = source(&ex, pools, &defaults);
        write_package(dir, crate_dir, &ex.crate_name, &src.text)?;
        let out = cargo_build(cargo, dir, coverage.as_ref().ok())
            .output()
            .map_err(|e| ExploreError::io(format!("run {} build", cargo.display()), e))?;
        if out.status.success() {
            let bin = match &coverage {
                Ok(triple) => dir.join("target").join(triple).join("release"),
                Err(_) => dir.join("target/release"),
            };
            return Ok(Built {
                bin: bin.join(PACKAGE),
                explorable: ex,
                coverage: coverage.map(|_| ()),
            });
        }
        let stdout = String::from_utf8_lossy(&out.stdout);
        let errors = carve_generator::compile_error_lines(&stdout, "main.rs");
        let fail = |message: String| ExploreError::HarnessBuild {
            krate: ex.crate_name.clone(),
            message,
            dir: dir.to_path_buf(),
        };
        if errors.is_empty() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let first = stderr
                .lines()
                .find(|l| l.starts_with("error"))
                .unwrap_or("cargo build failed without saying why");
            // A toolchain without the coverage pass still explores, without lines.
            if coverage.is_ok() {
                coverage = Err(format!(
                    "the harness did not build with edge coverage: {first}"
                ));
                continue;
            }
            return Err(fail(first.to_string()));
        }
        let mut gone = Vec::new();
        let mut objects_gone = Vec::new();
        let mut retyped = false;
        for (message, line) in &errors {
            match line.and_then(|l| src.part_at(l)) {
                Some(Part::Arm(i)) => gone.push((i, message.clone())),
                Some(Part::Default(o)) => defaults[o] = false,
                // A type with a lifetime parameter is held as `Type<'static>` (the pools are
                // static); one that still does not compile goes, with its calls.
                Some(Part::Slots(o)) if !ex.objects[o].borrows => {
                    ex.objects[o].borrows = true;
                    retyped = true;
                }
                Some(Part::Slots(o)) => objects_gone.push((o, message.clone())),
                None => return Err(fail(message.clone())),
            }
        }
        // Errors in the arms may follow from a slot's type: build again before blaming them.
        if retyped {
            continue;
        }
        if !objects_gone.is_empty() {
            objects_gone.sort_by_key(|g| std::cmp::Reverse(g.0));
            objects_gone.dedup_by_key(|g| g.0);
            for (o, message) in objects_gone {
                defaults.remove(o);
                let why = format!("its receiver's type cannot be held: {message}");
                crate::api::remove_object(&mut ex, o, &why);
            }
            continue;
        }
        gone.sort_by_key(|g| std::cmp::Reverse(g.0));
        gone.dedup_by_key(|g| g.0);
        for (i, message) in gone {
            if ex.callables[i].makes.is_some_and(|(_, m)| m.elsewhere()) {
                // Its result does not fit a slot: the call alone, as before it filled one.
                ex.callables[i].makes = None;
                continue;
            }
            let c = ex.callables.remove(i);
            ex.left_out
                .push((c.path, format!("its call does not compile: {message}")));
        }
        for (o, d) in defaults.iter().enumerate() {
            ex.objects[o].default = *d;
        }
        crate::api::drop_unmakeable(&mut ex);
    }
    Err(ExploreError::HarnessBuild {
        krate: ex.crate_name.clone(),
        message: format!("still failing after {MAX_ROUNDS} rounds of taking out calls"),
        dir: dir.to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_package_name_is_read_from_the_package_section() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("Cargo.toml"),
            "[lib]\nname = \"other\"\n\n[package]\nname = \"my-crate\"\nversion = \"0.1.0\"\n",
        )
        .unwrap();
        assert_eq!(package_name(dir.path()).unwrap(), "my-crate");
    }
}
