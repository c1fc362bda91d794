//! One test per generator rule met on real crates: each writes a small real crate shaped like what
//! real crates do, records its program through ptrace, carves tests, runs them with cargo, and
//! checks that they fail once the behaviour they recorded changes.

mod common;

use common::*;

/// Writes the crate, carves it, runs the carved tests; returns the crate dir and what generate said.
fn carve_crate(lib: &str, main: &str) -> (tempfile::TempDir, std::path::PathBuf, String) {
    carve_crate_recorded_with(lib, main, &[])
}

/// [`carve_crate`], recording with `record_flags` (`--filter ...`).
fn carve_crate_recorded_with(
    lib: &str,
    main: &str,
    record_flags: &[&str],
) -> (tempfile::TempDir, std::path::PathBuf, String) {
    let c = carve_small_crate("shapes", lib, main, record_flags);
    (c.tmp, c.dir, c.summary)
}

/// Slices, arrays and vectors, empty or not, passed to plain and generic parameters
/// (`fn f<T: AsRef<[u8]>>(data: T)` recorded with `T = &[u8]`): written as their recorded type.
#[test]
fn sequences_and_generic_instances_are_written_as_their_recorded_type() {
    let lib = r#"
pub fn checksum<T: AsRef<[u8]>>(data: T) -> u32 {
    data.as_ref().iter().map(|b| u32::from(*b)).sum()
}
pub fn total(xs: &[u32]) -> u64 {
    xs.iter().map(|x| u64::from(*x)).sum()
}
pub fn last_or_zero(v: Vec<i16>) -> i16 {
    v.last().copied().unwrap_or(0)
}
pub fn middle(a: [u8; 3]) -> u8 {
    a[1]
}
"#;
    let main = r#"
fn main() {
    let blobs: [&[u8]; 2] = [b"kiwi", b""];
    for b in blobs {
        println!("{}", shapes::checksum(b));
    }
    println!("{} {}", shapes::total(&[1, 2, 3]), shapes::total(&[]));
    println!("{} {}", shapes::last_or_zero(vec![4, -5]), shapes::last_or_zero(Vec::new()));
    println!("{}", shapes::middle([7, 8, 9]));
}
"#;
    let (_tmp, dir, summary) = carve_crate(lib, main);
    let (in_scope, carved) = carved_share(&summary);
    assert_eq!((in_scope, carved), (7, 7), "{summary}");
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(
        &file,
        &summary,
        &[
            "shapes::checksum(&b\"kiwi\"[..])",
            "shapes::checksum(&([] as [u8; 0])[..])",
            "shapes::total(&([] as [u32; 0])[..])",
            "shapes::last_or_zero(Vec::<i16>::new())",
            "shapes::middle([7u8, 8u8, 9u8])",
        ],
    );
    assert_pass_then_fail_after(&dir, "a[1]", "a[2]", "middle_");
}

/// Methods of standard traits implemented by the crate's types (`impl FromStr`, `impl Add`,
/// `impl From<u64>`, `impl Default`), recorded as `<impl core::str::traits::FromStr for T>` and
/// called through the trait's public path; `from_str` as the `parse` a person writes
/// (`tests/spelling_rules.rs`).
#[test]
fn std_trait_impls_are_called_through_the_traits_public_path() {
    let lib = r#"
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Size(pub u64);

impl std::str::FromStr for Size {
    type Err = String;
    fn from_str(s: &str) -> Result<Size, String> {
        let digits = s.trim().trim_end_matches('k');
        let n: u64 = digits.parse().map_err(|_| format!("not a size: {s}"))?;
        Ok(Size(if s.trim().ends_with('k') { n * 1024 } else { n }))
    }
}

impl std::ops::Add for Size {
    type Output = Size;
    fn add(self, other: Size) -> Size {
        Size(self.0 + other.0)
    }
}

impl From<u64> for Size {
    fn from(n: u64) -> Size {
        Size(n)
    }
}

impl Default for Size {
    fn default() -> Size {
        Size(512)
    }
}
"#;
    let main = r#"
use std::str::FromStr;
fn main() {
    for text in ["2k", "10", "x"] {
        println!("{:?}", shapes::Size::from_str(text));
    }
    let a: shapes::Size = "3k".parse().unwrap();
    println!("{:?}", a + shapes::Size::from(5));
    println!("{:?}", shapes::Size::default());
}
"#;
    let (_tmp, dir, summary) = carve_crate(lib, main);
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(
        &file,
        &summary,
        &[
            "\"2k\".parse::<shapes::Size>()",
            "shapes::Size::from(5u64)",
            "shapes::Size::default()",
            ".add(shapes::Size(5u64))",
        ],
    );
    let (in_scope, carved) = carved_share(&summary);
    assert_eq!(carved, in_scope, "{summary}");
    assert_pass_then_fail_after(&dir, "n * 1024", "n * 1000", "parse_");
}

/// Objects with private fields rebuilt by replaying the public call that produced them: a
/// builder chain (`Joiner::new().sep('-').upper(true)`) and a view another object returned
/// (`Size(4096).view()`).
#[test]
fn receivers_are_rebuilt_by_replaying_the_call_that_produced_them() {
    let lib = r#"
pub struct Joiner {
    sep: char,
    upper: bool,
}

impl Joiner {
    pub fn new() -> Joiner {
        Joiner { sep: ',', upper: false }
    }
    pub fn sep(self, sep: char) -> Joiner {
        Joiner { sep, ..self }
    }
    pub fn upper(self, upper: bool) -> Joiner {
        Joiner { upper, ..self }
    }
    pub fn join(&self, parts: &[&str]) -> String {
        let joined = parts.join(&self.sep.to_string());
        if self.upper { joined.to_uppercase() } else { joined }
    }
}

pub struct Size(pub u64);

pub struct View {
    bytes: u64,
}

impl Size {
    pub fn view(&self) -> View {
        View { bytes: self.0 }
    }
}

impl View {
    pub fn kib(&self) -> u64 {
        self.bytes / 1024
    }
}
"#;
    let main = r#"
fn main() {
    let j = shapes::Joiner::new().sep('-').upper(true);
    println!("{}", j.join(&["a", "b", "c"]));
    println!("{}", shapes::Size(4096).view().kib());
}
"#;
    let (_tmp, dir, summary) = carve_crate(lib, main);
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(
        &file,
        &summary,
        &[
            "shapes::Joiner::new()",
            ".sep('-')",
            ".upper(true)",
            ".join(&[\"a\", \"b\", \"c\"][..])",
            "shapes::Size(4096u64)",
            ".view()",
            "assert_eq!(result, 4u64)",
        ],
    );
    assert_pass_then_fail_after(&dir, "self.bytes / 1024", "self.bytes / 512", "kib_");
}

