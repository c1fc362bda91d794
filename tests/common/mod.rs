//! Helpers shared by the integration tests: build the fixture programs once, run the real
//! `carve` binary, work on copies of fixture crates in temporary directories.

#![allow(dead_code)]

pub mod inprocess;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use carve_storage::{Call, FunctionInfo, Store, Trace, Value};

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string())
}

/// The debug binary of a Rust fixture, building the fixtures workspace the first time.
pub fn fixture_bin(name: &str) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let status = Command::new(cargo())
            .args(["build", "--quiet", "--manifest-path"])
            .arg(repo().join("fixtures/Cargo.toml"))
            // Where the binaries are looked for, whatever CARGO_TARGET_DIR the tests run with.
            .arg("--target-dir")
            .arg(repo().join("fixtures/target"))
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building the fixtures failed");
    });
    repo().join("fixtures/target/debug").join(name)
}

/// The `c_basic` fixture, compiled with `cc -g -O0` the first time.
pub fn c_basic_bin() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let out = repo().join("fixtures/target/c");
            std::fs::create_dir_all(&out).unwrap();
            let bin = out.join("c_basic");
            let status = Command::new("cc")
                .args(["-g", "-O0", "-o"])
                .arg(&bin)
                .arg(repo().join("fixtures/c_basic/c_basic.c"))
                .status()
                .expect("cc runs");
            assert!(status.success(), "compiling c_basic failed");
            bin
        })
        .clone()
}

pub fn carve() -> Command {
    Command::new(env!("CARGO_BIN_EXE_carve"))
}

/// `carve record --db DB [extra...] -- program args...`
pub fn record(db: &Path, extra: &[&str], program: &Path, args: &[&str]) -> Output {
    output_within(
        carve()
            .arg("record")
            .arg("--db")
            .arg(db)
            .args(extra)
            .arg("--")
            .arg(program)
            .args(args),
        RECORD_LIMIT,
    )
}

/// How long a recording in these tests may take before it counts as hung: a hang fails its
/// test with what was printed so far instead of stalling the whole suite (a slow CI machine
/// records the slowest test here, `cargo test` under carve, in well under a minute).
pub const RECORD_LIMIT: std::time::Duration = std::time::Duration::from_secs(600);

/// Runs `cmd` to its end like [`Command::output`]; when it is still running after `limit`,
/// kills it and everything it started (its own process group) and fails the test.
pub fn output_within(cmd: &mut Command, limit: std::time::Duration) -> Output {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    use std::process::Stdio;
    let mut child = cmd
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the command runs");
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let deadline = std::time::Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let group = nix::unistd::Pid::from_raw(-(child.id() as i32));
            let _ = nix::sys::signal::kill(group, nix::sys::signal::Signal::SIGKILL);
            let _ = child.wait();
            let (out, err) = (out.join().unwrap(), err.join().unwrap());
            panic!(
                "{cmd:?} still ran after {limit:?} (hung?), killed.\nstdout: {}\nstderr: {}",
                String::from_utf8_lossy(&out),
                String::from_utf8_lossy(&err)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The latest run stored in `db`, every call of it: the calls counted as repeats of a stored
/// one made again (`Store::load_trace_whole`), as `--all-calls` would have stored them.
pub fn load(db: &Path) -> Trace {
    let store = Store::open(db).expect("trace opens");
    let run = store.latest_run().unwrap().expect("a run was stored");
    store.load_trace_whole(run).unwrap()
}

pub fn function<'t>(trace: &'t Trace, path: &str) -> &'t FunctionInfo {
    trace
        .functions
        .iter()
        .find(|f| f.path == path)
        .unwrap_or_else(|| panic!("{path} was not traced"))
}

/// Calls of the function at `path`, in start order.
pub fn calls_of<'t>(trace: &'t Trace, path: &str) -> Vec<&'t Call> {
    let id = function(trace, path).id;
    trace.calls.iter().filter(|c| c.function == id).collect()
}

