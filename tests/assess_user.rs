//! `carve assess` as a new user meets it (issue 29), each on a small crate made up by the test:
//! a failing baseline names its tests and shows their output, the tests get no argument of
//! carve's, fieldless enums and each instance of a generic function are assessed, a function
//! returning `()` gets advice that fits it, no value that differs from run to run is ever
//! suggested, names are printed whole, functions no test reaches are listed and counted, and
//! `cargo carve assess` assesses the current package.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::*;

const MANIFEST: &str =
    "[package]\nname = \"NAME\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n";

/// A crate `name` in a new temporary directory whose `src/lib.rs` is `lib`.
fn small_crate(name: &str, lib: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(name);
    let manifest = MANIFEST.replace("NAME", name);
    write_tree(
        &dir,
        &[("Cargo.toml", manifest.as_str()), ("src/lib.rs", lib)],
    );
    (tmp, dir)
}

/// `carve assess --crate DIR --runs 1 ARGS`: the exit code, stdout and stderr.
fn assess(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = output_within(
        carve()
            .arg("assess")
            .arg("--crate")
            .arg(dir)
            .args(["--runs", "1"])
            .args(args),
        RECORD_LIMIT,
    );
    (out.status.code(), stdout(&out), stderr(&out))
}

/// The JSON report of `carve assess --crate DIR --runs 1 ARGS`.
fn report(dir: &Path, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["--format", "json"];
    all.extend_from_slice(args);
    let (code, out, err) = assess(dir, &all);
    assert_eq!(code, Some(0), "{err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"))
}

/// One line per transformation of `report`: `function -> value: verdict` (with the diagnosis
/// kind of an undetected one); a skipped function as `function: skipped`.
fn verdicts(report: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    for f in report["functions"].as_array().unwrap() {
        let name = f["function"].as_str().unwrap();
        if f["skipped"].is_string() {
            out.push(format!("{name}: skipped"));
        }
        for t in f["transformations"].as_array().unwrap() {
            let v = &t["verdict"];
            let verdict = match v["verdict"].as_str().unwrap() {
                "undetected" => format!("undetected {}", v["diagnosis"]["kind"].as_str().unwrap()),
                other => other.to_string(),
            };
            out.push(format!(
                "{name} -> {}: {verdict}",
                t["value"].as_str().unwrap()
            ));
        }
    }
    out
}

/// The diagnosis of `function -> value` in `report`.
fn diagnosis<'r>(
    report: &'r serde_json::Value,
    function: &str,
    value: &str,
) -> &'r serde_json::Value {
    &transformation_verdict(report, function, value)["diagnosis"]
}

/// A test that fails as the code is stops the assessment before anything is transformed: the
/// error names it, and its own output (the assertion, what it printed) is shown above.
#[test]
fn a_failing_test_is_named_with_its_output_when_the_tests_do_not_pass_as_they_are() {
    let (_tmp, dir) = small_crate(
        "drifted",
        r#"pub fn answer() -> u32 {
    41
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_answer_is_right() {
        println!("checking the answer");
        assert_eq!(super::answer(), 42, "the answer drifted");
    }

    #[test]
    fn the_answer_is_positive() {
        assert!(super::answer() > 0);
    }
}
"#,
    );
    let (code, out, err) = assess(&dir, &[]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(out, "");
    let error = err.lines().last().unwrap();
    assert!(
        error.starts_with("carve: error: the tests of ")
            && error.ends_with(
                " do not pass as they are (1 failed: tests::the_answer_is_right; their output is above): fix them before assessing them"
            ),
        "{err}"
    );
    assert!(
        err.contains("---- tests::the_answer_is_right stdout ----\nchecking the answer\n"),
        "{err}"
    );
    assert!(
        err.contains(
            "assertion `left == right` failed: the answer drifted\n  left: 41\n right: 42"
        ),
        "{err}"
    );
    // Only the failing test's output.
    assert!(!err.contains("the_answer_is_positive"), "{err}");
}

