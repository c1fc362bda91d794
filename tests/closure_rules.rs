//! The replay-closure rule (`generator/src/arrange/closure.rs`) on a small real crate: the
//! recorder traces the closures the program passes to the traced library (only inside its
//! calls), and the generator rebuilds each such argument as a closure that gives back the
//! recorded answers, checks the recorded inputs and counts its calls; later calls whose
//! receiver's history holds such a call replay it the same way. Written, recorded through
//! ptrace, carved, the carved tests run with cargo and broken by an edit.

mod common;

use common::*;

/// A bag over memory the recorder does not follow (a raw pointer, as a small vector's heap
/// buffer): its state is rebuilt from its history, which holds the closure calls.
const LIB: &str = r#"
pub struct Bag {
    ptr: *mut u32,
    len: usize,
    cap: usize,
}

impl Bag {
    pub fn with_capacity(cap: usize) -> Bag {
        let mut items: Vec<u32> = Vec::with_capacity(cap);
        let ptr = items.as_mut_ptr();
        std::mem::forget(items);
        Bag { ptr, len: 0, cap }
    }

    pub fn push(&mut self, x: u32) {
        assert!(self.len < self.cap, "the bag is full");
        // SAFETY: `len < cap`, inside the allocation.
        unsafe { *self.ptr.add(self.len) = x };
        self.len += 1;
    }

