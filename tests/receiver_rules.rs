//! One test per rule that rebuilds a receiver (or an object argument) met on real crates: each
//! writes a small real crate shaped like what real crates do, records its program through
//! ptrace, carves tests, runs them with cargo, and checks that they fail once the behaviour they
//! recorded changes.

mod common;

use common::*;

/// Writes the crate, records its program, carves (verified) tests into its `tests/`; returns the
/// crate dir and what generate printed.
fn carve_crate(lib: &str, main: &str) -> (tempfile::TempDir, std::path::PathBuf, String) {
    let c = carve_small_crate("shapes", lib, main, &[]);
    (c.tmp, c.dir, c.summary)
}

/// An object changed by a call no test can write (here a boxed closure, a trait object, which
/// neither the recorder nor the replay-closure rule follows; in `url`, the query serializer of
/// another crate, not recorded) has no replayable provenance. Its type parses
/// from a string and a getter gave its text in that very state, so the test parses that text
/// and checks the getter gives it back before it acts.
#[test]
fn objects_no_call_can_reach_are_rebuilt_from_the_text_a_getter_gave() {
    let lib = r#"
pub struct Addr {
    serialization: String,
    port_start: Option<usize>,
}

#[derive(Debug)]
pub struct ParseError;

impl Addr {
    pub fn parse(s: &str) -> Result<Addr, ParseError> {
        let after = s.find("://").ok_or(ParseError)? + 3;
        let port_start = s[after..].find(':').map(|i| after + i + 1);
        Ok(Addr { serialization: s.to_string(), port_start })
    }
    pub fn as_str(&self) -> &str {
        &self.serialization
    }
    pub fn edit(&mut self, f: Box<dyn FnOnce(&mut String)>) {
        f(&mut self.serialization);
        let after = self.serialization.find("://").map_or(0, |i| i + 3);
        self.port_start = self.serialization[after..].find(':').map(|i| after + i + 1);
    }
    pub fn port(&self) -> Option<u16> {
        let rest = &self.serialization[self.port_start?..];
        let end = rest.find('/').unwrap_or(rest.len());
        rest[..end].parse().ok()
    }
}
"#;
    let main = r#"
fn main() {
    let mut a = shapes::Addr::parse("http://example.com/x").unwrap();
    a.edit(Box::new(|s| s.insert_str(18, ":8080")));
    println!("{} {:?}", a.as_str(), a.port());
}
"#;
    let (_tmp, dir, summary) = carve_crate(lib, main);
    assert!(!summary.contains("receiver not rebuilt"), "{summary}");
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    for piece in [
        "shapes::Addr::parse(\"http://example.com:8080/x\")",
        "assert_eq!(addr.as_str(), \"http://example.com:8080/x\")",
        "assert_eq!(result, Some(8080u16))",
    ] {
        assert!(file.contains(piece), "{piece} in {file}\n{summary}");
    }
    assert_pass_then_fail_after(
        &dir,
        "rest[..end].parse().ok()",
        "rest[..end].parse::<u16>().ok().map(|p| p + 1)",
        "port_",
    );
}

/// An object brought to its state by many calls (a parser 100 events into a document) is
/// rebuilt by replaying all of them, not only the first 64.
#[test]
fn receivers_many_calls_deep_are_rebuilt_by_replaying_every_call() {
    let lib = r#"
pub struct Ticker {
    log: String,
}

impl Ticker {
    pub fn new() -> Ticker {
        Ticker { log: String::new() }
    }
    pub fn tick(&mut self, c: char) -> usize {
        self.log.push(c);
        self.log.len()
    }
}
"#;
    let main = r#"
fn main() {
    let mut t = shapes::Ticker::new();
    let mut sum = 0;
    for _ in 0..80 {
        sum += t.tick('x');
    }
    println!("{sum}");
}
"#;
    let (_tmp, dir, summary) = carve_crate(lib, main);
    assert!(!summary.contains("receiver not rebuilt"), "{summary}");
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    for piece in ["for _ in 0..79 {", "assert_eq!(result, 80usize)"] {
        assert!(file.contains(piece), "{piece} in {file}\n{summary}");
    }
    assert_pass_then_fail_after(&dir, "self.log.len()", "self.log.len() % 70", "tick_");
}

