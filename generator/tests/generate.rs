//! End to end: carve tests for a real little crate from a hand-built trace, then let cargo judge them.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use carve_generator::{generate, GenerateError, GenerateOptions};
use carve_storage::{
    Arg, Call, CallId, FunctionId, FunctionInfo, Language, Outcome, Run, RunId, RunInfo, Trace,
    Value,
};

const LIB_RS: &str = r#"//! A tiny crate to carve tests for.

pub mod m {
    pub fn add(a: i32, b: i32) -> i32 {
        a + b
    }

    pub fn greet(name: &str) -> String {
        format!("Hello, {name}!")
    }

    pub fn is_big(n: u64) -> bool {
        n > 100
    }

    pub fn half(x: f64) -> f64 {
        x / 2.0
    }

    pub(crate) fn hidden() -> u8 {
        7
    }
}

pub struct Counter;

impl Counter {
    pub fn start() -> u32 {
        1
    }

    pub fn label(c: char, n: usize) -> String {
        format!("{c}{n}")
    }
}

pub fn noop(_s: String) {}
"#;

const MAIN_RS: &str = "fn main() {\n    println!(\"{}\", tiny_calc::m::add(2, 3));\n}\n";

/// A crate on disk plus the trace of a pretend run of its binary.
struct Fixture {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    trace: Trace,
}

impl Fixture {
    fn new() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("tiny-calc");
        fs::create_dir_all(dir.join("src")).unwrap();
        fs::create_dir_all(dir.join("tests")).unwrap();
        fs::write(
            dir.join("Cargo.toml"),
            "[package]\nname = \"tiny-calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
        )
        .unwrap();
        fs::write(dir.join("src/lib.rs"), LIB_RS).unwrap();
        fs::write(dir.join("src/main.rs"), MAIN_RS).unwrap();
        let trace = trace(&dir);
        Fixture {
            _tmp: tmp,
            dir,
            trace,
        }
    }

    fn options(&self) -> GenerateOptions {
        GenerateOptions {
            out_dir: self.dir.join("tests"),
            crate_dir: None,
            templates: None,
            verify: None,
            plan: Default::default(),
            progress: None,
            distil: None,
            interrupt: Default::default(),
        }
    }

    /// `cargo test` in the fixture crate, with its own target directory.
    fn cargo_test(&self) -> Output {
        Command::new(env!("CARGO"))
            .args(["test", "--quiet", "--offline"])
            .current_dir(&self.dir)
            .env("CARGO_TARGET_DIR", self.dir.join("target"))
            .env_remove("RUSTFLAGS")
            .output()
            .unwrap()
    }
}

fn function(id: u32, path: &str, file: &Path) -> FunctionInfo {
    FunctionInfo {
        id: FunctionId(id),
        path: path.to_string(),
        name: path.rsplit("::").next().unwrap_or(path).to_string(),
        linkage_name: None,
        language: Language::Rust,
        decl_file: Some(file.display().to_string()),
        decl_line: Some(1),
        low_pc: 0x1000 + u64::from(id) * 0x10,
        params: Vec::new(),
        return_type: None,
    }
}

fn int(ty: &str, value: i128) -> Value {
    Value::Int {
        ty: ty.to_string(),
        value,
    }
}

fn uint(ty: &str, value: u128) -> Value {
    Value::Uint {
        ty: ty.to_string(),
        value,
    }
}

fn float(x: f64) -> Value {
    Value::Float {
        ty: "f64".to_string(),
        bits: x.to_bits(),
    }
}

fn text(ty: &str, s: &str) -> Value {
    Value::Str {
        ty: ty.to_string(),
        value: s.to_string(),
        truncated: false,
    }
}

/// The functions of the fixture crate, declared where the trace says.
fn functions(dir: &Path) -> Vec<FunctionInfo> {
    let lib = dir.join("src/lib.rs");
    let main = dir.join("src/main.rs");
    vec![
        function(1, "tiny_calc::main", &main),
        function(2, "tiny_calc::m::add", &lib),
        function(3, "tiny_calc::m::greet", &lib),
        function(4, "tiny_calc::m::is_big", &lib),
        function(5, "tiny_calc::m::half", &lib),
        function(6, "tiny_calc::m::hidden", &lib),
        function(7, "tiny_calc::Counter::start", &lib),
        function(8, "tiny_calc::Counter::label", &lib),
        function(9, "tiny_calc::noop", &lib),
    ]
}