    pub fn as_slice(&self) -> &[u32] {
        // SAFETY: the first `len` items were written.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// Keeps the items `keep` says yes to, as `keep` left them (it may change them).
    pub fn keep_where<F: FnMut(&mut u32) -> bool>(&mut self, mut keep: F) {
        let mut kept = 0;
        for i in 0..self.len {
            // SAFETY: `i < len`.
            let mut x = unsafe { *self.ptr.add(i) };
            if keep(&mut x) {
                unsafe { *self.ptr.add(kept) = x };
                kept += 1;
            }
        }
        self.len = kept;
    }

    /// Drops each item `same` says repeats the one kept before it.
    pub fn dedup_by<F: FnMut(&u32, &u32) -> bool>(&mut self, mut same: F) {
        if self.len == 0 {
            return;
        }
        let mut kept = 1;
        for i in 1..self.len {
            // SAFETY: `kept <= i < len`.
            let (x, last) = unsafe { (*self.ptr.add(i), *self.ptr.add(kept - 1)) };
            if !same(&x, &last) {
                unsafe { *self.ptr.add(kept) = x };
                kept += 1;
            }
        }
        self.len = kept;
    }

    /// How many items `f` says yes to (`Fn`: called through a shared reference).
    pub fn count_where<F: Fn(&u32) -> bool>(&self, f: F) -> usize {
        self.as_slice().iter().filter(|x| f(x)).count()
    }

    /// The first item, or what `otherwise` makes when there is none.
    pub fn first_or<F: FnOnce() -> u32>(&self, otherwise: F) -> u32 {
        match self.as_slice().first() {
            Some(&x) => x,
            None => otherwise(),
        }
    }

    pub fn sum(&self) -> u64 {
        self.as_slice().iter().map(|&x| u64::from(x)).sum()
    }
}

impl Drop for Bag {
    fn drop(&mut self) {
        // SAFETY: made by `with_capacity` from a `Vec` of this capacity.
        unsafe { drop(Vec::from_raw_parts(self.ptr, 0, self.cap)) };
    }
}
"#;

const MAIN: &str = r#"
fn main() {
    let mut b = bag::Bag::with_capacity(8);
    for x in [3u32, 10, 11, 25, 26, 40] {
        b.push(x);
    }
    let limit = 30;
    b.keep_where(|x| {
        *x += 1;
        *x < limit
    });
    b.dedup_by(|a, b| a / 10 == b / 10);
    println!("{:?} sum {}", b.as_slice(), b.sum());
    println!("{} over 10, first {}", b.count_where(|x| *x > 10), b.first_or(|| 0));
}
"#;

/// `keep_where` (`FnMut(&mut u32) -> bool`, the closure writing through its argument) and
/// `dedup_by` (`FnMut(&u32, &u32) -> bool`) are carved with replay closures, and so are the
/// calls after them on the same bag, whose history replays both; `count_where` (`Fn`) keeps its
/// replies in a `RefCell`, and `first_or`'s closure, never called, panics if it is. Breaking what `keep_where`
/// does with the closure's answer fails the later test; giving `dedup_by`'s closure its
/// arguments in the other order fails its own test (the recorded inputs are checked).
#[test]
fn closure_arguments_are_replayed_in_the_call_and_in_the_receivers_history() {
    // Only the bag's methods are selected: `main`'s closures are traced because they are
    // passed to them.
    let c = carve_small_crate("bag", LIB, MAIN, &["--filter", "bag::Bag*"]);
    let show = output_within(carve().args(["show", "--db"]).arg(&c.db), RECORD_LIMIT);
    let shown = stdout(&show);
    // Recorded inside the calls that got them, nowhere else.
    assert_eq!(
        shown.matches("bag::main::{{closure}}").count(),
        6 + 4 + 3,
        "{shown}"
    );
    // Captured in process, the calls that got them stop for the closures all the same (the
    // closures keep breakpoints), and the closure calls nest under them as before.
    let in_process = c.tmp.path().join("inprocess.db");
    let out = record(
        &in_process,
        &["--filter", "bag::Bag*", "--capture", "inprocess"],
        &c.dir.join("target/debug/bag"),
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let again = output_within(
        carve().args(["show", "--db"]).arg(&in_process),
        RECORD_LIMIT,
    );
    let calls = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.contains("bag::"))
            .map(|l| l.split_once(']').map_or(l, |(_, rest)| rest).to_string())
            .collect()
    };
    assert_eq!(calls(&stdout(&again)), calls(&shown));
    let file = std::fs::read_to_string(c.dir.join("tests/carved_bag.rs")).unwrap();
    assert_carved(
        &file,
        &c.summary,
        &[
            // keep_where: inputs checked, the write made again, the answers given back.
            "let mut replies = vec![",
            "(3u32, 4u32, true),",
            "(40u32, 41u32, false),",
            "let (seen, x_after, reply) = replies",
            ".expect(\"keep_where called its closure more often than recorded\");",
            "assert_eq!(*x, seen);",
            "*x = x_after;",
            "\"keep_where called its closure fewer times than recorded\",",
            // dedup_by: both inputs checked.
            "let (seen_a, seen_b, reply) = replies",
            "assert_eq!(*a, seen_a);",
            "assert_eq!(*b, seen_b);",
            "fn keep_where_with_closure()",
            "fn dedup_by_with_closure()",
            // count_where: `Fn`, so the replies sit in a `RefCell`.
            "let replies_3 = std::cell::RefCell::new(",
            "vec![(4u32, false), (11u32, true), (26u32, true)].into_iter()",
            ".borrow_mut()",
            // first_or: its closure was never called.
            "panic!(\"first_or called its closure, which it did not in the recording\")",
        ],
    );
    // The sum after both: its history replays them, each with its own replies.
    let at = file.find("fn sum_returns_41()").expect("the sum's test");
    let sum_test = file[at..].split("#[test]").next().unwrap();
    assert_carved(
        sum_test,
        &c.summary,
        &[
            "let mut replies = vec![",
            ".keep_where(|x| {",
            "let mut replies_2 = vec![",
            ".dedup_by(|a, b| {",
            "\"dedup_by called its closure fewer times than recorded\",",
            "assert_eq!(result, 41u64);",
        ],
    );
    assert!(!c.summary.contains("closure argument"), "{}", c.summary);
    let (in_scope, carved) = carved_share(&c.summary);
    assert_eq!(carved, in_scope, "{}", c.summary);
    // Kept items no longer stored: the bag's later state, and the sum, are wrong.
    assert_pass_then_fail_after(
        &c.dir,
        "unsafe { *self.ptr.add(kept) = x };\n                kept += 1;\n            }\n        }\n        self.len = kept;\n    }\n\n    /// Drops",
        "kept += 1;\n            }\n        }\n        self.len = kept;\n    }\n\n    /// Drops",
        "sum_returns_41",
    );
    edit(
        &c.dir.join("src/lib.rs"),
        "kept += 1;\n            }\n        }\n        self.len = kept;\n    }\n\n    /// Drops",
        "unsafe { *self.ptr.add(kept) = x };\n                kept += 1;\n            }\n        }\n        self.len = kept;\n    }\n\n    /// Drops",
    );
    // `dedup_by` gives its closure the kept item first: its own test sees the other order.
    assert_pass_then_fail_after(&c.dir, "!same(&x, &last)", "!same(&last, &x)", "dedup_by");
}

