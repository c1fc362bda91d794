//! Kept tests of one sequence with other values written as one table (issue 27: "fold the
//! remaining useful inputs into table-driven tests"), for the tests `tables.rs` does not fold:
//! those whose bodies are the same but for some literals (`let mut g = Gauge::new(3u8);
//! assert_eq!(format!("{:?}", g.raise(8u8)), "Err(TooHigh(8))");` and the same with `5u8`
//! and `"Ok(())"`). The literals that differ become the table's columns, named by the
//! parameter they are an argument of, `expected` in the expected side of an `assert_eq!`,
//! else by what they are; the body runs once per row, and each of its checks names the row
//! by its inputs in its failure message. A literal that cannot be a variable (a format
//! string, a pattern's, an array's length, a tuple index) must be the same in every row.
//! Plain text in, plain text out: the caller verifies the file.

mod body;

use std::collections::{BTreeMap, BTreeSet};

use crate::tables::{lines_of, origin, snake, splice, test_fns, unique};
use body::{Body, Role};

/// What folding made of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shaped {
    pub text: String,
    /// Tables written, and the tests they hold as rows.
    pub tables: usize,
    pub rows: usize,
    /// The names of the file's `#[test]` functions afterwards.
    pub tests: Vec<String>,
    /// Each table's name and the name of the test that was its first row.
    pub firsts: BTreeMap<String, String>,
}

/// Columns of a table at most: beyond, a row is no longer read at a glance.
const MAX_COLUMNS: usize = 8;

/// One test as a row.
struct Row {
    name: String,
    lines: (usize, usize),
    origin: Option<String>,
    /// The body's lines, as written.
    body: Vec<String>,
    parts: Body,
}

/// `source` with every group of at least two tests of one shape written as one table, but
/// the groups whose first test is in `leave`; `None` when there is none.
pub fn fold(
    source: &str,
    parameters: &BTreeMap<String, Vec<String>>,
    leave: &BTreeSet<String>,
) -> Option<Shaped> {
    let file = syn::parse_file(source).ok()?;
    let lines: Vec<&str> = source.lines().collect();
    let mut names = Vec::new();
    let mut groups: BTreeMap<Vec<String>, Vec<Row>> = BTreeMap::new();
    for f in test_fns(&file) {
        names.push(f.sig.ident.to_string());
        if let Some(row) = row(f, &lines) {
            groups.entry(row.parts.shape.clone()).or_default().push(row);
        }
    }
    let mut tests = names.clone();
    let mut replaced = BTreeMap::new();
    let mut gone = Vec::new();
    let (mut tables, mut rows) = (0, 0);
    let mut firsts = BTreeMap::new();
    for group in groups.values() {
        if group.len() < 2 || leave.contains(&group[0].name) {
            continue;
        }
        let Some(columns) = columns(group, parameters) else {
            continue;
        };
        let name = unique(&table_name(group), &tests);
        tests.retain(|t| !group.iter().any(|r| &r.name == t));
        tests.push(name.clone());
        firsts.insert(name.clone(), group[0].name.clone());
        let first = group[0].lines;
        replaced.insert(first.0, (first.1, table(&name, &columns, group)));
        gone.extend(group[1..].iter().map(|r| r.lines));
        tables += 1;
        rows += group.len();
    }
    (tables > 0).then(|| Shaped {
        text: splice(&lines, &replaced, &gone),
        tables,
        rows,
        tests,
        firsts,
    })
}

/// A test as a row: its body between a line ending in `{` and a line that is `}`.
fn row(f: &syn::ItemFn, lines: &[&str]) -> Option<Row> {
    let open = f.block.brace_token.span.open().start();
    let close = f.block.brace_token.span.close().start();
    let after_open = lines.get(open.line - 1)?.chars().skip(open.column + 1);
    let before_close = lines.get(close.line - 1)?.chars().take(close.column);
    if !after_open.collect::<String>().trim().is_empty()
        || !before_close.collect::<String>().trim().is_empty()
        || close.line <= open.line + 1
    {
        return None;
    }
    let body: Vec<String> = lines[open.line..close.line - 1]
        .iter()
        .map(|l| l.to_string())
        .collect();
    let parts = body::parse(&body)?;
    Some(Row {
        name: f.sig.ident.to_string(),
        lines: lines_of(f)?,
        origin: origin(f),
        body,
        parts,
    })
}

