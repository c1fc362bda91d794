//! Distilling (issue 27): `carve generate --distil` keeps, of the verified tests, only those
//! that reach a library line or an outcome (variant, error, panic) of a function that no
//! other kept test reaches, and a value class (zero, sign, empty) of what a call or a call
//! inside it returned; the kept tests that are one call with other values are then folded
//! into table tests. Carved from small real programs whose loops call one function with
//! many inputs that take the same path.

mod common;

use common::*;

const LIB: &str = r#"/// Postage in cents for a parcel of `grams`.
pub fn postage(grams: u32) -> Result<u32, String> {
    if grams == 0 {
        return Err("an empty parcel".to_string());
    }
    if grams > 30_000 {
        return Err("over the 30 kg limit".to_string());
    }
    let base = 495;
    if grams <= 2_000 {
        Ok(base)
    } else {
        Ok(base + (grams - 2_000) / 500 * 120)
    }
}

/// Whether a parcel needs two hands.
pub fn is_heavy(grams: u32) -> bool {
    grams > 10_000
}
"#;

const MAIN: &str = r#"fn main() {
    // Seven small parcels take one path, three large ones another.
    for grams in [100, 250, 500, 750, 1_000, 1_500, 2_000, 2_500, 5_000, 9_000] {
        println!("{grams} g: {:?}", distilled::postage(grams));
    }
    println!("{:?}", distilled::postage(0));
    println!("{:?}", distilled::postage(40_000));
    for grams in [100, 2_000, 12_000, 20_000] {
        println!("{grams} g heavy: {}", distilled::is_heavy(grams));
    }
}
"#;