/// A `str::chars()` iterator passed as an argument (to `collect()`'s `FromIterator::from_iter`
/// that made a receiver, or to a generic function) is recorded as the text it has left and
/// written `"..".chars()`, so the object it built is rebuilt from that call.
#[test]
fn chars_iterators_are_written_as_the_text_they_have_left() {
    let lib = r#"
pub struct Letters {
    seen: Vec<char>,
}

impl FromIterator<char> for Letters {
    fn from_iter<I: IntoIterator<Item = char>>(iter: I) -> Letters {
        let mut seen = Vec::new();
        for c in iter {
            if !seen.contains(&c) {
                seen.push(c);
            }
        }
        Letters { seen }
    }
}

impl Letters {
    pub fn contains(&self, c: char) -> bool {
        self.seen.contains(&c)
    }
}

pub fn count_vowels<I: IntoIterator<Item = char>>(chars: I) -> usize {
    chars.into_iter().filter(|c| "aeiou".contains(*c)).count()
}
"#;
    let main = r#"
fn main() {
    let l: shapes::Letters = "hello".chars().collect();
    println!("{} {}", l.contains('l'), l.contains('z'));
    let mut rest = "education".chars();
    rest.next();
    println!("{}", shapes::count_vowels(rest));
}
"#;
    let (_tmp, dir, summary) = carve_crate(lib, main);
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    for piece in [
        "\"hello\".chars().collect::<shapes::Letters>()",
        ".contains('z')",
        "(\"ducation\".chars())",
        "assert_eq!(result, 4usize)",
    ] {
        assert!(file.contains(piece), "{piece} in {file}\n{summary}");
    }
    assert_pass_then_fail_after(
        &dir,
        "\"aeiou\".contains(*c)",
        "\"aeio\".contains(*c)",
        "count_vowels_",
    );
}

/// A public method called on a private field of the object a public call was made on
/// (`IndexSet::contains` calling `self.map.contains_key(..)`): no test outside the crate can
/// hold that receiver, so the call is carved through the passing test of the call holding it.
#[test]
fn calls_on_private_fields_are_carved_through_the_tested_call_holding_them() {
    let lib = r#"
pub struct Map {
    keys: Vec<char>,
}

impl Map {
    pub(crate) fn new() -> Map {
        Map { keys: Vec::new() }
    }
    pub(crate) fn insert(&mut self, c: char) {
        if !self.keys.contains(&c) {
            self.keys.push(c);
        }
    }
    pub fn contains_key(&self, c: char) -> bool {
        self.keys.contains(&c)
    }
}

pub struct Set {
    map: Map,
}

impl Set {
    pub fn of(text: &str) -> Set {
        let mut map = Map::new();
        for c in text.chars() {
            map.insert(c);
        }
        Set { map }
    }
    pub fn contains(&self, c: char) -> bool {
        self.map.contains_key(c)
    }
}
"#;
    let main = r#"
fn main() {
    let s = shapes::Set::of("hello");
    println!("{} {}", s.contains('h'), s.contains('z'));
}
"#;
    let (_tmp, dir, summary) = carve_crate(lib, main);
    assert!(
        summary.contains("5 of 5 recorded calls carved")
            && summary.contains("2 of them on private fields or objects a call was building, through the tested public call"),
        "{summary}"
    );
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert!(file.contains("shapes::Set::of(\"hello\")"), "{file}");
    assert!(!file.contains("contains_key"), "{file}");
    assert_pass_then_fail_after(
        &dir,
        "        self.keys.contains(&c)\n    }",
        "        !self.keys.contains(&c)\n    }",
        "contains_",
    );
}

/// An object made inside the crate, with private fields (the array inside a small vector, the
/// window inside a pager), reached only as the receiver of calls nested in other calls: no
/// recorded call gave its state and none leads to it. The type's public constructor stored its
/// arguments as given in every recorded call, so the test makes the state with it; the enum
/// variant holding it is composed of it (`Page::Shown(window)`).
#[test]
fn an_object_made_inside_the_crate_is_built_by_the_constructor_that_stores_its_fields() {
    let lib = r#"
#[derive(Debug, Clone, Copy)]
pub struct Window {
    start: usize,
    len: u16,
}

impl Window {
    pub fn new(start: usize, len: usize) -> Window {
        Window { start, len: len as u16 }
    }
    pub fn end(&self) -> usize {
        self.start + self.len as usize
    }
}

#[derive(Debug)]
pub enum Page {
    Shown(Window),
    Blank,
}

impl Page {
    pub fn last_line(&self) -> Option<usize> {
        match self {
            Page::Shown(w) if w.len > 0 => Some(w.end() - 1),
            _ => None,
        }
    }
}

/// The page `n` of `per_page` lines, made here, its window with it.
pub fn last_line_of(n: usize, per_page: usize) -> Option<usize> {
    let page = Page::Shown(Window { start: n * per_page, len: per_page as u16 });
    page.last_line()
}
"#;
    let main = r#"
fn main() {
    println!("{}", shapes::Window::new(0, 10).end());
    println!("{:?}", shapes::last_line_of(3, 20));
    println!("{:?}", shapes::Page::Blank.last_line());
}
"#;
    let (_tmp, dir, summary) = carve_crate(lib, main);
    assert!(!summary.contains("receiver not rebuilt"), "{summary}");
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(
        &file,
        &summary,
        &[
            "shapes::Window::new(60usize, 20usize)",
            "shapes::Page::Shown(window)",
            "assert_eq!(result, 80usize)",
            "assert_eq!(result, Some(79usize))",
        ],
    );
    assert_pass_then_fail_after(&dir, "Some(w.end() - 1)", "Some(w.end())", "last_line");
}