/// The table's columns: each literal (by its index in the body) that differs between rows,
/// and its name. `None` when no literal differs, there are too many, no input differs, or
/// two rows have the same inputs.
fn columns(
    group: &[Row],
    parameters: &BTreeMap<String, Vec<String>>,
) -> Option<Vec<(usize, String)>> {
    let first = &group[0].parts;
    let differ: Vec<usize> = (0..first.literals.len())
        .filter(|&i| {
            group
                .iter()
                .any(|r| r.parts.literals[i].text != first.literals[i].text)
        })
        .collect();
    if differ.is_empty() || differ.len() > MAX_COLUMNS {
        return None;
    }
    let mut taken: Vec<String> = Vec::new();
    let mut columns = Vec::new();
    for &i in &differ {
        let lit = &first.literals[i];
        let base = match &lit.role {
            Role::Expected => "expected".to_string(),
            Role::Before(name) => format!("{name}_before"),
            Role::Argument(call, n) => parameter(parameters, call, *n)
                .unwrap_or_else(|| by_kind(lit.kind.as_deref().unwrap_or_default())),
            Role::Other => by_kind(lit.kind.as_deref().unwrap_or_default()),
        };
        let base = match first.idents.contains(&base) {
            true => format!("case_{base}"),
            false => base,
        };
        let mut name = base.clone();
        let mut n = 1;
        while taken.contains(&name) {
            n += 1;
            name = format!("{base}_{n}");
        }
        taken.push(name.clone());
        columns.push((i, name));
    }
    // The inputs first, then what is expected of them.
    columns.sort_by_key(|(i, _)| first.literals[*i].role == Role::Expected);
    let inputs: Vec<usize> = (columns.iter())
        .filter(|(i, _)| first.literals[*i].role != Role::Expected)
        .map(|(i, _)| *i)
        .collect();
    let keys: BTreeSet<Vec<&str>> = (group.iter())
        .map(|r| {
            inputs
                .iter()
                .map(|&i| r.parts.literals[i].text.as_str())
                .collect()
        })
        .collect();
    (!inputs.is_empty() && keys.len() == group.len()).then_some(columns)
}

/// The name of parameter `n` of `call`, when it is a plain name: the function's of that path,
/// else of every function of that name whose parameters are known when they agree (`.raise`
/// for a method; `from_hex` for `<Vec<u8> as hex::FromHex>::from_hex`).
fn parameter(parameters: &BTreeMap<String, Vec<String>>, call: &str, n: usize) -> Option<String> {
    let last = call
        .trim_start_matches('.')
        .rsplit("::")
        .next()
        .unwrap_or(call);
    let names: BTreeSet<&String> = match parameters.get(call) {
        Some(p) => p.get(n).into_iter().collect(),
        None => (parameters.iter())
            .filter(|(f, _)| f.rsplit("::").next() == Some(last))
            .filter_map(|(_, p)| p.get(n))
            .collect(),
    };
    let [name] = names.into_iter().collect::<Vec<_>>()[..] else {
        return None;
    };
    let plain = name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && !name.starts_with("expected")
        && syn::parse_str::<syn::Ident>(name).is_ok();
    plain.then(|| name.clone())
}

/// A column's name from what its values are.
fn by_kind(kind: &str) -> String {
    match kind.split(' ').next().unwrap_or("") {
        "str" => "text",
        "char" => "c",
        "bytes" => "bytes",
        "byte" => "byte",
        "bool" => "flag",
        "slice" | "vec" => "items",
        _ => "n",
    }
    .to_string()
}

/// `explored_raise_table` for tests named `explored_010_raise_err_too_high` and
/// `explored_014_raise_ok`: the words their names share, after the number.
fn table_name(group: &[Row]) -> String {
    let words = |name: &str| -> Vec<String> {
        let rest = name.strip_prefix("explored_").unwrap_or(name);
        let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
        let rest = rest.strip_prefix('_').unwrap_or(rest);
        rest.split('_').map(str::to_string).collect()
    };
    let mut shared = words(&group[0].name);
    for r in &group[1..] {
        let w = words(&r.name);
        let same = shared.iter().zip(&w).take_while(|(a, b)| a == b).count();
        shared.truncate(same);
    }
    let shared: Vec<String> = shared.into_iter().filter(|w| !w.is_empty()).collect();
    match shared.is_empty() {
        true => "explored_sequence_table".to_string(),
        false => format!("explored_{}_table", snake(&shared.join("_"))),
    }
}