/// A result `==` cannot compare (its error type has no `PartialEq`) is checked with `matches!`
/// on its variant and every part a pattern can name.
#[test]
fn results_without_partial_eq_are_checked_by_their_variant_and_parts() {
    let lib = r#"
#[derive(Debug)]
pub enum ParseError {
    Empty,
    BadChar(char, usize),
    TooLong { len: usize, max: usize },
}

pub fn parse_id(s: &str) -> Result<u32, ParseError> {
    if s.is_empty() {
        return Err(ParseError::Empty);
    }
    if s.len() > 9 {
        return Err(ParseError::TooLong { len: s.len(), max: 9 });
    }
    if let Some((i, c)) = s.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        return Err(ParseError::BadChar(c, i));
    }
    Ok(s.parse().unwrap())
}
"#;
    let main = r#"
fn main() {
    for s in ["", "12a", "123456789012", "42"] {
        println!("{:?}", shapes::parse_id(s));
    }
}
"#;
    let (_tmp, dir, summary) = carve_crate(lib, main);
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(
        &file,
        &summary,
        &[
            "assert!(matches!(result, Err(shapes::ParseError::Empty)));",
            "assert!(matches!(result, Err(shapes::ParseError::BadChar('a', 2usize))));",
            "Err(shapes::ParseError::TooLong { len: 12usize, max: 9usize, .. })",
            "assert!(matches!(result, Ok(42u32)));",
        ],
    );
    let (in_scope, carved) = carved_share(&summary);
    assert_eq!(carved, in_scope, "{summary}");
    assert_pass_then_fail_after(&dir, "max: 9 }", "max: 10 }", "parse_id_");
}

/// Associated functions and std trait methods of generic types (`Stack<T>`, `Buckets<K, S =
/// RandomState>`) are called on the recorded instance (`shapes::Stack::<u32>::new()`,
/// `<shapes::Stack<String> as Default>::default()`), private std paths spelled publicly.
#[test]
fn generic_types_are_called_on_their_recorded_instance() {
    let lib = r#"
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hash};

#[derive(Debug, Clone)]
pub struct Stack<T> {
    items: Vec<T>,
    high: usize,
}

impl<T: Clone> Stack<T> {
    pub fn new() -> Self {
        Stack { items: Vec::new(), high: 0 }
    }
    pub fn push(&mut self, x: T) {
        self.items.push(x);
        self.high = self.high.max(self.items.len());
    }
    pub fn pop(&mut self) -> Option<T> {
        self.items.pop()
    }
    pub fn high(&self) -> usize {
        self.high
    }
}

impl<T: Clone> Default for Stack<T> {
    fn default() -> Self {
        Self::new()
    }
}

pub struct Buckets<K, S = RandomState> {
    slots: Vec<Vec<K>>,
    hasher: S,
}

impl<K: Hash + Eq> Buckets<K> {
    pub fn new(n: usize) -> Self {
        Buckets { slots: (0..n).map(|_| Vec::new()).collect(), hasher: RandomState::new() }
    }
}

impl<K: Hash + Eq, S: BuildHasher> Buckets<K, S> {
    pub fn insert(&mut self, k: K) -> bool {
        let i = (self.hasher.hash_one(&k) % self.slots.len() as u64) as usize;
        if self.slots[i].contains(&k) {
            return false;
        }
        self.slots[i].push(k);
        true
    }
    pub fn len(&self) -> usize {
        self.slots.iter().map(Vec::len).sum()
    }
}
"#;
    let main = r#"
use shapes::{Buckets, Stack};
fn main() {
    let mut s: Stack<u32> = Stack::new();
    for i in 0..3 { s.push(i * 10); }
    println!("{:?} {}", s.pop(), s.high());
    let w: Stack<String> = Stack::default();
    println!("{:?}", w);
    let mut b: Buckets<String> = Buckets::new(4);
    for k in ["x", "y", "x"] { println!("{}", b.insert(k.to_string())); }
    println!("{}", b.len());
}
"#;
    let (_tmp, dir, summary) = carve_crate(lib, main);
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(
        &file,
        &summary,
        &[
            "shapes::Stack::<u32>::new()",
            "shapes::Stack::<String>::default()",
            "shapes::Buckets::<",
            "std::collections::hash_map::RandomState",
            "buckets.insert(String::from(\"x\"))",
        ],
    );
    assert!(!summary.contains("generic"), "{summary}");
    assert_pass_then_fail_after(
        &dir,
        "return false;",
        "return true;",
        "insert_returns_false",
    );
}

/// Standard values with private representations are written through their public constructors
/// (`NonZero::new(4).unwrap()`, `0..2`), and a field's namesake method checks the field only
/// while the recording agrees: here `capacity()` is what is left, not the `capacity` field.
#[test]
fn std_values_use_public_constructors_and_getters_need_the_recordings_agreement() {
    let lib = r#"
use std::num::NonZeroUsize;
use std::ops::Range;

pub struct Slots {
    capacity: usize,
    limit: NonZeroUsize,
    items: Vec<u32>,
}

impl Slots {
    pub fn new(limit: NonZeroUsize) -> Slots {
        Slots { capacity: 0, limit, items: Vec::new() }
    }
    pub fn add(&mut self, x: u32) {
        self.items.push(x);
        self.capacity = self.items.len();
    }
    pub fn capacity(&self) -> usize {
        self.limit.get() - self.capacity
    }
    pub fn window(&self) -> Range<usize> {
        0..self.capacity
    }
}
"#;
    let main = r#"
use std::num::NonZeroUsize;
fn main() {
    let mut s = shapes::Slots::new(NonZeroUsize::new(5).unwrap());
    println!("{}", s.capacity());
    s.add(7);
    s.add(9);
    println!("{} {:?}", s.capacity(), s.window());
}
"#;
    let (_tmp, dir, summary) = carve_crate(lib, main);
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(
        &file,
        &summary,
        &[
            "shapes::Slots::new(std::num::NonZero::<usize>::new(5usize).unwrap())",
            "assert_eq!(result, 0usize..2usize);",
        ],
    );
    // `capacity()` returned 5 while the field held 0: it is no check of the field.
    assert!(!file.contains("slots.capacity(), 0usize"), "{file}");
    assert!(!summary.contains("failed verification"), "{summary}");
    assert_pass_then_fail_after(&dir, "0..self.capacity", "1..self.capacity", "window_");
}

/// A generic function whose arguments do not pin its type parameters down (`fn parse_as<T>(s:
/// &str) -> T`) is called on the recorded instance: `shapes::parse_as::<u8>("42")`.
#[test]
fn generic_functions_are_called_on_their_recorded_instance() {
    let lib = r#"
pub fn parse_as<T: std::str::FromStr + Default>(s: &str) -> T {
    s.trim().parse().unwrap_or_default()
}
"#;
    let main = r#"
fn main() {
    let n: u8 = shapes::parse_as("42");
    let f: f64 = shapes::parse_as(" 1.5 ");
    let bad: i32 = shapes::parse_as("x");
    println!("{n} {f} {bad}");
}
"#;
    let (_tmp, dir, summary) = carve_crate(lib, main);
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(
        &file,
        &summary,
        &[
            "shapes::parse_as::<u8>(\"42\")",
            "shapes::parse_as::<f64>(\" 1.5 \")",
            "shapes::parse_as::<i32>(\"x\")",
        ],
    );
    assert_eq!(carved_share(&summary), (3, 3), "{summary}");
    assert_pass_then_fail_after(&dir, "s.trim().parse()", "s.parse()", "parse_as_");
}