/// The `#[test]`s in the carved files of the crate at `dir`.
fn tests_in(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir.join("tests"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .map(|p| {
            std::fs::read_to_string(p)
                .unwrap()
                .matches("#[test]")
                .count()
        })
        .sum()
}

/// The carved file of the small crate `c` (`tests/carved_NAME.rs`).
fn carved(c: &SmallCrate) -> String {
    let name = c.dir.file_name().unwrap().to_string_lossy();
    std::fs::read_to_string(c.dir.join(format!("tests/carved_{name}.rs"))).unwrap()
}

/// That `summary` says distilling kept `kept` of `of` verified tests.
fn assert_kept(summary: &str, kept: usize, of: usize) {
    let line = format!("distilled: kept {kept} of {of} verified tests (--all keeps every one)");
    assert!(summary.contains(&line), "{summary}");
}

/// "they detect N of the M faults" from `summary`'s `distilled:` line: (N, M).
fn faults_detected(summary: &str) -> (usize, usize) {
    let line = summary
        .lines()
        .find(|l| l.starts_with("distilled:"))
        .unwrap_or_else(|| panic!("{summary}"));
    let at = line
        .find("they detect ")
        .unwrap_or_else(|| panic!("{line}"));
    let words: Vec<&str> = line[at..].split_whitespace().collect();
    (words[2].parse().unwrap(), words[5].parse().unwrap())
}

/// "… reach N of the M lines …" from the line of `summary` starting with `start`: (N, M).
fn reach(summary: &str, start: &str) -> (usize, usize) {
    let line = summary
        .lines()
        .find(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("a line starting {start:?} in {summary}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "reach").unwrap();
    (
        words[at + 1].parse().unwrap(),
        words[at + 4].parse().unwrap(),
    )
}

#[test]
fn the_distilled_suite_keeps_one_test_per_path_and_outcome_and_still_catches_a_change() {
    let c = carve_small_crate_distilled("distilled", LIB, MAIN, &["--coverage"], &[]);
    // 12 calls of postage and 4 of is_heavy, each its own verified test. Kept: postage's small
    // parcel and large parcel (two paths to `Ok`) and its two errors, is_heavy's `true` and
    // `false`; five outcomes in all.
    assert_kept(&c.summary, 6, 16);
    // The kept tests of one function are one call with other arguments and results: each
    // function's become one table test, a row per kept test.
    assert!(
        c.summary
            .contains("written as 2 tests, 2 of them tables of the kept tests"),
        "{}",
        c.summary
    );
    assert_eq!(tests_in(&c.dir), 2, "{}", c.summary);
    let carved = carved(&c);
    assert_carved(
        &carved,
        &c.summary,
        &[
            "fn postage_recorded_cases()",
            "(0u32, Err(String::from(\"an empty parcel\"))),",
            "let result = distilled::postage(case.0);",
            "assert_eq!(result, case.1, \"case {i}\");",
            "fn is_heavy_recorded_cases()",
        ],
    );
    let (lines, all_lines) = reach(&c.summary, "distilled:");
    assert_eq!(lines, all_lines, "{}", c.summary);
    assert!(
        c.summary.contains(", 5 of the 5 outcomes per function"),
        "{}",
        c.summary
    );
    // The kept tests, measured again as written, reach what the recording reached.
    let (reached, recorded) = reach(&c.summary, "carved tests reach");
    assert_eq!(reached, recorded, "{}", c.summary);

    // The kept tests pass, and a one-line change in the large-parcel branch fails one.
    assert_pass_then_fail_after(
        &c.dir,
        "/ 500 * 120",
        "/ 500 * 121",
        "postage_recorded_cases",
    );
    edit(&c.dir.join("src/lib.rs"), "/ 500 * 121", "/ 500 * 120");

    // Every verified test, as before distilling: the lines the kept tests reach are theirs.
    let summary = generate_distilled_into_tests(&c.dir, &c.db, &["--all"]);
    assert!(!summary.contains("distilled:"), "{summary}");
    assert_eq!(tests_in(&c.dir), 16, "{summary}");
    assert_eq!(
        reach(&summary, "carved tests reach"),
        (reached, recorded),
        "{summary}"
    );
}

const GROUPS_LIB: &str = r#"fn divmod100(v: u32) -> (u32, u32) {
    let q = v / 100;
    (q, v - q * 100)
}

/// `v` as hundreds and the rest: `2|07` for 207.
pub fn hundreds(v: u32) -> String {
    let (q, r) = divmod100(v);
    format!("{q}|{r:02}")
}
"#;

const GROUPS_MAIN: &str = r#"fn main() {
    for v in [42, 57, 200, 301] {
        println!("{}", distilled_classes::hundreds(v));
    }
}
"#;

#[test]
fn a_zero_returned_inside_a_call_keeps_the_test_that_tells_a_mutant_apart() {
    let c = carve_small_crate_distilled(
        "distilled_classes",
        GROUPS_LIB,
        GROUPS_MAIN,
        &["--coverage"],
        &[],
    );
    // Every call runs the same lines to the same outcome, a text. Inside, `divmod100` returns
    // a zero quotient (42, 57), a zero rest (200) or neither (301): the two tests that give
    // each number of its pair both classes are kept (with the text not empty and the helper
    // returning: six classes).
    assert_kept(&c.summary, 2, 4);
    assert!(
        c.summary.contains("and 6 of the 6 value classes"),
        "{}",
        c.summary
    );
    // `v + q * 100` for `v - q * 100` is the same wherever `q` is 0: only the test of 200, kept
    // for its zero rest, tells it apart (the two kept tests are the rows of one table, the
    // failure names the row: "case 0").
    assert_pass_then_fail_after(
        &c.dir,
        "v - q * 100",
        "v + q * 100",
        "hundreds_recorded_cases",
    );
}

const LEXER_LIB: &str = r#"/// Words of a text, and the line the reader is on.
pub struct Lexer<'a> {
    text: &'a [u8],
    at: usize,
    pub line: u32,
}

impl<'a> Lexer<'a> {
    pub fn new(text: &'a str) -> Lexer<'a> {
        Lexer { text: text.as_bytes(), at: 0, line: 1 }
    }

    fn next_byte(&mut self) -> Option<u8> {
        let b = *self.text.get(self.at)?;
        self.at += 1;
        if b == b'\n' {
            self.line += 1;
        }
        Some(b)
    }

    /// The next word, and the space or newline after it.
    pub fn word(&mut self) -> Option<String> {
        let mut word = String::new();
        while let Some(b) = self.next_byte() {
            if b == b' ' || b == b'\n' {
                break;
            }
            word.push(b as char);
        }
        if word.is_empty() {
            None
        } else {
            Some(word)
        }
    }
}

/// The first `n` words of `text`.
pub fn first_words(text: &str, n: usize) -> Vec<String> {
    let mut lexer = Lexer::new(text);
    (0..n).filter_map(|_| lexer.word()).collect()
}
"#;

const LEXER_MAIN: &str = r#"fn main() {
    println!("{:?}", distilled_seen::first_words("one two\nthree", 2));
}
"#;