/// Call `id` of function `function` (under `parent`, depth 1, or a root), its arguments named
/// `arg0`, `arg1`...
fn call(
    id: CallId,
    parent: Option<CallId>,
    function: u32,
    args: Vec<Value>,
    outcome: Outcome,
    ret: Option<Value>,
) -> Call {
    Call {
        id,
        parent,
        function: FunctionId(function),
        thread: 100,
        depth: u32::from(parent.is_some()),
        args: args
            .into_iter()
            .enumerate()
            .map(|(i, value)| Arg {
                name: format!("arg{i}"),
                value,
            })
            .collect(),
        outcome,
        ret,
        after: Vec::new(),
        objects: Vec::new(),
        touches: Vec::new(),
    }
}

/// The calls of a pretend run: `main`, then calls of each function under it.
fn calls() -> Vec<Call> {
    let mut calls = Vec::new();
    let mut push = |function: u32, args: Vec<Value>, outcome: Outcome, ret: Option<Value>| {
        let id = CallId(calls.len() as u64 + 1);
        let parent = (function != 1).then_some(CallId(1));
        calls.push(call(id, parent, function, args, outcome, ret));
    };
    let returned = Outcome::Returned;
    push(1, vec![], returned.clone(), None);
    push(
        2,
        vec![int("i32", 2), int("i32", 3)],
        returned.clone(),
        Some(int("i32", 5)),
    );
    push(
        2,
        vec![int("i32", 2), int("i32", 3)],
        returned.clone(),
        Some(int("i32", 5)),
    );
    push(
        2,
        vec![int("i32", -7), int("i32", 7)],
        returned.clone(),
        Some(int("i32", 0)),
    );
    push(
        3,
        vec![text("&str", "Ada \"the\" first\n")],
        returned.clone(),
        Some(text("alloc::string::String", "Hello, Ada \"the\" first\n!")),
    );
    push(
        4,
        vec![uint("u64", 101)],
        returned.clone(),
        Some(Value::Bool { value: true }),
    );
    push(
        4,
        vec![uint("u64", 3)],
        returned.clone(),
        Some(Value::Bool { value: false }),
    );
    push(5, vec![float(5.0)], returned.clone(), Some(float(2.5)));
    push(
        5,
        vec![float(f64::NAN)],
        returned.clone(),
        Some(float(f64::NAN)),
    );
    push(5, vec![float(0.1)], returned.clone(), Some(float(0.05)));
    push(6, vec![], returned.clone(), Some(uint("u8", 7)));
    push(7, vec![], returned.clone(), Some(uint("u32", 1)));
    push(
        8,
        vec![Value::Char { value: '\'' }, uint("usize", 3)],
        returned.clone(),
        Some(text("alloc::string::String", "'3")),
    );
    push(
        9,
        vec![text("alloc::string::String", "bye")],
        returned.clone(),
        None,
    );
    calls
}

/// Calls that cannot become tests: one that panicked, one whose argument was not read. Their ids
/// follow `last`, under `parent`.
fn failing_calls(last: u64, parent: CallId) -> Vec<Call> {
    let call = |n: u64, function: u32, args: Vec<Value>, outcome: Outcome, ret: Option<Value>| {
        call(CallId(last + n), Some(parent), function, args, outcome, ret)
    };
    vec![
        call(
            1,
            2,
            vec![int("i32", i32::MAX.into()), int("i32", 1)],
            Outcome::Panicked {
                message: Some("attempt to add with overflow".to_string()),
            },
            None,
        ),
        call(
            2,
            3,
            vec![Value::Unavailable {
                ty: "&str".to_string(),
                reason: "optimized out".to_string(),
            }],
            Outcome::Returned,
            Some(text("alloc::string::String", "?")),
        ),
    ]
}

fn trace(dir: &Path) -> Trace {
    let functions = functions(dir);
    let mut calls = calls();
    let parent = calls[0].id;
    calls.extend(failing_calls(calls.len() as u64, parent));
    Trace {
        run: Run {
            id: RunId(4),
            info: RunInfo {
                program: dir.join("target/debug/tiny-calc").display().to_string(),
                args: vec![],
                cwd: dir.display().to_string(),
                pid: 4242,
                started_at_ms: 0,
                filters: vec![],
                excludes: vec![],
                crates: vec![],
                carve_version: "0.1.0".to_string(),
                distinct_calls: false,
                features: Vec::new(),
            },
            end: None,
        },
        functions,
        calls,
        objects: Vec::new(),
        file_reads: Vec::new(),
    }
}