/// A flags type as the `bitflags` macro (version 2) expands it, its bits held by a hidden
/// `_::InternalBitFlags`, is written through `from_bits_retain`, the constructor every such type
/// has.
#[test]
fn bitflags_values_are_written_through_from_bits_retain() {
    let lib = r#"
pub trait PublicFlags {
    type Internal;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options(<Options as PublicFlags>::Internal);

const _: () = {
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct InternalBitFlags(u32);
    impl PublicFlags for Options {
        type Internal = InternalBitFlags;
    }
    impl Options {
        pub const fn from_bits_retain(bits: u32) -> Options {
            Options(InternalBitFlags(bits))
        }
        pub const fn bits(&self) -> u32 {
            self.0 .0
        }
    }
};

pub fn describe(o: Options) -> String {
    format!("{:b}", o.bits())
}
"#;
    let main = r#"
fn main() {
    println!("{}", shapes::describe(shapes::Options::from_bits_retain(5)));
}
"#;
    let (_tmp, dir, summary) = carve_crate(lib, main);
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    let expected = "shapes::describe(shapes::Options::from_bits_retain(5u32))";
    assert!(file.contains(expected), "{expected} in {file}\n{summary}");
    assert_pass_then_fail_after(&dir, "{:b}", "{:o}", "describe_");
}

/// A `Display` impl is carved as the `to_string()` a user writes, expecting the text `fmt`
/// wrote into the `String` (recorded behind the `Formatter`); what went straight to stdout with
/// options (`{:>9}`) is carved as that `format!` (see tests/display_rules.rs).
#[test]
fn display_impls_are_carved_as_to_string_with_the_recorded_text() {
    let lib = r#"
use std::fmt;

pub struct Size(pub u64);

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 >= 1024 {
            write!(f, "{} KiB", self.0 / 1024)
        } else {
            write!(f, "{} B", self.0)
        }
    }
}
"#;
    let main = r#"
fn main() {
    let a = shapes::Size(2048).to_string();
    let b = shapes::Size(7).to_string();
    println!("{a} {b} {:>9}|", shapes::Size(5000));
}
"#;
    let (_tmp, dir, summary) = carve_crate_recorded_with(lib, main, &["--filter", "shapes::*"]);
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(
        &file,
        &summary,
        &[
            "shapes::Size(2048u64)",
            ".to_string()",
            "assert_eq!(result, \"2 KiB\")",
            "assert_eq!(result, \"7 B\")",
        ],
    );
    assert!(
        file.contains("format!(\"{:>9}\", size)"),
        "{file}\n{summary}"
    );
    assert_pass_then_fail_after(&dir, "{} KiB", "{}KiB", "to_string_");
}

/// The crate's traits through generic and blanket impls on standard types (`impl<T> Width for
/// [T; 3]`, `impl<T: Into<u64>> Double for T`) are called on the recorded instance, the impl's
/// parameters and the method's own taken from the DWARF name (`convert<u8, u32>`).
#[test]
fn generic_and_blanket_impls_are_called_on_their_recorded_instance() {
    let lib = r#"
pub trait Width {
    fn slots() -> usize;
}

impl<T> Width for [T; 3] {
    fn slots() -> usize {
        3
    }
}

pub trait Double {
    fn double(&self) -> u64;
    fn convert<S: From<u32>>(&self) -> S;
}

impl<T: Copy + Into<u32>> Double for T {
    fn double(&self) -> u64 {
        u64::from((*self).into()) * 2
    }
    fn convert<S: From<u32>>(&self) -> S {
        S::from((*self).into() + 1)
    }
}
"#;
    let main = r#"
use shapes::{Double, Width};
fn main() {
    let wide: u64 = 7u8.convert();
    println!("{} {} {}", <[u16; 3] as Width>::slots(), 7u8.double(), wide);
}
"#;
    let (_tmp, dir, summary) = carve_crate_recorded_with(lib, main, &["--filter", "shapes::*"]);
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(
        &file,
        &summary,
        &[
            "<[u16; 3] as shapes::Width>::slots()",
            "<u8 as shapes::Double>::double(",
            "<u8 as shapes::Double>::convert::<u64>(",
        ],
    );
    assert!(!summary.contains("type parameter"), "{summary}");
    assert_pass_then_fail_after(&dir, "* 2", "* 3", "double_");
}

/// Collections fed from iterators: `FromIterator`, `Extend` and `IndexMut` implemented by the
/// crate's type are called through the std traits, with the recorded range as the iterator, and
/// replayed to rebuild the receiver of later calls (`bag.extend(10u32..12u32)`).
#[test]
fn iterator_fed_collections_are_built_and_replayed_through_std_traits() {
    let lib = r#"
#[derive(Debug, Default)]
pub struct Bag {
    items: Vec<u32>,
}

impl Bag {
    pub fn total(&self) -> u32 {
        self.items.iter().sum()
    }
}

impl FromIterator<u32> for Bag {
    fn from_iter<I: IntoIterator<Item = u32>>(iter: I) -> Bag {
        Bag { items: iter.into_iter().collect() }
    }
}

impl Extend<u32> for Bag {
    fn extend<I: IntoIterator<Item = u32>>(&mut self, iter: I) {
        for x in iter {
            self.items.push(x * 2);
        }
    }
}

impl std::ops::Index<usize> for Bag {
    type Output = u32;
    fn index(&self, i: usize) -> &u32 {
        &self.items[i]
    }
}

impl std::ops::IndexMut<usize> for Bag {
    fn index_mut(&mut self, i: usize) -> &mut u32 {
        &mut self.items[i]
    }
}
"#;
    let main = r#"
fn main() {
    let mut bag: shapes::Bag = (1..4).collect();
    bag.extend(10..12);
    println!("{}", bag.total());
    bag[0] += 5;
    println!("{} {}", bag.total(), bag[1]);
}
"#;
    let (_tmp, dir, summary) = carve_crate(lib, main);
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(
        &file,
        &summary,
        &[
            "<shapes::Bag as std::iter::FromIterator<_>>::from_iter(1u32..4u32)",
            ".extend(10u32..12u32)",
            "let result = bag.total();",
            "assert_eq!(result, 48u32);",
        ],
    );
    assert_pass_then_fail_after(&dir, "x * 2", "x * 3", "total_");
}

