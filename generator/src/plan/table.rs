//! Tests beyond `--max-per-function` as the rows of one table-driven test: the calls of a
//! function past its cap whose tests are the same steps with other literal values (the same
//! arrange, act and assert, `buffer.format(7u64)` and `"7"` against `buffer.format(8u64)` and
//! `"8"`) become one `#[test]` looping over a `cases` table, one row per call, each assertion
//! naming its row (`"case {i}"`), so that verification takes out a failing row, not the table.
//!
//! Only what is sound to put in a table is: a body without mocks or `Sequence`s, checked by
//! `==`, `assert!` on a `bool` (as `== true`/`false`), `is_nan()`, or the effects alone; never
//! a test that checks nothing or a `#[should_panic]` test (a row could fail only by panicking,
//! and a panic names no row) or a `matches!` (a pattern's literals are not values). A column is a literal whose type the
//! literal itself names, so that a variable of that type means the same: strings (`&str`),
//! suffixed integers and floats (`-7919i64`, `2.5f64`), `bool`, `char` and byte literals.
//! The count of a loop of replayed calls (`for _ in 0..4 { let _ = it.next(); }`, an iterator
//! advanced) is a `usize` column too, so rows that advanced it more or fewer times share a table.
//! Unsuffixed numbers, byte strings, literals inside macros, types, generic arguments, array
//! lengths and patterns stay part of the shape.

use std::collections::BTreeMap;

use serde::Serialize;
use syn::visit_mut::VisitMut;

use crate::body::{Assertion, Binding, Body};
pub(crate) use crate::read::group::ROWS_PER_CAP;

/// The variable a table test binds each row to, and the table itself.
pub(crate) const ROW_VAR: &str = "case";
pub(crate) const TABLE_VAR: &str = "cases";
const INDEX_VAR: &str = "i";

/// The rows of a table-driven test: one per recorded call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Table {
    /// The Rust type of each column (`u64`, `&str`), in the order the body uses them; in an
    /// `inferred` table, what each column is (`shlex.line_no after`, `result`), for its header.
    pub columns: Vec<String>,
    pub rows: Vec<Row>,
    /// The values are whole expressions (`&String::from("ab")`, `Ok(vec![171u8])`) whose types
    /// the compiler infers from the call (`columns` are `_`): the rows are taken by value
    /// (`distil/fold.rs`).
    pub inferred: bool,
}

/// One row: the literal of each column, and the recorded calls it stands for.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub values: Vec<String>,
    /// Ids of the recorded calls the row stands for (the first is the one it was carved from).
    #[serde(skip)]
    pub calls: Vec<u64>,
    /// Ids of recorded calls its arrange steps make again.
    #[serde(skip)]
    pub replayed: Vec<u64>,
    /// Ids of every recorded call its arrange steps make again (history steps too).
    #[serde(skip)]
    pub arranged: Vec<u64>,
}

/// A body with its literal values taken out (`case.0` in their place) and their types: two
/// tests with the same shape differ only in those values.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Shape {
    pub(crate) body: Body,
    pub(crate) columns: Vec<String>,
}