/// `file` without its whitespace and trailing commas: the rows of a replay closure as written,
/// whatever line breaks rustfmt chose.
fn unbroken(file: &str) -> String {
    let text: String = file.chars().filter(|c| !c.is_whitespace()).collect();
    text.replace(",]", "]")
}

/// A library whose closure calls sit under private helpers the recorder counts as repeats (a
/// call equivalent to an earlier sibling is not stored again, nor anything below it).
const TALLY_LIB: &str = r#"
/// How many of `xs` `f` says yes to.
pub fn count_where(xs: &[u32], f: impl Fn(u32) -> bool) -> usize {
    scan(xs, &f)
}

/// How many of `xs` `f` says yes to, counted twice over.
pub fn count_twice(xs: &[u32], f: impl Fn(u32) -> bool) -> usize {
    scan(xs, &f) + scan(xs, &f)
}

fn scan(xs: &[u32], f: &impl Fn(u32) -> bool) -> usize {
    let mut n = 0;
    for &x in xs {
        if ask(f, x) {
            n += 1;
        }
    }
    n
}

fn ask(f: &impl Fn(u32) -> bool, x: u32) -> bool {
    f(x)
}
"#;

const TALLY_MAIN: &str = r#"
fn main() {
    let xs = [5u32, 8, 5, 5, 9];
    println!("{}", tally::count_where(&xs, |x| x > 6));
    println!("{}", tally::count_twice(&xs, |x| x % 5 == 0));
}
"#;

/// `ask(f, 5)` repeats an earlier sibling (twice) and `count_twice`'s second `scan` repeats its
/// first: the closure calls below them are not in the trace, yet they were made, the same as
/// below the calls they repeat. The replay closure gives their answers at their places, each
/// once (a repeat's counterparts below a repeated parent are not counted again), and the tests
/// fail when the library asks its closure in another order.
#[test]
fn a_closure_called_under_repeated_calls_is_replayed_with_the_repeats_answers() {
    let c = carve_small_crate("tally", TALLY_LIB, TALLY_MAIN, &["--filter", "tally::*"]);
    let file = std::fs::read_to_string(c.dir.join("tests/carved_tally.rs"))
        .unwrap_or_else(|e| panic!("{e}: {}", c.summary));
    let rows = unbroken(&file);
    let once = "(5u32,false),(8u32,true),(5u32,false),(5u32,false),(9u32,true)";
    let twice = "(5u32,true),(8u32,false),(5u32,true),(5u32,true),(9u32,false)";
    for replies in [
        format!("vec![{once}].into_iter()"),
        format!("vec![{twice},{twice}].into_iter()"),
    ] {
        assert!(rows.contains(&replies), "{replies} in\n{file}");
    }
    assert!(!c.summary.contains("closure argument"), "{}", c.summary);
    assert_pass_then_fail_after(
        &c.dir,
        "for &x in xs {",
        "for &x in xs.iter().rev() {",
        "count_twice",
    );
}