/// A handle API written through by the caller (`*tally.slot(k).or_zero() += 1`): the recorder
/// keeps what the returned `&mut` pointed to at the thread's next stop (`*result`), and the
/// generator replays the chain with that write (`*tally.slot(..).or_zero() = 2u32;`) to rebuild
/// the object for later calls.
#[test]
fn writes_through_a_returned_reference_are_replayed() {
    let lib = r#"
#[derive(Debug, Default)]
pub struct Tally {
    names: Vec<String>,
    counts: Vec<u32>,
}

pub enum Slot<'a> {
    Found(&'a mut u32),
    Missing(&'a mut Tally, String),
}

impl Tally {
    pub fn new() -> Tally {
        Tally::default()
    }
    pub fn slot(&mut self, name: &str) -> Slot<'_> {
        match self.names.iter().position(|n| n == name) {
            Some(i) => Slot::Found(&mut self.counts[i]),
            None => Slot::Missing(self, name.to_string()),
        }
    }
    pub fn count(&self, name: &str) -> u32 {
        self.names.iter().position(|n| n == name).map_or(0, |i| self.counts[i])
    }
}

impl<'a> Slot<'a> {
    pub fn or_zero(self) -> &'a mut u32 {
        match self {
            Slot::Found(c) => c,
            Slot::Missing(t, name) => {
                t.names.push(name);
                t.counts.push(0);
                t.counts.last_mut().unwrap()
            }
        }
    }
}
"#;
    let main = r#"
fn main() {
    let mut tally = shapes::Tally::new();
    for word in ["a", "b", "a", "c", "a"] {
        *tally.slot(word).or_zero() += 1;
    }
    println!("{} {}", tally.count("a"), tally.count("c"));
}
"#;
    // The program's `main` is not recorded: the write through the reference is the caller's.
    let (_tmp, dir, summary) = carve_crate_recorded_with(
        lib,
        main,
        &[
            "--filter",
            "shapes::Tally::*",
            "--filter",
            "shapes::Slot::*",
        ],
    );
    let shown = carve()
        .args(["show", "--db"])
        .arg(dir.join("trace.db"))
        .output()
        .unwrap();
    assert!(
        stdout(&shown).contains("= &2 ⇒ *result: 3"),
        "{}",
        stdout(&shown)
    );
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(
        &file,
        &summary,
        &[
            "*tally.slot(\"a\").or_zero() = 1u32;",
            "*tally.slot(\"a\").or_zero() = 3u32;",
            "let result = tally.count(\"a\");",
            "assert_eq!(result, 3u32);",
        ],
    );
    assert_pass_then_fail_after(&dir, "t.counts.push(0);", "t.counts.push(1);", "or_zero_");
}

/// A result holding a pointer (not read exactly, so not comparable whole) is still checked: by
/// its variant and the parts that were read exactly, `_` for the pointer.
#[test]
fn results_holding_pointers_are_checked_by_their_exact_parts() {
    let lib = r#"
pub enum Cursor {
    At(*const u8, usize),
    End,
}

pub fn cursor(text: &str, i: usize) -> Cursor {
    if i < text.len() {
        Cursor::At(text.as_ptr().wrapping_add(i), i)
    } else {
        Cursor::End
    }
}
"#;
    let main = r#"
fn main() {
    for i in [1, 5] {
        match shapes::cursor("abc", i) {
            shapes::Cursor::At(_, at) => println!("at {at}"),
            shapes::Cursor::End => println!("end"),
        }
    }
}
"#;
    let (_tmp, dir, summary) =
        carve_crate_recorded_with(lib, main, &["--filter", "shapes::cursor"]);
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(
        &file,
        &summary,
        &[
            "assert!(matches!(result, shapes::Cursor::At(_, 1usize)));",
            "assert!(matches!(result, shapes::Cursor::End));",
        ],
    );
    assert_pass_then_fail_after(
        &dir,
        "wrapping_add(i), i)",
        "wrapping_add(i), i + 1)",
        "cursor_",
    );
}

/// A handle the caller works through and drops (`q.pairs().add("a", "1").add("b", "2")`, whose
/// `Drop` writes back into `q`): replayed as the same chain to rebuild `q` for later calls.
#[test]
fn calls_through_a_returned_handle_are_replayed_as_one_chain() {
    let lib = r#"
#[derive(Debug, Default)]
pub struct Query {
    text: String,
}

pub struct Pairs<'a> {
    query: &'a mut Query,
    added: Vec<String>,
}

impl Query {
    pub fn new() -> Query {
        Query::default()
    }
    pub fn pairs(&mut self) -> Pairs<'_> {
        Pairs { query: self, added: Vec::new() }
    }
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl<'a> Pairs<'a> {
    pub fn add(&mut self, key: &str, value: &str) -> &mut Pairs<'a> {
        self.added.push(format!("{key}={value}"));
        self
    }
}

impl Drop for Pairs<'_> {
    fn drop(&mut self) {
        if !self.query.text.is_empty() && !self.added.is_empty() {
            self.query.text.push('&');
        }
        self.query.text.push_str(&self.added.join("&"));
    }
}
"#;
    let main = r#"
fn main() {
    let mut q = shapes::Query::new();
    q.pairs().add("a", "1").add("b", "2");
    q.pairs().add("c", "3");
    println!("{}", q.as_str());
}
"#;
    let (_tmp, dir, summary) = carve_crate(lib, main);
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(
        &file,
        &summary,
        &[
            "query.pairs().add(\"a\", \"1\").add(\"b\", \"2\");",
            "query.pairs().add(\"c\", \"3\");",
            "assert_eq!(result, \"a=1&b=2&c=3\");",
        ],
    );
    assert_pass_then_fail_after(&dir, "push('&')", "push(';')", "as_str_");
}

/// A builder step that takes another object (`options.base(Some(&root))`) and a constructor that
/// takes one by value (`Tally::new(sink)`): the object is rebuilt from its own recorded
/// provenance and passed as the recording held it.
#[test]
fn builder_steps_taking_other_objects_get_them_rebuilt_from_their_provenance() {
    let lib = r#"
pub struct Root {
    text: String,
}

impl Root {
    pub fn new(text: &str) -> Root {
        Root { text: text.to_string() }
    }
}

pub struct Options<'a> {
    root: Option<&'a Root>,
    sep: char,
}

impl<'a> Options<'a> {
    pub fn new() -> Options<'a> {
        Options { root: None, sep: '/' }
    }
    pub fn base(self, root: Option<&'a Root>) -> Options<'a> {
        Options { root, ..self }
    }
    pub fn join(&self, path: &str) -> String {
        match self.root {
            Some(root) => format!("{}{}{path}", root.text, self.sep),
            None => path.to_string(),
        }
    }
}

pub struct Sink {
    seen: Vec<u32>,
}

impl Sink {
    pub fn new() -> Sink {
        Sink { seen: Vec::new() }
    }
}

pub struct Tally {
    sink: Sink,
}

impl Tally {
    pub fn new(sink: Sink) -> Tally {
        Tally { sink }
    }
    pub fn add(&mut self, n: u32) -> usize {
        self.sink.seen.push(n);
        self.sink.seen.len()
    }
}
"#;
    let main = r#"
