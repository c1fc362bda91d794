//! `carve explore` end to end on the `bounds` fixture: recorded through ptrace, explored with a
//! fixed seed; the kept tests compile and pass and reach outcomes the run never had, a panic
//! on unrecorded input is a finding whose reproducer really panics, and R, BE and BOBW all run.

mod common;

use std::path::Path;

use common::*;

/// `carve explore --db DB --out OUT ARGS...` in `dir`.
/// `carve explore` with `--all`: what these tests look at is what exploring keeps; distilling
/// the kept tests beside the carved ones has its own test (`explore_distilled`).
fn explore(dir: &Path, out: &str, args: &[&str]) -> std::process::Output {
    explore_distilled(dir, out, &[&["--all"], args].concat())
}

/// `carve explore --db trace.db --out OUT ARGS...` in `dir`, building in `dir/target`.
fn explore_distilled(dir: &Path, out: &str, args: &[&str]) -> std::process::Output {
    output_within(
        carve()
            .current_dir(dir)
            .args(["explore", "--db", "trace.db", "--out", out])
            .args(args)
            .env("CARGO_TARGET_DIR", dir.join("target")),
        RECORD_LIMIT,
    )
}

/// A small crate recorded with `--coverage`, explored with seed 1 for `runs` sequences into its
/// `tests/`: the crate and what `carve explore` said.
fn explore_small(name: &str, lib: &str, main: &str, runs: &str) -> (SmallCrate, String) {
    let c = record_small_crate(name, lib, main, &["--coverage"]);
    assert!(c.recorded.status.success(), "{}", stderr(&c.recorded));
    std::fs::create_dir_all(c.dir.join("tests")).unwrap();
    let out = explore(&c.dir, "tests", &["--runs", runs, "--seed", "1"]);
    let said = stdout(&out);
    assert!(out.status.success(), "{said}{}", stderr(&out));
    (c, said)
}

/// The kept tests of `explored_NAME.rs` in `dir`, after `explore_small` said it explored
/// `functions` functions and none was left out.
fn explored(dir: &std::path::Path, name: &str, said: &str, functions: usize) -> String {
    let explored = format!("explored {functions} functions (0 left out)");
    assert!(said.contains(&explored), "{said}");
    let file = dir.join(format!("tests/explored_{name}.rs"));
    std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}\n{said}", file.display()))
}

/// The first test of the file `tests` that holds every one of `pieces`.
fn test_holding<'t>(tests: &'t str, pieces: &[&str]) -> &'t str {
    (tests.split("#[test]"))
        .find(|t| pieces.iter().all(|p| t.contains(p)))
        .unwrap_or_else(|| panic!("no test holds all of {pieces:?}:\n{tests}"))
}

/// The explored tests of `name` fail once `from` becomes `to` in the crate's `src/lib.rs`.
fn fail_after_edit(dir: &std::path::Path, name: &str, (from, to): (&str, &str)) {
    edit(&dir.join("src/lib.rs"), from, to);
    let ran = cargo_in(dir, &["test", "--test", &format!("explored_{name}")]);
    assert!(!ran.status.success(), "{}", stdout(&ran));
}

/// The fenced Rust block of the finding whose heading contains `heading`.
fn reproducer<'a>(findings: &'a str, heading: &str) -> &'a str {
    let at = findings
        .find(heading)
        .unwrap_or_else(|| panic!("no finding {heading:?} in:\n{findings}"));
    let block = &findings[at..];
    let start = block.find("```rust\n").expect("a reproducer") + "```rust\n".len();
    let end = block[start..]
        .find("```")
        .expect("the end of the reproducer");
    &block[start..start + end]
}

#[test]
fn explore_keeps_tests_with_new_outcomes_and_reports_unrecorded_panics_with_reproducers() {
    let (_tmp, dir) = copy_fixture("bounds");
    let db = build_and_record(&dir, "bounds", &[]);
    // The recording never saw `is_in_range` say false, nor `percent` panic.
    let trace = load(&db);
    let in_range = calls_of(&trace, "bounds::is_in_range");
    assert!(!in_range.is_empty());
    assert!(in_range
        .iter()
        .all(|c| c.ret == Some(carve_storage::Value::Bool { value: true })));
    assert!(calls_of(&trace, "bounds::percent")
        .iter()
        .all(|c| c.outcome == carve_storage::Outcome::Returned));

    // BE and BOBW run too (unverified, into a scratch directory of the package).
    std::fs::create_dir_all(dir.join("scratch")).unwrap();
    for (strategy, name) in [("exhaustive", "BE"), ("bobw", "BOBW")] {
        let out = explore(
            &dir,
            "scratch",
            &[
                "--strategy",
                strategy,
                "--runs",
                "3000",
                "--seed",
                "1",
                "--no-verify",
            ],
        );
        assert!(out.status.success(), "{strategy}: {}", stderr(&out));
        let said = stdout(&out);
        assert!(
            said.contains(&format!(
                "with {name}, length 3, seed 1: 3000 sequences run"
            )),
            "{said}"
        );
        assert!(dir.join("scratch/explored_bounds.rs").is_file(), "{said}");
    }

    // R alone (`--no-extend`: one round, seed 004's strategy as it is): a later round's pools,
    // grown by every integer the crate compared, make `clamp`'s three `i32`s most of R's
    // draws, and its 10,000 sequences no longer meet the gauge raised past 255.
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    let out = explore(
        &dir,
        "tests",
        &[
            "--strategy",
            "random",
            "--runs",
            "20000",
            "--seed",
            "1",
            "--no-extend",
        ],
    );
    let said = stdout(&out);
    assert!(out.status.success(), "{said}{}", stderr(&out));
    assert!(
        said.contains("with R, length 3, seed 1: 20000 sequences run"),
        "{said}"
    );
    let kept: usize = said
        .split("tests kept: ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no kept count in {said}"));
    assert!(kept >= 5, "{said}");
    assert!(
        said.contains(&format!(
            "tests kept: {kept} of {kept} written passed verification"
        )),
        "{said}"
    );

    // The kept tests compile and pass on their own, and one asserts what the run never saw.
    let tests = std::fs::read_to_string(dir.join("tests/explored_bounds.rs")).unwrap();
    assert!(tests.contains("assert!(!bounds::is_in_range("), "{tests}");
    let ran = cargo_in(&dir, &["test", "--test", "explored_bounds"]);
    assert!(ran.status.success(), "{}{}", stdout(&ran), stderr(&ran));
    assert!(
        stdout(&ran).contains(&format!("test result: ok. {kept} passed")),
        "{}",
        stdout(&ran)
    );
    assert!(!tests.contains("should_panic"), "findings are not tests");

    // Dividing by zero is a finding, and every finding's reproducer panics with its message.
    assert!(
        said.contains("finding: bounds::percent panics: \"attempt to divide by zero\""),
        "{said}"
    );
    let findings = std::fs::read_to_string(dir.join("tests/explored_bounds_findings.md")).unwrap();
    let code = reproducer(
        &findings,
        "`bounds::percent` panics: \"attempt to divide by zero\"",
    );
    assert!(
        code.contains("bounds::percent(") && code.contains("0u32)"),
        "{code}"
    );
    // A finding of a sequence: the gauge made, raised, then raised past 255.
    let code = reproducer(
        &findings,
        "`bounds::Gauge::raise` panics: \"attempt to add with overflow\"",
    );
    assert!(
        code.contains("bounds::Gauge::new(") && code.matches(".raise(").count() >= 2,
        "{code}"
    );
    let mut repro = String::new();
    for (i, section) in findings.split("\n## ").skip(1).enumerate() {
        let heading = section.lines().next().unwrap();
        let message = heading.split(" panics: ").nth(1).expect("a panic message");
        let code = reproducer(section, heading);
        repro.push_str(&format!(
            "#[test]\n#[should_panic(expected = {message})]\nfn reproduces_{i}() {{\n{code}}}\n"
        ));
    }
    std::fs::write(dir.join("tests/repro.rs"), &repro).unwrap();
    let ran = cargo_in(&dir, &["test", "--test", "repro"]);
    assert!(
        ran.status.success(),
        "{repro}\n{}{}",
        stdout(&ran),
        stderr(&ran)
    );
    let reproduced = findings.matches("\n## ").count();
    assert!(
        stdout(&ran).contains(&format!("test result: ok. {reproduced} passed")),
        "{}",
        stdout(&ran)
    );
}

#[test]
fn explore_refuses_bad_input_in_one_line_and_writes_nothing() {
    let (_tmp, dir) = copy_fixture("bounds");
    let db = build_and_record(&dir, "bounds", &[]);
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    let before: Vec<_> = std::fs::read_dir(dir.join("tests")).unwrap().collect();

    let missing = explore(&dir, "no-such-dir", &["--runs", "10"]);
    assert_eq!(missing.status.code(), Some(2));
    let err = stderr(&missing);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--out no-such-dir: not a directory"), "{err}");

    // A crate the run never reached: nothing to explore, said in one line.
    let (_other_tmp, other) = copy_fixture("abc");
    let wrong = explore(
        &dir,
        "tests",
        &["--crate", other.to_str().unwrap(), "--runs", "10"],
    );
    assert_eq!(wrong.status.code(), Some(2));
    let err = stderr(&wrong);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("no function of crate `abc` can be explored"),
        "{err}"
    );

    let zero = explore(&dir, "tests", &["--length", "0"]);
    assert_eq!(
        zero.status.code(),
        Some(2),
        "clap refuses it: {}",
        stderr(&zero)
    );
    let after: Vec<_> = std::fs::read_dir(dir.join("tests")).unwrap().collect();
    assert_eq!(before.len(), after.len(), "nothing written into tests/");
    assert!(db.is_file());
}

#[test]
fn cargo_carve_explore_finds_the_trace_and_writes_into_the_package_tests() {
    let (_tmp, dir) = copy_fixture("bounds");
    let recorded = cargo_carve_in(&dir, &["record", "-q"], &[]);
    assert!(recorded.status.success(), "{}", stderr(&recorded));
    let out = cargo_carve_in(
        &dir,
        &["explore", "--runs", "3000", "--seed", "1", "--no-verify"],
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let said = stdout(&out);
    assert!(
        said.contains("with BOBW, length 3, seed 1: 3000 sequences run"),
        "{said}"
    );
    assert!(dir.join("tests/explored_bounds.rs").is_file(), "{said}");
}

/// A call the harness cannot compile (here: behind a feature the recorded build enabled and
/// the harness's build of the crate does not) is taken out with the compiler's reason; the
/// others are explored.
#[test]
fn a_call_that_does_not_compile_in_the_harness_is_left_out_with_the_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("feat");
    write_tree(
        &dir,
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"feat\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
                 [features]\nextra = []\n\n[workspace]\n",
            ),
            (
                "src/lib.rs",
                "pub fn double(x: u8) -> u8 { x * 2 }\n\
                 #[cfg(feature = \"extra\")]\npub fn triple(x: u8) -> u8 { x * 3 }\n",
            ),
            (
                "src/main.rs",
                "fn main() {\n    println!(\"{}\", feat::double(3));\n    \
                 #[cfg(feature = \"extra\")]\n    println!(\"{}\", feat::triple(4));\n}\n",
            ),
        ],
    );
    let built = cargo_in(&dir, &["build", "--quiet", "--features", "extra"]);
    assert!(built.status.success(), "{}", stderr(&built));
    let recorded = record(
        &dir.join("trace.db"),
        &[],
        &dir.join("target/debug/feat"),
        &[],
    );
    assert!(recorded.status.success(), "{}", stderr(&recorded));
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    let out = explore(
        &dir,
        "tests",
        &["--runs", "500", "--seed", "1", "--no-verify"],
    );
    let said = stdout(&out);
    assert!(out.status.success(), "{said}{}", stderr(&out));
    assert!(said.contains("explored 1 functions (1 left out)"), "{said}");
    assert!(
        said.contains("left out: feat::triple: its call does not compile: error[E0425]"),
        "{said}"
    );
    // `double(u8::MAX)` overflows: the explored call really ran.
    assert!(
        said.contains("finding: feat::double panics: \"attempt to multiply with overflow\""),
        "{said}"
    );
}