/// A replayed step whose argument is a value of the crate with private fields (as petgraph's
/// `graph.add_edge(a, b, w)` takes `NodeIndex`es): the argument is written as the constructor
/// that stores its fields, so the step can be replayed and the object rebuilt.
#[test]
fn a_replayed_step_passes_a_private_field_value_through_the_constructor_that_stores_it() {
    let lib = r#"
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slot(u32);

impl Slot {
    pub fn new(at: usize) -> Slot {
        Slot(at as u32)
    }
}

#[derive(Debug, Default)]
pub struct Board {
    links: Vec<(u32, u32)>,
}

impl Board {
    pub fn new() -> Board {
        Board::default()
    }
    pub fn link(&mut self, a: Slot, b: Slot) {
        self.links.push((a.0, b.0));
    }
    pub fn degree(&self, s: Slot) -> usize {
        self.links.iter().filter(|(a, b)| *a == s.0 || *b == s.0).count()
    }
}
"#;
    let main = r#"
fn main() {
    let mut board = shapes::Board::new();
    board.link(shapes::Slot::new(0), shapes::Slot::new(1));
    board.link(shapes::Slot::new(1), shapes::Slot::new(2));
    println!("{}", board.degree(shapes::Slot::new(1)));
}
"#;
    let (_tmp, dir, summary) = carve_crate(lib, main);
    assert!(!summary.contains("receiver not rebuilt"), "{summary}");
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(
        &file,
        &summary,
        &[
            "board.link(shapes::Slot::new(0usize), shapes::Slot::new(1usize))",
            "let result = board.degree(",
            "assert_eq!(result, 2usize)",
        ],
    );
    assert_pass_then_fail_after(&dir, "*a == s.0 || *b == s.0", "*a == s.0", "degree");
}

/// A generic container of the library holding the program's own type (`MaxStack<Score>`,
/// `Score` declared in `main.rs`): no test can name `Score`, so the carved file declares a
/// stand-in with its recorded fields and std's derives, and instantiates the container with it.
#[test]
fn a_container_of_the_program_s_own_type_is_carved_with_a_stand_in_for_that_type() {
    let lib = r#"
pub struct MaxStack<T> {
    items: Vec<T>,
    max: Option<usize>,
}

impl<T: PartialOrd + Clone> MaxStack<T> {
    pub fn new() -> MaxStack<T> {
        MaxStack { items: Vec::new(), max: None }
    }
    pub fn push(&mut self, item: T) {
        let bigger = match self.max {
            Some(m) => item > self.items[m],
            None => true,
        };
        self.items.push(item);
        if bigger {
            self.max = Some(self.items.len() - 1);
        }
    }
    pub fn max(&self) -> Option<T> {
        self.max.map(|m| self.items[m].clone())
    }
    pub fn len(&self) -> usize {
        self.items.len()
    }
}
"#;
    let main = r#"
#[derive(Debug, Clone, PartialEq, PartialOrd)]
struct Score {
    points: u32,
    name: String,
}

fn main() {
    let mut s = shapes::MaxStack::new();
    s.push(Score { points: 3, name: "ann".to_string() });
    s.push(Score { points: 7, name: "bob".to_string() });
    s.push(Score { points: 5, name: "cy".to_string() });
    println!("{:?} {}", s.max(), s.len());
}
"#;
    let (_tmp, dir, summary) = carve_crate(lib, main);
    assert!(!summary.contains("receiver not rebuilt"), "{summary}");
    assert!(!summary.contains("not nameable"), "{summary}");
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(
        &file,
        &summary,
        &[
            "pub struct Score {\n    pub points: u32,\n    pub name: String,\n}",
            "shapes::MaxStack::<Score>::new()",
            "Some(Score {\n            points: 7u32,",
        ],
    );
    assert_eq!(file.matches("pub struct Score").count(), 1, "{file}");
    assert_pass_then_fail_after(
        &dir,
        "Some(m) => item > self.items[m],",
        "Some(m) => item < self.items[m],",
        "max_",
    );
}