fn main() {
    let root = shapes::Root::new("https://x.org");
    let options = shapes::Options::new().base(Some(&root));
    println!("{}", options.join("a"));
    let mut tally = shapes::Tally::new(shapes::Sink::new());
    println!("{}", tally.add(7));
}
"#;
    let (_tmp, dir, summary) = carve_crate(lib, main);
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(
        &file,
        &summary,
        &[
            "shapes::Root::new(\"https://x.org\")",
            ".base(Some(&root))",
            ".join(\"a\")",
            "assert_eq!(result, \"https://x.org/a\")",
            "shapes::Tally::new(sink)",
            ".add(7u32)",
        ],
    );
    assert_pass_then_fail_after(&dir, "self.sep),", "'|'),", "join_");
}

/// A value a `&mut self` call returned (the item `iter.next()` gave) is rebuilt by rebuilding
/// that call's receiver as it was before the call (the calls before it replayed) and calling it.
#[test]
fn values_a_mut_self_call_returned_are_rebuilt_through_that_call() {
    let lib = r#"
pub struct Word {
    text: String,
    index: usize,
}

impl Word {
    pub fn text(&self) -> &str {
        &self.text
    }
    pub fn index(&self) -> usize {
        self.index
    }
}

pub struct Words {
    rest: Vec<String>,
    index: usize,
}

pub fn words(text: &str) -> Words {
    Words { rest: text.split(' ').rev().map(str::to_string).collect(), index: 0 }
}

impl Iterator for Words {
    type Item = Word;
    fn next(&mut self) -> Option<Word> {
        let text = self.rest.pop()?;
        self.index += 1;
        Some(Word { text, index: self.index })
    }
}
"#;
    let main = r#"
fn main() {
    for word in shapes::words("a bb ccc") {
        println!("{} {}", word.index(), word.text());
    }
}
"#;
    let (_tmp, dir, summary) = carve_crate(lib, main);
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(
        &file,
        &summary,
        &[
            "let mut words = shapes::words(\"a bb ccc\");",
            "let _ = words.next();",
            "let word = words.next().unwrap();",
            "word.text()",
            "assert_eq!(result, \"ccc\")",
            "word.index()",
        ],
    );
    assert_pass_then_fail_after(
        &dir,
        "&self.text\n",
        "self.text.trim_end_matches('c')\n",
        "text_",
    );
}

/// A value another public call returned as a part of its result, a variant's field
/// (`Slot::Free(slot)` from `shelf.slot(1)`) or a `pub` field (`parse(..).head`), is rebuilt by
/// replaying that call and taking the part out.
#[test]
fn parts_of_a_returned_value_are_taken_out_of_the_replayed_call() {
    let lib = r#"
pub struct Shelf {
    items: Vec<Option<String>>,
}

pub enum Slot<'a> {
    Free(FreeSlot<'a>),
    Taken(usize),
}

pub struct FreeSlot<'a> {
    shelf: &'a mut Shelf,
    at: usize,
}

impl Shelf {
    pub fn new(size: usize) -> Shelf {
        Shelf { items: vec![None; size] }
    }
    pub fn slot(&mut self, at: usize) -> Slot<'_> {
        match self.items[at] {
            Some(_) => Slot::Taken(at),
            None => Slot::Free(FreeSlot { shelf: self, at }),
        }
    }
}

impl FreeSlot<'_> {
    pub fn fill(self, item: &str) -> usize {
        self.shelf.items[self.at] = Some(item.to_string());
        self.shelf.items.iter().filter(|i| i.is_some()).count()
    }
}

pub struct Head {
    name: String,
}

impl Head {
    pub fn name(&self) -> &str {
        &self.name
    }
}

pub struct Parsed {
    pub head: Head,
    pub rest: String,
}

pub fn parse(text: &str) -> Parsed {
    let (name, rest) = text.split_once(':').unwrap_or((text, ""));
    Parsed { head: Head { name: name.to_string() }, rest: rest.to_string() }
}
"#;
    let main = r#"
fn main() {
    let mut shelf = shapes::Shelf::new(3);
    for at in [1, 2] {
        if let shapes::Slot::Free(slot) = shelf.slot(at) {
            println!("{}", slot.fill("box"));
        }
    }
    println!("{}", shapes::parse("key:value").head.name());
}
"#;
    let (_tmp, dir, summary) = carve_crate(lib, main);
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(
        &file,
        &summary,
        &[
            "let shapes::Slot::Free(free_slot) = shelf.slot(1usize) else {",
            "free_slot.fill(\"box\")",
            "assert_eq!(result, 1usize)",
            "let head = shapes::parse(\"key:value\").head;",
            "head.name()",
            "assert_eq!(result, \"key\")",
        ],
    );
    assert_pass_then_fail_after(&dir, ".filter(|i| i.is_some())", "", "fill_");
}

/// Paths and OS strings (`&Path`, `PathBuf`, `&OsStr`, `OsString`, also behind `Option` and as
/// the recorded instance of `P: AsRef<Path>`) are recorded as their text and written as the std
/// constructors a user writes.
#[test]
fn paths_and_os_strings_are_written_with_their_std_constructors() {
    let lib = r#"
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

pub fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}
pub fn depth<P: AsRef<Path>>(path: P) -> usize {
    path.as_ref().components().count()
}
pub fn shout(word: &OsStr) -> OsString {
    OsString::from(word.to_string_lossy().to_uppercase())
}
pub fn parent_of(path: &Path) -> Option<&Path> {
    path.parent()
}
"#;
    let main = r#"
use std::path::{Path, PathBuf};
fn main() {
    for p in ["src/lib.rs", "a/b/c.tar.gz"] {
        let path = Path::new(p);
        println!("{:?} {} {:?}", shapes::with_suffix(path, ".bak"), shapes::depth(path), shapes::parent_of(path));
    }
    println!("{}", shapes::depth(PathBuf::from("x/y")));
    println!("{:?}", shapes::shout(std::ffi::OsStr::new("quiet")));
}
"#;
    let (_tmp, dir, summary) = carve_crate_recorded_with(lib, main, &["--filter", "shapes::*"]);
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(
        &file,
        &summary,
        &[
            "shapes::with_suffix(std::path::Path::new(\"src/lib.rs\"), \".bak\")",
            "assert_eq!(result, std::path::PathBuf::from(\"src/lib.rs.bak\"))",
            "shapes::depth(std::path::PathBuf::from(\"x/y\"))",
            "assert_eq!(result, Some(std::path::Path::new(\"a/b\")))",
            "shapes::shout(std::ffi::OsStr::new(\"quiet\"))",
            "assert_eq!(result, std::ffi::OsString::from(\"QUIET\"))",
        ],
    );
    assert_pass_then_fail_after(&dir, "to_uppercase()", "to_lowercase()", "shout");
}