/// `cargo test` gives a test binary no argument: a test reading its command line sees none.
/// carve asks libtest for one test at a time through RUST_TEST_THREADS, and a test that reads
/// its command line runs with no filter either (the whole binary), so `verbose`, which only
/// that test calls and never checks, is undetected rather than "caught" by the filter.
#[test]
fn the_tests_get_no_argument_of_carve_s_and_one_reading_its_command_line_runs_unfiltered() {
    let (_tmp, dir) = small_crate(
        "cli",
        r#"/// The level the command line asks for: 1 unless its first argument says otherwise.
pub fn level() -> u32 {
    match std::env::args().nth(1) {
        None => 1,
        Some(a) => a.parse().unwrap_or(0),
    }
}

pub fn verbose() -> bool {
    false
}

pub fn twice(x: u32) -> u32 {
    x * 2
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_level_is_one_without_arguments() {
        let _ = super::verbose();
        assert_eq!(super::level(), 1);
    }

    #[test]
    fn twice_two_is_four() {
        assert_eq!(super::twice(2), 4);
    }
}
"#,
    );
    let report = report(&dir, &[]);
    assert_eq!(
        verdicts(&report),
        [
            "cli::level -> 0: detected",
            "cli::level -> 1: undetected no-infection",
            "cli::twice -> 0: detected",
            "cli::twice -> 1: detected",
            "cli::verbose -> true: undetected weak-oracle",
            "cli::verbose -> false: undetected no-infection",
        ]
    );
}

/// `Ordering` is a fieldless enum: each variant is a value carve can return without an
/// allocator. Each instance of a generic function is assessed on its own, with values of its
/// own return type (`double<f64>` returns `0.0`, `double<i32>` returns `0`).
#[test]
fn fieldless_enums_and_each_instance_of_a_generic_function_are_assessed() {
    let (_tmp, dir) = small_crate(
        "shapes",
        r#"use std::cmp::Ordering;

pub fn compare(a: u32, b: u32) -> Ordering {
    a.cmp(&b)
}

pub fn double<T: Copy + std::ops::Add<Output = T>>(x: T) -> T {
    x + x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_less_than_two() {
        assert_eq!(compare(1, 2), Ordering::Less);
    }

    #[test]
    fn doubles() {
        assert_eq!(double(2), 4);
        assert_eq!(double(1.5f64), 3.0);
    }
}
"#,
    );
    let report = report(&dir, &[]);
    assert_eq!(
        verdicts(&report),
        [
            "shapes::compare -> Ordering::Less: undetected no-infection",
            "shapes::compare -> Ordering::Equal: detected",
            "shapes::compare -> Ordering::Greater: detected",
            "shapes::double<f64> -> 0.0: detected",
            "shapes::double<f64> -> 1.0: detected",
            "shapes::double<i32> -> 0: detected",
            "shapes::double<i32> -> 1: detected",
        ]
    );
    let greater = &report["functions"][0]["transformations"][2]["verdict"];
    assert_eq!(
        greater["reason"],
        "failed: assertion `left == right` failed (left: Greater, right: Less)"
    );
}

