//! Folding, on plain data: after distilling, the kept tests of one file that are the same
//! steps with other values become one table-driven test, each row named in its failure
//! message (`"case {i}"`), so that a reader sees one test per behaviour with its inputs side
//! by side. First, `fold/onto.rs`: a kept test that is one more row of a table the file
//! holds (a function's calls past the cap) joins it. Then two rules, tried in order, each a
//! file:
//! - `fold/whole.rs`, the whole call: tests of one function whose recorded arguments have the
//!   same types, on an arrangement of the same variables; what differs between them (the
//!   receiver's expression, an argument, a replayed step's count, a checked state, the result)
//!   are columns of whole expressions
//!   (`("zz11", Err(hex::FromHexError::InvalidHexCharacter { c: 'z', index: 0 }))`), typed by
//!   the compiler from the call;
//! - the literal shape of `plan/table.rs`: tests that differ only in literals whose types
//!   the literals name (`ByteSize::b(1024u64)` and `"1.0 KiB"`), in a typed table.
//!
//! `fold/name.rs` names each table by what its rows share. Then `fold/story.rs`, a pass of
//! its own: tests that take the first steps of a longer test's arrangement are checked inside
//! it, where their call was made.
//!
//! Never a test that panics (a row names no panic), mocks or replays closures; a table has two
//! rows or more. The caller verifies the folded file and keeps the tests as they were when
//! it does not pass whole.

mod name;
mod onto;
mod story;
mod whole;

use std::collections::{BTreeSet, HashMap};

use crate::body::{Assertion, Body};
use crate::plan::model::TestPlan;
use crate::plan::table::{self, Row, Table};
use name::{shared_variant, table_name};
pub(crate) use story::stories;
use whole::{whole_key, whole_table, without_steps_of, WholeKey};

/// The tests of one file with those of one shape folded into tables, in the order of their
/// first test; `arg_types` gives the recorded types of a test's arguments. Returns the tests
/// and how many tables of kept tests they hold (tables made, and tables of the file that kept
/// tests joined).
pub(crate) fn fold(
    tests: Vec<TestPlan>,
    arg_types: &dyn Fn(&TestPlan) -> Vec<String>,
) -> (Vec<TestPlan>, usize) {
    let (tests, joined) = onto::onto_tables(tests);
    let (groups, alone) = group(&tests, arg_types);
    let at = place(&tests, groups, alone);
    let tables = at
        .iter()
        .filter(|(_, f)| matches!(f, Folded::Table(..)))
        .count();
    (assemble(tests, at), tables + joined)
}

/// The groups of tests one table could hold, and the tests no group takes. Whole calls first
/// (the biggest tables: every argument may differ); what makes no group of two so, by literal
/// shapes.
fn group(
    tests: &[TestPlan],
    arg_types: &dyn Fn(&TestPlan) -> Vec<String>,
) -> (Vec<Group>, Vec<usize>) {
    let mut groups: Vec<Group> = Vec::new();
    let mut whole: HashMap<WholeKey, usize> = HashMap::new();
    let mut alone: Vec<usize> = Vec::new();
    for (i, t) in tests.iter().enumerate() {
        let key = t.table.is_none().then(|| whole_key(&t.body, arg_types(t)));
        let Some(key) = key.flatten() else {
            alone.push(i);
            continue;
        };
        let g = *whole.entry(key).or_insert_with(|| {
            groups.push(Group::Whole(Vec::new()));
            groups.len() - 1
        });
        if let Group::Whole(members) = &mut groups[g] {
            members.push((i, None));
        }
    }
    join_without_steps(tests, &whole, &mut groups);
    groups.retain(|g| match g {
        Group::Whole(members) if members.len() < 2 => {
            alone.extend(members.iter().map(|(i, _)| *i));
            false
        }
        _ => true,
    });
    alone.sort_unstable();
    let mut literal: HashMap<table::Shape, usize> = HashMap::new();
    for i in std::mem::take(&mut alone) {
        let t = &tests[i];
        let Some((shape, values)) = t.table.is_none().then(|| table::split(&t.body)).flatten()
        else {
            alone.push(i);
            continue;
        };
        let g = *literal.entry(shape.clone()).or_insert_with(|| {
            groups.push(Group::Literal(Box::new(shape), Vec::new()));
            groups.len() - 1
        });
        if let Group::Literal(_, rows) = &mut groups[g] {
            rows.push((i, values));
        }
    }
    (groups, alone)
}