#[test]
fn a_counter_moved_inside_a_call_counts_only_where_the_test_can_see_it() {
    let c = carve_small_crate_distilled(
        "distilled_seen",
        LEXER_LIB,
        LEXER_MAIN,
        &["--coverage"],
        &[],
    );
    // `first_words` runs every line of `word` and moves `line` in a lexer of its own, which
    // nothing of its test compares. Of the two `word` calls inside it, the test of the one that
    // crosses the newline checks `line` after: it is kept for that, and a change in how lines
    // are counted fails it.
    assert_kept(&c.summary, 3, 4);
    // The counts are of the tests the files hold: those kept, of which those of `word` are on
    // a method.
    let written = tests_in(&c.dir);
    let file = carved(&c);
    let on_methods = file.matches("fn word_").count();
    assert!(
        c.summary.contains(&format!("tests written: {written} "))
            && c.summary
                .contains(&format!("on methods: {on_methods} tests")),
        "{written} tests in the files, {on_methods} of `word`: {}",
        c.summary
    );
    assert_pass_then_fail_after(
        &c.dir,
        "self.line += 1",
        "self.line += 2",
        "word_returns_some_two",
    );
}

const KINDS_LIB: &str = r#"/// How big a number is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    Small,
    Big,
}

fn kind_of(n: u32) -> (u32, Kind) {
    let kind = [Kind::Small, Kind::Big][usize::from(n >= 10)];
    (n, kind)
}

/// `n` and its kind: `12:Big`.
pub fn label(n: u32) -> String {
    let (n, kind) = kind_of(n);
    format!("{n}:{kind:?}")
}
"#;

const KINDS_MAIN: &str = r#"fn main() {
    for n in [3, 5, 12] {
        println!("{}", distilled_kinds::label(n));
    }
}
"#;

#[test]
fn a_variant_inside_a_value_keeps_the_test_that_reached_it() {
    let c = carve_small_crate_distilled(
        "distilled_kinds",
        KINDS_LIB,
        KINDS_MAIN,
        &["--coverage"],
        &[],
    );
    // Every call runs the same lines to the same outcome, a text; inside, `kind_of` returns
    // `Small` for 3 and 5, `Big` for 12: the test of 12 is kept for its variant.
    assert_kept(&c.summary, 2, 3);
    // A change that only `Big` shows fails the kept tests.
    assert_pass_then_fail_after(
        &c.dir,
        "[Kind::Small, Kind::Big]",
        "[Kind::Small, Kind::Small]",
        "label_recorded_cases",
    );
}

const LIMIT_LIB: &str = r#"/// Where small ends.
pub const LIMIT: u32 = 100;

fn size_name(n: u32) -> &'static str {
    if n < LIMIT {
        return "small";
    }
    let mut name = "large";
    if n >= 10 * LIMIT {
        name = "huge";
    }
    name
}

/// `n` and whether it is small: `5 is small`.
pub fn describe(n: u32) -> String {
    format!("{n} is {}", size_name(n))
}
"#;

const LIMIT_MAIN: &str = r#"fn main() {
    for n in [5, 1000, 100] {
        println!("{}", distilled_limit::describe(n));
    }
}
"#;

#[test]
fn an_input_exactly_at_a_constant_of_the_crate_keeps_its_test() {
    let c = carve_small_crate_distilled(
        "distilled_limit",
        LIMIT_LIB,
        LIMIT_MAIN,
        &["--coverage"],
        &[],
    );
    // 1000 runs every line 100 runs, to the same outcome and classes; 100 is `LIMIT`, the
    // only input that tells `n < LIMIT` from `n <= LIMIT`: its test is kept too.
    assert_kept(&c.summary, 3, 3);
    assert_pass_then_fail_after(&c.dir, "n < LIMIT", "n <= LIMIT", "describe_recorded_cases");
}