/// An adaptor that keeps the program's closure and runs it when its items are asked for.
const ADAPT_LIB: &str = r#"
/// The items of `it` that `f` says yes to, as they are asked for.
pub struct Keep<I, F> {
    it: I,
    f: F,
}

impl<I: Iterator<Item = u32>, F: FnMut(&u32) -> bool> Iterator for Keep<I, F> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        for x in self.it.by_ref() {
            if (self.f)(&x) {
                return Some(x);
            }
        }
        None
    }
}

/// An adaptor keeping `f`: it runs when the items are asked for.
pub fn keep<I: Iterator<Item = u32>, F: FnMut(&u32) -> bool>(it: I, f: F) -> Keep<I, F> {
    Keep { it, f }
}

/// A test of numbers, `f`: no iterator, and a getter that does not run `f`.
pub struct Pred<F> {
    f: F,
}

impl<F: Fn(u32) -> bool> Pred<F> {
    pub fn holds(&self, x: u32) -> bool {
        (self.f)(x)
    }

    /// What it is called: a getter a check may read.
    pub fn name(&self) -> &'static str {
        "pred"
    }
}

pub fn pred<F: Fn(u32) -> bool>(f: F) -> Pred<F> {
    Pred { f }
}
"#;

const ADAPT_MAIN: &str = r#"
fn main() {
    let evens: Vec<u32> = adapt::keep(1u32..5, |x| x % 2 == 0).collect();
    let mut small = 0;
    for limit in [2u32, 3] {
        small += adapt::keep(1u32..4, |x| *x < limit).count();
    }
    let low = 2;
    let big = adapt::pred(move |x| x > low);
    println!("{evens:?} {small} {}", big.holds(3));
}
"#;

/// `keep` returns an adaptor holding the closure; the program's later `collect` and `count`
/// ran it. Each call of `keep` is carved with a replay closure answering the calls made while
/// its adaptor was used, up to the program's next closure of that type (the loop makes one per
/// round), and counted after the checks of the result, which run it. `pred` keeps its closure
/// in a value no check runs it through: not carved.
#[test]
fn a_closure_the_result_keeps_answers_the_calls_made_while_the_program_used_it() {
    let c = carve_small_crate("adapt", ADAPT_LIB, ADAPT_MAIN, &["--filter", "adapt::*"]);
    let file = std::fs::read_to_string(c.dir.join("tests/carved_adapt.rs"))
        .unwrap_or_else(|e| panic!("{e}: {}", c.summary));
    let rows = unbroken(&file);
    for replies in [
        "vec![(1u32,false),(2u32,true),(3u32,false),(4u32,true)]",
        "vec![(1u32,true),(2u32,false),(3u32,false)]",
        "vec![(1u32,true),(2u32,true),(3u32,false)]",
    ] {
        assert!(rows.contains(replies), "{replies} in\n{file}");
    }
    // The items first (they run the closure), then how often it ran.
    let items = r#"assert_eq!(format!("{:?}", result.collect::<Vec<_>>()), "[2, 4]");"#;
    let at = file
        .find(items)
        .unwrap_or_else(|| panic!("{items} in\n{file}"));
    assert!(
        file[at..].contains("keep called its closure fewer times than recorded"),
        "{file}"
    );
    // `pred` keeps its closure in a result no check of which runs it (no items to take): no
    // test would ask for the replies.
    assert!(c.summary.contains("(closure argument 1, "), "{}", c.summary);
    assert!(!file.contains("fn pred_"), "{file}");
    assert_pass_then_fail_after(&c.dir, "if (self.f)(&x) {", "if !(self.f)(&x) {", "keep");
}

/// The program as an integration test: its closure is `it::evens::{closure_env#0}`, the name
/// the `#[test]` harness's closure of the const `evens` bears too.
const ADAPT_IT: &str = r#"
#[test]
fn evens() {
    let evens: Vec<u32> = adapt_it::keep(1u32..5, |x| x % 2 == 0).collect();
    assert_eq!(evens, [2, 4]);
}
"#;