pub fn arg<'c>(call: &'c Call, name: &str) -> &'c Value {
    &call
        .args
        .iter()
        .find(|a| a.name == name)
        .unwrap_or_else(|| panic!("no argument {name} in {call:?}"))
        .value
}

pub fn int(v: i128, ty: &str) -> Value {
    Value::Int {
        ty: ty.into(),
        value: v,
    }
}

pub fn uint(v: u128, ty: &str) -> Value {
    Value::Uint {
        ty: ty.into(),
        value: v,
    }
}

pub fn float(v: f64) -> Value {
    Value::Float {
        ty: "f64".into(),
        bits: v.to_bits(),
    }
}

pub fn string(ty: &str, s: &str) -> Value {
    Value::Str {
        ty: ty.into(),
        value: s.into(),
        truncated: false,
    }
}

/// A copy of fixture crate `name` (without build output) in a new temporary directory.
pub fn copy_fixture(name: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dest = tmp.path().join(name);
    copy_dir(&repo().join("fixtures").join(name), &dest);
    (tmp, dest)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == "target" {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            copy_dir(&path, &to.join(&name));
        } else {
            std::fs::copy(&path, to.join(&name)).unwrap();
        }
    }
}

/// `cargo <args>` in `dir` with its own target directory inside it.
pub fn cargo_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(cargo())
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env_remove("RUSTFLAGS")
        .output()
        .expect("cargo runs")
}

/// Builds the crate copy at `dir`, records its program `bin` with `args`, and carves (verified)
/// tests into its `tests/`; returns what `carve generate` printed. Every fixture meets issue 4's
/// bar, so this also asserts that at least 95% of the in-scope calls got a passing test.
pub fn carve_tests(dir: &Path, bin: &str, args: &[&str]) -> String {
    let db = build_and_record(dir, bin, args);
    let summary = generate_into_tests(dir, &db, &[]);
    let (in_scope, carved) = carved_share(&summary);
    assert!(
        carved * 100 >= in_scope * 95,
        "{bin}: {carved} of {in_scope} in-scope calls carved, below 95%: {summary}"
    );
    summary
}

/// Builds the crate at `dir` and records its program `bin` run with `args` into
/// `dir/trace.db`; returns the trace's path.
pub fn build_and_record(dir: &Path, bin: &str, args: &[&str]) -> PathBuf {
    let built = cargo_in(dir, &["build", "--quiet"]);
    assert!(built.status.success(), "{}", stderr(&built));
    let db = dir.join("trace.db");
    let out = record(&db, &[], &dir.join("target/debug").join(bin), args);
    assert!(out.status.code().is_some(), "{}", stderr(&out));
    db
}

/// `carve generate` (verified, every verified test kept: `--no-distil`, with `extra` options)
/// from `db` into `dir/tests`, building in `dir/target`; returns what it printed. The tests
/// that use it are about what a rule writes for a call, not about which tests are kept.
pub fn generate_into_tests(dir: &Path, db: &Path, extra: &[&str]) -> String {
    generate_with(dir, db, &[&["--no-distil"], extra].concat())
}

/// `carve generate --distil` (verified and distilled, with `extra` options) from `db` into
/// `dir/tests`, building in `dir/target`; returns what it printed.
pub fn generate_distilled_into_tests(dir: &Path, db: &Path, extra: &[&str]) -> String {
    generate_with(dir, db, &[&["--distil"], extra].concat())
}

/// `carve generate --db DB --out DIR/tests ARGS...`, building in `dir/target`.
fn generate_with(dir: &Path, db: &Path, extra: &[&str]) -> String {
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    let generated = carve()
        .args(["generate", "--db"])
        .arg(db)
        .arg("--out")
        .arg(dir.join("tests"))
        .args(extra)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .output()
        .unwrap();
    assert!(generated.status.success(), "{}", stderr(&generated));
    stdout(&generated)
}