const TALLY_LIB: &str = r#"/// A running total; strict tallies take at most 100 at a time.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Tally {
    total: u32,
    strict: bool,
}

impl Tally {
    /// A builder step: takes the tally and gives it back.
    pub fn strict(mut self, on: bool) -> Tally {
        self.strict = on;
        self
    }

    pub fn add(&mut self, n: u32) -> u32 {
        if self.strict && n > 100 {
            self.total += 100;
        } else {
            self.total += n;
        }
        self.total
    }
}

impl std::fmt::Display for Tally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} so far", self.total)
    }
}

impl std::str::FromStr for Tally {
    type Err = std::num::ParseIntError;

    fn from_str(s: &str) -> Result<Tally, Self::Err> {
        Ok(Tally {
            total: s.trim().parse()?,
            strict: false,
        })
    }
}

/// Counts down from `n` to 0.
pub struct Countdown {
    n: u32,
}

impl Countdown {
    pub fn new(n: u32) -> Countdown {
        Countdown { n }
    }
}

impl Iterator for Countdown {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        if self.n == 0 {
            return None;
        }
        self.n -= 1;
        Some(self.n)
    }
}
"#;

const TALLY_MAIN: &str = r#"fn main() {
    let mut loose = tally::Tally::default().strict(false);
    println!("{} {}", loose.add(5), loose.add(7));
    let mut strict = tally::Tally::default().strict(true);
    println!("{}", strict.add(3));
    for left in tally::Countdown::new(2) {
        println!("{left}");
    }
    let parsed: tally::Tally = "40".parse().unwrap();
    println!("{parsed}");
}
"#;

/// With a run recorded with `--coverage`, a sequence is kept for a crate line the run never
/// reached even when every outcome it gives is one the run had: the strict tally's cap, met
/// only by a builder step (`self` by value) and a number over 100. The standard traits' methods
/// the run called are explored too: `next` and `from_str` (an error it returns checked by its
/// `Display` text too); `Display::fmt` is not, as the recorder leaves formatting impls out of a
/// program's own code.
#[test]
fn a_line_the_run_never_reached_keeps_its_sequence_and_the_test_fails_when_that_line_changes() {
    let (c, said) = explore_small("tally", TALLY_LIB, TALLY_MAIN, "20000");
    let dir = c.dir.clone();
    // Tally::strict, Tally::add, Countdown::new, and Countdown's next (and the rest of its
    // items collected) and Tally's from_str.
    assert!(said.contains("explored 6 functions (0 left out)"), "{said}");
    let tests = std::fs::read_to_string(dir.join("tests/explored_tally.rs")).unwrap();
    assert!(
        tests.contains("<tally::Tally as std::str::FromStr>::from_str("),
        "{tests}"
    );
    // A text that is no number: the error is checked by what its user reads too.
    assert!(
        tests.contains("made.unwrap_err().to_string(), \"invalid digit found in string\");")
            || tests.contains(
                "made.unwrap_err().to_string(), \"cannot parse integer from empty string\");"
            ),
        "{tests}"
    );
    let beyond: usize = said
        .split("lines: the search reached ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no lines figure in {said}"));
    assert!(beyond >= 1, "{said}");
    let cap = tests
        .split("/// Explored")
        .find(|t| t.contains("lines the run never reached: lib.rs:") && t.contains(".strict(true)"))
        .unwrap_or_else(|| panic!("no test kept for the strict cap's line in:\n{tests}"));
    assert!(cap.contains(".add("), "{cap}");
    let ran = cargo_in(&dir, &["test", "--test", "explored_tally"]);
    assert!(ran.status.success(), "{}{}", stdout(&ran), stderr(&ran));

    // The cap changed by one: the test kept for its line fails.
    edit(
        &dir.join("src/lib.rs"),
        "self.total += 100;",
        "self.total += 99;",
    );
    let ran = cargo_in(&dir, &["test", "--test", "explored_tally"]);
    assert!(!ran.status.success(), "{}", stdout(&ran));
}

const SIZES_LIB: &str = r#"/// Bytes in `text`, a number and a unit: "3 kb", "2 mb", "1 tb".
pub fn bytes(text: &str) -> Option<u64> {
    let (number, unit) = text.split_once(' ')?;
    let n: u64 = number.parse().ok()?;
    let scale = match unit {
        "kb" => 1_000,
        "mb" => 1_000_000,
        "tb" => 1_000_000_000_000,
        _ => return None,
    };
    n.checked_mul(scale)
}
"#;

const SIZES_MAIN: &str = r#"fn main() {
    for text in ["3 kb", "2 mb", "x"] {
        println!("{text}: {:?}", sizes::bytes(text));
    }
}
"#;

/// The crate's own literals seed the pools: no recorded text holds "tb", the run never took
/// its arm, and the text a recorded one gives with its unit replaced ("2 tb") does.
#[test]
fn the_crates_literals_seed_the_pools_and_reach_an_arm_the_run_never_took() {
    let (c, _) = explore_small("sizes", SIZES_LIB, SIZES_MAIN, "2000");
    let dir = c.dir.clone();
    let tests = std::fs::read_to_string(dir.join("tests/explored_sizes.rs")).unwrap();
    let tb = tests
        .split("/// Explored")
        .find(|t| t.contains(" tb\")"))
        .unwrap_or_else(|| panic!("no test of a text in tb in:\n{tests}"));
    assert!(tb.contains("lines the run never reached: lib.rs:"), "{tb}");
    // The terabyte's scale changed: the test kept for its arm fails.
    edit(
        &dir.join("src/lib.rs"),
        "1_000_000_000_000,",
        "1_000_000_000,",
    );
    let ran = cargo_in(&dir, &["test", "--test", "explored_sizes"]);
    assert!(!ran.status.success(), "{}", stdout(&ran));
}

const FEES_LIB: &str = r#"const FREE_FROM: u32 = 5000;

/// The shipping fee in cents for an order of `cents`: free from 5000 up.
pub fn fee(cents: u32) -> u32 {
    if cents >= FREE_FROM { 0 } else { 499 }
}
"#;

const FEES_MAIN: &str = r#"fn main() {
    for cents in [1200, 9900] {
        println!("{cents}: {}", fees::fee(cents));
    }
}
"#;

/// A boundary keeps its call: the run took both sides of `cents >= FREE_FROM` (every line,
/// both outcomes), so no line or outcome is new; the constant compared seeds the pool, and
/// `fee(5000)` meets the comparison equal, which the recorded calls (replayed first) never
/// did: the one test kept. It tells `>=` from `>`.
#[test]
fn a_comparison_met_equal_for_the_first_time_keeps_the_call_that_tells_the_boundary() {
    let (c, said) = explore_small("fees", FEES_LIB, FEES_MAIN, "2000");
    let dir = c.dir.clone();
    assert!(
        said.contains("that the 2 recorded calls replayed first did not"),
        "{said}"
    );
    let tests = std::fs::read_to_string(dir.join("tests/explored_fees.rs")).unwrap();
    assert_eq!(tests.matches("#[test]").count(), 1, "{tests}");
    assert!(
        tests.contains("comparison outcomes met first: lib.rs:5 equal"),
        "{tests}"
    );
    assert!(tests.contains("fn explored_001_fee_boundary()"), "{tests}");
    assert!(tests.contains("fees::fee(5000u32), 0u32"), "{tests}");
    let ran = cargo_in(&dir, &["test", "--test", "explored_fees"]);
    assert!(ran.status.success(), "{}{}", stdout(&ran), stderr(&ran));
    // The boundary moved by one: the kept test fails.
    edit(
        &dir.join("src/lib.rs"),
        "cents >= FREE_FROM",
        "cents > FREE_FROM",
    );
    let ran = cargo_in(&dir, &["test", "--test", "explored_fees"]);
    assert!(!ran.status.success(), "{}", stdout(&ran));
}

const HIDDEN_LIB: &str = r#"/// Whether `name` is a hidden file's: it starts with a dot and is not `.` or `..`.
pub fn is_hidden(name: &str) -> bool {
    name.starts_with('.') && name != "." && name != ".."
}
"#;

const HIDDEN_MAIN: &str = r#"fn main() {
    for name in ["notes.txt", ".profile"] {
        println!("{name}: {}", hidden::is_hidden(name));
    }
}
"#;

/// A branch within a line keeps its call: the run reached the one line with both answers,
/// and a text compared is no integer comparison, so neither a line, an outcome nor a
/// comparison outcome is new; `is_hidden(".")` stops at `name != "."`, an edge the recorded
/// calls (replayed first) never took, and is kept. It tells the conditions apart.
#[test]
fn a_branch_within_a_line_the_run_reached_keeps_the_call_that_took_it() {
    let (c, said) = explore_small("hidden", HIDDEN_LIB, HIDDEN_MAIN, "2000");
    let dir = c.dir.clone();
    let tests = explored(&dir, "hidden", &said, 1);
    assert!(
        tests.contains("branches no call before took: lib.rs:3.\n#[test]\nfn explored_001_is_hidden_branch() {\n    assert!(!hidden::is_hidden(\".\"));"),
        "{tests}"
    );
    assert!(!tests.contains("): lines the run never reached"), "{tests}");
    let ran = cargo_in(&dir, &["test", "--test", "explored_hidden"]);
    assert!(ran.status.success(), "{}{}", stdout(&ran), stderr(&ran));
    fail_after_edit(&dir, "hidden", (" && name != \".\" && name != \"..\"", ""));
}

const SHOUT_LIB: &str = r#"/// Loud text.
pub trait Shout {
    fn shout(&self) -> String;
}

impl Shout for str {
    fn shout(&self) -> String {
        if self.is_empty() {
            return "(silence)".to_string();
        }
        self.to_uppercase()
    }
}
"#;

const SHOUT_MAIN: &str = r#"use shout::Shout;

fn main() {
    println!("{}", "hello".shout());
}
"#;

/// The crate's trait method on `str` (recorded as `<str as shout::Shout>::shout`) is explored
/// as a call through the trait's path with the text first; the empty text reaches the line
/// the run never did.
#[test]
fn a_trait_method_of_the_crate_on_str_is_explored_with_the_text_pool() {
    let (c, said) = explore_small("shout", SHOUT_LIB, SHOUT_MAIN, "2000");
    let tests = explored(&c.dir, "shout", &said, 1);
    assert!(
        tests.contains(r#"shout::Shout::shout(""), "(silence)""#),
        "{tests}"
    );
    fail_after_edit(&c.dir, "shout", ("\"(silence)\"", "\"\""));
}

const CELLS_LIB: &str = r#"/// Display cells of a line: a CR LF pair ends it and takes no cell.
pub fn cells(s: &str) -> usize {
    let mut n = 0;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' && chars.peek() == Some(&'\n') {
            chars.next();
            continue;
        }
        n += 1;
    }
    n
}
"#;

const CELLS_MAIN: &str = r#"fn main() {
    println!("{}", cells::cells("hello"));
}
"#;