#[test]
fn carved_tests_pass_against_the_recorded_code_and_fail_when_it_changes() {
    let fx = Fixture::new();
    let report = generate(&fx.trace, &fx.options()).unwrap();

    assert_eq!(report.crate_name, "tiny_calc");
    assert_eq!(
        report.files,
        [
            fx.dir.join("tests/carved_tiny_calc.rs"),
            fx.dir.join("tests/carved_tiny_calc_m.rs")
        ]
    );
    assert_eq!(report.summary.in_scope, 14);
    // add(i32::MAX, 1) panicked in the recording: it is carved as a #[should_panic] test.
    assert_eq!(report.summary.calls_carved, 13);
    assert_eq!(report.summary.tests_written, 12);
    assert_eq!(
        report.summary.skipped,
        BTreeMap::from([("undecoded".to_string(), 1)])
    );
    assert_eq!(report.summary.private_calls, 1);
    assert_eq!(
        report.summary.unsupported,
        BTreeMap::from([("binary only".to_string(), 1)])
    );
    assert_eq!(
        report.summary_line(),
        "public API: 13 of 14 recorded calls carved into unverified tests (93%); outside it: 2 calls (private helpers, closures...), reached through the public calls above them; in scope: 14 calls; tests written: 12 (covering 13 calls); skipped: 1 (undecoded 1); bare checks left: 0; private: 1 calls; not supported yet: 1 calls (binary only 1)"
    );

    let passing = fx.cargo_test();
    assert!(
        passing.status.success(),
        "carved tests should pass:\n{}\n{}",
        String::from_utf8_lossy(&passing.stdout),
        String::from_utf8_lossy(&passing.stderr)
    );

    let lib = fs::read_to_string(fx.dir.join("src/lib.rs")).unwrap();
    fs::write(
        fx.dir.join("src/lib.rs"),
        lib.replace("a + b\n", "a + b + 1\n"),
    )
    .unwrap();
    let failing = fx.cargo_test();
    let stdout = String::from_utf8_lossy(&failing.stdout);
    assert!(
        !failing.status.success(),
        "a changed add must fail its carved tests:\n{stdout}"
    );
    assert!(stdout.contains("add_returns_5"), "{stdout}");
}