const TALLY_LIB: &str = r#"/// Numbers added one by one.
pub struct Tally {
    values: Vec<u32>,
}

impl Tally {
    pub fn new() -> Tally {
        Tally { values: Vec::new() }
    }
    pub fn add(&mut self, v: u32) {
        self.values.push(v);
    }
    pub fn total(&self) -> u32 {
        self.values.iter().sum()
    }
    pub fn undo(&mut self) -> Option<u32> {
        self.values.pop()
    }
    pub fn largest(&self) -> Option<u32> {
        self.values.iter().copied().max()
    }
}
"#;

const TALLY_MAIN: &str = r#"fn main() {
    let mut tally = distilled_story::Tally::new();
    tally.add(4);
    tally.add(9);
    println!("total {}", tally.total());
    tally.add(2);
    println!("undone {:?}", tally.undo());
    println!("largest {:?}", tally.largest());
}
"#;

#[test]
fn tests_that_take_the_first_steps_of_a_longer_one_are_checked_inside_it() {
    let c = carve_small_crate_distilled(
        "distilled_story",
        TALLY_LIB,
        TALLY_MAIN,
        &["--coverage"],
        &[],
    );
    // `total` after two `add`s, `undo` after three, `largest` after `undo`: one tally's life.
    // The longest arrangement takes the others in, each call checked where it makes it.
    assert!(c.summary.contains("1 of them stories"), "{}", c.summary);
    let file = carved(&c);
    let story = file
        .split("#[test]")
        .find(|t| t.contains("fn tally_steps_to_largest()"))
        .unwrap_or_else(|| panic!("a story test in {file}"));
    for check in ["tally.total()", "tally.undo()"] {
        assert!(story.contains(check), "{check} in {story}");
    }
    // A change only `total` shows fails the story.
    assert_pass_then_fail_after(
        &c.dir,
        "self.values.iter().sum()",
        "self.values.iter().sum::<u32>() + 1",
        "tally_steps_to_largest",
    );
}

const ESCAPE_LIB: &str = r#"/// How long `s` is once each `$` and `\` is escaped: the same lines for every input.
pub fn escaped_len(s: &str) -> usize {
    let mut n = 0;
    for b in s.bytes() {
        n += 1 + usize::from(b == b'$' || b == b'\\');
    }
    n
}
"#;

const ESCAPE_MAIN: &str = r#"fn main() {
    for s in ["alpha", "beta gamma", "cost $5"] {
        println!("{s}: {}", distilled_chars::escaped_len(s));
    }
}
"#;

#[test]
fn a_kind_of_character_only_one_input_holds_keeps_its_test() {
    let c = carve_small_crate_distilled(
        "distilled_chars",
        ESCAPE_LIB,
        ESCAPE_MAIN,
        &["--coverage"],
        &[],
    );
    // The three calls run the same lines to a positive number; only "cost $5" holds a `$`
    // (and a digit, and whitespace, as "beta gamma" does): its test is the one kept, not the
    // first ("alpha"), and it sees a change in which character is escaped.
    assert_kept(&c.summary, 1, 3);
    let file = carved(&c);
    assert!(file.contains("\"cost $5\""), "{file}");
    assert_pass_then_fail_after(&c.dir, "b == b'$'", "b == b'#'", "escaped_len");
}

const WORDS_LIB: &str = r#"/// The words of a text, one by one.
pub struct Words {
    text: String,
    at: usize,
}

impl Words {
    pub fn new(text: &str) -> Words {
        Words { text: text.to_string(), at: 0 }
    }
}

impl Iterator for Words {
    type Item = String;
    fn next(&mut self) -> Option<String> {
        let rest = &self.text[self.at..];
        let start = rest.len() - rest.trim_start().len();
        if start == rest.len() {
            return None;
        }
        let word: String = rest[start..].chars().take_while(|c| !c.is_whitespace()).collect();
        self.at += start + word.len();
        Some(word)
    }
}
"#;