/// The run gave only `"hello"`; the crate's character literals make texts (`"\r\n"` among
/// them) that reach the lines of the pair, and the kept test fails when the pair's second
/// character changes.
#[test]
fn the_crates_character_literals_make_the_text_that_reaches_a_branch_the_run_never_took() {
    let (c, said) = explore_small("cells", CELLS_LIB, CELLS_MAIN, "2000");
    let tests = explored(&c.dir, "cells", &said, 1);
    assert!(tests.contains(r#"cells::cells("\r\n")"#), "{tests}");
    fail_after_edit(&c.dir, "cells", ("Some(&'\\n')", "Some(&'\\t')"));
}

const RECENT_LIB: &str = r#"use std::borrow::Borrow;
use std::marker::PhantomData;
use std::num::NonZeroUsize;

/// A bounded list of pairs that forgets the oldest.
#[derive(Debug)]
pub struct Recent<K, V, S = std::collections::hash_map::RandomState> {
    keys: Vec<K>,
    values: Vec<V>,
    cap: NonZeroUsize,
    state: PhantomData<S>,
}

impl<K: PartialEq, V> Recent<K, V> {
    pub fn new(cap: NonZeroUsize) -> Recent<K, V> {
        Recent { keys: Vec::new(), values: Vec::new(), cap, state: PhantomData }
    }
}

impl<K: PartialEq, V, S> Recent<K, V, S> {
    /// Adds a pair; the oldest key when one had to go.
    pub fn put(&mut self, k: K, v: V) -> Option<K> {
        let mut gone = None;
        if self.keys.len() == self.cap.get() {
            gone = Some(self.keys.remove(0));
            self.values.remove(0);
        }
        self.keys.push(k);
        self.values.push(v);
        gone
    }

    /// Adds each of `keys` with `v`.
    pub fn put_all<I: IntoIterator<Item = K>>(&mut self, keys: I, v: V)
    where
        V: Clone,
    {
        for k in keys {
            self.put(k, v.clone());
        }
    }

    pub fn get<Q>(&self, k: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: PartialEq + ?Sized,
    {
        self.keys.iter().position(|x| x.borrow() == k).map(|i| &self.values[i])
    }
}
"#;

const RECENT_MAIN: &str = r#"use std::num::NonZeroUsize;

fn main() {
    let mut r: recent::Recent<u32, String> = recent::Recent::new(NonZeroUsize::new(3).unwrap());
    r.put(7, "seven".to_string());
    r.put_all(vec![1, 2], "few".to_string());
    println!("{:?}", r.get(&7));
}
"#;

/// Methods of a generic type are explored on the instance the run used, written as a caller
/// writes it (`Recent<u32, String>`: the defaulted `S` left out), its `NonZeroUsize` from a
/// pool, `get`'s `&Q` as a `&u32` and `put_all`'s `IntoIterator<Item = K>` as a `Vec<u32>`;
/// the run never filled the list, the kept test does, and fails when the bound's comparison
/// changes.
#[test]
fn a_generic_types_methods_are_explored_on_the_recorded_instance() {
    let (c, said) = explore_small("recent", RECENT_LIB, RECENT_MAIN, "3000");
    let tests = explored(&c.dir, "recent", &said, 4);
    assert!(tests.contains(".put_all(vec!["), "{tests}");
    assert!(
        tests.contains("<recent::Recent<u32, String>>::new(std::num::NonZero::<usize>::new("),
        "{tests}"
    );
    assert!(
        tests.contains(".put(") && tests.contains("\"Some("),
        "{tests}"
    );
    let full = (
        "self.keys.len() == self.cap.get()",
        "self.keys.len() > self.cap.get()",
    );
    fail_after_edit(&c.dir, "recent", full);
}

const TOP_LIB: &str = r#"/// The largest numbers offered, at most `keep` of them, largest first.
#[derive(Debug, Default)]
pub struct Top {
    keep: usize,
    best: Vec<u32>,
}

impl Top {
    pub fn new(keep: usize) -> Top {
        Top { keep, best: Vec::new() }
    }

    /// Offers `n`: it stays if it is among the largest `keep`.
    pub fn offer(&mut self, n: u32) {
        let at = self.best.iter().position(|&b| n > b).unwrap_or(self.best.len());
        self.best.insert(at, n);
        self.best.truncate(self.keep);
    }

    /// Keeps at most `keep` from now on; `None` keeps all.
    pub fn limit(&mut self, keep: Option<usize>) {
        match keep {
            Some(k) => {
                self.keep = k;
                self.best.truncate(k);
            }
            None => self.keep = usize::MAX,
        }
    }
}

impl std::fmt::Display for Top {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "top {}: {:?}", self.keep, self.best)
    }
}
"#;

const TOP_MAIN: &str = r#"fn main() {
    let mut top = top::Top::new(2);
    for n in [5, 9, 1] {
        top.offer(n);
    }
    top.limit(Some(1));
    println!("{top:?}");
}
"#;

/// `offer` returns nothing: what it does shows only in the object. Each kept test asserts the
/// objects its `&mut self` calls changed after its calls, and each result, by their `Display`
/// and `Debug` texts (the same in two runs of the harness), so the tests fail when what
/// `offer` keeps changes. `limit`'s `Option<usize>` has a pool (`None`, then `Some` of each
/// `usize`): `None`, which the run never gave, reaches its arm.
#[test]
fn an_object_changed_by_a_call_that_returns_nothing_is_asserted_after_the_calls() {
    let (c, said) = explore_small("top", TOP_LIB, TOP_MAIN, "2000");
    let tests = explored(&c.dir, "top", &said, 3);
    assert!(tests.contains(".limit(None);"), "{tests}");
    assert!(tests.contains(".offer("), "{tests}");
    assert!(
        tests.contains("assert_eq!(format!(\"{:?}\", top_"),
        "{tests}"
    );
    // What a maker made is checked by its texts as soon as it is made.
    let made = test_holding(&tests, &["= top::Top::new("]);
    let after = made.split("= top::Top::new(").nth(1).unwrap_or_default();
    assert!(
        (after.lines().skip(1).take(2)).any(|l| l.contains(".to_string(), \"top ")),
        "{made}"
    );
    assert!(
        ["top_0", "top_1"]
            .iter()
            .any(|v| tests.contains(&format!("{v}.to_string(), \"top "))),
        "{tests}"
    );
    fail_after_edit(
        &c.dir,
        "top",
        ("insert(at, n)", "insert(at, n.wrapping_add(1))"),
    );
}

const WORDS_LIB: &str = r#"mod inner {
    /// The words of a text, one at a time.
    pub struct Words<'a, S: ?Sized> {
        text: &'a S,
        at: usize,
    }

    impl<'a> Words<'a, str> {
        pub fn of<T: AsRef<str> + ?Sized>(text: &'a T) -> Words<'a, str> {
            Words { text: text.as_ref(), at: 0 }
        }

        /// What is left to read.
        pub fn rest(&self) -> &'a str {
            &self.text[self.at..]
        }
    }

    impl<'a> Iterator for Words<'a, str> {
        type Item = &'a str;

        fn next(&mut self) -> Option<&'a str> {
            let rest = &self.text[self.at..];
            let trimmed = rest.trim_start();
            if trimmed.is_empty() {
                return None;
            }
            let start = self.at + (rest.len() - trimmed.len());
            let end = trimmed.find(' ').map_or(self.text.len(), |i| start + i);
            self.at = end;
            Some(&self.text[start..end])
        }
    }
}

pub use inner::Words;
"#;

const WORDS_MAIN: &str = r#"fn main() {
    let mut w = words::Words::of("one two");
    println!("{:?} then {:?}", w.next(), w.rest());
}
"#;

/// A type of a private module that a `pub use` makes public, with a lifetime and an unsized
/// `str` parameter (`Words<'a, S: ?Sized>`, as similar's `TextDiff` and pulldown-cmark's
/// `Parser`), is explored as `words::Words<'static, str>`: its constructor's own `T` as the run
/// filled it (`str`), and `Iterator::next` on it; with no `Debug`, what is left in it after
/// the calls is checked by its getter; the tests fail when the split changes.
#[test]
fn a_reexported_generic_type_with_a_lifetime_and_a_str_parameter_is_explored() {
    let (c, said) = explore_small("words", WORDS_LIB, WORDS_MAIN, "2000");
    // `of`, `rest`, `next` and the rest of the words collected.
    let tests = explored(&c.dir, "words", &said, 4);
    // Nothing to check of what `of` made (no `Debug`): bound at once.
    assert!(
        tests.contains("let mut words_0 = <words::Words<'static, str>>::of(\""),
        "{tests}"
    );
    assert!(tests.contains(".next()"), "{tests}");
    // `Words` has no `Debug`: what a call left in it is read through its getter `rest`.
    let after_next = tests.split("next()), \"Some(\\\"one\\\")\");\n").nth(1);
    assert!(
        after_next
            .is_some_and(|t| t.trim_start().starts_with("assert_eq!(words_")
                && t.contains(".rest(), \" two")),
        "{tests}"
    );
    fail_after_edit(&c.dir, "words", ("find(' ')", "find('o')"));
}

const MATCH_LIB: &str = r#"/// How `Word::matches` compares.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    pub any_case: bool,
}

impl Options {
    pub fn any_case() -> Options {
        Options { any_case: true }
    }
}

/// A word to look for.
#[derive(Debug)]
pub struct Word {
    word: String,
}

impl Word {
    pub fn new(word: &str) -> Word {
        Word { word: word.to_string() }
    }

    pub fn matches(&self, text: &str, options: Options) -> bool {
        if options.any_case {
            text.to_lowercase() == self.word.to_lowercase()
        } else {
            text == self.word
        }
    }

    /// Whether the two words are the same, as `options` compares.
    pub fn same_as(&self, other: &Word, options: Options) -> bool {
        self.matches(&other.word, options)
    }
}
"#;

const MATCH_MAIN: &str = r#"fn main() {
    let w = matching::Word::new("Abc");
    println!("{}", w.matches("Abc", matching::Options::default()));
    println!("{}", w.same_as(&matching::Word::new("abc"), matching::Options::default()));
    println!("{:?}", matching::Options::any_case());
}
"#;

/// A parameter of an explored object type is drawn from that type's slots: `matches` gets the
/// `Options` that `any_case()` makes, which the run never passed it, and reaches the branch
/// that compares in any case; `same_as` gets a `Word` by reference. The tests fail when that
/// branch's comparison changes.
#[test]
fn an_argument_of_an_explored_object_type_comes_from_its_slots() {
    let (c, said) = explore_small("matching", MATCH_LIB, MATCH_MAIN, "3000");
    // Word::new, matches, same_as and Options::any_case (the literal `Options { any_case }`
    // makes values too, but is not a function).
    let tests = explored(&c.dir, "matching", &said, 4);
    // `Options` is `Copy`: passed as it is; a `Word` by reference.
    assert!(
        tests.contains(".matches(\"") && tests.contains(", options_"),
        "{tests}"
    );
    assert!(tests.contains(".same_as(&word_"), "{tests}");
    fail_after_edit(
        &c.dir,
        "matching",
        ("text.to_lowercase() ==", "text.to_lowercase() !="),
    );
}

const QUOTE_LIB: &str = r#"/// Why words cannot be joined.
#[derive(Debug, PartialEq)]
pub enum JoinError {
    Empty { at: usize },
}

impl std::fmt::Display for JoinError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JoinError::Empty { at } => write!(f, "word {at} is empty"),
        }
    }
}

/// The words as one command line; a word with a space is quoted.
pub fn join<'a, I: IntoIterator<Item = &'a str>>(words: I) -> Result<String, JoinError> {
    let mut out = Vec::new();
    for (at, w) in words.into_iter().enumerate() {
        if w.is_empty() {
            return Err(JoinError::Empty { at });
        }
        if w.contains(' ') {
            out.push(format!("'{w}'"));
        } else {
            out.push(w.to_string());
        }
    }
    Ok(out.join(" "))
}
"#;

const QUOTE_MAIN: &str = r#"fn main() {
    println!("{:?}", quote::join(["ls", "-l"]));
}
"#;

/// A parameter that takes words (`I: IntoIterator<Item = &str>`) gets lists made from the text
/// pool: the empty list, the recorded one, texts alone and side by side (the crate's `" "`
/// makes a word with a space). The run never quoted a word nor met an empty one; the explored
/// tests do, and check the error by what its user reads (`Display`) beside its `Debug`; they
/// fail when the quoting changes.
#[test]
fn a_list_of_words_is_made_from_the_text_pool_and_an_error_is_checked_by_its_text() {
    let (c, said) = explore_small("quote", QUOTE_LIB, QUOTE_MAIN, "3000");
    let tests = explored(&c.dir, "quote", &said, 1);
    assert!(tests.contains("quote::join(vec!["), "{tests}");
    assert!(
        tests.contains(".unwrap_err().to_string(), \"word 0 is empty\");")
            || tests.contains(".unwrap_err().to_string(), \"word 1 is empty\");"),
        "{tests}"
    );
    // A word with a space, quoted: the line the run never reached (an `Ok` of text is
    // checked unwrapped).
    assert!(tests.contains(".unwrap(), \"'"), "{tests}");
    fail_after_edit(
        &c.dir,
        "quote",
        ("format!(\"'{w}'\")", "format!(\"\\\"{w}\\\"\")"),
    );
}