/// The shape of `body` and its values, when it is a body a table can hold (see the module's
/// documentation) and has at least one value to vary.
pub(crate) fn split(body: &Body) -> Option<(Shape, Vec<String>)> {
    // A replay closure's checks name no row either.
    let plain = body.mocks.is_empty()
        && body.ordered_expectations.is_empty()
        && !body.sequence
        && body.mock_decls.is_empty()
        && !body.replays_closures;
    // A value verification observes (`verify/observe.rs`) is no literal yet to put in a row.
    if !plain || body.effects.iter().any(|e| e.observe.is_some()) {
        return None;
    }
    let assertion = match &body.assertion {
        Assertion::True => Assertion::Eq {
            expected: "true".into(),
        },
        Assertion::False => Assertion::Eq {
            expected: "false".into(),
        },
        a @ (Assertion::Eq { .. }
        | Assertion::Nan
        | Assertion::Unit
        | Assertion::Observed { .. }) => a.clone(),
        Assertion::Matches { .. } | Assertion::Panics { .. } => return None,
    };
    // A row that checks nothing could fail only by panicking, which names no row.
    let checks = matches!(assertion, Assertion::Eq { .. } | Assertion::Nan)
        || !body.effects.is_empty()
        || !body.checks.is_empty();
    if !checks {
        return None;
    }
    let reserved = [ROW_VAR, TABLE_VAR, INDEX_VAR];
    if body
        .setup
        .iter()
        .any(|b| reserved.contains(&b.var.as_str()))
    {
        return None;
    }
    let mut holes = Holes::default();
    let mut shape = body.clone();
    shape.assertion = assertion;
    shape.setup = counted_loops(std::mem::take(&mut shape.setup));
    for b in &mut shape.setup {
        if b.repeat > 1 || (b.var == "_" && b.repeat == 1) {
            // The count of a loop of replayed calls is a column: rows that advanced an iterator
            // more or fewer times (once too) share a table.
            b.times = Some(holes.count(b.repeat));
            b.repeat = 0;
        }
        b.expr = holes.take(&b.expr)?;
    }
    for c in &mut shape.checks {
        c.actual = holes.take(&c.actual)?;
        c.expected = holes.take(&c.expected)?;
    }
    shape.callee = holes.take(&shape.callee)?;
    for a in &mut shape.args {
        *a = holes.take(a)?;
    }
    if let Assertion::Eq { expected } = &mut shape.assertion {
        *expected = holes.take(expected)?;
    }
    for e in &mut shape.effects {
        e.actual = holes.take(&e.actual)?;
        e.expected = holes.take(&e.expected)?;
    }
    if holes.columns.is_empty() {
        return None;
    }
    Some((
        Shape {
            body: shape,
            columns: holes.columns,
        },
        holes.values,
    ))
}

/// `setup` with each run of the same replayed call (`let _ = it.next();`) as one binding with
/// its count: two in a row, which a test writes as two lines, is a loop of two here, so that
/// it shares a shape with the loops of other counts.
pub(crate) fn counted_loops(setup: Vec<Binding>) -> Vec<Binding> {
    let mut out: Vec<Binding> = Vec::with_capacity(setup.len());
    for b in setup {
        match out.last_mut() {
            Some(last)
                if last.var == "_" && b.var == "_" && last.expr == b.expr && b.times.is_none() =>
            {
                last.repeat += b.repeat;
            }
            _ => out.push(b),
        }
    }
    out
}

/// A table found: its shape, and its rows as (position among the bodies, values).
pub(crate) type Gathered = (Shape, Vec<(usize, Vec<String>)>);

/// The tables `bodies` make: those of the same shape, two or more, in the order of their
/// first; at most `max_rows` rows per function in all. Returns each table's shape with the
/// positions in `bodies` of its rows and their values, and the positions no table took.
pub(crate) fn gather(bodies: &[&Body], max_rows: usize) -> (Vec<Gathered>, Vec<usize>) {
    let mut groups: Vec<Gathered> = Vec::new();
    let mut alone = Vec::new();
    let mut by_key: std::collections::HashMap<Shape, usize> = std::collections::HashMap::new();
    for (i, body) in bodies.iter().enumerate() {
        let Some((shape, values)) = split(body) else {
            alone.push(i);
            continue;
        };
        match by_key.get(&shape) {
            Some(&g) => groups[g].1.push((i, values)),
            None => {
                by_key.insert(shape.clone(), groups.len());
                groups.push((shape, vec![(i, values)]));
            }
        }
    }
    let mut rows_left: BTreeMap<String, usize> = BTreeMap::new();
    let mut tables = Vec::new();
    for (shape, mut rows) in groups {
        if rows.len() < 2 {
            alone.extend(rows.into_iter().map(|(i, _)| i));
            continue;
        }
        let left = rows_left
            .entry(shape.body.function_path.clone())
            .or_insert(max_rows);
        let keep = rows.len().min(*left);
        *left -= keep;
        alone.extend(rows.drain(keep..).map(|(i, _)| i));
        if keep >= 2 {
            tables.push((shape, rows));
        } else {
            alone.extend(rows.into_iter().map(|(i, _)| i));
        }
    }
    alone.sort_unstable();
    (tables, alone)
}