/// The table test of `rows` (at least two): the first row's body, its literals of `columns`
/// made the columns' names and its checks given a message naming the row by its inputs.
fn table(name: &str, columns: &[(usize, String)], rows: &[Row]) -> String {
    let first = &rows[0];
    let origin = first.origin.as_deref().unwrap_or("Explored");
    let mut out = format!(
        "/// {origin}: one sequence run with {} sets of values, a row each, each kept for what \
         it added (a line, an outcome, a comparison at its boundary or a value fault).\n",
        rows.len(),
    );
    out.push_str(&format!("#[test]\nfn {name}() {{\n"));
    let names: Vec<&str> = columns.iter().map(|(_, n)| n.as_str()).collect();
    let tuple = |values: Vec<&str>| match values.len() {
        1 => values[0].to_string(),
        _ => format!("({})", values.join(", ")),
    };
    // Lists of other lengths are one type as slices: the rows' type says so.
    let kinds: Vec<&str> = (columns.iter())
        .map(|(i, _)| first.parts.literals[*i].kind.as_deref().unwrap_or_default())
        .collect();
    let typed = kinds.contains(&"slice");
    match typed {
        true => {
            let types = kinds
                .iter()
                .map(|k| if *k == "slice" { "&[_]" } else { "_" });
            let types = tuple(types.collect());
            out.push_str(&format!("    let cases: [{types}; {}] = [\n", rows.len()));
        }
        false => out.push_str(&format!("    for {} in [\n", tuple(names.clone()))),
    }
    for r in rows {
        let values = columns
            .iter()
            .map(|(i, _)| r.parts.literals[*i].text.as_str())
            .collect();
        out.push_str(&format!("        {},\n", tuple(values)));
    }
    match typed {
        true => out.push_str(&format!("    ];\n    for {} in cases {{\n", tuple(names))),
        false => out.push_str("    ] {\n"),
    }
    for line in body(first, columns) {
        match line.trim().is_empty() {
            true => out.push('\n'),
            false => out.push_str(&format!("    {line}\n")),
        }
    }
    out.push_str("    }\n}\n");
    out
}