const WORDS_MAIN: &str = r#"fn main() {
    let mut words = distilled_words::Words::new("one two");
    println!("{:?}", words.next());
    println!("{:?}", words.next());
    println!("{:?}", words.next());
}
"#;

#[test]
fn a_call_with_no_step_before_it_is_a_row_of_the_calls_after_some() {
    let c = carve_small_crate_distilled(
        "distilled_words",
        WORDS_LIB,
        WORDS_MAIN,
        &["--coverage"],
        &[],
    );
    // `next()` on the fresh iterator (a word) and after two steps (none): one table whose
    // count column holds 0.
    let file = carved(&c);
    assert!(file.contains("for _ in 0..case.0"), "{file}");
    assert!(
        file.contains("(0usize, Some(String::from(\"one\")))"),
        "{file}"
    );
    // Beside it, `Words::new`'s own test (its result checked by the items it gives).
    assert_eq!(tests_in(&c.dir), 2, "{file}");
    assert_pass_then_fail_after(
        &c.dir,
        "self.at += start + word.len();",
        "self.at += start + word.len() + 1;",
        "next_recorded_cases",
    );
}

const RANGE_LIB: &str = r#"/// Whether `c` is in `lo..=hi`, a letter of either case alike when `fold`.
fn in_range(c: char, lo: char, hi: char, fold: bool) -> bool {
    if fold {
        let c = c.to_ascii_lowercase();
        if c >= lo && c <= hi {
            return true;
        }
        return false;
    }
    c >= lo && c <= hi
}

/// Whether `name` is a `.txt` file whose first letter is in `lo..=hi`.
pub fn matches(name: &str, lo: char, hi: char, fold: bool) -> bool {
    let Some(first) = name.chars().next() else {
        return false;
    };
    if !in_range(first, lo, hi, fold) {
        return false;
    }
    name.ends_with(".txt")
}
"#;

const RANGE_MAIN: &str = r#"fn main() {
    let names = [
        ("main.rs", true),
        ("B.txt", true),
        ("b.rs", true),
        ("x.txt", false),
        ("a.txt", false),
        ("zed.txt", true),
        ("", false),
    ];
    for (name, fold) in names {
        println!("{name} {fold}: {}", distilled_faults::matches(name, 'a', 'c', fold));
    }
}
"#;

#[test]
fn a_fault_only_one_test_detects_on_its_path_keeps_that_test() {
    let c = carve_small_crate_distilled(
        "distilled_faults",
        RANGE_LIB,
        RANGE_MAIN,
        &["--coverage"],
        &[],
    );
    // "main.rs" and "zed.txt" (folding) run the same lines to the same `false`, inside and
    // out, with the same kinds of character: lines, outcomes and classes keep the first (the
    // fifth session's distil did). Made to answer `true` there, `in_range` changes only what
    // "zed.txt" gives (it is a `.txt`): that fault, on the folding lines, keeps "zed.txt" — the
    // one input that sees a `&&` made `||` there.
    let (kept, all) = faults_detected(&c.summary);
    assert_eq!(kept, all, "{}", c.summary);
    let file = carved(&c);
    assert!(file.contains("\"zed.txt\""), "{file}");
    assert!(!file.contains("\"main.rs\""), "{file}");
    assert_pass_then_fail_after(
        &c.dir,
        "if c >= lo && c <= hi {",
        "if c >= lo || c <= hi {",
        "matches",
    );
}

const FIELD_LIB: &str = r#"/// How many characters `n` takes printed.
fn width(n: u32) -> usize {
    n.to_string().len()
}

/// How wide a column printing `n` is: four characters at least.
pub fn field(n: u32) -> usize {
    width(n).max(4)
}
"#;

const FIELD_MAIN: &str = r#"fn main() {
    for n in [12, 7, 12345] {
        println!("{n}: {}", distilled_width::field(n));
    }
}
"#;