const QUEUE_LIB: &str = r#"use std::ops::{Bound, RangeBounds};

/// Numbers in the order they came.
#[derive(Debug)]
pub struct Queue {
    items: Vec<u32>,
}

impl Default for Queue {
    fn default() -> Queue {
        Queue { items: vec![1, 2, 3, 4, 5] }
    }
}

impl Queue {
    pub fn push(&mut self, n: u32) {
        self.items.push(n);
    }

    /// Takes out the numbers at `range`, as far as the queue holds them.
    pub fn take<R: RangeBounds<usize>>(&mut self, range: R) -> Vec<u32> {
        let start = match range.start_bound() {
            Bound::Included(&s) => s,
            Bound::Excluded(&s) => s + 1,
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(&e) => e + 1,
            Bound::Excluded(&e) => e,
            Bound::Unbounded => self.items.len(),
        };
        let end = end.min(self.items.len());
        if start >= end {
            return Vec::new();
        }
        self.items.drain(start..end).collect()
    }
}
"#;

const QUEUE_MAIN: &str = r#"fn main() {
    let mut q = queue::Queue::default();
    q.push(6);
    println!("{:?}", q.take(..));
}
"#;

/// A parameter bounded by `RangeBounds<usize>` gets ranges made from the `usize` pool, written
/// as a test writes them (`take(..=1)`): the run took only `..`; the explored tests reach the
/// arms of the bounds it never had, and fail when an inclusive end is counted wrong.
#[test]
fn a_range_parameter_gets_ranges_made_from_the_integer_pool() {
    let (c, said) = explore_small("queue", QUEUE_LIB, QUEUE_MAIN, "3000");
    let tests = explored(&c.dir, "queue", &said, 2);
    assert!(
        tests.contains(".take(..=") || tests.contains("..=1)"),
        "{tests}"
    );
    assert!(!tests.contains("Bound::"), "{tests}");
    fail_after_edit(
        &c.dir,
        "queue",
        (
            "Bound::Included(&e) => e + 1",
            "Bound::Included(&e) => e + 2",
        ),
    );
}

const SHELF_LIB: &str = r#"/// Numbers on a shelf.
#[derive(Debug, Default)]
pub struct Shelf {
    items: Vec<u32>,
}

impl Shelf {
    pub fn put(&mut self, n: u32) {
        self.items.push(n);
    }

    /// Keeps the items `keep` says yes to; how many went.
    pub fn keep<F: FnMut(&u32) -> bool>(&mut self, mut keep: F) -> usize {
        let before = self.items.len();
        self.items.retain(|x| keep(x));
        before - self.items.len()
    }

    /// The first item, or the one `make` gives when the shelf is empty.
    pub fn first_or<F: FnOnce() -> u32>(&mut self, make: F) -> u32 {
        if self.items.is_empty() {
            let n = make();
            self.items.push(n);
        }
        self.items[0]
    }
}
"#;

const SHELF_MAIN: &str = r#"fn main() {
    let mut s = shelf::Shelf::default();
    s.put(4);
    s.put(7);
    println!("{}", s.keep(|x| *x < 100));
    println!("{}", s.first_or(|| 9));
}
"#;

/// A parameter a closure bound types gets closures written for its shape: a predicate
/// (`|_| false`, `|x| *x % 2 == 0`) and a producer of the pool's values (`|| 0u32`). The run
/// never emptied the shelf; the explored tests do and reach the producer's line, and fail when
/// what it puts changes.
#[test]
fn a_closure_parameter_gets_closures_written_for_its_shape() {
    let (c, said) = explore_small("shelf", SHELF_LIB, SHELF_MAIN, "3000");
    let tests = explored(&c.dir, "shelf", &said, 3);
    assert!(tests.contains(".keep(|"), "{tests}");
    assert!(tests.contains(".first_or(|| "), "{tests}");
    fail_after_edit(&c.dir, "shelf", ("let n = make();", "let n = make() + 1;"));
}

const ROUND_LIB: &str = r#"/// Which way a division rounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Round {
    Down,
    Up,
    Nearest,
}

/// Rounding that is not written as it is: never made by a test.
#[derive(Debug)]
pub enum Unused {
    A,
}

/// `n` divided by `by`, rounded as `round` says.
pub fn divide(n: u32, by: u32, round: Round) -> u32 {
    match round {
        Round::Down => n / by,
        Round::Up => (n + by - 1) / by,
        Round::Nearest => (n + by / 2) / by,
    }
}
"#;

const ROUND_MAIN: &str = r#"fn main() {
    println!("{}", round::divide(7, 2, round::Round::Down));
}
"#;

/// A parameter of an enum whose variants have no fields gets each variant as it is written
/// (`round::Round::Up`): the run only ever rounded down; the explored tests reach the other
/// arms and fail when rounding up changes. The variant itself is no outcome and is not
/// asserted, and an enum no explored call takes is not explored.
#[test]
fn an_enum_parameter_gets_each_variant_written_as_it_is() {
    let (c, said) = explore_small("round", ROUND_LIB, ROUND_MAIN, "3000");
    let tests = explored(&c.dir, "round", &said, 1);
    assert!(tests.contains("= round::Round::Up;"), "{tests}");
    assert!(!tests.contains("\"Up\""), "{tests}");
    assert!(!tests.contains("Unused"), "{tests}");
    fail_after_edit(
        &c.dir,
        "round",
        ("Round::Up => (n + by - 1) / by", "Round::Up => n / by"),
    );
}

const STOCK_LIB: &str = r#"/// Items in stock by id.
#[derive(Debug, Default)]
pub struct Stock {
    items: Vec<(u64, u64)>,
}

impl Stock {
    /// Adds `count` of `id`; false when there is nothing to add.
    pub fn add(&mut self, id: u64, count: u64) -> bool {
        if count == 0 {
            return false;
        }
        match self.items.iter_mut().find(|(i, _)| *i == id) {
            Some((_, c)) => *c += count,
            None => self.items.push((id, count)),
        }
        true
    }

    /// How many of `id` are in stock, if any.
    pub fn count(&self, id: u64) -> Option<u64> {
        self.items.iter().find(|(i, _)| *i == id).map(|(_, c)| *c)
    }
}
"#;

const STOCK_MAIN: &str = r#"fn main() {
    for id in 0..24u64 {
        let mut s = stock::Stock::default();
        s.add(1000 + id * 37, 5 + id * 11);
        println!("{:?}", s.count(7 + id * 53));
    }
}
"#;

/// A sequence kept for what it reached is extended by one call on the object it made and the
/// values its calls took (JET's incremental construction): `add(id, n)` is followed by
/// `count(id)` and `add(id, m)`, which the run never did (it never asked for an id it had) and
/// which sequences drawn from the whole space meet rarely: with `--no-extend` the same
/// number of sequences never asks for an id it added.
#[test]
fn a_kept_sequence_is_extended_by_calls_on_what_it_made_and_took() {
    let (c, said) = explore_small("stock", STOCK_LIB, STOCK_MAIN, "400");
    let tests = explored(&c.dir, "stock", &said, 2);
    assert!(!said.contains("(0 of them extending a kept one"), "{said}");
    assert!(
        tests.contains(".count(") && tests.contains("Some("),
        "{tests}"
    );
    std::fs::create_dir_all(c.dir.join("blind")).unwrap();
    let blind = explore(
        &c.dir,
        "blind",
        &["--runs", "400", "--seed", "1", "--no-extend", "--no-verify"],
    );
    assert!(blind.status.success(), "{}", stderr(&blind));
    let drawn = std::fs::read_to_string(c.dir.join("blind/explored_stock.rs")).unwrap();
    // The search met `count` answering `Some` only by extending (a blind test asks it too,
    // but after its calls, as a lookup: `lookups.rs`).
    let met = "outcomes no carved test checks: `stock::Stock::count` Some";
    assert!(!drawn.contains(met), "{drawn}");
    assert!(tests.contains(met), "{tests}");
    // `*c += count`, line 14: adding an id the object holds.
    assert!(tests.contains("lib.rs:14"), "{tests}");
    fail_after_edit(
        &c.dir,
        "stock",
        ("Some((_, c)) => *c += count", "Some((_, c)) => *c = count"),
    );
}

const NAME_LIB: &str = r#"/// A name, compared without regard to case.
#[derive(Debug, Clone)]
pub struct Name {
    text: String,
}

impl Name {
    pub fn new(text: &str) -> Name {
        Name {
            text: text.to_string(),
        }
    }
}

impl PartialEq for Name {
    fn eq(&self, other: &Name) -> bool {
        self.text.to_lowercase() == other.text.to_lowercase()
    }
}
"#;

const NAME_MAIN: &str = r#"fn main() {
    let (a, b) = (name::Name::new("Ann"), name::Name::new("Bob"));
    println!("{}", a == b);
    println!("{:?}", a.clone());
}
"#;

/// Standard traits' methods the run called on a public type are explored on its objects:
/// `PartialEq::eq` as `a.eq(&b)`, both from the type's slots, `Clone::clone` into a slot. The
/// run only compared two different names; the explored tests compare a name with an equal
/// one, and fail when equality changes.
#[test]
fn a_hand_written_equality_is_explored_between_two_objects() {
    let (c, said) = explore_small("name", NAME_LIB, NAME_MAIN, "2000");
    let tests = explored(&c.dir, "name", &said, 3);
    assert!(tests.contains(".eq(&name_"), "{tests}");
    fail_after_edit(
        &c.dir,
        "name",
        (
            "self.text.to_lowercase() == other",
            "self.text.to_lowercase() != other",
        ),
    );
}

const ROLL_LIB: &str = r#"/// Numbers to hand out.
#[derive(Debug, Default)]
pub struct Roll {
    items: Vec<u32>,
}

impl Roll {
    pub fn add(&mut self, n: u32) {
        self.items.push(n);
    }

    /// The numbers, from the last one added back.
    pub fn backwards(&self) -> Back {
        Back {
            items: self.items.clone(),
        }
    }
}

/// The numbers of a roll, last first.
#[derive(Debug)]
pub struct Back {
    items: Vec<u32>,
}

impl Back {
    /// The next number; one above 100 is handed out halved.
    pub fn take(&mut self) -> Option<u32> {
        let n = self.items.pop()?;
        if n > 100 {
            Some(n / 2)
        } else {
            Some(n)
        }
    }
}
"#;

const ROLL_MAIN: &str = r#"fn main() {
    let mut roll = roll::Roll::default();
    roll.add(3);
    roll.add(5);
    let mut back = roll.backwards();
    println!("{:?}", back.take());
}
"#;

/// A type no constructor or `Default` makes is explored when a method of another type the
/// run called returned one (`Roll::backwards` gives a `Back`): its slots are filled by that
/// call. The run never handed out a number above 100; the explored tests do, and fail when
/// the halving changes.
#[test]
fn an_object_another_types_method_returns_is_explored_from_that_call() {
    let (c, said) = explore_small("roll", ROLL_LIB, ROLL_MAIN, "3000");
    let tests = explored(&c.dir, "roll", &said, 3);
    assert!(tests.contains(".backwards();"), "{tests}");
    assert!(tests.contains(".take()"), "{tests}");
    fail_after_edit(&c.dir, "roll", ("Some(n / 2)", "Some(n / 3)"));
}

const UNITS_LIB: &str = r#"/// A unit of bytes: a power of 1000, of 1024, or one spelled out.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Unit {
    Si(u32),
    Iec(u32),
    Spelled(u32),
}