/// State behind a shared pointer: a buffer split in two shares one storage (as `bytes` does),
/// and the program kept the split-off part while it went on with the rest. A replayed split
/// whose result the program went on using is kept alive to the end of the test (`let _buf_2 =
/// ..`), so the rest sees the storage shared as it was; a result the program never used again is
/// dropped at once (`let _ = ..`).
#[test]
fn a_replayed_split_whose_part_the_program_kept_keeps_it_alive_in_the_test() {
    let lib = r#"
use std::rc::Rc;

pub struct Buf {
    data: Rc<Vec<u8>>,
    start: usize,
    end: usize,
}

pub struct Frozen {
    data: Rc<Vec<u8>>,
    start: usize,
    end: usize,
}

impl Buf {
    pub fn from_slice(s: &[u8]) -> Buf {
        Buf { data: Rc::new(s.to_vec()), start: 0, end: s.len() }
    }
    pub fn len(&self) -> usize {
        self.end - self.start
    }
    pub fn split_to(&mut self, at: usize) -> Buf {
        let head = Buf { data: Rc::clone(&self.data), start: self.start, end: self.start + at };
        self.start += at;
        head
    }
    pub fn freeze(self) -> Frozen {
        Frozen { data: self.data, start: self.start, end: self.end }
    }
}

impl Frozen {
    pub fn to_vec(&self) -> Vec<u8> {
        self.data[self.start..self.end].to_vec()
    }
    pub fn shared(&self) -> usize {
        Rc::strong_count(&self.data)
    }
}
"#;
    let main = r#"
fn main() {
    let mut b = shapes::Buf::from_slice(b"hello world");
    let head = b.split_to(5);
    println!("{} {}", head.len(), b.len());
    let f = head.freeze();
    println!("{:?} {}", f.to_vec(), f.shared());
    let rest = b.freeze();
    println!("{:?} {}", rest.to_vec(), rest.shared());
    let mut once = shapes::Buf::from_slice(b"abc");
    let _ = once.split_to(1);
    println!("{}", once.freeze().shared());
}
"#;
    let (_tmp, dir, summary) = carve_crate(lib, main);
    assert!(!summary.contains("failed verification"), "{summary}");
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(
        &file,
        &summary,
        &[
            "let _buf_2 = buf.split_to(5usize);",
            "let _ = buf.split_to(1usize);",
            "fn shared_returns_2_when_start_5_end_11",
            "fn shared_returns_1",
        ],
    );
    assert_pass_then_fail_after(
        &dir,
        "data: Rc::clone(&self.data),",
        "data: Rc::new(self.data[..].to_vec()),",
        "shared_returns_2",
    );
}

/// A generic function whose bound is serde's (`T: DeserializeOwned`, as `toml::from_str`) given
/// the program's own derived type: its stand-in derives `serde::Deserialize` too (the manifest
/// turns on serde's `derive`), so the carved test deserializes into it and compares the result.
#[test]
fn a_stand_in_derives_serde_s_traits_where_the_library_bounds_its_type_by_them() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("shapes");
    write_tree(
        &dir,
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"shapes\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
                 [dependencies]\nserde = { version = \"1\", features = [\"derive\"] }\n\n\
                 [workspace]\n",
            ),
            (
                "src/lib.rs",
                r#"
use serde::de::value::{Error, MapDeserializer};

/// `key=value` pairs separated by commas into any type serde can make of a map.
pub fn from_pairs<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, String> {
    let pairs = text
        .split(',')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()));
    T::deserialize(MapDeserializer::<_, Error>::new(pairs)).map_err(|e| e.to_string())
}
"#,
            ),
            (
                "src/main.rs",
                r#"
#[derive(serde::Deserialize, Debug)]
struct Person {
    name: String,
    city: String,
}

fn main() {
    let p: Person = shapes::from_pairs("name=ann, city=oslo").unwrap();
    println!("{p:?}");
}
"#,
            ),
        ],
    );
    let db = build_and_record(&dir, "shapes", &[]);
    let summary = generate_into_tests(&dir, &db, &[]);
    assert!(!summary.contains("not nameable"), "{summary}");
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(
        &file,
        &summary,
        &[
            "    serde::Deserialize\n)]\n#[allow(dead_code)]\npub struct Person {",
            "shapes::from_pairs::<Person>(\"name=ann, city=oslo\")",
            "name: String::from(\"ann\"),",
        ],
    );
    assert_pass_then_fail_after(
        &dir,
        "(k.trim().to_string()",
        "(k.to_string()",
        "from_pairs_",
    );
}