/// A `Drop` impl that changes nothing carve sees (it counts in a static) is not told to
/// return "anything but ()"; a method of `Wrapper<kind::Small>` is named whole, not
/// `Small>::size`; and a value holding a hasher whose keys differ in every run is never
/// suggested as a value to assert: only its part that changed and is the same in every run.
#[test]
fn advice_fits_unit_functions_names_are_whole_and_values_that_differ_between_runs_are_never_suggested(
) {
    let (_tmp, dir) = small_crate(
        "pool",
        r#"use std::collections::hash_map::{DefaultHasher, RandomState};
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicUsize, Ordering};

pub static RELEASED: AtomicUsize = AtomicUsize::new(0);

pub struct Token(pub u32);

impl Drop for Token {
    fn drop(&mut self) {
        RELEASED.fetch_add(1, Ordering::SeqCst);
    }
}

pub mod kind {
    pub struct Small;
}

pub struct Wrapper<T>(pub T);

impl Wrapper<kind::Small> {
    pub fn size(&self) -> usize {
        1
    }
}

/// A table with a hasher of its own: its keys differ in every run of the program.
pub struct Table {
    pub hasher: DefaultHasher,
    pub len: usize,
}

pub fn count(items: &[u32]) -> usize {
    items.len()
}

pub fn table(items: &[u32]) -> Table {
    Table {
        hasher: RandomState::new().build_hasher(),
        len: count(items),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_can_be_dropped() {
        drop(Token(1));
    }

    #[test]
    fn a_small_wrapper_has_a_size() {
        let _ = Wrapper(kind::Small).size();
    }

    #[test]
    fn a_table_can_be_made() {
        let _ = table(&[1, 2, 3]);
    }
}
"#,
    );
    let report = report(&dir, &[]);
    let drop = "<pool::Token as core::ops::drop::Drop>::drop";
    let d = diagnosis(&report, drop, "()");
    assert_eq!(d["kind"], "no-infection");
    assert_eq!(
        d["evidence"],
        format!("no call of {drop} under the tests (1 in all) changed `self` or a `&mut` argument: skipping its body changes nothing carve sees")
    );
    assert_eq!(
        d["suggestion"],
        format!("skipping {drop} only leaks what it would release: if releasing it matters, check it in a test (a count of drops, a file closed, a lock released); if not, leave it out of the assessment (--filter)")
    );
    let d = diagnosis(&report, "pool::Wrapper<pool::kind::Small>::size", "0");
    assert_eq!(
        d["evidence"],
        "tests::a_small_wrapper_has_a_size: pool::Wrapper<pool::kind::Small>::size returned 1 and now returns 0, and the test asserts nothing about it"
    );
    assert_eq!(
        d["suggestion"],
        "check the result: assert_eq!(pool::Wrapper<pool::kind::Small>::size(..), 1)"
    );
    let d = diagnosis(&report, "pool::count", "0");
    assert_eq!(d["kind"], "weak-oracle");
    assert_eq!(
        d["evidence"],
        "tests::a_table_can_be_made: pool::table returned a value whose `.len` was 3 and now is 0, and the test asserts nothing about it"
    );
    assert_eq!(
        d["suggestion"],
        "check the result's `.len`, which changed and is the same in every run: assert_eq!(pool::table(..).len, 3)"
    );
}

/// A function no test calls is in no test binary (rustc compiles only what the tests reach),
/// but the sources declare it: it is listed as not reached by any test, with the values it
/// would be forced to return, and counted as not detected in the score (cargo mutants counts
/// such mutants as missed). The one test's own function stays out of the report.
#[test]
fn functions_no_test_reaches_are_listed_as_not_reached_and_counted_in_the_score() {
    let (_tmp, dir) = small_crate(
        "unreached",
        r#"pub fn used(x: u32) -> u32 {
    x + 1
}

pub fn never_called(x: u32) -> u32 {
    x * 3
}

pub mod flags {
    pub fn enabled() -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn used_adds_one() {
        assert_eq!(super::used(1), 2);
    }
}
"#,
    );
    let report = report(&dir, &[]);
    assert_eq!(
        verdicts(&report),
        [
            "unreached::flags::enabled -> true: not_reached",
            "unreached::flags::enabled -> false: not_reached",
            "unreached::never_called -> 0: not_reached",
            "unreached::never_called -> 1: not_reached",
            "unreached::used -> 0: detected",
            "unreached::used -> 1: detected",
        ]
    );
    let never = &report["functions"][1];
    assert_eq!(never["line"], 5);
    assert!(never["file"].as_str().unwrap().ends_with("src/lib.rs"));
    let summary = &report["summary"];
    assert_eq!(summary["not_reached"], 4);
    assert_eq!(summary["not_reached_functions"], 2);
    assert_eq!(summary["score"], 100.0 * 2.0 / 6.0);
    let (_, text, _) = assess(&dir, &[]);
    assert!(
        text.contains("NOT REACHED  unreached::never_called -> 0, 1: not reached by any test\n"),
        "{text}"
    );
    assert!(
        text.contains(", 4 not reached by any test (2 functions), "),
        "{text}"
    );
}

/// `cargo carve assess` in a package's directory assesses that package, as `cargo test` tests
/// it, without `--crate`.
#[test]
fn cargo_carve_assess_assesses_the_current_package() {
    let (_tmp, dir) = small_crate(
        "current",
        r#"pub fn one() -> u32 {
    1
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_is_one() {
        assert_eq!(super::one(), 1);
    }
}
"#,
    );
    let out = output_within(
        Command::new(env!("CARGO_BIN_EXE_cargo-carve"))
            .args(["carve", "assess", "--runs", "1", "--format", "json"])
            .current_dir(dir.join("src"))
            .stdin(Stdio::null()),
        RECORD_LIMIT,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        verdicts(&report),
        [
            "current::one -> 0: detected",
            "current::one -> 1: undetected no-infection"
        ]
    );
}