/// The unit `name` names, in any case.
pub fn unit(name: &str) -> Option<Unit> {
    Some(match name.to_ascii_lowercase().as_str() {
        "b" => Unit::Si(0),
        "k" | "kb" => Unit::Si(1),
        "m" | "mb" => Unit::Si(2),
        "g" | "gb" => Unit::Si(3),
        "t" | "tb" => Unit::Si(4),
        "p" | "pb" => Unit::Si(5),
        "e" | "eb" => Unit::Si(6),
        "kib" => Unit::Iec(1),
        "mib" => Unit::Iec(2),
        "gib" => Unit::Iec(3),
        "tib" => Unit::Iec(4),
        "pib" => Unit::Iec(5),
        "eib" => Unit::Iec(6),
        "kibibyte" => Unit::Spelled(1),
        _ => return None,
    })
}
"#;

const UNITS_MAIN: &str = r#"fn main() {
    for name in ["kb", "x"] {
        println!("{name}: {:?}", units::unit(name));
    }
}
"#;

/// A first round's pools take the crate's 16 shortest words; "kibibyte" is the 20th. The
/// round runs every sequence of its space with budget left, so a second round runs pools
/// grown by the rest of the literals, and the test kept for "kibibyte"'s outcome fails when
/// it changes.
#[test]
fn a_space_run_whole_with_budget_left_grows_its_pools_with_the_rest_of_the_crates_literals() {
    let (c, said) = explore_small("units", UNITS_LIB, UNITS_MAIN, "2000");
    assert!(said.contains(" rounds, each after one that ran"), "{said}");
    let tests = explored(&c.dir, "units", &said, 1);
    assert!(tests.contains(r#"units::unit("kibibyte")"#), "{tests}");
    fail_after_edit(&c.dir, "units", ("Unit::Spelled(1)", "Unit::Iec(1)"));
}

const HALL_LIB: &str = r#"/// Rows in the hall, and seats in a row.
const ROWS: u32 = 40;
const SEATS: u32 = 25;

/// Where ticket `n` sits: the stalls, the royal box (one ticket past the stalls' last) or
/// nowhere.
pub fn place(n: u32) -> &'static str {
    if n == ROWS * SEATS + 1 {
        "royal box"
    } else if n <= ROWS * SEATS {
        "stalls"
    } else {
        "nowhere"
    }
}
"#;

const HALL_MAIN: &str = r#"fn main() {
    println!("{} {}", hall::place(7), hall::place(5000));
}
"#;

/// The royal box is ticket 1001, a number neither the run nor the crate's literals (40, 25
/// and 1) hold: the recorded `place(7)`, run again with the harness noting its comparisons'
/// operands, was compared with 1001 and 1000, so a later round's pool takes them and one
/// either side, and `place(1001)` reaches the arm; its test fails when the arm changes.
#[test]
fn a_value_compared_with_a_computed_bound_gives_the_pool_the_bound_and_its_neighbours() {
    let (c, said) = explore_small("hall", HALL_LIB, HALL_MAIN, "2000");
    assert!(said.contains(" rounds, each after one that ran"), "{said}");
    let tests = explored(&c.dir, "hall", &said, 1);
    assert!(tests.contains("place(1001"), "{tests}");
    fail_after_edit(&c.dir, "hall", ("\"royal box\"", "\"box\""));
}

const STACK_LIB: &str = r#"/// Items kept last in, first out.
#[derive(Debug, Default)]
pub struct Stack<T> {
    items: Vec<T>,
}

impl<T> Stack<T> {
    pub fn new() -> Self {
        Stack { items: Vec::new() }
    }

    pub fn push(&mut self, item: T) {
        self.items.push(item);
    }
}

/// A stack's items, the last pushed first.
#[derive(Debug)]
pub struct Drain<T> {
    items: Vec<T>,
}

impl<T> Iterator for Drain<T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        self.items.pop()
    }
}

impl<T> IntoIterator for Stack<T> {
    type Item = T;
    type IntoIter = Drain<T>;

    fn into_iter(self) -> Drain<T> {
        Drain { items: self.items }
    }
}
"#;

const STACK_MAIN: &str = r#"fn main() {
    let mut ids: stack::Stack<u32> = stack::Stack::new();
    ids.push(1);
    let mut deltas: stack::Stack<i64> = stack::Stack::new();
    deltas.push(-2);
    let mut drained = deltas.into_iter();
    println!("{:?} {:?}", ids, drained.next());
}
"#;

/// The run drained a `Stack<i64>` but explored `Stack<u32>`, its first: `into_iter` made a
/// `Drain` with the stack's own arguments, so on the `Stack<u32>` explored it makes a
/// `Drain<u32>`, whose `next` is explored on what it makes (not left out for want of a
/// maker), and the test that drains a stack fails when draining changes.
#[test]
fn a_type_made_with_its_makers_arguments_is_explored_on_the_makers_instance() {
    let (c, said) = explore_small("stack", STACK_LIB, STACK_MAIN, "2000");
    let tests = explored(&c.dir, "stack", &said, 5);
    assert!(tests.contains(".into_iter()"), "{tests}");
    assert!(tests.contains("stack::Stack<u32>"), "{tests}");
    fail_after_edit(
        &c.dir,
        "stack",
        ("self.items.pop()", "self.items.pop().filter(|_| false)"),
    );
}

const METER_LIB: &str = r#"/// Bytes counted in units, by name in any case.
#[derive(Debug, Default)]
pub struct Meter {
    bytes: u64,
    /// A unit of 1024 was added.
    binary: bool,
}

impl Meter {
    /// Adds `n` of `unit`; its factor, or `None` for a name it does not know.
    pub fn add(&mut self, n: u64, unit: &str) -> Option<u64> {
        let factor: u64 = match unit.to_ascii_lowercase().as_str() {
            "b" => 1,
            "k" | "kb" => 1_000,
            "m" | "mb" => 1_000_000,
            "g" | "gb" => 1_000_000_000,
            "t" | "tb" => 1_000_000_000_000,
            "p" | "pb" => 1_000_000_000_000_000,
            "e" | "eb" => 1_000_000_000_000_000_000,
            "kib" => {
                self.binary = true;
                1 << 10
            }
            "mib" => 1 << 20,
            "gib" => 1 << 30,
            "tib" => 1 << 40,
            "pib" => 1 << 50,
            "eib" => 1 << 60,
            "kibibyte" => {
                self.binary = true;
                self.bytes = self.bytes.saturating_add(n.saturating_mul(1 << 10));
                return Some(1 << 10);
            }
            _ => return None,
        };
        self.bytes = self.bytes.saturating_add(n.saturating_mul(factor));
        Some(factor)
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}
"#;

const METER_MAIN: &str = r#"fn main() {
    let mut m = meter::Meter::default();
    println!("{:?} {:?}", m.add(3, "kb"), m.add(1, "x"));
    println!("{}", m.bytes());
}
"#;

/// A space too large to run whole: the first round keeps `add(_, "kib")` and levels off
/// (20,000 sequences with nothing kept, as many as before its last kept one); the next, on
/// pools grown with the rest of the literals, first runs the kept calls with the new values
/// in place of theirs: `add(_, "kibibyte")` reaches the arm no first-round pool could, and
/// its test fails when that arm changes.
#[test]
fn a_round_that_levels_off_is_followed_by_kept_calls_with_the_grown_pools_values() {
    let (c, said) = explore_small("meter", METER_LIB, METER_MAIN, "60000");
    assert!(said.contains(" rounds, each after one that ran"), "{said}");
    assert!(!said.contains("space exhausted"), "{said}");
    assert!(
        !said.contains(", 0 a kept one with a value a grown pool gained"),
        "{said}"
    );
    let tests = explored(&c.dir, "meter", &said, 2);
    assert!(tests.contains(r#""kibibyte")"#), "{tests}");
    fail_after_edit(
        &c.dir,
        "meter",
        ("n.saturating_mul(1 << 10)", "n.saturating_mul(1 << 11)"),
    );
}

const BAG_LIB: &str = r#"/// Numbers in a bag.
#[derive(Debug, Default)]
pub struct Bag {
    items: Vec<u32>,
}

impl Bag {
    pub fn put(&mut self, n: u32) {
        self.items.push(n);
    }

    /// The numbers, collected from an iterator the call makes itself.
    pub fn drain_all(self) -> Vec<u32> {
        Emptying {
            items: self.items,
            at: 0,
        }
        .collect()
    }
}

impl IntoIterator for Bag {
    type Item = u32;
    type IntoIter = Emptying;

    fn into_iter(self) -> Emptying {
        Emptying {
            items: self.items,
            at: 0,
        }
    }
}

/// The numbers of a bag, one by one.
#[derive(Debug)]
pub struct Emptying {
    items: Vec<u32>,
    at: usize,
}

impl Iterator for Emptying {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        let n = self.items.get(self.at).copied();
        self.at += 1;
        n
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.items.len().saturating_sub(self.at);
        (left, Some(left))
    }
}
"#;

const BAG_MAIN: &str = r#"fn main() {
    let mut bag = bag::Bag::default();
    bag.put(3);
    bag.put(8);
    let all: Vec<u32> = bag.drain_all();
    let mut other = bag::Bag::default();
    other.put(5);
    for n in other {
        println!("{n}");
    }
    println!("{all:?}");
}
"#;

/// An outcome the recording gave but no carved test checks is still to be found: the run's
/// `collect` called `Emptying::size_hint` (and `next`) inside `drain_all`, on an iterator
/// that call made itself, a receiver `carve generate` cannot rebuild, so no carved test
/// checks `size_hint` (the `for` loop's iterator, which `into_iter` made and the generator
/// does rebuild, had only `next` called), and the run reached every line of `size_hint`.
/// Explore, which makes an `Emptying` with `into_iter`, keeps a `size_hint` call though its
/// class is the one the recording gave, and the explored tests fail when the upper bound
/// changes (nothing else the tests call reads it).
#[test]
fn an_outcome_no_carved_test_checks_keeps_the_explored_call_that_gives_it() {
    let (c, said) = explore_small("bag", BAG_LIB, BAG_MAIN, "2000");
    let tests = explored(&c.dir, "bag", &said, 6);
    assert!(tests.contains(".size_hint()"), "{tests}");
    fail_after_edit(
        &c.dir,
        "bag",
        ("(left, Some(left))", "(left, Some(left + 1))"),
    );
}

const TOTALS_LIB: &str = r#"use std::ops::{Add, AddAssign};

/// A size in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Bytes(u64);

impl Bytes {
    pub fn new(n: u64) -> Bytes {
        Bytes(n)
    }

    /// Whole kibibytes.
    #[inline(always)]
    pub fn kib(&self) -> u64 {
        self.0 / 1024
    }
}

impl Add for Bytes {
    type Output = Bytes;

    #[inline(always)]
    fn add(self, rhs: Bytes) -> Bytes {
        Bytes(self.0 + rhs.0)
    }
}

impl AddAssign for Bytes {
    #[inline(always)]
    fn add_assign(&mut self, rhs: Bytes) {
        self.0 += rhs.0;
    }
}
"#;

const TOTALS_MAIN: &str = r#"fn main() {
    let mut total = totals::Bytes::new(2048);
    total += totals::Bytes::new(1024);
    let sum = total + totals::Bytes::new(512);
    println!("{} KiB, {:?}", sum.kib(), sum);
}
"#;

/// Functions every call of which was inlined (`#[inline(always)]`, even in a debug build)
/// have no call in the trace, but the run reached their lines (`--coverage`): they are
/// explored as functions the run called, and an operator trait's method as a test writes it
/// (`a + b`, `a += b`). The explored tests fail when any of the three changes.
#[test]
fn functions_the_run_reached_only_inlined_are_explored_and_operators_written_as_operators() {
    let (c, said) = explore_small("totals", TOTALS_LIB, TOTALS_MAIN, "3000");
    let tests = explored(&c.dir, "totals", &said, 4);
    assert!(tests.contains(".kib()"), "{tests}");
    assert!(tests.contains(" += "), "{tests}");
    assert!(tests.contains(" + "), "{tests}");
    for (from, to) in [
        ("self.0 / 1024", "self.0 % 1024"),
        ("Bytes(self.0 + rhs.0)", "Bytes(self.0 * rhs.0)"),
        ("self.0 += rhs.0", "self.0 *= rhs.0"),
    ] {
        let lib = c.dir.join("src/lib.rs");
        let source = std::fs::read_to_string(&lib).unwrap();
        fail_after_edit(&c.dir, "totals", (from, to));
        std::fs::write(&lib, source).unwrap();
    }
}