/// Builder steps whose result a test cannot check on its own (private fields, no `PartialEq`)
/// count as carved when a passing test replays them as they were recorded and checks what they
/// gave through the call they feed; the summary says how many were carved that way.
#[test]
fn builder_steps_replayed_by_a_passing_test_count_as_carved_through_it() {
    let lib = r#"
pub struct Options {
    strict: bool,
    base: u32,
}
pub fn options() -> Options {
    Options { strict: false, base: 10 }
}
impl Options {
    pub fn strict(mut self, on: bool) -> Self {
        self.strict = on;
        self
    }
    pub fn hex(mut self) -> Self {
        self.base = 16;
        self
    }
    pub fn parse(&self, s: &str) -> Option<u32> {
        match u32::from_str_radix(s, self.base) {
            Ok(n) => Some(n),
            Err(_) if !self.strict => Some(0),
            Err(_) => None,
        }
    }
}
"#;
    let main = r#"
fn main() {
    let o = shapes::options().strict(true).hex();
    println!("{:?} {:?}", o.parse("ff"), o.parse("zz"));
}
"#;
    let (_tmp, dir, summary) = carve_crate_recorded_with(lib, main, &["--filter", "shapes::*"]);
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(
        &file,
        &summary,
        &[
            "let options_2 = options_3.strict(true);",
            "let options = options_2.hex();",
            "assert_eq!(result, Some(255u32))",
        ],
    );
    // options(), strict() and hex() have no test of their own: the parse tests carry them.
    assert!(
        summary.contains("public API: 5 of 5 recorded calls carved into passing tests (100%, 3 of them as steps other tests replay"),
        "{summary}"
    );
    assert_pass_then_fail_after(&dir, "self.base = 16;", "self.base = 8;", "parse_");
}

/// A trait declared in a private module, re-exported by name from a private module that the root
/// re-exports with a glob (`mod text { mod abstraction { pub trait T } pub use
/// self::abstraction::T; } pub use text::*;`, as `similar` does): the test names it by the path
/// the two re-exports give (`shapes::Shout`), not by a path through the private module.
#[test]
fn traits_reexported_through_a_chain_of_reexports_are_named_by_their_public_path() {
    let lib = r#"
mod text {
    mod abstraction {
        pub trait Shout {
            fn shout(&self) -> String;
        }
        impl Shout for str {
            fn shout(&self) -> String {
                self.to_uppercase()
            }
        }
    }
    pub use self::abstraction::Shout;
}
pub use text::*;
"#;
    let main = r#"
use shapes::Shout;

fn main() {
    println!("{} {}", "hi".shout(), "there".shout());
}
"#;
    let (_tmp, dir, summary) = carve_crate(lib, main);
    assert!(
        !dir.join("tests/carved_quarantine.md").exists(),
        "no test is taken out: {summary}"
    );
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert!(!file.contains("abstraction"), "{file}");
    assert_carved(
        &file,
        &summary,
        &["<str as shapes::Shout>::shout(\"hi\")", "\"THERE\""],
    );
    assert_pass_then_fail_after(&dir, "to_uppercase", "to_lowercase", "shout_");
}

/// An object whose state lies behind a pointer the recorder does not follow (an LRU order kept in
/// a leaked heap `Vec`, as `lru` keeps a linked list and `smallvec` a heap buffer): two recorded
/// states that look equal need not be, so the object is rebuilt from its own history (its
/// constructor, from a generic impl, then every `&mut self` call in recording order, a call that
/// left it looking the same included). A call whose history cannot be replayed (a closure
/// argument) falls back to the older rules, and verification takes out what they got wrong.
#[test]
fn objects_whose_state_is_behind_pointers_are_rebuilt_from_their_whole_history() {
    let lib = r#"
use std::ptr::NonNull;

pub struct Recent<T> {
    order: NonNull<Vec<T>>,
    len: usize,
}

impl<T: PartialEq + Copy> Recent<T> {
    pub fn new() -> Recent<T> {
        Recent { order: NonNull::from(Box::leak(Box::new(Vec::new()))), len: 0 }
    }
    /// Makes `k` the most recent one.
    pub fn touch(&mut self, k: T) {
        let order = unsafe { self.order.as_mut() };
        order.retain(|x| *x != k);
        order.push(k);
        self.len = order.len();
    }
    pub fn touch_if(&mut self, k: T, keep: impl Fn(&T) -> bool) {
        if keep(&k) {
            self.touch(k);
        }
    }
    pub fn oldest(&self) -> Option<T> {
        unsafe { self.order.as_ref() }.first().copied()
    }
    pub fn len(&self) -> usize {
        self.len
    }
}

impl<T> Drop for Recent<T> {
    fn drop(&mut self) {
        drop(unsafe { Box::from_raw(self.order.as_ptr()) });
    }
}
"#;
    let main = r#"
fn main() {
    let mut recent = shapes::Recent::new();
    recent.touch(1u32);
    recent.touch(2);
    recent.touch(1);
    println!("{:?} {}", recent.oldest(), recent.len());
    recent.touch_if(3, |k| *k > 2);
    println!("{:?}", recent.oldest());
}
"#;
    let (_tmp, dir, summary) = carve_crate(lib, main);
    // The `oldest()` after `touch_if(3, closure)` has no replayable history: the older rules
    // (a state that looks the same) still try it, and verification takes out the test they got
    // wrong; every other call's test comes from its history and passes.
    let quarantine =
        std::fs::read_to_string(dir.join("tests/carved_quarantine.md")).unwrap_or_default();
    let taken_out: Vec<&str> = quarantine
        .lines()
        .filter(|l| l.starts_with("| carved_"))
        .collect();
    assert!(
        taken_out.len() <= 1
            && taken_out
                .iter()
                .all(|l| l.contains("`oldest_returns_some_2_when_len_3`")),
        "{quarantine}\n{summary}"
    );
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    // The third `touch(1)` left `len` as it was, and still belongs to the arrangement.
    assert_carved(
        &file,
        &summary,
        &[
            "let _ = recent.touch(1u32);\n    let _ = recent.touch(2u32);\n    let _ = recent.touch(1u32);",
            "assert_eq!(result, Some(2u32));",
        ],
    );
    assert_pass_then_fail_after(
        &dir,
        "order.retain(|x| *x != k);",
        "if order.contains(&k) { return; }",
        "oldest_",
    );
}

/// A receiver only a `pub const` gives, whose initializer calls a `const fn` (base64's
/// `general_purpose::STANDARD = GeneralPurpose::new(&alphabet::STANDARD, PAD)`): no call of the
/// run made it and the source does not say what it holds, so generate asks the compiler (a
/// program built against the crate prints each such const's `Debug`) and names the const whose
/// text is the recorded state's: `PADDED`, not `PLAIN` or `SHIFTED`, which differ from it only
/// in what the `const fn` computed.
#[test]
fn a_receiver_a_const_fn_made_is_the_const_the_compiler_says_holds_it() {
    let lib = r#"
#[derive(Debug, Clone, Copy)]
pub struct Codec {
    table: [u8; 4],
    pad: bool,
}

impl Codec {
    pub const fn new(alphabet: &[u8; 4], pad: bool) -> Codec {
        let mut table = [0u8; 4];
        let mut i = 0;
        while i < 4 {
            table[i] = alphabet[(i + 1) % 4];
            i += 1;
        }
        Codec { table, pad }
    }

    pub fn encode(&self, x: u8) -> String {
        let mut s = String::new();
        s.push(self.table[(x % 4) as usize] as char);
        if self.pad {
            s.push('=');
        }
        s
    }
}

pub const PLAIN: Codec = Codec::new(b"abcd", false);
pub const PADDED: Codec = Codec::new(b"abcd", true);
pub const SHIFTED: Codec = Codec::new(b"wxyz", true);
"#;
    let main = r#"
fn main() {
    println!("{}", shapes::PADDED.encode(5));
    println!("{}", shapes::SHIFTED.encode(2));
}
"#;
    let (_tmp, dir, summary) = carve_crate(lib, main);
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(&file, &summary, &["shapes::PADDED", "shapes::SHIFTED"]);
    assert!(!file.contains("shapes::PLAIN"), "{file}");
    assert_eq!(carved_share(&summary), (2, 2), "{summary}");
    assert_pass_then_fail_after(&dir, "(i + 1) % 4", "(i + 2) % 4", "encode_");
}