/// Recorded with `cargo carve record --test it`, the closure a test function passes is told
/// from the harness's closure of the same name (never called under the library's calls): its
/// calls are the replies.
#[test]
fn a_test_function_s_closure_is_told_from_the_harness_closure_of_the_same_name() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("adapt_it");
    let manifest =
        "[package]\nname = \"adapt_it\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n";
    write_tree(
        &dir,
        &[
            ("Cargo.toml", manifest),
            ("src/lib.rs", ADAPT_LIB),
            ("tests/it.rs", ADAPT_IT),
        ],
    );
    let record = cargo_carve_in(&dir, &["record", "--test", "it"], &[]);
    assert!(record.status.success(), "{}", stderr(&record));
    let generate = cargo_carve_in(&dir, &["generate", "--no-distil"], &[]);
    assert!(generate.status.success(), "{}", stderr(&generate));
    let carved: Vec<std::path::PathBuf> = std::fs::read_dir(dir.join("tests"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("carved_")
        })
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    let file = std::fs::read_to_string(&carved[0]).unwrap();
    let rows = unbroken(&file);
    assert!(
        rows.contains("vec![(1u32,false),(2u32,true),(3u32,false),(4u32,true)]"),
        "{file}\n{}",
        stderr(&generate)
    );
}

/// A library taking any iterator, given ones the program mapped with its closures.
const MAPPED_LIB: &str = r#"
/// The sum of the items.
pub fn total<I: Iterator<Item = u32>>(it: I) -> u32 {
    let mut sum = 0;
    for x in it {
        sum += x;
    }
    sum
}
"#;

const MAPPED_MAIN: &str = r#"
fn main() {
    let base = 10;
    println!("{}", mapped::total([1u32, 2, 3].iter().map(|x| x * base)));
    println!("{}", mapped::total((1u32..4).map(|x| x + 1)));
}
"#;

/// The recorder traces a closure an argument holds (`Map<I, F>`), under the call that got it,
/// and the test writes the `Map` as the program did, its closure a replay closure: the items
/// the library took went through it, and a library that takes fewer fails the test.
#[test]
fn a_map_the_program_gave_is_written_as_it_wrote_it_with_a_replay_closure() {
    // Only the library's function is selected: `main`'s closures are traced because an
    // argument holds them (`mapped::*` would select them as the program's own functions).
    let c = carve_small_crate(
        "mapped",
        MAPPED_LIB,
        MAPPED_MAIN,
        &["--filter", "mapped::total"],
    );
    let file = std::fs::read_to_string(c.dir.join("tests/carved_mapped.rs"))
        .unwrap_or_else(|e| panic!("{e}: {}", c.summary));
    let rows = unbroken(&file);
    for written in [
        "vec![(1u32,10u32),(2u32,20u32),(3u32,30u32)]",
        "[1u32,2u32,3u32].iter().map(|x|{",
        "vec![(1u32,2u32),(2u32,3u32),(3u32,4u32)]",
        "(1u32..4u32).map(|x|{",
    ] {
        assert!(rows.contains(written), "{written} in\n{file}");
    }
    assert!(!c.summary.contains("closure argument"), "{}", c.summary);
    assert_pass_then_fail_after(&c.dir, "for x in it {", "for x in it.take(2) {", "total");
}

/// Functions a program gives the library as values: a function item is zero-sized, and the
/// recorder names it by the function its instance's call shim calls.
const ITEMS_LIB: &str = r#"
pub fn double(x: u32) -> u32 {
    x * 2
}

pub fn apply<F: Fn(u32) -> u32>(f: F, x: u32) -> u32 {
    f(x)
}