#[test]
fn the_generated_module_file_matches_the_snapshot_and_is_stable() {
    let fx = Fixture::new();
    generate(&fx.trace, &fx.options()).unwrap();
    let first = fs::read_to_string(fx.dir.join("tests/carved_tiny_calc_m.rs")).unwrap();
    let root = fs::read_to_string(fx.dir.join("tests/carved_tiny_calc.rs")).unwrap();
    insta::assert_snapshot!("carved_tiny_calc_m", first);
    insta::assert_snapshot!("carved_tiny_calc", root);

    generate(&fx.trace, &fx.options()).unwrap();
    let second = fs::read_to_string(fx.dir.join("tests/carved_tiny_calc_m.rs")).unwrap();
    assert_eq!(first, second);
    let leftovers: Vec<_> = fs::read_dir(fx.dir.join("tests"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with("carved_"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn an_out_dir_that_does_not_exist_is_refused_with_the_fix() {
    let fx = Fixture::new();
    let opts = GenerateOptions {
        out_dir: fx.dir.join("no-such-dir"),
        ..fx.options()
    };
    let err = generate(&fx.trace, &opts).unwrap_err();
    assert!(matches!(err, GenerateError::OutDirNotADirectory { .. }));
    assert!(
        err.to_string().contains("create it or point --out"),
        "{err}"
    );
}

#[test]
fn a_trace_without_source_files_is_carved_for_the_crate_holding_out() {
    let fx = Fixture::new();
    let mut trace = fx.trace.clone();
    for f in &mut trace.functions {
        f.decl_file = None;
    }
    let report = generate(&trace, &fx.options()).unwrap();
    assert_eq!(report.crate_dir, fx.dir.canonicalize().unwrap());
    assert_eq!(
        report.summary.tests_written, 12,
        "11 returned calls and one that panicked"
    );
    assert_eq!(
        report.summary.unsupported,
        BTreeMap::from([("not found in the source".to_string(), 1)])
    );
}

#[test]
fn a_trace_whose_sources_are_in_another_crate_is_refused_unless_the_crate_is_named() {
    let fx = Fixture::new();
    let elsewhere = Fixture::new();
    let err = generate(
        &elsewhere.trace,
        &GenerateOptions {
            out_dir: fx.dir.join("tests"),
            ..fx.options()
        },
    )
    .unwrap_err();
    assert!(matches!(err, GenerateError::CrateElsewhere { .. }), "{err}");
    let line = err.to_string();
    assert!(
        line.contains(&elsewhere.dir.display().to_string())
            && line.contains(&fx.dir.canonicalize().unwrap().display().to_string())
            && line.contains("pass --crate DIR"),
        "{line}"
    );
    assert_eq!(fs::read_dir(fx.dir.join("tests")).unwrap().count(), 0);

    // Named with --crate, the crate is the user's choice.
    let report = generate(
        &elsewhere.trace,
        &GenerateOptions {
            crate_dir: Some(elsewhere.dir.clone()),
            out_dir: fx.dir.join("tests"),
            ..fx.options()
        },
    )
    .unwrap();
    assert_eq!(report.summary.tests_written, 12);
}

#[test]
fn modules_without_tests_get_no_file() {
    let fx = Fixture::new();
    let mut trace = fx.trace.clone();
    trace.calls.retain(|c| c.function == FunctionId(7));
    let report = generate(&trace, &fx.options()).unwrap();
    assert_eq!(report.files, [fx.dir.join("tests/carved_tiny_calc.rs")]);
    assert!(!fx.dir.join("tests/carved_tiny_calc_m.rs").exists());
}

#[test]
fn a_broken_template_override_writes_nothing() {
    let fx = Fixture::new();
    let templates = fx.dir.join("templates");
    fs::create_dir_all(&templates).unwrap();
    fs::write(templates.join("test_file.rs.tera"), "{% if %}").unwrap();
    let opts = GenerateOptions {
        templates: Some(templates),
        ..fx.options()
    };
    let err = generate(&fx.trace, &opts).unwrap_err();
    assert!(err.to_string().contains("test_file.rs.tera"), "{err}");
    assert_eq!(fs::read_dir(fx.dir.join("tests")).unwrap().count(), 0);
}

#[test]
fn verification_takes_out_a_test_that_fails_against_the_code_and_says_why() {
    let fx = Fixture::new();
    // The code no longer does what was recorded for `add`.
    let lib = fx.dir.join("src/lib.rs");
    let source = fs::read_to_string(&lib).unwrap();
    fs::write(&lib, source.replacen("a + b", "a + b + 1", 1)).unwrap();
    let opts = GenerateOptions {
        verify: Some(carve_generator::Verify {
            cargo: PathBuf::from(env!("CARGO")),
            runs: 2,
            timeout: std::time::Duration::from_secs(600),
            features: Vec::new(),
        }),
        ..fx.options()
    };
    let report = generate(&fx.trace, &opts).unwrap();

    assert!(!report.quarantined.is_empty());
    assert!(
        report
            .quarantined
            .iter()
            .all(|q| q.test.starts_with("add_")),
        "{:?}",
        report.quarantined
    );
    assert!(
        report.quarantined[0]
            .reason
            .starts_with("fails against the recorded code"),
        "{:?}",
        report.quarantined
    );
    assert_eq!(report.verified_runs, Some(2));
    assert!(report
        .summary
        .skipped
        .contains_key(carve_generator::FAILED_VERIFICATION));
    assert!(
        report
            .summary_line()
            .contains("passing after verify (2 runs)"),
        "{}",
        report.summary_line()
    );
    let listed =
        fs::read_to_string(fx.dir.join("tests").join(carve_generator::QUARANTINE_FILE)).unwrap();
    assert!(listed.contains("`add_"), "{listed}");
    // What is left passes.
    let test = fx.cargo_test();
    assert!(
        test.status.success(),
        "{}",
        String::from_utf8_lossy(&test.stdout)
    );
}

#[test]
fn progress_is_told_the_calls_planned_the_tests_carved_then_each_verification_run_of_each_file() {
    let fx = Fixture::new();
    let steps = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = steps.clone();
    let opts = GenerateOptions {
        verify: Some(carve_generator::Verify {
            cargo: PathBuf::from(env!("CARGO")),
            runs: 2,
            timeout: std::time::Duration::from_secs(600),
            features: Vec::new(),
        }),
        progress: Some(carve_generator::Progress::new(move |step| {
            seen.lock().unwrap().push(step.clone())
        })),
        ..fx.options()
    };
    let report = generate(&fx.trace, &opts).unwrap();
    let steps = steps.lock().unwrap().clone();

    let files: Vec<String> = report
        .files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files.len(), 2, "{files:?}");
    // Planning is told every 256 calls, from the first: once for this small trace.
    let mut expected = vec![
        carve_generator::Step::Planning {
            done: 0,
            total: fx.trace.calls.len(),
        },
        carve_generator::Step::Carved {
            tests: report.summary.tests_written,
            files: 2,
        },
    ];
    for (i, file) in files.iter().enumerate() {
        for done in 0..=2 {
            expected.push(carve_generator::Step::Verifying {
                file: file.clone(),
                done: i * 2 + done,
                total: 4,
            });
        }
    }
    assert_eq!(steps, expected);
}