#[test]
fn an_integer_one_off_that_only_one_test_sees_keeps_that_test() {
    let c = carve_small_crate_distilled(
        "distilled_width",
        FIELD_LIB,
        FIELD_MAIN,
        &["--coverage"],
        &[],
    );
    // The three calls run the same lines to a positive number, inside and out: lines,
    // outcomes and classes keep the first, 12 (the fifth session's distil did). `width`
    // answering one more or one less changes only what 12345 gives (the other two are padded
    // to 4): that test is the one kept.
    assert_kept(&c.summary, 1, 3);
    let file = carved(&c);
    assert!(file.contains("12345u32"), "{file}");
    assert!(!file.contains("(12u32)"), "{file}");
    assert_pass_then_fail_after(
        &c.dir,
        "n.to_string().len()",
        "n.to_string().len() + 1",
        "field",
    );
}

const COLUMN_LIB: &str = r#"/// The first letter of each word of `name`.
fn initials(name: &str) -> String {
    let mut out = String::new();
    for word in name.split(' ') {
        out.push_str(&word[..1]);
    }
    out
}

/// How wide a column of `name`'s initials is: two characters at least.
pub fn column(name: &str) -> usize {
    initials(name).len().max(2)
}
"#;

const COLUMN_MAIN: &str = r#"fn main() {
    for name in ["Ada Lovelace", "Alan Turing", "Ada King Lovelace"] {
        println!("{name}: {}", distilled_initials::column(name));
    }
}
"#;

#[test]
fn a_text_made_empty_that_only_one_test_sees_keeps_that_test() {
    let c = carve_small_crate_distilled(
        "distilled_initials",
        COLUMN_LIB,
        COLUMN_MAIN,
        &["--coverage"],
        &[],
    );
    // The three calls run the same lines to a number, inside and out: lines, outcomes and
    // classes keep the first. `initials` made to answer an empty text changes only what the
    // three-word name gives (the other two are padded to 2): that test is the one kept.
    assert_kept(&c.summary, 1, 3);
    let (kept, all) = faults_detected(&c.summary);
    assert_eq!(kept, all, "{}", c.summary);
    assert_ne!(kept, 0, "{}", c.summary);
    let file = carved(&c);
    assert!(file.contains("\"Ada King Lovelace\""), "{file}");
    assert!(!file.contains("\"Ada Lovelace\""), "{file}");
    assert_pass_then_fail_after(
        &c.dir,
        "initials(name).len().max(2)",
        "initials(name).len().max(2).min(2)",
        "column",
    );
}

const HALF_LIB: &str = r#"/// Whether `n` is even, and why not.
fn check(n: u32) -> Result<(), String> {
    if n % 2 == 1 {
        return Err("odd".to_string());
    }
    Ok(())
}

/// Half of `n`; two at least for an odd `n`.
pub fn half(n: u32) -> u32 {
    match check(n) {
        Ok(()) => n / 2,
        Err(_) => (n / 2).max(2),
    }
}
"#;

const HALF_MAIN: &str = r#"fn main() {
    for n in [7, 9, 3] {
        println!("{n}: {}", distilled_half::half(n));
    }
}
"#;

#[test]
fn an_err_made_ok_that_only_one_test_sees_keeps_that_test() {
    let c =
        carve_small_crate_distilled("distilled_half", HALF_LIB, HALF_MAIN, &["--coverage"], &[]);
    // The three calls run the same lines to a number, inside and out: lines, outcomes and
    // classes keep the first. `check` made to answer `Ok(())` changes only what 3 gives (7
    // and 9 halve to more than two anyway): that test is the one kept.
    assert_kept(&c.summary, 1, 3);
    let (kept, all) = faults_detected(&c.summary);
    assert_eq!(kept, all, "{}", c.summary);
    assert_ne!(kept, 0, "{}", c.summary);
    let file = carved(&c);
    assert!(file.contains("half(3u32)"), "{file}");
    assert_pass_then_fail_after(&c.dir, "(n / 2).max(2)", "n / 2", "half");
}

const PAD_LIB: &str = r#"/// Pads `text` with dots to four characters.
fn pad(text: &mut String) {
    while text.len() < 4 {
        text.push('.');
    }
}

/// How many columns `name` takes padded, in a column three wide.
pub fn columns(name: &str) -> usize {
    let mut text = name.to_string();
    pad(&mut text);
    text.len().min(3)
}
"#;