/// Methods the crate's own `macro_rules!` make, one per integer type (fastrand's `Rng::u8`,
/// `Rng::u64`, ...): the source shows only the macro's calls, so the crate's API is read with
/// the macro expanded, and the recorded calls are tests like any method's.
#[test]
fn methods_a_crates_macro_makes_are_called_like_written_ones() {
    let lib = r#"
pub struct Wheel {
    turns: u64,
}

macro_rules! spin {
    ($t:tt, $doc:tt) => {
        #[doc = $doc]
        pub fn $t(&mut self, max: $t) -> $t {
            self.turns += 1;
            (self.turns % (max as u64)) as $t
        }
    };
}

impl Wheel {
    pub fn new() -> Wheel {
        Wheel { turns: 0 }
    }
    spin!(u8, "A u8 below max.");
    spin!(u32, "A u32 below max.");
}
"#;
    let main = r#"
fn main() {
    let mut w = shapes::Wheel::new();
    println!("{} {} {}", w.u8(7), w.u32(100), w.u8(2));
}
"#;
    let (_tmp, dir, summary) = carve_crate(lib, main);
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(&file, &summary, &[".u8(7u8)", ".u32(100u32)", ".u8(2u8)"]);
    assert!(!summary.contains("not found in the source"), "{summary}");
    assert_pass_then_fail_after(&dir, "self.turns += 1;", "self.turns += 2;", "u8_");
}

/// A trait's provided method, run on one of the crate's types (`engine.encode(..)` where
/// `encode` is written once in `trait Engine`, as bytes' `BufMut::put_u8` or base64's
/// `Engine::encode`): the run records it under the trait's path, and the test calls it on the
/// receiver it recorded, with the trait imported.
#[test]
fn provided_trait_methods_are_called_on_the_recorded_receiver() {
    let lib = r#"
pub trait Engine {
    fn width(&self) -> usize;
    fn encode<T: AsRef<[u8]>>(&self, input: T) -> String {
        input
            .as_ref()
            .iter()
            .map(|b| format!("{:0w$}", b, w = self.width()))
            .collect()
    }
    fn plain(&self, input: &str) -> usize {
        input.len() * self.width()
    }
}

pub struct Wide(pub usize);

impl Engine for Wide {
    fn width(&self) -> usize {
        self.0
    }
}
"#;
    let main = r#"
use shapes::Engine;
fn main() {
    let w = shapes::Wide(3);
    println!("{}", w.encode(b"ab"));
    println!("{}", w.plain("xyz"));
}
"#;
    let (_tmp, dir, summary) = carve_crate(lib, main);
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(&file, &summary, &[".plain(\"xyz\")", "\"097098\""]);
    assert!(!summary.contains("not found in the source"), "{summary}");
    assert_pass_then_fail_after(
        &dir,
        "input.len() * self.width()",
        "input.len() + self.width()",
        "plain_",
    );
}

/// A trait of one of the crate's dependencies implemented by a type of the crate (as
/// `ordered-float` implements `num_traits::ToPrimitive`): an integration test links the
/// package's dependencies, so it names the trait by its path and calls the method.
#[test]
fn a_dependencys_trait_on_a_type_of_the_crate_is_called_through_the_trait_s_path() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("shapes");
    write_tree(
        &dir,
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"shapes\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
                 [dependencies]\nhalving-traits = { path = \"halving\" }\n\n[workspace]\n",
            ),
            (
                "halving/Cargo.toml",
                "[package]\nname = \"halving-traits\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
            ),
            (
                "halving/src/lib.rs",
                "pub mod ops {\n    pub trait Halve {\n        fn halve(&self) -> u32;\n    }\n}\n",
            ),
            (
                "src/lib.rs",
                r#"
pub struct Length(pub u32);

impl halving_traits::ops::Halve for Length {
    fn halve(&self) -> u32 {
        self.0 / 2
    }
}
"#,
            ),
            (
                "src/main.rs",
                r#"
use halving_traits::ops::Halve;

fn main() {
    println!("{}", shapes::Length(9).halve());
}
"#,
            ),
        ],
    );
    let db = build_and_record(&dir, "shapes", &[]);
    let run = load(&db).run;
    assert!(
        matches!(
            run.end.as_ref().map(|e| &e.exit),
            Some(carve_storage::ProcessExit::Exited { code: 0 })
        ),
        "{run:?}"
    );
    let summary = generate_into_tests(&dir, &db, &[]);
    assert!(summary.contains("private: 0 calls"), "{summary}");
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(
        &file,
        &summary,
        &[
            "use halving_traits::ops::Halve;",
            "let result = length.halve();",
            "assert_eq!(result, 4u32)",
        ],
    );
    assert_pass_then_fail_after(&dir, "self.0 / 2", "self.0 / 2 + 1", "halve");
}

/// A provided method of the crate's trait with a blanket impl over every iterator (itertools'
/// `impl<T: Iterator> Itertools for T`), run on std iterators the program made: called by the
/// trait's path with the iterator rebuilt as the program writes it (`[..].iter().copied()`,
/// `3..8`, `std::iter::empty::<i32>()`), each type named where std re-exports it.
#[test]
fn a_blanket_trait_s_provided_method_runs_on_the_std_iterator_the_program_gave() {
    let lib = r#"
pub trait Stats: Iterator {
    fn spread(self) -> Option<i64>
    where
        Self: Sized,
        Self::Item: Into<i64>,
    {
        let mut lo = None;
        let mut hi = None;
        for x in self {
            let x: i64 = x.into();
            if lo.map_or(true, |l| x < l) {
                lo = Some(x);
            }
            if hi.map_or(true, |h| x > h) {
                hi = Some(x);
            }
        }
        Some(hi? - lo?)
    }
    fn count_above(self, limit: i64) -> usize
    where
        Self: Sized,
        Self::Item: Into<i64>,
    {
        self.map(Into::into).filter(|x: &i64| *x > limit).count()
    }
}

impl<I: Iterator> Stats for I {}
"#;
    let main = r#"
use shapes::Stats;

fn main() {
    let v = vec![4i32, 9, 1, 7];
    println!("{:?}", v.iter().copied().spread());
    println!("{:?}", (3i32..8).count_above(5));
    println!("{:?}", std::iter::empty::<i32>().spread());
}
"#;
    let (_tmp, dir, summary) = carve_crate(lib, main);
    assert!(!summary.contains("cannot name"), "{summary}");
    assert!(summary.contains("3 of 3 recorded calls"), "{summary}");
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(
        &file,
        &summary,
        &[
            "as shapes::Stats>::spread([4i32, 9i32, 1i32, 7i32].iter().copied())",
            "as shapes::Stats>::spread(std::iter::empty::<i32>())",
            "<std::ops::Range<i32> as shapes::Stats>::count_above(3i32..8i32, 5i64)",
        ],
    );
    assert_pass_then_fail_after(&dir, "Some(hi? - lo?)", "Some(hi? - lo? + 1)", "spread_");
}

