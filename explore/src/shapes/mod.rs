//! Kept tests of one sequence with other values written as one table (issue 27: "fold the
//! remaining useful inputs into table-driven tests"), for the tests `tables.rs` does not fold:
//! those whose bodies are the same but for some literals (`let mut g = Gauge::new(3u8);
//! assert_eq!(format!("{:?}", g.raise(8u8)), "Err(TooHigh(8))");` and the same with `5u8`
//! and `"Ok(())"`). The literals that differ become the table's columns, named by the
//! parameter they are an argument of, `expected` in the expected side of an `assert_eq!`,
//! else by what they are; the body runs once per row, and each of its checks names the row
//! by its inputs in its failure message. A literal that cannot be a variable (a format
//! string, a pattern's, an array's length, a tuple index) must be the same in every row.
//! Then the tests left that also call other functions of one signature (`size.as_kb()`,
//! `size.as_mb()`) are tables whose rows give each function as a function pointer, when
//! explore called each and they take their receiver alike (`Receivers`).
//! Plain text in, plain text out: the caller verifies the file.

mod body;

use std::collections::{BTreeMap, BTreeSet};

use crate::tables::{lines_of, origin, snake, splice, test_fns, unique, Folded};
use body::{Body, Role};

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

/// A column of a table: the literal (by its index in the body) whose values it holds.
struct Column {
    at: usize,
    name: String,
    /// When the literal is a call's function: how the functions are called, and each row's.
    calls: Option<(Taken, Vec<String>)>,
}

/// How each explorable function is called, by its path: which functions can share a column.
pub type Receivers = BTreeMap<String, Taken>;

/// How a function takes its receiver (`&`, `&mut`, `self`, or nothing when it has none) and
/// what else its signature says (its parameters' kinds and its result, as explore reads
/// them): functions of one column agree on both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Taken {
    pub receiver: &'static str,
    pub signature: String,
}

/// `source` with every group of at least two tests of one shape written as one table, then
/// every group of the tests left that differ in which functions of one signature they call
/// too, but the groups whose first test is in `leave`; `None` when there is none.
pub fn fold(
    source: &str,
    (parameters, receivers): (&BTreeMap<String, Vec<String>>, &Receivers),
    leave: &BTreeSet<String>,
) -> Option<Folded> {
    let file = syn::parse_file(source).ok()?;
    let lines: Vec<&str> = source.lines().collect();
    let mut names = Vec::new();
    let mut rows = Vec::new();
    for f in test_fns(&file) {
        names.push(f.sig.ident.to_string());
        rows.extend(row(f, &lines));
    }
    let mut out = Folding {
        tests: names,
        ..Folding::default()
    };
    let mut left = rows;
    for loose in [false, true] {
        let mut groups: BTreeMap<Vec<String>, Vec<Row>> = BTreeMap::new();
        for row in left {
            let shape = match loose {
                false => row.parts.shape.clone(),
                true => row.parts.loose(),
            };
            groups.entry(shape).or_default().push(row);
        }
        left = Vec::new();
        let groups = groups.into_values();
        let groups: Vec<Vec<Row>> = match loose {
            false => groups.collect(),
            true => groups.flat_map(|g| by_signature(g, receivers)).collect(),
        };
        for group in groups {
            let columns = (group.len() > 1 && !leave.contains(&group[0].name))
                .then(|| columns(&group, (parameters, receivers)))
                .flatten();
            match columns {
                Some(columns) => out.add(&group, &columns),
                None => left.extend(group),
            }
        }
    }
    (out.tables > 0).then(|| Folded {
        text: splice(&lines, &out.replaced, &out.gone),
        tables: out.tables,
        rows: out.rows,
        tests: out.tests,
        firsts: out.firsts,
    })
}

/// The tables written so far.
#[derive(Default)]
struct Folding {
    tests: Vec<String>,
    replaced: BTreeMap<usize, (usize, String)>,
    gone: Vec<(usize, usize)>,
    tables: usize,
    rows: usize,
    firsts: BTreeMap<String, String>,
}

