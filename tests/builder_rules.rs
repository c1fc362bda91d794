//! One test per rule of the seventh round (builder steps and receivers, met on `url`): each
//! writes a small real crate shaped like what real crates do, records its program through
//! ptrace, carves tests, runs them with cargo, and checks that they fail once the behaviour they
//! recorded changes.

mod common;

use common::*;

/// A builder step called again and again with the same arguments (`Url::options()` inside every
/// `Url::parse` and `Url::join`) is one call grouped with its equivalents; its result cannot be
/// checked by a test of its own, so the tests of the calls it feeds replay it as an arrange
/// step. Each equivalent call is then made again by those tests as it was made, and counts as
/// carved through them, not only the first.
#[test]
fn equivalent_builder_steps_count_as_carved_through_the_tests_replaying_them() {
    let lib = r#"
pub struct Options {
    base: Option<String>,
}

impl Options {
    pub fn base(mut self, base: &str) -> Options {
        self.base = Some(base.to_string());
        self
    }
    pub fn parse(self, input: &str) -> String {
        match self.base {
            Some(b) => format!("{b}/{input}"),
            None => input.to_string(),
        }
    }
}

pub struct Path;

impl Path {
    pub fn options() -> Options {
        Options { base: None }
    }
    pub fn parse(input: &str) -> String {
        Path::options().parse(input)
    }
    pub fn join(base: &str, input: &str) -> String {
        Path::options().base(base).parse(input)
    }
}
"#;
    let main = r#"
fn main() {
    for s in ["a", "b", "c"] {
        println!("{} {}", shapes::Path::parse(s), shapes::Path::join("root", s));
    }
}
"#;
    let c = carve_small_crate("shapes", lib, main, &[]);
    // 3 parse + 3 join + 6 options + 3 base + 6 Options::parse: every call carved, the six
    // `options()` and the three `base("root")` (equivalent calls too) as steps of the tests
    // they feed.
    assert!(
        c.summary.contains("21 of 21 recorded calls carved")
            && c.summary.contains("9 of them as steps other tests replay"),
        "{}",
        c.summary
    );
    let file = std::fs::read_to_string(c.dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(
        &file,
        &c.summary,
        &["shapes::Path::options()", ".base(\"root\")"],
    );
    assert_pass_then_fail_after(
        &c.dir,
        "Some(b) => format!(\"{b}/{input}\")",
        "Some(b) => format!(\"{b}//{input}\")",
        "parse_",
    );
}

/// An object changed through another crate's handle (here a boxed closure, a trait object, which
/// neither the recorder nor the replay-closure rule follows; in `url`, the query serializer of
/// `form_urlencoded`, not recorded) and then changed again before any getter
/// gave its text: no call leads to that state and no getter was called on it. A getter that
/// gave, on every object of the type it was recorded on, the text the object holds in one field
/// (`as_str()` gives `serialization`) gives it here too: the test parses that field's text and
/// checks the getter gives it back before it acts.
#[test]
fn objects_in_states_no_getter_saw_are_rebuilt_from_the_field_a_getter_always_gave() {
    let lib = r#"
pub struct Addr {
    serialization: String,
    fragment_start: Option<usize>,
}

#[derive(Debug)]
pub struct ParseError;

impl Addr {
    pub fn parse(s: &str) -> Result<Addr, ParseError> {
        if !s.contains("://") {
            return Err(ParseError);
        }
        Ok(Addr { serialization: s.to_string(), fragment_start: s.find('#') })
    }
    pub fn as_str(&self) -> &str {
        &self.serialization
    }
    pub fn edit(&mut self, f: Box<dyn FnOnce(&mut String)>) {
        f(&mut self.serialization);
        self.fragment_start = self.serialization.find('#');
    }
    pub fn set_fragment(&mut self, fragment: &str) {
        if let Some(at) = self.fragment_start {
            self.serialization.truncate(at);
        }
        self.fragment_start = Some(self.serialization.len());
        self.serialization.push('#');
        self.serialization.push_str(fragment);
    }
    pub fn fragment_start(&self) -> Option<usize> {
        self.fragment_start
    }
}
"#;
    let main = r#"
fn main() {
    let mut a = shapes::Addr::parse("http://example.com/x").unwrap();
    a.edit(Box::new(|s| s.push_str("?q=1")));
    a.set_fragment("top");
    println!("{} {:?}", a.as_str(), a.fragment_start());
}
"#;
    let c = carve_small_crate("shapes", lib, main, &[]);
    assert!(!c.summary.contains("receiver not rebuilt"), "{}", c.summary);
    let file = std::fs::read_to_string(c.dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(
        &file,
        &c.summary,
        &[
            "shapes::Addr::parse(\"http://example.com/x?q=1\")",
            "assert_eq!(addr.as_str(), \"http://example.com/x?q=1\")",
        ],
    );
    assert_pass_then_fail_after(
        &c.dir,
        "self.fragment_start = Some(self.serialization.len());",
        "self.fragment_start = Some(self.serialization.len() + 1);",
        "set_fragment_",
    );
}

/// A hook method returning `Result<(), Self::Error>` with `Error = Infallible` (`similar`'s
/// `DiffHook`) returns a zero-sized value: the debug information gives the function no return
/// type and the recording holds no value. Its only value is `Ok(())`, which the test checks,
/// with what the call did to its receiver.
#[test]
fn zero_sized_unit_results_are_checked_as_the_one_value_they_have() {
    let lib = r#"
pub trait Hook {
    type Error;
    fn on(&mut self, n: usize) -> Result<(), Self::Error>;
}

pub struct Counter {
    total: usize,
}

impl Counter {
    pub fn new() -> Counter {
        Counter { total: 0 }
    }
    pub fn total(&self) -> usize {
        self.total
    }
}

impl Hook for Counter {
    type Error = std::convert::Infallible;
    fn on(&mut self, n: usize) -> Result<(), Self::Error> {
        self.total += n;
        Ok(())
    }
}
"#;
    let main = r#"
use shapes::Hook;

fn main() {
    let mut c = shapes::Counter::new();
    for n in [3, 4] {
        let _ = c.on(n);
    }
    println!("{}", c.total());
}
"#;
    let c = carve_small_crate("shapes", lib, main, &[]);
    assert!(!c.summary.contains("undecoded"), "{}", c.summary);
    let file = std::fs::read_to_string(c.dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(
        &file,
        &c.summary,
        &[
            "let result = counter.on(4usize);",
            "assert!(matches!(result, Ok(())));",
            "assert_eq!(counter.total(), 7usize);",
        ],
    );
    assert_pass_then_fail_after(&c.dir, "self.total += n;", "self.total += n * 2;", "on_");
}

/// A call returning a value of another crate, which the program then used only through that
/// crate's calls (not recorded), has nothing a test could check or replay: the summary says so,
/// and how to record that crate too, instead of `unsupported type`. The crate's other calls are
/// carved as usual.
#[test]
fn results_of_crates_not_recorded_are_named_as_such() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("shapes");
    let manifest = "[package]\nname = \"shapes\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
                    [dependencies]\nother = { path = \"../other\" }\n\n[workspace]\n";
    let lib = r#"
pub struct Doc {
    text: String,
}

impl Doc {
    pub fn new(text: &str) -> Doc {
        Doc { text: text.to_string() }
    }
    pub fn len(&self) -> usize {
        self.text.len()
    }
    pub fn rev(&self) -> other::Rev {
        other::Rev::of(&self.text)
    }
}
"#;
    let other = r#"
pub struct Rev(Vec<char>);

impl Rev {
    pub fn of(s: &str) -> Rev {
        Rev(s.chars().collect())
    }
    pub fn next_char(&mut self) -> Option<char> {
        self.0.pop()
    }
}
"#;
    let main = r#"
fn main() {
    let d = shapes::Doc::new("ab");
    let mut r = d.rev();
    println!("{} {:?}", d.len(), r.next_char());
}
"#;
    write_tree(
        &dir,
        &[
            ("Cargo.toml", manifest),
            ("src/lib.rs", lib),
            ("src/main.rs", main),
        ],
    );
    write_tree(
        &tmp.path().join("other"),
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"other\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
            ),
            ("src/lib.rs", other),
        ],
    );
    let built = cargo_in(&dir, &["build", "--quiet"]);
    assert!(built.status.success(), "{}", stderr(&built));
    let db = dir.join("trace.db");
    let recorded = record(
        &db,
        &["--filter", "shapes::*"],
        &dir.join("target/debug/shapes"),
        &[],
    );
    assert!(recorded.status.success(), "{}", stderr(&recorded));
    let summary = generate_into_tests(&dir, &db, &[]);
    assert!(
        summary.contains("returns a value of a crate not recorded 1")
            && !summary.contains("unsupported type"),
        "{summary}"
    );
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(&file, &summary, &["shapes::Doc::new(\"ab\")", ".len()"]);
    assert_pass_then_fail_after(&dir, "self.text.len()", "self.text.len() + 1", "len_");
}