/// A variant of a generic enum that does not mention every type parameter (`Left(L)` of
/// `Either<L, R>`, tinyvec's `Heap(Vec<A::Item>)`) leaves the others to nothing: the value is
/// written with its recorded instance, `Either::<u8, String>::Left(3u8)`.
#[test]
fn a_generic_enum_s_variant_is_written_with_its_recorded_instance() {
    let lib = r#"
pub enum Either<L, R> {
    Left(L),
    Right(R),
}

impl<L, R> Either<L, R> {
    pub fn is_left(&self) -> bool {
        matches!(self, Either::Left(_))
    }
}
"#;
    let main = r#"
fn main() {
    let a: shapes::Either<u8, String> = shapes::Either::Left(3);
    let b: shapes::Either<u8, String> = shapes::Either::Right("x".to_string());
    println!("{} {}", a.is_left(), b.is_left());
}
"#;
    let (_tmp, dir, summary) = carve_crate(lib, main);
    assert!(!summary.contains("failed verification"), "{summary}");
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(
        &file,
        &summary,
        &["shapes::Either::<u8, String>::Left(3u8)"],
    );
    assert_pass_then_fail_after(
        &dir,
        "matches!(self, Either::Left(_))",
        "matches!(self, Either::Right(_))",
        "is_left_",
    );
}

/// The crate's impls of std traits for std types over its own types (`impl From<Name> for
/// String`, `impl PartialEq<Name> for str`, as `bytes` has `From<BytesMut> for Vec<u8>`): called
/// through the trait named with its arguments, `<String as std::convert::From<shapes::Name>>`.
#[test]
fn a_std_trait_impl_on_a_std_type_over_a_crate_type_is_called_with_the_trait_s_arguments() {
    let lib = r#"
pub struct Name {
    text: String,
}

impl Name {
    pub fn new(text: &str) -> Name {
        Name { text: text.trim().to_string() }
    }
}

impl From<Name> for String {
    fn from(n: Name) -> String {
        n.text.to_uppercase()
    }
}

impl PartialEq<Name> for str {
    fn eq(&self, other: &Name) -> bool {
        self.eq_ignore_ascii_case(&other.text)
    }
}

impl PartialEq<&str> for Name {
    fn eq(&self, other: &&str) -> bool {
        self.text == *other
    }
}
"#;
    let main = r#"
fn main() {
    let shout: String = shapes::Name::new(" ann ").into();
    let same = *"ANN" == shapes::Name::new("ann");
    let named = shapes::Name::new("bo") == "bo";
    println!("{shout} {same} {named}");
}
"#;
    let (_tmp, dir, summary) = carve_crate(lib, main);
    assert!(!summary.contains("trait impl"), "{summary}");
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(
        &file,
        &summary,
        &[
            "<String as std::convert::From<shapes::Name>>::from(",
            "<str as std::cmp::PartialEq<shapes::Name>>::eq(",
            // `&&str`, a string literal borrowed once more.
            "&\"bo\"",
        ],
    );
    assert_pass_then_fail_after(
        &dir,
        "n.text.to_uppercase()",
        "n.text.to_lowercase()",
        "from_",
    );
}

/// A generic shim whose body only calls its non-generic inner function (base64's
/// `Engine::encode`), inlined where the run was built (here: left unrecorded with `--exclude`),
/// so the run records only `encode::inner`: the test calls the shim with the inner call's
/// values, the receiver first, and checks what the inner call returned.
#[test]
fn a_generic_shim_s_inner_body_is_carved_as_a_call_of_the_shim() {
    let lib = r#"
pub trait Codec {
    fn shift(&self) -> u8;
    fn encode<T: AsRef<[u8]>>(&self, input: T) -> String {
        fn inner<C: Codec + ?Sized>(codec: &C, bytes: &[u8]) -> String {
            bytes.iter().map(|b| b.wrapping_add(codec.shift()) as char).collect()
        }
        inner(self, input.as_ref())
    }
}

pub struct Caesar {
    pub shift: u8,
}

impl Codec for Caesar {
    fn shift(&self) -> u8 {
        self.shift
    }
}
"#;
    let main = r#"
use shapes::Codec;

fn main() {
    println!("{}", shapes::Caesar { shift: 1 }.encode("abc"));
}
"#;
    let (_tmp, dir, summary) = carve_crate_recorded_with(
        lib,
        main,
        &[
            "--filter",
            "shapes::*",
            "--exclude",
            "shapes::Codec::encode",
        ],
    );
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(
        &file,
        &summary,
        &[
            "<shapes::Caesar as shapes::Codec>::encode(",
            "assert_eq!(result, \"bcd\")",
        ],
    );
    assert_pass_then_fail_after(
        &dir,
        "b.wrapping_add(codec.shift())",
        "b.wrapping_sub(codec.shift())",
        "encode_",
    );
}

/// A trait's `unsafe fn` (`bytes`' `BufMut::advance_mut`) is not supported as a call a test
/// makes, nor replayed as a step of another object's history: 437 of bytes' carved tests did
/// not compile (E0133) for a replayed `advance_mut`.
#[test]
fn a_trait_s_unsafe_method_is_neither_tested_nor_replayed() {
    let lib = r#"
pub trait Cursor {
    /// # Safety
    /// `n` is at most what is left.
    unsafe fn skip(&mut self, n: usize);
    fn pos(&self) -> usize;
}

pub struct Reader {
    at: usize,
}

impl Reader {
    pub fn new() -> Reader {
        Reader { at: 0 }
    }
}

impl Cursor for Reader {
    unsafe fn skip(&mut self, n: usize) {
        self.at += n;
    }
    fn pos(&self) -> usize {
        self.at * 2 / 2
    }
}
"#;
    let main = r#"
use shapes::Cursor;

fn main() {
    let mut r = shapes::Reader::new();
    println!("{}", r.pos());
    unsafe { r.skip(3) };
    println!("{}", r.pos());
}
"#;
    let (_tmp, dir, summary) = carve_crate(lib, main);
    assert!(summary.contains("unsafe 1"), "{summary}");
    assert!(!summary.contains("failed verification"), "{summary}");
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert!(!file.contains(".skip("), "{file}");
    assert_pass_then_fail_after(&dir, "self.at * 2 / 2", "self.at + 1", "pos_");
}