/// Moves each group of whole calls whose tests take fewer replayed steps than another group's,
/// and differ in nothing else, into that group, those steps taken 0 times in its tests' bodies
/// (`fold/whole.rs`'s [`without_steps_of`]): `next()` on a fresh iterator is a row of the
/// table of `next()`s after one or two.
fn join_without_steps(tests: &[TestPlan], keys: &HashMap<WholeKey, usize>, groups: &mut [Group]) {
    let mut keys: Vec<(&WholeKey, usize)> = keys.iter().map(|(k, g)| (k, *g)).collect();
    keys.sort_by_key(|(_, g)| *g);
    for &(short, from) in &keys {
        for &(long, to) in &keys {
            let Group::Whole(members) = &groups[from] else {
                continue;
            };
            if from == to || members.is_empty() {
                continue;
            }
            let filled: Option<Vec<(usize, Option<Body>)>> = members
                .iter()
                .map(|(i, _)| without_steps_of(long, short, &tests[*i].body).map(|b| (*i, Some(b))))
                .collect();
            let Some(filled) = filled else {
                continue;
            };
            if let Group::Whole(members) = &mut groups[from] {
                members.clear();
            }
            if let Group::Whole(members) = &mut groups[to] {
                members.extend(filled);
                members.sort_by_key(|(i, _)| *i);
            }
            break;
        }
    }
}

/// Each table at its first test's place, each test no table takes at its own; a group of one
/// stays a test.
fn place(tests: &[TestPlan], groups: Vec<Group>, alone: Vec<usize>) -> Vec<(usize, Folded)> {
    let mut at: Vec<(usize, Folded)> = alone.into_iter().map(|i| (i, Folded::Alone(i))).collect();
    for group in groups {
        match group {
            Group::Literal(shape, rows) if rows.len() >= 2 => {
                let first = rows[0].0;
                let shape = *shape;
                let table = Folded::Table(Box::new(shape.body), shape.columns, rows, false);
                at.push((first, table));
            }
            Group::Whole(members) if members.len() >= 2 => {
                let bodies: Vec<&Body> = members
                    .iter()
                    .map(|(i, b)| b.as_ref().unwrap_or(&tests[*i].body))
                    .collect();
                let first = members.iter().map(|(i, _)| *i).min().unwrap_or_default();
                match whole_table(&bodies) {
                    Some((body, columns, values)) => {
                        let rows = members.iter().map(|(i, _)| *i).zip(values).collect();
                        let table = Folded::Table(Box::new(body), columns, rows, true);
                        at.push((first, table));
                    }
                    None => at.extend(members.into_iter().map(|(i, _)| (i, Folded::Alone(i)))),
                }
            }
            Group::Literal(_, rows) => {
                at.extend(rows.into_iter().map(|(i, _)| (i, Folded::Alone(i))))
            }
            Group::Whole(members) => {
                at.extend(members.into_iter().map(|(i, _)| (i, Folded::Alone(i))));
            }
        }
    }
    at.sort_by_key(|(i, _)| *i);
    at
}