impl Folding {
    /// `group` as one table in its first test's place.
    fn add(&mut self, group: &[Row], columns: &[Column]) {
        let name = unique(&table_name(group, columns), &self.tests);
        self.tests.retain(|t| !group.iter().any(|r| &r.name == t));
        self.tests.push(name.clone());
        self.firsts.insert(name.clone(), group[0].name.clone());
        let first = group[0].lines;
        let table = table(&name, columns, group);
        self.replaced.insert(first.0, (first.1, table));
        self.gone.extend(group[1..].iter().map(|r| r.lines));
        self.tables += 1;
        self.rows += group.len();
    }
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
/// and its name. `None` when no literal differs, there are too many, a function that differs
/// is not one explore called or does not take its receiver as the others do, no input
/// differs, or two rows have the same inputs.
fn columns(
    group: &[Row],
    (parameters, receivers): (&BTreeMap<String, Vec<String>>, &Receivers),
) -> Option<Vec<Column>> {
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
        let calls = match &lit.call {
            Some(call) => Some(called(group, i, call.receiver.is_some(), receivers)?),
            None => None,
        };
        let base = match (&lit.role, &lit.call) {
            (_, Some(c)) if c.receiver.is_some() => "method".to_string(),
            (_, Some(_)) => "function".to_string(),
            (Role::Expected, _) => "expected".to_string(),
            (Role::Before(name), _) => format!("{name}_before"),
            (Role::Argument(call, n), _) => parameter(parameters, call, *n)
                .unwrap_or_else(|| by_kind(lit.kind.as_deref().unwrap_or_default())),
            (Role::Other, _) => by_kind(lit.kind.as_deref().unwrap_or_default()),
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
        columns.push(Column { at: i, name, calls });
    }
    // The inputs first, then what is expected of them.
    columns.sort_by_key(|c| first.literals[c.at].role == Role::Expected);
    let inputs: Vec<usize> = (columns.iter())
        .filter(|c| first.literals[c.at].role != Role::Expected)
        .map(|c| c.at)
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

/// How the functions of call `at` are called, and each row's function: the method of that
/// name explore called (one), or the function of that path; `None` when one is not known or
/// they are called otherwise.
fn called(
    group: &[Row],
    at: usize,
    method: bool,
    receivers: &Receivers,
) -> Option<(Taken, Vec<String>)> {
    let mut how = None;
    let mut paths = Vec::new();
    for r in group {
        let (path, taken) = resolve(&r.parts.literals[at].text, method, receivers)?;
        if how.get_or_insert(taken) != &taken {
            return None;
        }
        paths.push(expression_path(path)?);
    }
    Some((how?.clone(), paths))
}

/// A function's path as an expression writes it, its types' generic parameters left to
/// inference: `smallvec::SmallVec::grow` for `smallvec::SmallVec<A>::grow`.
fn expression_path(path: &str) -> Option<String> {
    let mut out = String::new();
    let mut depth = 0usize;
    for c in path.chars() {
        match c {
            '<' => depth += 1,
            '>' => depth = depth.checked_sub(1)?,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    // A turbofish goes with its parameters; a qualified path (`<T as Tr>::f`) is no plain one.
    let out = out.replace("::::", "::");
    let plain = depth == 0 && !out.starts_with(':') && !out.ends_with(':');
    (plain && syn::parse_str::<syn::ExprPath>(&out).is_ok()).then_some(out)
}

/// The function a call calls (`text`: the method's name, or the function's path) and how it
/// is called, when explore called it.
fn resolve<'r>(
    text: &str,
    method: bool,
    receivers: &'r Receivers,
) -> Option<(&'r String, &'r Taken)> {
    match method {
        true => {
            let mut of = (receivers.iter())
                .filter(|(p, how)| !how.receiver.is_empty() && p.rsplit("::").next() == Some(text));
            let found = of.next()?;
            of.next().is_none().then_some(found)
        }
        false => receivers
            .get_key_value(text)
            .filter(|(_, how)| how.receiver.is_empty()),
    }
}

/// The tests of one loose shape in groups whose calls can share a column: by how each call's
/// function takes its receiver, or by the call itself when explore did not call it.
fn by_signature(group: Vec<Row>, receivers: &Receivers) -> Vec<Vec<Row>> {
    let mut groups: BTreeMap<Vec<String>, Vec<Row>> = BTreeMap::new();
    for row in group {
        let key = (row.parts.literals.iter())
            .filter_map(|l| Some((l, l.call.as_ref()?)))
            .map(
                |(l, call)| match resolve(&l.text, call.receiver.is_some(), receivers) {
                    Some((_, how)) => format!("takes {} {}", how.receiver, how.signature),
                    None => format!("calls {}", l.text),
                },
            )
            .collect();
        groups.entry(key).or_default().push(row);
    }
    groups.into_values().collect()
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
/// `explored_014_raise_ok`: the words their names share, after the number; a table of
/// functions is named by what they are of: `explored_byte_size_methods_table` for
/// `bytesize::ByteSize::as_kb` and `as_mb`, `explored_bytesize_functions_table` for
/// `bytesize::kib` and `mib`.
fn table_name(group: &[Row], columns: &[Column]) -> String {
    if let Some((how, paths)) = columns.iter().find_map(|c| c.calls.as_ref()) {
        let owner = paths[0].rsplit("::").nth(1).unwrap_or("crate");
        let kind = if how.receiver.is_empty() {
            "functions"
        } else {
            "methods"
        };
        return format!("explored_{}_{kind}_table", snake(owner));
    }
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
    let mut shared: Vec<String> = shared.into_iter().filter(|w| !w.is_empty()).collect();
    if shared.is_empty() {
        // Else the words they end with (`explored_003_kb_zero`, `explored_005_mb_zero`).
        shared = words(&group[0].name);
        for r in &group[1..] {
            let w = words(&r.name);
            let same = (shared.iter().rev().zip(w.iter().rev()))
                .take_while(|(a, b)| a == b)
                .count();
            shared.drain(..shared.len() - same);
        }
        shared.retain(|w| !w.is_empty());
    }
    match shared.is_empty() {
        true => "explored_sequence_table".to_string(),
        false => format!("explored_{}_table", snake(&shared.join("_"))),
    }
}

/// The table test of `rows` (at least two): the first row's body, its literals of `columns`
/// made the columns' names and its checks given a message naming the row by its inputs.
fn table(name: &str, columns: &[Column], rows: &[Row]) -> String {
    let first = &rows[0];
    let origin = first.origin.as_deref().unwrap_or("Explored");
    let mut out = format!(
        "/// {origin}: one sequence run with {} sets of values, a row each, each kept for what \
         it added (a line, an outcome, a comparison at its boundary or a value fault).\n",
        rows.len(),
    );
    out.push_str(&format!("#[test]\nfn {name}() {{\n"));
    let tuple = |values: Vec<String>| match values.len() {
        1 => values[0].clone(),
        _ => format!("({})", values.join(", ")),
    };
    // A function's column comes with its name's, which the messages show.
    let names: Vec<String> = (columns.iter())
        .flat_map(|c| match c.calls {
            Some(_) => vec![format!("{}_name", c.name), c.name.clone()],
            None => vec![c.name.clone()],
        })
        .collect();
    // Lists of other lengths are one type as slices, functions one as function pointers:
    // the rows' type says so.
    let types: Vec<String> = columns.iter().flat_map(|c| column_type(c, first)).collect();
    let typed = types.iter().any(|t| t != "_");
    match typed {
        true => out.push_str(&format!(
            "    let cases: [{}; {}] = [\n",
            tuple(types),
            rows.len()
        )),
        false => out.push_str(&format!("    for {} in [\n", tuple(names.clone()))),
    }
    for (n, r) in rows.iter().enumerate() {
        let values = (columns.iter())
            .flat_map(|c| match &c.calls {
                Some((_, paths)) => {
                    let short = paths[n].rsplit("::").next().unwrap_or_default();
                    vec![format!("{short:?}"), paths[n].clone()]
                }
                None => vec![r.parts.literals[c.at].text.clone()],
            })
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

/// The types of a column's entries in the rows' tuple: `_` where the values say it.
fn column_type(c: &Column, first: &Row) -> Vec<String> {
    let lit = &first.parts.literals[c.at];
    match (&c.calls, &lit.call) {
        (Some((how, _)), Some(call)) => {
            let receiver = match how.receiver {
                "" => None,
                "self" => Some("_"),
                "&mut" => Some("&mut _"),
                _ => Some("&_"),
            };
            let args = receiver.into_iter().chain(vec!["_"; call.arity]);
            let args: Vec<&str> = args.collect();
            vec!["_".to_string(), format!("fn({}) -> _", args.join(", "))]
        }
        _ if lit.kind.as_deref() == Some("slice") => vec!["&[_]".to_string()],
        _ => vec!["_".to_string()],
    }
}

/// The first row's body with the columns in place of their literals and a message on each
/// check: `"amount = {:?}, start = {:?}", amount, start`.
fn body(row: &Row, columns: &[Column]) -> Vec<String> {
    let literals = &row.parts.literals;
    let inputs: Vec<String> = (columns.iter())
        .filter(|c| literals[c.at].role != Role::Expected)
        .map(|c| match c.calls {
            Some(_) => format!("{}_name", c.name),
            None => c.name.clone(),
        })
        .collect();
    let shown: Vec<String> = inputs.iter().map(|n| format!("{n} = {{:?}}")).collect();
    let message = format!("\"{}\", {}", shown.join(", "), inputs.join(", "));
    // Edits by line (0-based in the body): (start column, end column, text), applied from
    // the right.
    let mut edits: BTreeMap<usize, Vec<(usize, usize, String)>> = BTreeMap::new();
    for c in columns {
        let l = &literals[c.at];
        let at = edits.entry(l.start.line - 1).or_default();
        // A vector is moved where it is used; the message shows it after.
        let text = match l.kind.as_deref() {
            Some("vec") => format!("{}.clone()", c.name),
            _ => c.name.clone(),
        };
        at.push((l.start.column, l.end.column, text));
        // `gauge_0.raise(by)` is `method(&mut gauge_0, by)`.
        if let (Some((how, _)), Some(call)) = (&c.calls, &l.call) {
            if let Some(receiver) = &call.receiver {
                let lent = match how.receiver {
                    "self" => receiver.clone(),
                    "&mut" => format!("&mut {receiver}"),
                    _ => format!("&{receiver}"),
                };
                let then = if call.arity > 0 { ", " } else { "" };
                let at = edits.entry(call.open.line - 1).or_default();
                at.push((call.open.column, call.open.column, format!("{lent}{then}")));
            }
        }
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
        // From the right; where a literal starts just after a `(` a receiver goes before, the
        // literal first.
        at.sort_by_key(|e| (std::cmp::Reverse(e.0), e.0 == e.1));
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

    fn taken(receiver: &'static str) -> Taken {
        Taken {
            receiver,
            signature: "(U64) -> Other".to_string(),
        }
    }

    fn parameters() -> BTreeMap<String, Vec<String>> {
        BTreeMap::from([
            ("lib::Gauge::new".to_string(), vec!["start".to_string()]),
            ("lib::Gauge::raise".to_string(), vec!["by".to_string()]),
        ])
    }

    #[test]
    fn tests_of_one_shape_become_a_table_whose_checks_name_the_row() {
        let shaped =
            fold(FILE, (&parameters(), &Receivers::new()), &BTreeSet::new()).expect("a table");
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
        assert_eq!(fold(FILE, (&parameters(), &Receivers::new()), &leave), None);
    }

    #[test]
    fn literals_that_cannot_be_variables_keep_their_tests_apart() {
        let file = |a: &str, b: &str| {
            format!(
                "#[test]\nfn explored_001_a() {{\n    {a}\n}}\n\n#[test]\nfn explored_002_b() {{\n    {b}\n}}\n"
            )
        };
        let folds = |a: &str, b: &str| {
            fold(
                &file(a, b),
                (&BTreeMap::new(), &Receivers::new()),
                &BTreeSet::new(),
            )
            .is_some()
        };
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
        let shaped =
            fold(&file, (&parameters, &Receivers::new()), &BTreeSet::new()).expect("a table");
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
    fn tests_that_call_other_functions_of_one_signature_are_a_table_of_functions() {
        let test = |n: u8, unit: &str| {
            format!(
                "#[test]\nfn explored_01{n}_as_{unit}_zero() {{\n    \
                 let mut size_{n} = <b::Size as Default>::default();\n    \
                 assert_eq!(format!(\"{{:?}}\", size_{n}.as_{unit}()), \"0.0\");\n\
                 }}\n\n"
            )
        };
        let file = test(1, "kb") + &test(2, "mb") + &test(3, "gb");
        let receivers = Receivers::from([
            ("b::Size::as_kb".to_string(), taken("&")),
            ("b::Size::as_mb".to_string(), taken("&")),
        ]);
        let shaped = fold(&file, (&BTreeMap::new(), &receivers), &BTreeSet::new());
        let shaped = shaped.expect("a table");
        // `as_gb` is no function explore called: its test stays as it was.
        assert_eq!((shaped.tables, shaped.rows), (1, 2));
        let expected = "fn explored_size_methods_table() {\n    \
            let cases: [(_, fn(&_) -> _); 2] = [\n        \
                (\"as_kb\", b::Size::as_kb),\n        \
                (\"as_mb\", b::Size::as_mb),\n    \
            ];\n    \
            for (method_name, method) in cases {\n        \
                let mut size_1 = <b::Size as Default>::default();\n        \
                assert_eq!(format!(\"{:?}\", method(&size_1)), \"0.0\", \"method_name = {:?}\", method_name);\n    \
            }\n}\n";
        assert!(shaped.text.contains(expected), "{}", shaped.text);
        assert!(shaped.text.contains("fn explored_013_as_gb_zero() {"));
        // A literal just after the `(` stays after the receiver.
        let grow = |n: u8, method: &str, by: &str| {
            format!(
                "#[test]\nfn explored_02{n}_{method}() {{\n    \
                 let mut v_{n} = <b::V as Default>::default();\n    \
                 v_{n}.{method}({by});\n    \
                 assert_eq!(format!(\"{{:?}}\", v_{n}), \"[]\");\n\
                 }}\n\n"
            )
        };
        let grown = grow(1, "grow", "0usize") + &grow(2, "reserve", "6usize");
        let of_v = Receivers::from([
            ("b::V::grow".to_string(), taken("&mut")),
            ("b::V::reserve".to_string(), taken("&mut")),
        ]);
        let shaped = fold(&grown, (&BTreeMap::new(), &of_v), &BTreeSet::new());
        let text = shaped.expect("a table").text;
        assert!(text.contains("        method(&mut v_1, n);\n"), "{text}");
        // Taken otherwise (`&mut self`), a method is no row of theirs.
        let mut receivers = receivers;
        receivers.insert("b::Size::as_mb".to_string(), taken("&mut"));
        let shaped = fold(&file, (&BTreeMap::new(), &receivers), &BTreeSet::new());
        assert_eq!(shaped, None);
    }

    #[test]
    fn a_function_of_a_generic_type_is_written_without_its_parameters() {
        assert_eq!(
            expression_path("smallvec::SmallVec<A>::grow").as_deref(),
            Some("smallvec::SmallVec::grow")
        );
        assert_eq!(expression_path("<T as lib::Tr>::f"), None);
        assert_eq!(expression_path("lib::f").as_deref(), Some("lib::f"));
    }

    #[test]
    fn a_check_with_a_trailing_comma_gets_its_message_after_it() {
        let file = "#[test]\nfn explored_001_is_ok() {\n    assert!(f(-1i32),);\n}\n\n\
                    #[test]\nfn explored_002_is_ok() {\n    assert!(!f(2i32),);\n}\n";
        let shaped = fold(
            file,
            (&BTreeMap::new(), &Receivers::new()),
            &BTreeSet::new(),
        );
        // `!` before a call is another shape: no table.
        assert_eq!(shaped, None);
        let file = file.replace("!f(2i32)", "f(2i32)");
        let shaped = fold(
            &file,
            (&BTreeMap::new(), &Receivers::new()),
            &BTreeSet::new(),
        )
        .expect("a table");
        assert!(
            shaped.text.contains("    for n in [\n        -1i32,\n        2i32,\n    ] {\n        assert!(f(n), \"n = {:?}\", n);\n"),
            "{}",
            shaped.text
        );
    }
}