const PAD_MAIN: &str = r#"fn main() {
    for name in ["abc", "xyz", "ab"] {
        println!("{name}: {}", distilled_pad::columns(name));
    }
}
"#;

#[test]
fn an_effect_left_undone_that_only_one_test_sees_keeps_that_test() {
    let c = carve_small_crate_distilled("distilled_pad", PAD_LIB, PAD_MAIN, &["--coverage"], &[]);
    // The three calls run the same lines to 3, inside and out (`pad` changes the text each
    // time): lines, outcomes and classes keep the first. `pad` made to return at once leaves
    // the text as it was, which changes only what the two-letter name gives (three letters
    // still fill the column): that test is the one kept.
    assert_kept(&c.summary, 1, 3);
    let (kept, all) = faults_detected(&c.summary);
    assert_eq!(kept, all, "{}", c.summary);
    assert_ne!(kept, 0, "{}", c.summary);
    let file = carved(&c);
    assert!(file.contains("columns(\"ab\")"), "{file}");
    assert_pass_then_fail_after(&c.dir, "text.len() < 4", "text.len() < 2", "columns");
}

/// The three `columns` tests all return 3, so each needed its argument to tell it apart
/// (`columns_abc_returns_3`, `columns_xyz_returns_3`, `columns_ab_returns_3`); distilling
/// keeps one (the one whose padding a fault undoes: `"ab"`), named among the tests its file
/// keeps: `columns_returns_3`.
#[test]
fn a_kept_test_is_named_among_the_tests_its_file_keeps() {
    let main = PAD_MAIN.replace("distilled_pad", "distilled_names");
    let c = carve_small_crate_distilled("distilled_names", PAD_LIB, &main, &["--coverage"], &[]);
    assert_kept(&c.summary, 1, 3);
    let file = carved(&c);
    assert!(
        file.contains("fn columns_returns_3()"),
        "{file}\n{}",
        c.summary
    );
    assert!(file.contains("columns(\"ab\")"), "{file}");
    let (ok, out) = cargo_test(&c.dir);
    assert!(ok && out.contains("columns_returns_3 ... ok"), "{out}");
}

const COUNTDOWN_LIB: &str = r#"/// Whether a countdown is over.
fn finished(left: u32) -> bool {
    left == 0
}

/// How many steps a countdown from `n` takes.
pub fn countdown(n: u32) -> u32 {
    let mut left = n;
    let mut taken = 0u32;
    while !finished(left) {
        left = left.wrapping_sub(1);
        taken = taken.wrapping_add(1);
    }
    taken
}

/// Whether a countdown from `n` is over before it starts.
pub fn over(n: u32) -> bool {
    finished(n)
}
"#;

const COUNTDOWN_MAIN: &str = r#"fn main() {
    println!("{}", distilled_hang::countdown(0));
    println!("{}", distilled_hang::over(0));
}
"#;

#[test]
fn a_test_a_fault_makes_hang_detects_it_and_the_tests_after_it_are_run_again() {
    let c = carve_small_crate_distilled(
        "distilled_hang",
        COUNTDOWN_LIB,
        COUNTDOWN_MAIN,
        &["--coverage"],
        &[],
    );
    // Both tests ask for `finished` made `false`: one run of the test binary with both named.
    // countdown's test (first by name) then never ends: it is killed past its limit and
    // detects the fault; over's test, not run yet, runs again on its own and fails.
    assert!(
        c.summary.contains("kept 2 of 2 verified tests"),
        "{}",
        c.summary
    );
    assert!(c.summary.contains("; 2 runs)"), "{}", c.summary);
    let (kept, all) = faults_detected(&c.summary);
    assert_eq!(kept, all, "{}", c.summary);
    assert_ne!(kept, 0, "{}", c.summary);
}

const BUF_LIB: &str = r#"/// A byte buffer that keeps a capacity of its own.
#[derive(Debug, Default, PartialEq)]
pub struct Buf {
    data: Vec<u8>,
    cap: usize,
}

impl Buf {
    pub fn new() -> Buf {
        Buf::default()
    }