/// The tests as placed: those alone as they were, each table a test of its rows' tests, named
/// apart from the others.
fn assemble(tests: Vec<TestPlan>, at: Vec<(usize, Folded)>) -> Vec<TestPlan> {
    let mut taken: BTreeSet<String> = BTreeSet::new();
    for (_, f) in &at {
        if let Folded::Alone(i) = f {
            taken.insert(tests[*i].name.clone());
        }
    }
    let mut tests: Vec<Option<TestPlan>> = tests.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(at.len());
    for (_, f) in at {
        let (body, columns, rows, inferred) = match f {
            Folded::Alone(i) => {
                out.extend(tests[i].take());
                continue;
            }
            Folded::Table(body, columns, rows, inferred) => (*body, columns, rows, inferred),
        };
        let results: Vec<&str> = match (&body.assertion, inferred) {
            (_, true) => rows
                .iter()
                .filter_map(|(_, values)| values.last().map(String::as_str))
                .collect(),
            (Assertion::Eq { expected }, false) => vec![expected.as_str()],
            _ => Vec::new(),
        };
        let typed = if inferred { &[][..] } else { &columns[..] };
        let name = table_name(
            &body.function_path,
            shared_variant(&results),
            typed,
            &mut taken,
        );
        let mut t = TestPlan {
            name,
            body,
            calls: Vec::new(),
            replayed: Vec::new(),
            arranged: Vec::new(),
            table: None,
            story: false,
            name_parts: None,
        };
        let mut table_rows = Vec::with_capacity(rows.len());
        for (i, values) in rows {
            let Some(member) = tests[i].take() else {
                continue;
            };
            t.calls.extend(&member.calls);
            t.replayed.extend(&member.replayed);
            t.arranged.extend(&member.arranged);
            table_rows.push(Row {
                values,
                calls: member.calls,
                replayed: member.replayed,
                arranged: member.arranged,
            });
        }
        t.table = Some(Table {
            columns,
            rows: table_rows,
            inferred,
        });
        out.push(t);
    }
    out
}

enum Group {
    /// The literal shape, and its rows: (test, values).
    Literal(Box<table::Shape>, Vec<(usize, Vec<String>)>),
    /// Tests of one whole call.
    Whole(Vec<(usize, Option<Body>)>),
}

enum Folded {
    Alone(usize),
    /// The table's body, columns, rows (test, values), and whether its values are whole
    /// expressions.
    Table(Box<Body>, Vec<String>, Vec<(usize, Vec<String>)>, bool),
}

/// What the folding rules' tests build their tests of.
#[cfg(test)]
pub(crate) mod testing {
    use crate::body::{Assertion, Body};
    use crate::plan::model::TestPlan;

    /// A body of `hex::decode` calling `callee` with `args`, checked by `assertion`.
    pub(crate) fn body(callee: &str, args: &[&str], assertion: Assertion) -> Body {
        Body {
            function_path: "hex::decode".into(),
            mocks: vec![],
            ordered_expectations: vec![],
            setup: vec![],
            checks: vec![],
            callee: callee.into(),
            args: args.iter().map(|a| a.to_string()).collect(),
            assertion,
            effects: vec![],
            sequence: false,
            mock_decls: vec![],
            trait_uses: vec![],
            replays_closures: false,
        }
    }

    /// The test `name` standing for the recorded call `call`.
    pub(crate) fn test(name: &str, call: u64, body: Body) -> TestPlan {
        TestPlan {
            name: name.into(),
            body,
            calls: vec![call],
            replayed: vec![],
            arranged: vec![],
            table: None,
            story: false,
            name_parts: None,
        }
    }