const MONEY_LIB: &str = r#"use std::fmt;

/// An amount in cents.
#[derive(Debug, Clone, Copy, Default)]
pub struct Money {
    cents: i64,
}

impl Money {
    pub fn new(cents: i64) -> Money {
        Money { cents }
    }
}

/// Euros and cents; a width centres the amount in it.
impl fmt::Display for Money {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = format!("{}.{:02}", self.cents / 100, (self.cents % 100).abs());
        match f.width() {
            Some(width) if width > text.len() => {
                let pad = width - text.len();
                let left = pad / 2;
                write!(f, "{}{text}{}", " ".repeat(left), " ".repeat(pad - left))
            }
            _ => f.write_str(&text),
        }
    }
}
"#;

const MONEY_MAIN: &str = r#"fn main() {
    for cents in [1234, 5] {
        println!("{}", money::Money::new(cents));
    }
}
"#;

/// A `Display` impl that reads the formatter's options runs code `to_string()` never
/// reaches: explore also formats with a width, a precision, an alignment and the flags, keeps
/// a call that reaches the centring lines (`format!("{:^12}", money)`), and the test fails
/// when the centring changes; `Display` counts as one function explored.
#[test]
fn display_is_also_explored_with_format_specs_and_keeps_the_one_reaching_new_lines() {
    let flags = ["--coverage", "--filter", "money::*"];
    let c = record_small_crate("money", MONEY_LIB, MONEY_MAIN, &flags);
    assert!(c.recorded.status.success(), "{}", stderr(&c.recorded));
    std::fs::create_dir_all(c.dir.join("tests")).unwrap();
    let out = explore(&c.dir, "tests", &["--runs", "3000", "--seed", "1"]);
    let said = stdout(&out);
    assert!(out.status.success(), "{said}{}", stderr(&out));
    let tests = explored(&c.dir, "money", &said, 2);
    let widths = ["{:>12}", "{:<12}", "{:^12}", "{:>12.3}"];
    let formatted = |w: &&str| tests.contains(&format!("format!(\"{w}\", money_"));
    assert!(widths.iter().any(formatted), "{tests}");
    fail_after_edit(
        &c.dir,
        "money",
        ("let left = pad / 2;", "let left = pad / 3;"),
    );
}

const UPPER_LIB: &str = r#"/// The buffer was too small for the text.
#[derive(Debug, PartialEq)]
pub struct TooSmall;

/// Writes `text` in upper case at the start of `out`; fails when it does not fit.
pub fn upper_into(text: &str, out: &mut [u8]) -> Result<(), TooSmall> {
    if text.len() > out.len() {
        return Err(TooSmall);
    }
    for (o, b) in out.iter_mut().zip(text.bytes()) {
        *o = b.to_ascii_uppercase();
    }
    Ok(())
}
"#;

const UPPER_MAIN: &str = r#"fn main() {
    let mut out = *b"-----";
    println!("{:?} {out:?}", upper::upper_into("abc", &mut out));
    println!("{:?}", upper::upper_into("abcdefgh", &mut out));
}
"#;

/// A call that writes into a buffer it is lent (`out: &mut [u8]`) has its effect checked:
/// the kept test binds the buffer (`b"ABC-".to_vec()`: printable bytes as a byte string),
/// lends it, and asserts what it holds after the call, so it fails when what is written
/// changes though the result (`Ok(())`) does not.
#[test]
fn a_buffer_a_call_writes_into_is_checked_after_the_call() {
    let (c, said) = explore_small("upper", UPPER_LIB, UPPER_MAIN, "3000");
    let tests = explored(&c.dir, "upper", &said, 1);
    // Printable bytes are written as a person writes them.
    assert!(tests.contains("let mut out = b\""), "{tests}");
    assert!(tests.contains(", &mut out)"), "{tests}");
    assert!(
        tests.contains("assert_eq!(format!(\"{:?}\", out), \"["),
        "{tests}"
    );
    fail_after_edit(
        &c.dir,
        "upper",
        ("b.to_ascii_uppercase()", "b.to_ascii_lowercase()"),
    );
}

const FINDER_LIB: &str = r#"//! Files under a directory whose names end with a suffix, found one at a time.
use std::path::PathBuf;

/// A walk over a directory tree, in name order.
#[derive(Debug)]
pub struct Walk {
    todo: Vec<PathBuf>,
    suffix: String,
    hidden: u32,
}

/// Why a walk cannot start.
#[derive(Debug)]
pub enum WalkError {
    NotADirectory(String),
}

/// Whether a file named `name` is one a walk for `suffix` finds.
pub fn wanted(name: &str, suffix: &str) -> bool {
    name.ends_with(suffix)
}

/// A walk from the directory `dir` for names ending in `suffix`.
pub fn walk(dir: &str, suffix: &str) -> Result<Walk, WalkError> {
    if !std::path::Path::new(dir).is_dir() {
        return Err(WalkError::NotADirectory(dir.to_string()));
    }
    Ok(Walk { todo: vec![PathBuf::from(dir)], suffix: suffix.to_string(), hidden: 0 })
}

impl Walk {
    /// The next file found, by its path.
    pub fn next_match(&mut self) -> Option<String> {
        while let Some(at) = self.todo.pop() {
            let name = at.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            if name.starts_with('.') && name.len() > 1 {
                self.hidden += 1;
                continue;
            }
            if at.is_dir() {
                let mut entries: Vec<PathBuf> =
                    std::fs::read_dir(&at).ok()?.filter_map(|e| Some(e.ok()?.path())).collect();
                entries.sort();
                entries.reverse();
                self.todo.extend(entries);
            } else if wanted(&name, &self.suffix) {
                return Some(at.display().to_string());
            }
        }
        None
    }
}
"#;

const FINDER_MAIN: &str = r#"fn main() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    let mut walk = finder::walk(dir, ".rs").unwrap();
    while let Some(found) = walk.next_match() {
        println!("{}", found.rsplit('/').next().unwrap());
    }
    println!("{}", finder::wanted("notes/.draft.rs", ".rs"));
}
"#;

/// `walk` reads the file system and gives its `Walk` inside an `Ok`: the walk is explored from
/// that call, in a directory rebuilt from what the run read (its `src` holds `main.rs`) and
/// grown by the path it named (`notes/.draft.rs`), so the kept test reaches the hidden-file
/// line the run never reached, runs in those files wherever it runs, and fails when that
/// line changes.
#[test]
fn a_walk_of_the_files_is_explored_in_the_files_the_run_read_and_the_paths_it_named() {
    let (c, said) = explore_small("finder", FINDER_LIB, FINDER_MAIN, "3000");
    let tests = explored(&c.dir, "finder", &said, 3);
    assert!(tests.contains("fn in_recorded_files("), "{tests}");
    assert!(
        tests.contains("std::fs::write(dir.join(\"main.rs\"), "),
        "{tests}"
    );
    assert!(
        tests.contains("std::fs::write(dir.join(\"notes/.draft.rs\"), \"\")"),
        "{tests}"
    );
    assert!(tests.contains("in_recorded_files(|| {"), "{tests}");
    assert!(tests.contains(".next_match()"), "{tests}");
    // The recorded directory is written relative to the rebuilt one: no walk of the machine's.
    assert!(tests.contains("finder::walk(\"."), "{tests}");
    assert!(!tests.contains("finder::walk(\"/"), "{tests}");
    fail_after_edit(&c.dir, "finder", ("self.hidden += 1", "self.hidden += 2"));
}

const NIBBLES_LIB: &str = r#"/// A character that is not a hex digit, and where it is.
#[derive(Debug, PartialEq)]
pub enum BadDigit {
    At { c: char, index: usize },
}

/// The bytes the pairs of hex digits of `s` write (a last lone digit is ignored).
pub fn decode(s: &str) -> Result<Vec<u8>, BadDigit> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    for i in 0..b.len() / 2 {
        let hi = val(b[2 * i], 2 * i)?;
        let lo = val(b[2 * i + 1], 2 * i + 1)?;
        out.push(hi << 4 | lo);
    }
    Ok(out)
}

fn val(c: u8, index: usize) -> Result<u8, BadDigit> {
    match c {
        b'0'..=b'9' => Ok(c - b'0'),
        b'a'..=b'f' => Ok(c - b'a' + 10),
        _ => Err(BadDigit::At { c: c as char, index }),
    }
}
"#;

const NIBBLES_MAIN: &str = r#"fn main() {
    for s in ["0a1f", "zz"] {
        println!("{s}: {:?}", nibbles::decode(s));
    }
}
"#;

/// The run's error lies at the first character; an error at the second (or further on) is an
/// outcome of its own, so the explored call that gives one is kept, and its test fails when the
/// position it reports changes.
#[test]
fn where_an_error_lies_in_the_input_is_part_of_its_outcome() {
    let (c, said) = explore_small("nibbles", NIBBLES_LIB, NIBBLES_MAIN, "3000");
    assert!(
        said.contains("left out: nibbles::val: not public"),
        "{said}"
    );
    let tests = std::fs::read_to_string(c.dir.join("tests/explored_nibbles.rs")).unwrap();
    assert!(tests.contains("index: 1 })"), "{tests}");
    fail_after_edit(&c.dir, "nibbles", ("2 * i + 1)?", "2 * i)?"));
}

const LINECOUNT_LIB: &str = r#"/// The number of lines of the file at `path` (0 when it cannot be read).
pub fn count_lines(path: &str) -> usize {
    std::fs::read_to_string(path).map(|t| t.lines().count()).unwrap_or(0)
}

/// Whether `line` is a comment.
pub fn is_comment(line: &str) -> bool {
    line.trim_start().starts_with(';')
}
"#;

const LINECOUNT_MAIN: &str = r#"fn main() {
    println!("{}", linecount::count_lines("tally-input.txt"));
    println!("{}", linecount::is_comment("; x"));
}
"#;

/// A file read by a relative path cannot be rebuilt (relative to what?): the function that
/// reads it is left out, with why, and the search goes on without it.
#[test]
fn a_function_reading_files_the_recording_cannot_rebuild_is_left_out_with_why() {
    let (c, said) = explore_small("linecount", LINECOUNT_LIB, LINECOUNT_MAIN, "300");
    assert!(
        said.contains(
            "left out: linecount::count_lines: it reads files the recording cannot rebuild"
        ),
        "{said}"
    );
    let tests =
        std::fs::read_to_string(c.dir.join("tests/explored_linecount.rs")).unwrap_or_default();
    assert!(!tests.contains("count_lines"), "{tests}");
}

const MEASURE_LIB: &str = r#"/// A size in bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Size(u64);

impl Size {
    pub fn new(bytes: u64) -> Size {
        Size(bytes)
    }

    /// In bytes: `12 B`.
    pub fn show(&self) -> String {
        format!("{} B", self.0)
    }

    /// In bits: `96 b` (the program never asks for it).
    pub fn show_bits(&self) -> String {
        format!("{} b", self.0 * 8)
    }
}
"#;

const MEASURE_MAIN: &str = r#"fn main() {
    let s = measure::Size::new(12);
    println!("{}", s.show());
}
"#;

/// A crate whose code (and its dependencies') names no way to touch the world can only
/// compute: its public functions the run never called are explored too, and a kept test of
/// one fails when its code changes.
#[test]
fn a_crate_that_only_computes_is_explored_beyond_the_functions_the_run_reached() {
    let (c, said) = explore_small("measure", MEASURE_LIB, MEASURE_MAIN, "300");
    assert!(
        said.contains("beyond the run: 1 of the functions explored are public functions the run never reached"),
        "{said}"
    );
    let tests = explored(&c.dir, "measure", &said, 3);
    assert!(tests.contains(".show_bits()"), "{tests}");
    fail_after_edit(&c.dir, "measure", ("self.0 * 8", "self.0 * 4"));
}