/// Takes the literal values out of expressions, one column each, in order.
#[derive(Default)]
struct Holes {
    columns: Vec<String>,
    values: Vec<String>,
    /// In the text being read: where each literal is, and its column.
    edits: Vec<(std::ops::Range<usize>, usize)>,
}

impl Holes {
    /// `expr` with its literal values replaced by `case.N`, the rest of the text as it was (the
    /// public paths are applied to the rendered text); the text as it is when it is not an
    /// expression (a callee such as `"7".parse::<u8>`). `None` when it uses the names the table
    /// test binds.
    fn take(&mut self, text: &str) -> Option<String> {
        let tokens: proc_macro2::TokenStream = text.parse().ok()?;
        if mentions(tokens, &[ROW_VAR, TABLE_VAR, INDEX_VAR]) {
            return None;
        }
        let Ok(mut expr) = syn::parse_str::<syn::Expr>(text) else {
            return Some(text.to_string());
        };
        self.edits.clear();
        self.visit_expr_mut(&mut expr);
        let mut edits = std::mem::take(&mut self.edits);
        edits.sort_by_key(|(range, _)| range.start);
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (range, column) in edits {
            // Spans out of order or outside the text: not a text this can edit.
            out.push_str(text.get(at..range.start)?);
            out.push_str(&format!("{ROW_VAR}.{column}"));
            at = range.end;
        }
        out.push_str(text.get(at..)?);
        Some(out)
    }

    /// The column a literal makes, with its text, when its type is its own.
    fn column(lit: &syn::Lit) -> Option<String> {
        match lit {
            syn::Lit::Str(_) => Some("&str".into()),
            syn::Lit::Bool(_) => Some("bool".into()),
            syn::Lit::Char(_) => Some("char".into()),
            syn::Lit::Byte(_) => Some("u8".into()),
            syn::Lit::Int(i) if !i.suffix().is_empty() => Some(i.suffix().to_string()),
            syn::Lit::Float(f) if !f.suffix().is_empty() => Some(f.suffix().to_string()),
            _ => None,
        }
    }

    /// A column of its own for the count of a loop; returns the expression standing for it.
    fn count(&mut self, repeat: usize) -> String {
        let column = self.columns.len();
        self.columns.push("usize".into());
        self.values.push(format!("{repeat}usize"));
        format!("{ROW_VAR}.{column}")
    }

    fn hole(&mut self, ty: String, value: String, range: std::ops::Range<usize>) {
        self.edits.push((range, self.columns.len()));
        self.columns.push(ty);
        self.values.push(value);
    }
}

impl VisitMut for Holes {
    fn visit_expr_mut(&mut self, expr: &mut syn::Expr) {
        match expr {
            syn::Expr::Lit(l) => {
                if let Some(ty) = Holes::column(&l.lit) {
                    let text = quote::ToTokens::to_token_stream(&l.lit).to_string();
                    self.hole(ty, text, l.lit.span().byte_range());
                }
            }
            syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => {
                let number = match (&u.op, &*u.expr) {
                    (syn::UnOp::Neg(minus), syn::Expr::Lit(l))
                        if matches!(l.lit, syn::Lit::Int(_) | syn::Lit::Float(_)) =>
                    {
                        Holes::column(&l.lit).map(|ty| (ty, l.lit.clone(), minus.span))
                    }
                    _ => None,
                };
                match number {
                    Some((ty, lit, minus)) => {
                        let text = format!("-{}", quote::ToTokens::to_token_stream(&lit));
                        let range = minus.byte_range().start..lit.span().byte_range().end;
                        self.hole(ty, text, range);
                    }
                    None => syn::visit_mut::visit_expr_mut(self, expr),
                }
            }
            // Array lengths and `const` blocks need constants.
            syn::Expr::Repeat(r) => self.visit_expr_mut(&mut r.expr),
            syn::Expr::Const(_) => {}
            _ => syn::visit_mut::visit_expr_mut(self, expr),
        }
    }
    fn visit_type_mut(&mut self, _: &mut syn::Type) {}
    fn visit_pat_mut(&mut self, _: &mut syn::Pat) {}
    fn visit_generic_argument_mut(&mut self, _: &mut syn::GenericArgument) {}
    fn visit_macro_mut(&mut self, _: &mut syn::Macro) {}
}