    /// Makes room for `more` bytes more.
    pub fn reserve(&mut self, more: usize) {
        if self.cap - self.data.len() >= more {
            return;
        }
        self.cap = self.data.len() + more;
    }

    pub fn push(&mut self, byte: u8) {
        self.reserve(1);
        self.data.push(byte);
        self.cap = self.cap.max(self.data.len());
    }

    pub fn capacity(&self) -> usize {
        self.cap
    }
}
"#;

const BUF_MAIN: &str = r#"fn main() {
    let mut pushed = distilled_buf::Buf::new();
    pushed.push(7);
    let mut kept = distilled_buf::Buf::new();
    kept.reserve(0);
    let mut grown = distilled_buf::Buf::new();
    grown.reserve(4);
    println!("{} {} {}", pushed.capacity(), kept.capacity(), grown.capacity());
}
"#;

/// Every `reserve` returns `()`, and `push`'s test runs the line that grows (through its own
/// `reserve(1)`, which `push` makes up for): lines and outcomes alone kept the one `reserve`
/// test that left the buffer as it was (smallvec's case). A call that changed its receiver
/// and one that left it are two outcomes: a `reserve` that grows is kept too, and a `reserve`
/// that never grows is caught.
#[test]
fn a_call_that_changed_its_receiver_and_one_that_left_it_keep_a_test_each() {
    let c = carve_small_crate_distilled("distilled_buf", BUF_LIB, BUF_MAIN, &["--coverage"], &[]);
    let file = carved(&c);
    assert!(file.contains(".reserve(0usize)"), "{file}");
    let grows = file.contains(".reserve(1usize)") || file.contains(".reserve(4usize)");
    assert!(grows, "{file}");
    assert_pass_then_fail_after(
        &c.dir,
        "if self.cap - self.data.len() >= more {",
        "if true {",
        "reserve",
    );
}

const INSTANCES_LIB: &str = r#"/// Half of an even `n`; a large one is logged first.
pub fn halve<T: Into<i64>>(n: T) -> Result<i64, String> {
    let n: i64 = n.into();
    if n % 2 != 0 {
        return Err(format!("{n} is odd"));
    }
    if n.abs() > 1_000 {
        eprintln!("halving a large {n}");
    }
    Ok(n / 2)
}
"#;

const INSTANCES_MAIN: &str = r#"fn main() {
    // Two instances of one generic function past a cap of two calls (per function): `u32`'s
    // first two (a zero half among them) are tests, its other two (a large one) a table;
    // every `i16` call is past the cap, and only their table holds a negative half.
    for n in [0u32, 2, 4, 5_000] {
        println!("{:?}", instances::halve(n));
    }
    for n in [8i16, -4, 12] {
        println!("{:?}", instances::halve(n));
    }
}
"#;

/// The calls of a function past `--max-per-function` are one table per instance of the
/// generic function (`halve::<i16>`, `halve::<u32>`); a kept test of the same shape joins
/// its instance's table rather than standing beside it (`halve(0u32)`, whose zero result
/// distilling keeps), and the second table of one name is told by its type, not by a number
/// (itoa's `format_recorded_cases_2` to `_6`).
#[test]
fn kept_tests_join_the_table_of_their_calls_and_tables_of_one_name_are_told_by_type() {
    let c = carve_small_crate_distilled(
        "instances",
        INSTANCES_LIB,
        INSTANCES_MAIN,
        &[],
        &["--max-per-function", "2"],
    );
    let carved = carved(&c);
    assert_carved(
        &carved,
        &c.summary,
        &[
            "fn halve_recorded_cases()",
            "fn halve_u32_recorded_cases()",
            "(5000u32, 2500i64), (0u32, 0i64)]",
        ],
    );
    assert!(
        !carved.contains("recorded_cases_2"),
        "{carved}\n{}",
        c.summary
    );
    assert!(!carved.contains("halve(0u32)"), "{carved}\n{}", c.summary);
    assert_pass_then_fail_after(
        &c.dir,
        "Ok(n / 2)",
        "Ok(n / 2 + 1)",
        "halve_u32_recorded_cases",
    );
}
