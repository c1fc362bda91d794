//! `generate --crate` lets go of the values of calls no test can make (issue 14, bounded
//! memory), but never of the calls a rule still reads: here a private struct implementing a
//! public trait, used by a public function through `&dyn Trait`. The carved test of that function
//! replays the trait call through a mockall mock returning the recorded result, so the values of
//! `<Square as Shape>::area` (a call of a private type's method below the tested call) must stay.

mod common;

use common::*;

const LIB: &str = r#"
pub trait Shape {
    fn area(&self) -> u64;
}

struct Square {
    side: u64,
}

impl Square {
    fn side_squared(&self) -> u64 {
        self.side * self.side
    }
}

impl Shape for Square {
    fn area(&self) -> u64 {
        self.side_squared()
    }
}

pub fn square(side: u64) -> Box<dyn Shape> {
    Box::new(Square { side })
}

pub fn double_area(shape: &dyn Shape) -> u64 {
    2 * shape.area()
}
"#;

const MAIN: &str = r#"
fn main() {
    let s = shapes::square(7);
    println!("{}", shapes::double_area(s.as_ref()));
}
"#;

#[test]
fn a_trait_call_of_a_private_type_below_a_tested_call_keeps_its_values_for_the_mock() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("shapes");
    write_tree(
        &dir,
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"shapes\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
                 [dev-dependencies]\nmockall = \"0.13\"\n\n[workspace]\n",
            ),
            ("src/lib.rs", LIB),
            ("src/main.rs", MAIN),
        ],
    );
    let db = build_and_record(&dir, "shapes", &[]);
    let trace = load(&db);
    // The calls the grouper may strip are there: a private method of a private type...
    assert_eq!(calls_of(&trace, "shapes::Square::side_squared").len(), 1);
    // ...below the trait call whose result the mock must return.
    let area = calls_of(&trace, "<shapes::Square as shapes::Shape>::area");
    assert_eq!(area.len(), 1);
    assert_eq!(area[0].ret, Some(uint(49, "u64")));

    // `--crate` turns the lean values on (the API is known before the calls are read).
    let summary = generate_into_tests(&dir, &db, &["--crate", dir.to_str().unwrap()]);
    let file = std::fs::read_to_string(dir.join("tests/carved_shapes.rs")).unwrap();
    assert_carved(
        &file,
        &summary,
        &[
            "impl shapes::Shape for Shape {",
            "mock_shape.expect_area().times(1).return_const(49u64);",
            "let result = shapes::double_area(&mock_shape);",
            "assert_eq!(result, 98u64);",
        ],
    );
    let (ok, out) = cargo_test(&dir);
    assert!(ok, "{out}");
}