    pub(super) fn eq(expected: &str) -> Assertion {
        Assertion::Eq {
            expected: expected.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::body;
    use super::*;

    use super::testing::{eq, test};

    fn str_types(_: &TestPlan) -> Vec<String> {
        vec!["&str".into()]
    }

    #[test]
    fn whole_calls_of_one_function_with_arguments_of_one_type_are_one_table() {
        let tests = vec![
            test(
                "decode_zz11_returns_err",
                1,
                body("hex::decode", &["\"zz11\""], eq("Err(E::Bad)")),
            ),
            test(
                "decode_abc_returns_err",
                2,
                body("hex::decode", &["\"abc\""], eq("Err(E::Odd)")),
            ),
            test("encode_returns_empty", 3, {
                let mut b = body("hex::encode", &["\"\""], eq("\"\""));
                b.function_path = "hex::encode".into();
                b
            }),
            test(
                "decode_ab_returns_ok",
                4,
                body("hex::decode", &["\"ab\""], eq("Ok(vec![171u8])")),
            ),
        ];
        let (folded, tables) = fold(tests, &str_types);
        assert_eq!(tables, 1);
        let names: Vec<&str> = folded.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["decode_recorded_cases", "encode_returns_empty"]);
        let t = &folded[0];
        assert_eq!(t.body.args, ["case.0"]);
        assert_eq!(t.body.assertion, eq("case.1"));
        assert_eq!(t.calls, [1, 2, 4]);
        let table = t.table.as_ref().unwrap();
        assert!(table.inferred);
        assert_eq!(table.columns, ["argument 1", "result"]);
        let rows: Vec<&[String]> = table.rows.iter().map(|r| &r.values[..]).collect();
        assert_eq!(
            rows,
            [
                &["\"zz11\"".to_string(), "Err(E::Bad)".to_string()][..],
                &["\"abc\"".to_string(), "Err(E::Odd)".to_string()][..],
                &["\"ab\"".to_string(), "Ok(vec![171u8])".to_string()][..],
            ]
        );
    }

    #[test]
    fn an_argument_every_row_shares_stays_in_the_call_and_bools_are_compared() {
        let tests = vec![
            test("a", 1, body("p::f", &["\"x\"", "1u8"], Assertion::True)),
            test("b", 2, body("p::f", &["\"x\"", "2u8"], Assertion::False)),
        ];
        // Recorded with arguments of other types: a literal shape, `p::f("x", N)` with a bool.
        let types = |t: &TestPlan| vec![format!("&{}", t.name), "u8".into()];
        let (folded, tables) = fold(tests, &types);
        assert_eq!(tables, 1);
        let table = folded[0].table.as_ref().unwrap();
        assert!(!table.inferred, "literal columns are typed");
        assert_eq!(table.columns, ["&str", "u8", "bool"]);
        // Whole calls whose shared argument is no literal.
        let tests = vec![
            test(
                "a",
                1,
                body("p::f", &["&x()", "vec![1u8]"], Assertion::True),
            ),
            test(
                "b",
                2,
                body("p::f", &["&x()", "vec![2u8]"], Assertion::False),
            ),
        ];
        let (folded, _) = fold(tests, &|_| vec!["&X".into(), "Vec<u8>".into()]);
        let t = &folded[0];
        assert_eq!(t.body.args, ["&x()", "case.0"]);
        let values: Vec<&str> = t.table.as_ref().unwrap().rows[1]
            .values
            .iter()
            .map(String::as_str)
            .collect();
        assert_eq!(values, ["vec![2u8]", "false"]);
    }

    #[test]
    fn calls_with_arguments_of_other_types_or_arrangements_are_not_folded() {
        // Bound to what another variable of the arrangement makes: no table before the loop.
        let mut arranged = body("p::f", &["x"], eq("X(1)"));
        arranged.setup = vec![bind("y", "p::Y::new()"), bind("x", "p::X::from(&y, 1)")];
        let tests = vec![
            test("a", 1, body("p::f", &["&String::from(\"a\")"], eq("1u8"))),
            test("b", 2, body("p::f", &["\"b\""], eq("2u8"))),
            test("c", 3, arranged.clone()),
            test("d", 4, {
                let mut d = arranged;
                d.setup[1].expr = "p::X::from(&y, 2)".into();
                d.assertion = eq("X(2)");
                d
            }),
            test("e", 5, body("p::f", &["case"], eq("3u8"))),
            test("f", 6, body("p::f", &["case"], eq("4u8"))),
            test(
                "g",
                7,
                body("p::f", &["\"g\""], Assertion::Panics { expected: None }),
            ),
            test(
                "h",
                8,
                body("p::f", &["\"h\""], Assertion::Panics { expected: None }),
            ),
        ];
        let types = |t: &TestPlan| match t.name.as_str() {
            "a" => vec!["&String".into()],
            _ => vec!["&str".into()],
        };
        let (folded, tables) = fold(tests, &types);
        assert_eq!(tables, 0);
        assert_eq!(folded.len(), 8);
    }

    use crate::body::Binding;

    fn bind(var: &str, expr: &str) -> Binding {
        Binding {
            var: var.into(),
            mutable: false,
            expr: expr.into(),
            repeat: 1,
            times: None,
        }
    }

    #[test]
    fn receivers_built_otherwise_are_a_column_of_the_table() {
        let on = |receiver: &str, expected: &str| {
            let mut b = body("byte_size.to_string", &[], eq(expected));
            b.function_path = "bytesize::ByteSize::to_string".into();
            b.setup = vec![bind("byte_size", receiver)];
            b
        };
        let tests = vec![
            test("a", 1, on("bytesize::ByteSize(0u64)", "\"0 B\"")),
            test(
                "b",
                2,
                on(
                    "\"1.5 GiB\".parse::<bytesize::ByteSize>().unwrap()",
                    "\"1.5 GiB\"",
                ),
            ),
        ];
        let (folded, tables) = fold(tests, &|_| vec!["&bytesize::ByteSize".into()]);
        assert_eq!(tables, 1);
        let t = &folded[0];
        assert_eq!(t.name, "to_string_recorded_cases");
        assert_eq!(t.body.setup[0].expr, "case.0");
        assert_eq!(t.body.assertion, eq("case.1"));
        let table = t.table.as_ref().unwrap();
        assert_eq!(
            table.rows[1].values,
            [
                "\"1.5 GiB\".parse::<bytesize::ByteSize>().unwrap()",
                "\"1.5 GiB\""
            ]
        );
    }

    #[test]
    fn a_call_after_no_step_is_a_row_of_the_calls_after_some() {
        let after = |text: &str, steps: usize, expected: &str| {
            let mut b = body("shlex.next", &[], eq(expected));
            b.function_path = "<shlex::Shlex as Iterator>::next".into();
            b.setup = vec![Binding {
                mutable: true,
                ..bind("shlex", &format!("shlex::Shlex::new({text:?})"))
            }];
            b.setup
                .extend(std::iter::repeat_n(bind("_", "shlex.next()"), steps));
            b
        };
        let tests = vec![
            test("fresh", 1, after("a b", 0, "Some(String::from(\"a\"))")),
            test("once", 2, after("x y", 1, "Some(String::from(\"y\"))")),
            test("twice", 3, after("x y", 2, "None")),
        ];
        let (folded, tables) = fold(tests, &|_| vec!["&mut shlex::Shlex".into()]);
        assert_eq!(tables, 1);
        assert_eq!(folded.len(), 1);
        let t = &folded[0];
        assert_eq!(t.calls, [1, 2, 3]);
        assert_eq!(t.body.setup[1].times.as_deref(), Some("case.1"));
        let counts: Vec<&str> = t
            .table
            .as_ref()
            .unwrap()
            .rows
            .iter()
            .map(|r| r.values[1].as_str())
            .collect();
        assert_eq!(counts, ["0usize", "1usize", "2usize"]);
    }

    #[test]
    fn an_object_advanced_more_or_fewer_times_is_a_count_column() {
        let advanced = |text: &str, steps: usize, expected: &str| {
            let mut b = body("shlex.next", &[], eq(expected));
            b.function_path = "<shlex::Shlex as Iterator>::next".into();
            let step = Binding {
                var: "_".into(),
                ..bind("_", "shlex.next()")
            };
            b.setup = vec![Binding {
                mutable: true,
                ..bind("shlex", &format!("shlex::Shlex::new({text:?})"))
            }];
            // Two steps as two lines, as a test writes them.
            b.setup.extend(std::iter::repeat_n(step, steps));
            // The state after: its expected value is a column too.
            b.effects.push(crate::body::Effect {
                actual: "shlex.line_no".into(),
                expected: format!("{steps}usize"),
                message: None,
                observe: None,
            });
            b
        };
        let tests = vec![
            test("a", 1, advanced("a 'b", 1, "None")),
            test("b", 2, advanced("x y z", 2, "Some(String::from(\"z\"))")),
        ];
        let (folded, tables) = fold(tests, &|_| vec!["&mut shlex::Shlex".into()]);
        assert_eq!(tables, 1);
        let t = &folded[0];
        assert_eq!(t.body.setup[0].expr, "case.0");
        let rows: Vec<&[String]> = t
            .table
            .as_ref()
            .unwrap()
            .rows
            .iter()
            .map(|r| &r.values[..])
            .collect();
        assert_eq!(t.body.effects[0].expected, "case.1");
        assert_eq!(t.body.setup[1].times.as_deref(), Some("case.2"));
        assert_eq!(
            rows[0],
            ["shlex::Shlex::new(\"a 'b\")", "1usize", "1usize", "None"]
        );
        assert_eq!(
            rows[1][1..],
            ["2usize", "2usize", "Some(String::from(\"z\"))"]
        );
    }
}