/// A private-field value of the crate inside an argument (`goal: Option<NodeIndex>` of
/// petgraph's `dijkstra`) is written through the constructor that stores its fields, where the
/// literal holds it: `Some(shapes::Id::new(3u32))`.
#[test]
fn a_private_field_value_inside_an_argument_is_written_through_its_storing_constructor() {
    let lib = r#"
#[derive(Debug, PartialEq)]
pub struct Id(u32);

impl Id {
    pub fn new(n: u32) -> Id {
        Id(n)
    }
}

/// The first id over `n`.
pub fn first_over(ids: &[u32], n: u32) -> Option<Id> {
    ids.iter().find(|&&i| i > n).map(|&i| Id(i))
}

/// Where `wanted` sits in `ids`, or the first one.
pub fn pick(ids: &[u32], wanted: Option<Id>) -> Option<usize> {
    match wanted {
        Some(id) => ids.iter().position(|&i| i == id.0),
        None => (!ids.is_empty()).then_some(0),
    }
}
"#;
    let main = r#"
fn main() {
    let first = shapes::Id::new(1);
    println!("{:?}", shapes::pick(&[1, 3, 5], Some(shapes::Id::new(3))));
    println!("{:?}", shapes::pick(&[1, 3, 5], Some(first)));
    println!("{:?}", shapes::first_over(&[1, 3, 5], 4));
}
"#;
    let (_tmp, dir, summary) = carve_crate(lib, main);
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    // And inside a result, where the type compares; a test of `Id::new` itself never expects
    // what `Id::new` makes (it could not fail), so its result shows nothing to check.
    assert_carved(
        &file,
        &summary,
        &["assert_eq!(result, Some(shapes::Id::new(5u32)))"],
    );
    assert!(
        !file.contains("assert_eq!(result, shapes::Id::new("),
        "{file}"
    );
    assert_carved(
        &file,
        &summary,
        &["shapes::pick(&[1u32, 3u32, 5u32][..], Some(shapes::Id::new(3u32)))"],
    );
    assert_pass_then_fail_after(
        &dir,
        "Some(id) => ids.iter().position(|&i| i == id.0),",
        "Some(id) => ids.iter().rposition(|&i| i != id.0),",
        "pick_",
    );
}

/// A constructor that stores its fields, recorded on one instance (`Pair::<u8>::new`), makes a
/// state of another (`Pair<String>`, made inside the crate): the instance is written as a test
/// writes it (`Pair::<String>::new(..)`, not DWARF's `alloc::string::String`).
#[test]
fn a_storing_constructor_recorded_on_one_instance_names_another_as_a_test_writes_it() {
    let lib = r#"
pub struct Pair<T> {
    first: T,
    second: T,
}

impl<T: Clone> Pair<T> {
    pub fn new(first: T, second: T) -> Pair<T> {
        Pair { first, second }
    }
    pub fn first(&self) -> T {
        self.first.clone()
    }
}

pub struct Holder<T> {
    inner: Option<Pair<T>>,
}

pub fn hold(a: &str, b: &str) -> Holder<String> {
    Holder { inner: Some(Pair { first: a.to_string(), second: b.to_string() }) }
}

impl<T: Clone> Holder<T> {
    pub fn get(&self) -> Option<T> {
        self.inner.as_ref().map(|p| p.first())
    }
}
"#;
    let main = r#"
fn main() {
    println!("{}", shapes::Pair::new(1u8, 2u8).first());
    let h = shapes::hold("x", "y");
    println!("{:?}", h.get());
}
"#;
    let (_tmp, dir, summary) = carve_crate(lib, main);
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(
        &file,
        &summary,
        &["shapes::Pair::<String>::new(String::from(\"x\"), String::from(\"y\"))"],
    );
    assert!(!file.contains("alloc::"), "{file}");
    assert_pass_then_fail_after(&dir, "self.first.clone()", "self.second.clone()", "first_");
}