/// One name of a way to touch the world anywhere in the crate (here the environment, in a
/// function nobody calls) and only what the run reached is explored.
#[test]
fn a_crate_that_names_a_way_to_touch_the_world_is_explored_only_where_the_run_went() {
    let lib = format!(
        "{MEASURE_LIB}\n/// Extra bytes the environment asks for.\npub fn extra() -> u64 {{\n    \
         std::env::var(\"MEASURE_EXTRA\").map_or(0, |v| v.len() as u64)\n}}\n"
    );
    let (c, said) = explore_small("measure", &lib, MEASURE_MAIN, "300");
    assert!(
        said.contains("beyond the run: only functions the run reached are explored (a function it never ran may touch the world: ")
            && said.contains("`std::env::var` names `env`"),
        "{said}"
    );
    let tests =
        std::fs::read_to_string(c.dir.join("tests/explored_measure.rs")).unwrap_or_default();
    assert!(
        !tests.contains("show_bits") && !tests.contains("measure::extra"),
        "{tests}"
    );
}

const DIGITS_LIB: &str = r#"//! Hex digits of bytes, collected into whatever the caller picks.

struct Digits<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Iterator for Digits<'_> {
    type Item = char;

    fn next(&mut self) -> Option<char> {
        let b = *self.bytes.get(self.at / 2)?;
        let nibble = if self.at % 2 == 0 { b >> 4 } else { b & 15 };
        self.at += 1;
        char::from_digit(u32::from(nibble), 16)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.bytes.len() * 2 - self.at;
        (left, Some(left))
    }
}

/// Bytes as hex digits.
pub trait ToDigits {
    fn to_digits<C: std::iter::FromIterator<char>>(&self) -> C;
}

impl<T: AsRef<[u8]>> ToDigits for T {
    fn to_digits<C: std::iter::FromIterator<char>>(&self) -> C {
        Digits { bytes: self.as_ref(), at: 0 }.collect()
    }
}
"#;

const DIGITS_MAIN: &str = r#"use digits::ToDigits;

fn main() {
    let data: &[u8] = &[1, 171];
    let text: String = data.to_digits();
    println!("{text}");
}
"#;

/// A result the caller picks the collection of (`to_digits::<C: FromIterator<char>>`) is also
/// collected into one that keeps what the iterator said of its length: a `size_hint` a
/// `String` never shows is checked, and the test fails when it changes.
#[test]
fn a_collection_the_caller_picks_is_also_one_that_shows_the_iterators_size_hint() {
    let (c, said) = explore_small("digits", DIGITS_LIB, DIGITS_MAIN, "300");
    let tests = std::fs::read_to_string(c.dir.join("tests/explored_digits.rs"))
        .unwrap_or_else(|e| panic!("{e}\n{said}"));
    assert!(
        tests.contains("digits::ToDigits::to_digits::<Collected<char>>(&&[")
            && tests.contains("Collected { size_hint: (")
            && tests.contains("struct Collected<T>"),
        "{tests}"
    );
    fail_after_edit(&c.dir, "digits", ("(left, Some(left))", "(0, Some(left))"));
}

const ROSTER_LIB: &str = r#"use std::collections::HashMap;

/// Names in the order they joined, found by name through an index.
#[derive(Default)]
pub struct Roster {
    names: Vec<String>,
    index: HashMap<String, usize>,
}

/// The names, in order: what a reader sees, not the index.
impl std::fmt::Debug for Roster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(&self.names).finish()
    }
}

impl Roster {
    /// Adds `name` at the end; false when it is there already.
    pub fn join(&mut self, name: &str) -> bool {
        if self.index.contains_key(name) {
            return false;
        }
        self.index.insert(name.to_string(), self.names.len());
        self.names.push(name.to_string());
        true
    }

    /// Takes `name` out, the names after it moving up one; false when it is not there.
    pub fn leave(&mut self, name: &str) -> bool {
        let Some(at) = self.index.remove(name) else {
            return false;
        };
        self.names.remove(at);
        for i in self.index.values_mut() {
            if *i > at {
                *i -= 1;
            }
        }
        true
    }

    /// Where `name` stands, from 0.
    pub fn position(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }
}
"#;

const ROSTER_MAIN: &str = r#"fn main() {
    let mut r = roster::Roster::default();
    for name in ["ada", "bob", "cy"] {
        r.join(name);
    }
    println!("{}", r.leave("zed"));
    println!("{:?} {:?}", r.position("bob"), r);
}
"#;

/// An object a `&mut self` call changed is looked up after the calls by the values they took:
/// `leave` shifts the index of the names after the one that left, which the roster's `Debug`
/// (its names) never shows and no sequence of three calls can both do and ask; the test asks
/// `position` of each name after it, and fails when the shift is wrong.
#[test]
fn an_object_a_call_changed_is_looked_up_after_the_calls_by_the_keys_they_took() {
    let (c, said) = explore_small("roster", ROSTER_LIB, ROSTER_MAIN, "400");
    let tests = explored(&c.dir, "roster", &said, 3);
    let shifted = test_holding(&tests, &[".leave(", ".position(", "Some(0usize)"]);
    assert!(shifted.contains(".join("), "{shifted}");
    fail_after_edit(&c.dir, "roster", ("*i -= 1;", "*i -= 0;"));
}

const BIN_LIB: &str = r#"/// Numbers in a bin with room for more.
#[derive(Default)]
pub struct Bin {
    items: Vec<u32>,
    room: usize,
}

/// The numbers: what a reader sees, not the room.
impl std::fmt::Debug for Bin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(&self.items).finish()
    }
}

impl Bin {
    /// Puts `x` at the end, doubling the room when the bin is full.
    pub fn put(&mut self, x: u32) {
        if self.items.len() == self.room {
            self.room = (self.room * 2).max(2);
        }
        self.items.push(x);
    }

    /// Room for this many numbers.
    pub fn room(&self) -> usize {
        self.room
    }

    /// Gives back the room no number uses.
    pub fn tidy(&mut self) {
        if self.room > self.items.len() {
            self.room = self.items.len();
        }
    }
}
"#;

const BIN_MAIN: &str = r#"fn main() {
    let mut s = bin::Bin::default();
    s.put(1);
    s.put(2);
    s.tidy();
    println!("{} {:?}", s.room(), s);
}
"#;

/// The getters of the object a test's last `&mut self` call changed are checked after the
/// calls where that call moved their answers: `tidy` gives back a bin's unused room and
/// leaves its numbers (all its `Debug` shows) as they were; the test asks `room()` after it,
/// and fails when tidying does nothing.
#[test]
fn what_a_change_did_to_an_objects_getters_is_checked_after_the_calls() {
    let (c, said) = explore_small("bin", BIN_LIB, BIN_MAIN, "400");
    let tests = explored(&c.dir, "bin", &said, 3);
    let tidied = test_holding(&tests, &[".tidy();", ".room()"]);
    assert!(tidied.contains("assert_eq!("), "{tidied}");
    fail_after_edit(
        &c.dir,
        "bin",
        (
            "if self.room > self.items.len()",
            "if self.room < self.items.len()",
        ),
    );
}

/// `Bin` with a maker whose room its `Debug` text does not show.
const ROOM_MAKER: &str = r#"
impl Bin {
    /// An empty bin with room for `room` numbers (none: the default).
    pub fn with_room(room: usize) -> Bin {
        if room == 0 {
            return Bin::default();
        }
        Bin { items: Vec::new(), room }
    }
}
"#;

const ROOMY_MAIN: &str = r#"fn main() {
    let mut s = bin::Bin::with_room(0);
    s.put(1);
    println!("{} {:?}", s.room(), s);
}
"#;

/// What a call made is checked by the getters that say what its `Debug` text does not:
/// `Bin::with_room(n)` and `Bin::default()` both print `[]`; the run made a bin with no
/// room, the test that makes one with room asks it `room()`, and fails when the maker
/// forgets the room.
#[test]
fn what_a_maker_made_is_checked_by_the_getters_its_debug_text_does_not_tell() {
    let lib = format!("{BIN_LIB}{ROOM_MAKER}");
    let (c, said) = explore_small("bin", &lib, ROOMY_MAIN, "400");
    let tests = explored(&c.dir, "bin", &said, 4);
    let made = test_holding(&tests, &["::with_room(", ".room()"]);
    assert!(made.contains("assert_eq!("), "{made}");
    fail_after_edit(
        &c.dir,
        "bin",
        (
            "Bin { items: Vec::new(), room }",
            "Bin { items: Vec::new(), room: 0 }",
        ),
    );
}

const ROW_LIB: &str = r#"/// Numbers in the order they came.
#[derive(Debug, Default)]
pub struct Row {
    items: Vec<u32>,
}

impl Row {
    /// Appends what `more` gives: room for as many as it says up front, then the rest one at
    /// a time; how many it appended.
    pub fn append<I: IntoIterator<Item = u32>>(&mut self, more: I) -> usize {
        let mut more = more.into_iter();
        let (told, _) = more.size_hint();
        self.items.reserve(told);
        let mut added = 0;
        while added < told {
            match more.next() {
                Some(x) => self.items.push(x),
                None => break,
            }
            added += 1;
        }
        for x in more {
            self.items.push(x);
            added += 1;
        }
        added
    }
}
"#;

const ROW_MAIN: &str = r#"fn main() {
    let mut row = row::Row::default();
    println!("{}", row.append(vec![3, 1]));
    println!("{row:?}");
}
"#;

/// A parameter that takes an `IntoIterator` is also given an iterator that does not tell its
/// length up front: the run appended a `Vec`, whose length the code trusts; the test that
/// appends `vec![..].into_iter().filter(|_| true)` reaches the loop that appends the rest one
/// at a time, and fails when that loop appends the wrong numbers.
#[test]
fn an_iterator_parameter_is_also_given_one_that_does_not_tell_its_length() {
    let (c, said) = explore_small("row", ROW_LIB, ROW_MAIN, "400");
    // One function: the twin that hides the length is not another.
    let tests = explored(&c.dir, "row", &said, 1);
    let hidden = test_holding(&tests, &[".append(vec![", ".into_iter().filter(|_| true)"]);
    assert!(hidden.contains("assert_eq!("), "{hidden}");
    fail_after_edit(
        &c.dir,
        "row",
        (
            "for x in more {\n            self.items.push(x);",
            "for x in more {\n            self.items.push(x + 1);",
        ),
    );
}

const SPLIT_LIB: &str = r#"/// The words of a text, split as it is made.
pub struct Words {
    text: String,
    words: Vec<String>,
    at: usize,
}

/// The text: what a reader gave, not the words.
impl std::fmt::Debug for Words {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Words").field("text", &self.text).finish()
    }
}

impl Words {
    /// Splits `text` at spaces and commas.
    pub fn new(text: &str) -> Words {
        let mut words = Vec::new();
        let mut word = String::new();
        for c in text.chars() {
            if c == ' ' || c == ',' {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                continue;
            }
            word.push(c);
        }
        if !word.is_empty() {
            words.push(word);
        }
        Words { text: text.to_string(), words, at: 0 }
    }
}

impl Iterator for Words {
    type Item = String;

    fn next(&mut self) -> Option<String> {
        let word = self.words.get(self.at).cloned();
        self.at += 1;
        word
    }
}
"#;

const SPLIT_MAIN: &str = r#"fn main() {
    for text in ["two words", ""] {
        for w in split::Words::new(text) {
            println!("{w}");
        }
    }
}
"#;