/// The greatest of `items` by `compare`, the first of equals.
pub fn largest_by<T: Copy, F: FnMut(&T, &T) -> std::cmp::Ordering>(
    items: &[T],
    mut compare: F,
) -> Option<T> {
    let mut best: Option<T> = None;
    for &item in items {
        best = match best {
            Some(b) if compare(&b, &item) != std::cmp::Ordering::Less => Some(b),
            _ => Some(item),
        };
    }
    best
}

pub fn all_match<T, F: Fn(&T, &T) -> bool>(a: &[T], b: &[T], matches: F) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| matches(x, y))
}
"#;

const ITEMS_MAIN: &str = r#"
fn main() {
    println!("{}", items::apply(items::double, 4));
    println!("{:?}", items::largest_by(&[3u32, 9, 4], Ord::cmp));
    println!("{}", items::all_match(&[1u8, 2], &[1u8, 2], PartialEq::eq));
}
"#;

/// A function item argument is written as the program wrote it: a free function by its path, a
/// trait's method by the trait (`Ord::cmp`, its `Self` inferred as the program's was), and the
/// tests fail when the library uses it otherwise.
#[test]
fn a_function_item_argument_is_written_by_the_function_s_name() {
    let c = carve_small_crate("items", ITEMS_LIB, ITEMS_MAIN, &["--filter", "items::*"]);
    let file = std::fs::read_to_string(c.dir.join("tests/carved_items.rs"))
        .unwrap_or_else(|e| panic!("{e}: {}", c.summary));
    let rows = unbroken(&file);
    for written in [
        "items::apply(items::double,4u32)",
        "(&[3u32,9u32,4u32][..],Ord::cmp)",
        "(&[1u8,2u8][..],&[1u8,2u8][..],PartialEq::eq)",
    ] {
        assert!(rows.contains(written), "{written} in\n{file}");
    }
    assert!(!c.summary.contains("undecoded"), "{}", c.summary);
    assert_pass_then_fail_after(
        &c.dir,
        "compare(&b, &item) != std::cmp::Ordering::Less",
        "compare(&item, &b) != std::cmp::Ordering::Less",
        "largest_by",
    );
}

/// A trait of the library with a blanket impl over iterators, as itertools' `Itertools`.
const TOOLS_LIB: &str = r#"
pub trait Tools: Iterator {
    /// The sum of the items, taken two at a time.
    fn pair_sum(mut self) -> u64
    where
        Self: Sized,
        Self::Item: Into<u64>,
    {
        let mut total = 0u64;
        while let Some(a) = self.next() {
            total += a.into();
            if let Some(b) = self.next() {
                total += b.into();
            }
        }
        total
    }
}

impl<T: Iterator> Tools for T {}
"#;

const TOOLS_MAIN: &str = r#"
use tools::Tools;

fn main() {
    let k = 3u32;
    println!("{}", (1u32..5).map(|x| x * k).pair_sum());
}
"#;

/// A provided method run on a `Map` of the program's (the receiver's type names the closure):
/// the type is written with `_` for the closure, the receiver as the program made it with a
/// replay closure, and a method that skips items fails the test.
#[test]
fn a_map_receiver_of_a_provided_method_is_written_with_a_replay_closure() {
    let c = carve_small_crate("tools", TOOLS_LIB, TOOLS_MAIN, &["--filter", "tools::*"]);
    let file = std::fs::read_to_string(c.dir.join("tests/carved_tools.rs"))
        .unwrap_or_else(|e| panic!("{e}: {}", c.summary));
    let rows = unbroken(&file);
    for written in [
        "<std::iter::Map<std::ops::Range<u32>,_,>astools::Tools>::pair_sum(",
        "(1u32..5u32).map(|x|{",
        "vec![(1u32,3u32),(2u32,6u32),(3u32,9u32),(4u32,12u32)]",
    ] {
        assert!(rows.contains(written), "{written} in\n{file}");
    }
    assert!(!c.summary.contains("trait impl"), "{}", c.summary);
    assert_pass_then_fail_after(
        &c.dir,
        "                total += b.into();\n",
        "                let _ = b;\n",
        "pair_sum",
    );
}