/// The first row's body with the columns in place of their literals and a message on each
/// check: `"amount = {:?}, start = {:?}", amount, start`.
fn body(row: &Row, columns: &[(usize, String)]) -> Vec<String> {
    let literals = &row.parts.literals;
    let inputs: Vec<&str> = (columns.iter())
        .filter(|(i, _)| literals[*i].role != Role::Expected)
        .map(|(_, n)| n.as_str())
        .collect();
    let shown: Vec<String> = inputs.iter().map(|n| format!("{n} = {{:?}}")).collect();
    let message = format!("\"{}\", {}", shown.join(", "), inputs.join(", "));
    // Edits by line (0-based in the body): (start column, end column, text), applied from
    // the right.
    let mut edits: BTreeMap<usize, Vec<(usize, usize, String)>> = BTreeMap::new();
    for (i, name) in columns {
        let l = &literals[*i];
        // A vector is moved where it is used; the message shows it after.
        let text = match l.kind.as_deref() {
            Some("vec") => format!("{name}.clone()"),
            _ => name.clone(),
        };
        let at = edits.entry(l.start.line - 1).or_default();
        at.push((l.start.column, l.end.column, text));
    }
    for c in &row.parts.checks {
        let text = match c.trailing_comma {
            true => format!(" {message}"),
            false => format!(", {message}"),
        };
        let at = edits.entry(c.close.line - 1).or_default();
        at.push((c.close.column, c.close.column, text));
    }
    let mut lines = row.body.clone();
    for (line, mut at) in edits {
        at.sort_by_key(|e| std::cmp::Reverse(e.0));
        let mut chars: Vec<char> = lines[line].chars().collect();
        for (start, end, text) in at {
            chars.splice(start..end, text.chars());
        }
        lines[line] = chars.into_iter().collect();
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "//! Explored by carve.\n\
        \n\
        /// Explored (BOBW, length 2, seed 1): outcomes no carved test checks: Err(TooHigh).\n\
        #[test]\n\
        fn explored_010_raise_err_too_high() {\n    \
            let mut gauge_0 = lib::Gauge::new(3u8);\n    \
            assert_eq!(format!(\"{:?}\", gauge_0.raise(8u8)), \"Err(TooHigh(8))\");\n    \
            assert_eq!(gauge_0.level(), 3u8);\n\
        }\n\
        \n\
        /// Explored (BOBW, length 2, seed 1): lines the run never reached: lib.rs:9.\n\
        #[test]\n\
        fn explored_012_raise_ok() {\n    \
            let mut gauge_0 = lib::Gauge::new(-1i8 as u8);\n    \
            assert_eq!(format!(\"{:?}\", gauge_0.raise(2u8)), \"Ok(())\");\n    \
            assert_eq!(gauge_0.level(), 5u8);\n\
        }\n\
        \n\
        /// Explored (BOBW, length 2, seed 1): lines the run never reached: lib.rs:12.\n\
        #[test]\n\
        fn explored_013_raise_ok_again() {\n    \
            let mut gauge_0 = lib::Gauge::new(1u8);\n    \
            assert_eq!(format!(\"{:?}\", gauge_0.raise(2u8)), \"Ok(())\");\n    \
            assert_eq!(gauge_0.level(), 3u8);\n\
        }\n\
        \n\
        /// Explored (BOBW, length 2, seed 1): a lookup.\n\
        #[test]\n\
        fn explored_014_raise_ok() {\n    \
            let mut gauge_0 = lib::Gauge::new(4u8);\n    \
            assert_eq!(format!(\"{:?}\", gauge_0.raise(1u8)), \"Ok(())\");\n    \
            assert_eq!(gauge_0.level(), 5u8);\n\
        }\n";

    fn parameters() -> BTreeMap<String, Vec<String>> {
        BTreeMap::from([
            ("lib::Gauge::new".to_string(), vec!["start".to_string()]),
            ("lib::Gauge::raise".to_string(), vec!["by".to_string()]),
        ])
    }

    #[test]
    fn tests_of_one_shape_become_a_table_whose_checks_name_the_row() {
        let shaped = fold(FILE, &parameters(), &BTreeSet::new()).expect("a table");
        assert_eq!((shaped.tables, shaped.rows), (1, 3));
        let expected = "/// Explored (BOBW, length 2, seed 1): one sequence run with 3 sets of \
            values, a row each, each kept for what it added (a line, an outcome, a comparison \
            at its boundary or a value fault).\n\
            #[test]\n\
            fn explored_raise_table() {\n    \
                for (start, by, expected, expected_2) in [\n        \
                    (3u8, 8u8, \"Err(TooHigh(8))\", 3u8),\n        \
                    (1u8, 2u8, \"Ok(())\", 3u8),\n        \
                    (4u8, 1u8, \"Ok(())\", 5u8),\n    \
                ] {\n        \
                    let mut gauge_0 = lib::Gauge::new(start);\n        \
                    assert_eq!(format!(\"{:?}\", gauge_0.raise(by)), expected, \"start = {:?}, by = {:?}\", start, by);\n        \
                    assert_eq!(gauge_0.level(), expected_2, \"start = {:?}, by = {:?}\", start, by);\n    \
                }\n\
            }\n";
        assert!(shaped.text.contains(expected), "{}", shaped.text);
        // The test of another shape (a cast) stays as it was.
        assert!(
            shaped.text.contains("fn explored_012_raise_ok() {"),
            "{}",
            shaped.text
        );
        assert_eq!(
            shaped.tests,
            ["explored_012_raise_ok", "explored_raise_table"].map(String::from)
        );
        assert_eq!(
            shaped
                .firsts
                .get("explored_raise_table")
                .map(String::as_str),
            Some("explored_010_raise_err_too_high")
        );
        syn::parse_file(&shaped.text).expect("the folded file parses");
        // Left alone, the group stays as it was.
        let leave = BTreeSet::from(["explored_010_raise_err_too_high".to_string()]);
        assert_eq!(fold(FILE, &parameters(), &leave), None);
    }

    #[test]
    fn literals_that_cannot_be_variables_keep_their_tests_apart() {
        let file = |a: &str, b: &str| {
            format!(
                "#[test]\nfn explored_001_a() {{\n    {a}\n}}\n\n#[test]\nfn explored_002_b() {{\n    {b}\n}}\n"
            )
        };
        let folds =
            |a: &str, b: &str| fold(&file(a, b), &BTreeMap::new(), &BTreeSet::new()).is_some();
        // A value that differs folds; a format string, a pattern, an array's length, a tuple
        // index and a `match` do not.
        assert!(folds(
            "assert_eq!(f(1u8), 2u8);",
            "assert_eq!(f(3u8), 4u8);"
        ));
        assert!(!folds(
            "assert_eq!(format!(\"{}\", f()), \"1\");",
            "assert_eq!(format!(\"{:?}\", f()), \"1\");"
        ));
        assert!(!folds(
            "assert!(matches!(f(1u8), Some(1u8)));",
            "assert!(matches!(f(1u8), Some(2u8)));"
        ));
        assert!(!folds(
            "assert_eq!(f([0u8; 2]), 1u8);",
            "assert_eq!(f([0u8; 3]), 2u8);"
        ));
        assert!(!folds("assert_eq!(f().0, 1u8);", "assert_eq!(f().1, 2u8);"));
        assert!(!folds(
            "assert_eq!(match f(1u8) { 1 => 2, _ => 3 }, 1u8);",
            "assert_eq!(match f(2u8) { 1 => 2, _ => 3 }, 2u8);"
        ));
        // Byte strings of other lengths are of other types; the same inputs twice are no table.
        assert!(!folds(
            "assert_eq!(f(b\"ab\"), 1u8);",
            "assert_eq!(f(b\"abc\"), 2u8);"
        ));
        assert!(!folds(
            "assert_eq!(f(1u8), 2u8);",
            "assert_eq!(f(1u8), 3u8);"
        ));
    }

    #[test]
    fn lists_of_literals_are_one_value_and_slices_of_other_lengths_one_type() {
        let test = |n: u8, out: &str, data: &str, expected: &str| {
            format!(
                "#[test]\nfn explored_00{n}_decode_to_slice() {{\n    \
                 let mut out = {out};\n    \
                 let result = hex::decode_to_slice({data}, &mut out);\n    \
                 assert_eq!(format!(\"{{:?}}\", result), \"{expected}\");\n\
                 }}\n\n"
            )
        };
        let file = test(1, "vec![1u8, 0u8]", "&[107u8, u8::MAX]", "Err(A)")
            + &test(2, "vec![]", "&[-1i8 as u8]", "Err(B)")
            + &test(3, "vec![0u8]", "&[]", "Ok(())");
        let parameters = BTreeMap::from([(
            "hex::decode_to_slice".to_string(),
            vec!["data".to_string(), "out".to_string()],
        )]);
        let shaped = fold(&file, &parameters, &BTreeSet::new()).expect("a table");
        assert_eq!((shaped.tables, shaped.rows), (1, 2));
        let expected = "    let cases: [(_, &[_], _); 2] = [\n        \
            (vec![1u8, 0u8], &[107u8, u8::MAX], \"Err(A)\"),\n        \
            (vec![0u8], &[], \"Ok(())\"),\n    \
            ];\n    \
            for (out_before, data, expected) in cases {\n        \
                let mut out = out_before.clone();\n        \
                let result = hex::decode_to_slice(data, &mut out);\n        \
                assert_eq!(format!(\"{:?}\", result), expected, \"out_before = {:?}, data = {:?}\", out_before, data);\n    \
            }\n";
        assert!(shaped.text.contains(expected), "{}", shaped.text);
        assert!(shaped.text.contains("explored_002_decode_to_slice"));
    }

    #[test]
    fn a_check_with_a_trailing_comma_gets_its_message_after_it() {
        let file = "#[test]\nfn explored_001_is_ok() {\n    assert!(f(-1i32),);\n}\n\n\
                    #[test]\nfn explored_002_is_ok() {\n    assert!(!f(2i32),);\n}\n";
        let shaped = fold(file, &BTreeMap::new(), &BTreeSet::new());
        // `!` before a call is another shape: no table.
        assert_eq!(shaped, None);
        let file = file.replace("!f(2i32)", "f(2i32)");
        let shaped = fold(&file, &BTreeMap::new(), &BTreeSet::new()).expect("a table");
        assert!(
            shaped.text.contains("    for n in [\n        -1i32,\n        2i32,\n    ] {\n        assert!(f(n), \"n = {:?}\", n);\n"),
            "{}",
            shaped.text
        );
    }
}