/// Whether `tokens` use any of `names` as an identifier.
pub(crate) fn mentions(tokens: proc_macro2::TokenStream, names: &[&str]) -> bool {
    tokens.into_iter().any(|t| match t {
        proc_macro2::TokenTree::Ident(i) => names.iter().any(|n| i == n),
        proc_macro2::TokenTree::Group(g) => mentions(g.stream(), names),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::Effect;

    fn body(setup: &[&str], callee: &str, args: &[&str], assertion: Assertion) -> Body {
        Body {
            function_path: "itoa::Buffer::format".into(),
            mocks: vec![],
            ordered_expectations: vec![],
            setup: setup
                .iter()
                .map(|e| Binding {
                    var: "buffer".into(),
                    mutable: true,
                    expr: (*e).into(),
                    repeat: 1,
                    times: None,
                })
                .collect(),
            checks: vec![],
            callee: callee.into(),
            args: args.iter().map(|a| (*a).to_string()).collect(),
            assertion,
            effects: vec![],
            sequence: false,
            mock_decls: vec![],
            trait_uses: vec![],
            replays_closures: false,
        }
    }

    fn eq(expected: &str) -> Assertion {
        Assertion::Eq {
            expected: expected.into(),
        }
    }

    #[test]
    fn bodies_differing_in_literals_share_a_shape_and_give_their_values_in_order() {
        let a = body(
            &["itoa::Buffer::new()"],
            "buffer.format",
            &["7i64"],
            eq("\"7\""),
        );
        let b = body(
            &["itoa::Buffer::new()"],
            "buffer.format",
            &["-12i64"],
            eq("\"-12\""),
        );
        let (shape_a, values_a) = split(&a).unwrap();
        let (shape_b, values_b) = split(&b).unwrap();
        assert_eq!(shape_a, shape_b);
        assert_eq!(shape_a.columns, ["i64", "&str"]);
        assert_eq!(values_a, ["7i64", "\"7\""]);
        assert_eq!(values_b, ["-12i64", "\"-12\""]);
        assert_eq!(shape_a.body.args, ["case.0"]);
        assert_eq!(shape_a.body.assertion, eq("case.1"));
    }

    #[test]
    fn other_literal_types_make_other_shapes() {
        let a = body(&[], "f", &["7u64"], eq("1u8"));
        let b = body(&[], "f", &["7u32"], eq("1u8"));
        let c = body(&[], "f", &["7"], eq("1u8"));
        assert_ne!(split(&a).unwrap().0, split(&b).unwrap().0);
        // Unsuffixed: part of the shape.
        assert_eq!(split(&c).unwrap().0.columns, ["u8"]);
        assert_eq!(split(&c).unwrap().0.body.args, ["7"]);
    }

    #[test]
    fn asserted_bools_become_a_column_so_true_and_false_rows_share_a_table() {
        let t = body(
            &["glob::Pattern::new(\"*.rs\").unwrap()"],
            "p.matches",
            &["\"a.rs\""],
            Assertion::True,
        );
        let f = body(
            &["glob::Pattern::new(\"*.md\").unwrap()"],
            "p.matches",
            &["\"a.rs\""],
            Assertion::False,
        );
        let (st, vt) = split(&t).unwrap();
        let (sf, vf) = split(&f).unwrap();
        assert_eq!(st, sf);
        assert_eq!(st.columns, ["&str", "&str", "bool"]);
        assert_eq!(vt, ["\"*.rs\"", "\"a.rs\"", "true"]);
        assert_eq!(vf[2], "false");
        assert_eq!(st.body.setup[0].expr, "glob::Pattern::new(case.0).unwrap()");
    }

    #[test]
    fn what_a_table_cannot_hold_has_no_shape() {
        let panics = body(&[], "f", &["1u8"], Assertion::Panics { expected: None });
        let checks_nothing = body(&[], "f", &["1u8"], Assertion::Unit);
        let pattern = body(
            &[],
            "f",
            &["1u8"],
            Assertion::Matches {
                pattern: "Some(1u8)".into(),
            },
        );
        let nothing_varies = body(&[], "f", &["x::A"], eq("x::B"));
        let names_the_row = body(&[], "f", &["case"], eq("1u8"));
        for b in [
            panics,
            checks_nothing,
            pattern,
            nothing_varies,
            names_the_row,
        ] {
            assert_eq!(split(&b), None, "{b:?}");
        }
        // Literals where only constants may stand stay in the shape.
        let consts = body(
            &[],
            "f",
            &["[0u8; 4usize]", "vec![1u8]", "g::<3usize>()"],
            eq("1u8"),
        );
        let (shape, values) = split(&consts).unwrap();
        assert_eq!(values, ["0u8", "1u8"]);
        assert_eq!(shape.body.args[1], "vec![1u8]");
        assert_eq!(shape.body.args[2], "g::<3usize>()");
    }

    #[test]
    fn the_count_of_a_loop_of_replayed_calls_is_a_column() {
        let advanced = |k: usize| {
            let mut b = body(
                &["p::Parser::new(\"# a\")"],
                "it.next",
                &[],
                eq("Some(3u8)"),
            );
            let step = Binding {
                var: "_".into(),
                mutable: false,
                expr: "it.next()".into(),
                repeat: 1,
                times: None,
            };
            // As `collapse_repeats` writes them: two as two lines, more as one loop.
            match k {
                2 => b.setup.extend([step.clone(), step]),
                k => b.setup.push(Binding { repeat: k, ..step }),
            }
            b
        };
        let (two, v2) = split(&advanced(2)).unwrap();
        let (five, v5) = split(&advanced(5)).unwrap();
        assert_eq!(two, five);
        assert_eq!(two.columns, ["&str", "usize", "u8"]);
        assert_eq!(v2, ["\"# a\"", "2usize", "3u8"]);
        assert_eq!(v5[1], "5usize");
        assert_eq!(two.body.setup[1].times.as_deref(), Some("case.1"));
        // One call is a count too: `for _ in 0..case.1` with 1 in its row.
        let (one, v1) = split(&advanced(1)).unwrap();
        assert_eq!(one, two);
        assert_eq!(v1[1], "1usize");
    }

    #[test]
    fn effects_and_checks_are_columns_too() {
        let mut a = body(&[], "f", &["1u8"], Assertion::Unit);
        a.effects.push(Effect {
            actual: "s.len()".into(),
            expected: "3usize".into(),
            message: None,
            observe: None,
        });
        let (shape, values) = split(&a).unwrap();
        assert_eq!(shape.columns, ["u8", "usize"]);
        assert_eq!(values, ["1u8", "3usize"]);
    }

    #[test]
    fn bodies_of_one_shape_gather_into_a_table_of_at_most_max_rows() {
        let bodies: Vec<Body> = (0..5)
            .map(|n| body(&[], "f", &[&format!("{n}u8")], eq(&format!("{}u8", n * 2))))
            .chain([body(&[], "f", &["1u16"], eq("2u8"))])
            .collect();
        let refs: Vec<&Body> = bodies.iter().collect();
        let (tables, alone) = gather(&refs, 3);
        assert_eq!(tables.len(), 1);
        let rows: Vec<usize> = tables[0].1.iter().map(|(i, _)| *i).collect();
        assert_eq!(rows, [0, 1, 2]);
        assert_eq!(tables[0].1[2].1, ["2u8", "4u8"]);
        // Past the bound, and alone in its shape: not in a table.
        assert_eq!(alone, [3, 4, 5]);
    }
}