/// An iterator a test made or changed is drained after the calls where its items say what its
/// `Debug` text does not: `Words::new` splits as it is made and prints only its text; the
/// test that splits at a comma, which the run never did, reads the words, and fails when a
/// comma is dropped instead of splitting (which leaves the same words where it stands alone
/// or no comma is). (The run splits an empty text too: a sequence that went on to make
/// another object taking branches of its own, `Words::new("")`, would drain only that one.)
#[test]
fn an_iterator_a_test_made_is_drained_after_the_calls() {
    let (c, said) = explore_small("split", SPLIT_LIB, SPLIT_MAIN, "400");
    let tests = explored(&c.dir, "split", &said, 3);
    let drained = test_holding(&tests, &["split::Words::new(", ".by_ref().take(1000)"]);
    assert!(drained.contains("assert_eq!("), "{drained}");
    fail_after_edit(
        &c.dir,
        "split",
        (
            "if c == ' ' || c == ',' {",
            "if c == ',' {\n                continue;\n            }\n            if c == ' ' {",
        ),
    );
}

const NAMES_LIB: &str = r#"/// Whether two names are the same, letters compared without regard to their case unless
/// `sensitive`: how many letters differed only in case, or `None` when they differ.
pub fn same_name(a: &str, b: &str, sensitive: bool) -> Option<usize> {
    if a.len() != b.len() {
        return None;
    }
    let mut folded = 0;
    for (x, y) in a.chars().zip(b.chars()) {
        if x == y {
            continue;
        }
        if !sensitive && x.to_ascii_lowercase() == y.to_ascii_lowercase() {
            folded += 1;
            continue;
        }
        return None;
    }
    Some(folded)
}
"#;

const NAMES_MAIN: &str = r#"fn main() {
    println!("{:?}", names::same_name("Readme", "Readme", false));
    println!("{:?}", names::same_name("abc", "abd", true));
}
"#;

/// Where the crate folds case, a recorded text with its letters' case flipped joins the text
/// pool: the run compared names that differed in a letter or not at all, never in case; the
/// explored tests compare `"Readme"` with `"rEADME"`, reach the line that forgives the case,
/// and fail when it compares one side unfolded.
#[test]
fn where_the_crate_folds_case_texts_with_their_case_flipped_are_explored() {
    let (c, said) = explore_small("names", NAMES_LIB, NAMES_MAIN, "2000");
    let tests = explored(&c.dir, "names", &said, 1);
    assert!(
        tests.contains("\"rEADME\"") || tests.contains("\"ABC\""),
        "{tests}"
    );
    fail_after_edit(
        &c.dir,
        "names",
        (
            "x.to_ascii_lowercase() == y.to_ascii_lowercase()",
            "x.to_ascii_lowercase() == y",
        ),
    );
}

/// Distilling (issue 27): the kept tests are recorded alone beside the carved ones, and only
/// those that add a library line, an outcome, a value class, a value fault detected or a
/// comparison met first at its boundary to the carved tests and to each other stay; `--all`
/// keeps every one. `is_small(u32::MAX)` adds nothing to `is_small(100)`, the boundary of
/// `n < 100`, which a `<` made `<=` changes. What stays still tells a changed branch the
/// carved tests never ran.
#[test]
fn explored_tests_that_add_nothing_beside_the_carved_ones_leave_the_file() {
    let lib = "pub fn is_small(n: u32) -> bool {\n    n < 100\n}\n\n\
               pub fn to_hundred(n: u32) -> u32 {\n    if is_small(n) {\n        100 - n\n    \
               } else {\n        0\n    }\n}\n";
    let main =
        "fn main() {\n    println!(\"{} {}\", grades::is_small(7), grades::to_hundred(7));\n}\n";
    let c = carve_small_crate_distilled("grades", lib, main, &["--coverage"], &[]);
    assert!(c.recorded.status.success(), "{}", stderr(&c.recorded));
    let file = c.dir.join("tests/explored_grades.rs");
    let count = |text: &str| text.matches("#[test]").count();
    let args = ["--runs", "2000", "--seed", "1"];

    let all = explore(&c.dir, "tests", &args);
    assert!(all.status.success(), "{}", stderr(&all));
    assert!(!stdout(&all).contains("distilled:"), "{}", stdout(&all));
    let every = count(&std::fs::read_to_string(&file).unwrap());

    let out = explore_distilled(&c.dir, "tests", &args);
    let said = stdout(&out);
    assert!(out.status.success(), "{said}{}", stderr(&out));
    let kept_of = |said: &str| -> (usize, usize) {
        let at = said.find("distilled: kept ").expect("a distilled line") + 16;
        let words: Vec<&str> = said[at..].split_whitespace().collect();
        (words[0].parse().unwrap(), words[3].parse().unwrap())
    };
    let (kept, weighed) = kept_of(&said);
    assert_eq!(weighed, every, "{said}");
    assert!(0 < kept && kept < weighed, "{said}");
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(count(&text), kept, "{text}");
    assert!(text.contains("grades::is_small(100u32)"), "{text}");
    assert!(!text.contains("grades::is_small(u32::MAX)"), "{text}");
    // Every goal the carved and explored tests reach together is reached by those kept.
    let goals = said.split("they reach ").nth(1).unwrap();
    let words: Vec<&str> = goals.split_whitespace().collect();
    assert_eq!(words[0], words[3], "{said}");
    // `to_hundred` of a number not small is explored only: the kept tests see it change.
    fail_after_edit(&c.dir, "grades", ("        0\n", "        1\n"));
}

/// Issue 27: kept tests that differ in which method of one signature they call (a size in
/// kilobytes, megabytes, gigabytes) are one table of function pointers, each row named by
/// its method in the failure message.
#[test]
fn kept_tests_calling_other_methods_of_one_signature_are_a_table_of_methods() {
    let lib = "#[derive(Debug, Clone, Copy)]\npub struct Size(u64);\n\nimpl Size {\n    \
               pub fn new(bytes: u64) -> Size {\n        Size(bytes)\n    }\n\n    \
               pub fn kb(&self) -> u64 {\n        self.0 / 1000\n    }\n\n    \
               pub fn mb(&self) -> u64 {\n        self.0 / 1_000_000\n    }\n\n    \
               pub fn gb(&self) -> u64 {\n        self.0 / 1_000_000_000\n    }\n}\n";
    let main = "fn main() {\n    let s = sizes::Size::new(1_500_000_000);\n    \
                println!(\"{} {} {}\", s.kb(), s.mb(), s.gb());\n}\n";
    let c = carve_small_crate_distilled("sizes", lib, main, &["--coverage"], &[]);
    assert!(c.recorded.status.success(), "{}", stderr(&c.recorded));
    let out = explore_distilled(&c.dir, "tests", &["--runs", "3000", "--seed", "1"]);
    let said = stdout(&out);
    assert!(out.status.success(), "{said}{}", stderr(&out));
    let text = std::fs::read_to_string(c.dir.join("tests/explored_sizes.rs")).unwrap();
    let table = test_holding(
        &text,
        &[
            "fn explored_size_methods_table() {",
            "fn(&_) -> _",
            "for (bytes, method_name, method, ",
        ],
    );
    for row in ["\"kb\", sizes::Size::kb", "\"mb\", sizes::Size::mb"] {
        assert!(table.contains(row), "{table}");
    }
    assert!(table.contains("method(&size_"), "{table}");
    // Only the megabytes' row sees this: it names its method.
    edit(
        &c.dir.join("src/lib.rs"),
        "self.0 / 1_000_000\n",
        "self.0 / 1_000_000 + 1\n",
    );
    let ran = cargo_in(&c.dir, &["test", "--test", "explored_sizes"]);
    assert!(!ran.status.success(), "{}", stdout(&ran));
    assert!(
        stdout(&ran).contains("method_name = \"mb\""),
        "{}",
        stdout(&ran)
    );
}

/// Issue 27: kept tests that make the same calls with other values (a gauge made, raised and
/// looked at) are one table; its columns are the values that differ, inputs named by the
/// parameters they are passed to, and each check names the row that failed.
#[test]
fn kept_tests_of_one_sequence_with_other_values_are_written_as_a_table() {
    let lib = "#[derive(Debug, Clone, PartialEq)]\npub struct TooHigh(pub u8);\n\n\
               #[derive(Debug)]\npub struct Gauge {\n    level: u8,\n    max: u8,\n}\n\n\
               impl Gauge {\n    pub fn new(max: u8) -> Gauge {\n        Gauge { level: 0, max }\n    }\n\n    \
               pub fn raise(&mut self, by: u8) -> Result<u8, TooHigh> {\n        \
               if by > self.max - self.level {\n            return Err(TooHigh(by));\n        }\n        \
               self.level += by;\n        Ok(self.level)\n    }\n}\n";
    let main = "fn main() {\n    let mut g = gauges::Gauge::new(10);\n    println!(\"{:?}\", g.raise(3));\n}\n";
    let c = carve_small_crate_distilled("gauges", lib, main, &["--coverage"], &[]);
    assert!(c.recorded.status.success(), "{}", stderr(&c.recorded));
    let out = explore_distilled(&c.dir, "tests", &["--runs", "3000", "--seed", "1"]);
    let said = stdout(&out);
    assert!(out.status.success(), "{said}{}", stderr(&out));
    assert!(
        said.contains("the same calls as others with other values"),
        "{said}"
    );
    let text = std::fs::read_to_string(c.dir.join("tests/explored_gauges.rs")).unwrap();
    let table = test_holding(
        &text,
        &["fn explored_raise_table() {", "for (max, by, expected, "],
    );
    assert!(
        table.contains("let mut gauge_0 = gauges::Gauge::new(max);"),
        "{table}"
    );
    assert!(
        table.contains("\"max = {:?}, by = {:?}\", max, by);"),
        "{table}"
    );
    // Every row is an error: told otherwise, the first row says which values it was.
    edit(
        &c.dir.join("src/lib.rs"),
        "Err(TooHigh(by))",
        "Err(TooHigh(by.wrapping_add(1)))",
    );
    let ran = cargo_in(&c.dir, &["test", "--test", "explored_gauges"]);
    assert!(!ran.status.success(), "{}", stdout(&ran));
    assert!(stdout(&ran).contains("max = "), "{}", stdout(&ran));
}

/// Once distilled, the kept tests that are one call of one function with other values are
/// written as one table test (issue 27): a row each, named in its failure message, the
/// columns named after the function's parameters.
#[test]
fn kept_tests_of_one_call_with_other_values_are_written_as_a_table() {
    let lib = "fn below(x: i32, bound: i32) -> bool {\n    x < bound\n}\n\n\
               pub fn clamp_to(x: i32, lo: i32, hi: i32) -> i32 {\n    if below(x, lo) {\n        \
               lo\n    } else if below(hi, x) {\n        hi\n    } else {\n        x\n    }\n}\n";
    let main = "fn main() {\n    println!(\"{}\", clamps::clamp_to(5, 1, 10));\n}\n";
    let c = carve_small_crate_distilled("clamps", lib, main, &["--coverage"], &[]);
    assert!(c.recorded.status.success(), "{}", stderr(&c.recorded));
    let out = explore_distilled(&c.dir, "tests", &["--runs", "3000", "--seed", "1"]);
    let said = stdout(&out);
    assert!(out.status.success(), "{said}{}", stderr(&out));
    assert!(
        said.contains("written as 1 table test (a row each"),
        "{said}"
    );
    let text = std::fs::read_to_string(c.dir.join("tests/explored_clamps.rs")).unwrap();
    assert_eq!(text.matches("#[test]").count(), 1, "{text}");
    let table = test_holding(
        &text,
        &[
            "fn explored_clamp_to_table() {",
            "for (x, lo, hi, expected) in [",
        ],
    );
    assert!(
        table.contains("\"clamp_to({:?}, {:?}, {:?})\", x, lo, hi);"),
        "{table}"
    );
    // Only a row of the table takes `x < lo`: changed, the row says which call.
    edit(
        &c.dir.join("src/lib.rs"),
        "        lo\n",
        "        lo + 1\n",
    );
    let ran = cargo_in(&c.dir, &["test", "--test", "explored_clamps"]);
    assert!(!ran.status.success(), "{}", stdout(&ran));
    assert!(
        stdout(&ran).contains("clamp_to(5, 6, -1)"),
        "{}",
        stdout(&ran)
    );
}