/// Writes `files` (path relative to `dir`, contents) under `dir`: a crate made up by a test.
pub fn write_tree(dir: &Path, files: &[(&str, &str)]) {
    for (rel, text) in files {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

/// (in-scope calls, calls covered by a passing test) from `carve generate`'s summary line.
pub fn carved_share(summary: &str) -> (usize, usize) {
    let number_after = |label: &str| -> usize {
        let at = summary
            .find(label)
            .unwrap_or_else(|| panic!("{label} in {summary}"));
        summary[at + label.len()..]
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("a number after {label} in {summary}"))
    };
    (number_after("in scope: "), number_after("(covering "))
}

/// Compiles `source` (a one-file Rust program) with `rustc -g` into `dir/name`.
pub fn rustc_program(dir: &Path, name: &str, edition: &str, source: &str) -> PathBuf {
    compiled(
        dir,
        &format!("{name}.rs"),
        "rustc",
        &["-g", "--edition", edition],
        source,
    )
}

/// Writes `source` to `dir/file` and compiles it with `compiler flags... -o dir/STEM file`
/// (`rustc` or `cc`); returns the program's path.
pub fn compiled(dir: &Path, file: &str, compiler: &str, flags: &[&str], source: &str) -> PathBuf {
    let src = dir.join(file);
    std::fs::write(&src, source).unwrap();
    let bin = dir.join(src.file_stem().unwrap());
    let built = Command::new(compiler)
        .args(flags)
        .arg("-o")
        .arg(&bin)
        .arg(&src)
        .status()
        .unwrap_or_else(|e| panic!("{compiler} runs: {e}"));
    assert!(built.success(), "{compiler} compiles {file}");
    bin
}

/// `cargo test --tests --no-fail-fast` in the crate at `dir`: whether it passed, and its output.
pub fn cargo_test(dir: &Path) -> (bool, String) {
    let test = cargo_in(dir, &["test", "--tests", "--no-fail-fast"]);
    (
        test.status.success(),
        format!("{}\n{}", stdout(&test), stderr(&test)),
    )
}

/// Replaces the first `from` in the file at `path` by `to`; the text must be there.
pub fn edit(path: &Path, from: &str, to: &str) {
    let source = std::fs::read_to_string(path).unwrap();
    let changed = source.replacen(from, to, 1);
    assert_ne!(source, changed, "{from:?} was found in {}", path.display());
    std::fs::write(path, changed).unwrap();
}

/// `carve generate --no-verify --db DB --out OUT [extra...]`, as run (its output, not checked).
pub fn generate_unverified(db: &Path, out: &Path, extra: &[&str]) -> Output {
    carve()
        .args(["generate", "--no-verify", "--db"])
        .arg(db)
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .expect("carve runs")
}

/// A one-crate workspace carved by [`carve_small_crate`].
pub struct SmallCrate {
    /// Holds the directory: keep it alive as long as the crate is used.
    pub tmp: tempfile::TempDir,
    pub dir: PathBuf,
    pub db: PathBuf,
    /// `carve record`'s output.
    pub recorded: Output,
    /// What `carve generate` printed.
    pub summary: String,
}

/// Writes a one-crate workspace `name` (library `lib`, program `main`) into a temporary
/// directory, builds it, records its program with `record_flags` (`--filter ...`) and carves
/// verified tests into its `tests/`.
pub fn carve_small_crate(name: &str, lib: &str, main: &str, record_flags: &[&str]) -> SmallCrate {
    carve_small_crate_with(name, lib, main, record_flags, &[])
}

/// [`carve_small_crate`], with `generate_flags` given to `carve generate`
/// (`--max-per-function 2`).
pub fn carve_small_crate_with(
    name: &str,
    lib: &str,
    main: &str,
    record_flags: &[&str],
    generate_flags: &[&str],
) -> SmallCrate {
    small_crate(name, lib, main, record_flags, |dir, db| {
        generate_into_tests(dir, db, generate_flags)
    })
}

/// [`carve_small_crate`] carved and distilled (`carve generate --distil` given
/// `generate_flags`).
pub fn carve_small_crate_distilled(
    name: &str,
    lib: &str,
    main: &str,
    record_flags: &[&str],
    generate_flags: &[&str],
) -> SmallCrate {
    small_crate(name, lib, main, record_flags, |dir, db| {
        generate_distilled_into_tests(dir, db, generate_flags)
    })
}

/// [`carve_small_crate`] recorded, not carved (`summary` is empty).
pub fn record_small_crate(name: &str, lib: &str, main: &str, record_flags: &[&str]) -> SmallCrate {
    small_crate(name, lib, main, record_flags, |_, _| String::new())
}

fn small_crate(
    name: &str,
    lib: &str,
    main: &str,
    record_flags: &[&str],
    generate: impl FnOnce(&Path, &Path) -> String,
) -> SmallCrate {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(name);
    let manifest = format!(
        "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n"
    );
    write_tree(
        &dir,
        &[
            ("Cargo.toml", &manifest),
            ("src/lib.rs", lib),
            ("src/main.rs", main),
        ],
    );
    let built = cargo_in(&dir, &["build", "--quiet"]);
    assert!(built.status.success(), "{}", stderr(&built));
    let db = dir.join("trace.db");
    let recorded = record(&db, record_flags, &dir.join("target/debug").join(name), &[]);
    assert!(recorded.status.code().is_some(), "{}", stderr(&recorded));
    let summary = generate(&dir, &db);
    SmallCrate {
        tmp,
        dir,
        db,
        recorded,
        summary,
    }
}

/// Asserts the carved file holds each `expected` piece of code.
pub fn assert_carved(file: &str, summary: &str, expected: &[&str]) {
    for piece in expected {
        assert!(file.contains(piece), "{piece} in {file}\n{summary}");
    }
}

/// The carved tests of the crate in `dir` pass; once `from` is replaced by `to` in its
/// `src/lib.rs`, a test whose name contains `failing` fails.
pub fn assert_pass_then_fail_after(dir: &Path, from: &str, to: &str, failing: &str) {
    let (ok, out) = cargo_test(dir);
    assert!(ok, "{out}");
    edit(&dir.join("src/lib.rs"), from, to);
    let (ok, out) = cargo_test(dir);
    assert!(!ok, "the changed unit must fail a test: {out}");
    assert!(out.contains(failing) && out.contains("FAILED"), "{out}");
}

/// A library whose one test checks `answer()` only on every other run (it counts its runs in a
/// file beside the crate): a transformation of `answer` is caught in some runs and not others.
pub const EVERY_OTHER_RUN_LIB: &str = r#"pub fn answer() -> u32 {
    42
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_answer_is_checked_every_other_run() {
        let answer = super::answer();
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("runs");
        let runs: u32 = std::fs::read_to_string(&file)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0)
            + 1;
        std::fs::write(&file, runs.to_string()).unwrap();
        if runs % 2 == 0 {
            assert_eq!(answer, 42);
        }
    }
}
"#;

/// The verdict of `function` forced to `value` in a `carve assess --format json` report.
pub fn transformation_verdict<'r>(
    report: &'r serde_json::Value,
    function: &str,
    value: &str,
) -> &'r serde_json::Value {
    report["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["function"] == function)
        .and_then(|f| {
            f["transformations"]
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["value"] == value)
        })
        .map(|t| &t["verdict"])
        .unwrap_or_else(|| panic!("no {function} -> {value} in {report:#}"))
}

/// `cargo carve ARGS` in `dir`, as cargo runs it (`cargo-carve carve ARGS`), with the copy's own
/// target directory and `env` set.
pub fn cargo_carve_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    output_within(
        Command::new(env!("CARGO_BIN_EXE_cargo-carve"))
            .arg("carve")
            .args(args)
            .current_dir(dir)
            .env("CARGO_TARGET_DIR", dir.join("target"))
            .env_remove("RUSTFLAGS")
            .envs(env.iter().copied())
            .stdin(std::process::Stdio::null()),
        RECORD_LIMIT,
    )
}
