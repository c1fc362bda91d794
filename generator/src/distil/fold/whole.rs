//! The whole-call rule of folding (see `fold.rs`): which tests one table of whole expressions
//! can hold ([`whole_key`]) and that table ([`whole_table`]).

use crate::body::{Assertion, Body};
use crate::plan::table::{self, ROW_VAR};

/// What tests of one whole call share: the function, how it is called, its recorded
/// arguments' types (the receiver's too), and the arrangement's variables and replayed steps.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct WholeKey {
    function: String,
    callee: String,
    arity: usize,
    types: Vec<String>,
    /// Per binding: its variable, whether it is `mut`, and the expression of a replayed step
    /// (`let _ = it.next();`), which rows share (how often it is replayed may differ).
    setup: Vec<(String, bool, Option<String>)>,
    /// What the arrangement's checks and the effects' checks look at (`shlex.line_no`): the
    /// values they expect may differ.
    checked: Vec<String>,
    effects: Vec<String>,
}

/// The key of a test that calls one function and compares its result, on an arrangement of
/// plain bindings (no mocks, no checks, no effects), when it is one.
pub(super) fn whole_key(body: &Body, types: Vec<String>) -> Option<WholeKey> {
    let plain = body.mocks.is_empty()
        && body.ordered_expectations.is_empty()
        && !body.sequence
        && body.mock_decls.is_empty()
        && !body.replays_closures
        && body
            .checks
            .iter()
            .chain(&body.effects)
            .all(|e| e.message.is_none() && e.observe.is_none())
        && body.setup.iter().all(|b| b.times.is_none());
    let compared = matches!(
        body.assertion,
        Assertion::Eq { .. } | Assertion::True | Assertion::False
    );
    let free = ![body.callee.as_str()]
        .into_iter()
        .chain(slots(body))
        .any(uses_table_names);
    (plain && compared && free).then(|| WholeKey {
        function: body.function_path.clone(),
        callee: body.callee.clone(),
        arity: body.args.len(),
        types,
        setup: table::counted_loops(body.setup.clone())
            .into_iter()
            .map(|b| {
                let step = is_step(&b).then(|| b.expr.clone());
                (b.var, b.mutable, step)
            })
            .collect(),
        checked: body.checks.iter().map(|c| c.actual.clone()).collect(),
        effects: body.effects.iter().map(|e| e.actual.clone()).collect(),
    })
}

/// A replayed step (`let _ = it.next();`) or plain statement, not a variable's binding.
fn is_step(b: &crate::body::Binding) -> bool {
    b.var == "_" || b.var.is_empty()
}

/// What may differ between the rows of a whole call: the expressions its variables are bound
/// to, the values the arrangement's checks expect, its arguments, the values its effects'
/// checks expect.
fn slots(body: &Body) -> impl Iterator<Item = &str> {
    labelled_slots(body).map(|(_, text)| text)
}

/// [`slots`], each with what a reader calls it in the table's header: the variable, the field
/// checked before or after the call, the argument's place.
fn labelled_slots(body: &Body) -> impl Iterator<Item = (String, &str)> {
    body.setup
        .iter()
        .filter(|b| !is_step(b))
        .map(|b| (b.var.clone(), b.expr.as_str()))
        .chain(
            body.checks
                .iter()
                .map(|c| (format!("{} before", c.actual), c.expected.as_str())),
        )
        .chain(
            body.args
                .iter()
                .enumerate()
                .map(|(k, a)| (format!("argument {}", k + 1), a.as_str())),
        )
        .chain(
            body.effects
                .iter()
                .map(|e| (format!("{} after", e.actual), e.expected.as_str())),
        )
}

/// `body` with its `k`-th slot (see [`slots`]) written as `text`.
fn set_slot(body: &mut Body, k: usize, text: String) {
    let named = body
        .setup
        .iter_mut()
        .filter(|b| !is_step(b))
        .map(|b| &mut b.expr);
    let slot = named
        .chain(body.checks.iter_mut().map(|c| &mut c.expected))
        .chain(body.args.iter_mut())
        .chain(body.effects.iter_mut().map(|e| &mut e.expected))
        .nth(k);
    if let Some(slot) = slot {
        *slot = text;
    }
}

/// Whether `text` names what a table test binds (`case`, `cases`, `i`).
fn uses_table_names(text: &str) -> bool {
    text.parse::<proc_macro2::TokenStream>()
        .map_or(true, |t| table::mentions(t, &[ROW_VAR, "cases", "i"]))
}

/// The table of `bodies` (one whole call each, of one key): the body with `case.N` for each
/// slot that differs between them and for the expected value, the columns (what each is, for
/// the table's header: their types are inferred), and
/// each body's values. `None` when a slot that differs uses a variable of the arrangement: the
/// table, written before the loop, cannot.
pub(super) fn whole_table(bodies: &[&Body]) -> Option<(Body, Vec<String>, Vec<Vec<String>>)> {
    // Runs of one replayed step as one step with its count.
    let counted: Vec<Body> = bodies
        .iter()
        .map(|b| Body {
            setup: table::counted_loops(b.setup.clone()),
            ..(*b).clone()
        })
        .collect();
    let bodies: Vec<&Body> = counted.iter().collect();
    let first = bodies[0];
    let slots_of: Vec<Vec<&str>> = bodies.iter().map(|b| slots(b).collect()).collect();
    let varies: Vec<bool> = (0..slots_of[0].len())
        .map(|k| slots_of.iter().any(|s| s[k] != slots_of[0][k]))
        .collect();
    let vars: Vec<&str> = first.setup.iter().map(|b| b.var.as_str()).collect();
    let uses_vars = |text: &str| {
        text.parse::<proc_macro2::TokenStream>()
            .map_or(true, |t| uses_variable(t, &vars))
    };
    let varying_uses_vars = slots_of
        .iter()
        .flat_map(|s| s.iter().zip(&varies).filter(|(_, v)| **v))
        .any(|(text, _)| uses_vars(text));
    if varying_uses_vars {
        return None;
    }
    // The steps replayed a different number of times: a count column each.
    let counts: Vec<usize> = (0..first.setup.len())
        .filter(|&k| is_step(&first.setup[k]))
        .filter(|&k| {
            bodies
                .iter()
                .any(|b| b.setup[k].repeat != first.setup[k].repeat)
        })
        .collect();
    let mut body = first.clone();
    let mut labels: Vec<String> = labelled_slots(first)
        .zip(&varies)
        .filter(|(_, v)| **v)
        .map(|((label, _), _)| label)
        .collect();
    let mut column = 0;
    for (k, v) in varies.iter().enumerate() {
        if *v {
            set_slot(&mut body, k, format!("{ROW_VAR}.{column}"));
            column += 1;
        }
    }
    for &k in &counts {
        labels.push(format!("times `{}`", first.setup[k].expr));
        body.setup[k].times = Some(format!("{ROW_VAR}.{column}"));
        body.setup[k].repeat = 0;
        column += 1;
    }
    labels.push("result".into());
    body.assertion = Assertion::Eq {
        expected: format!("{ROW_VAR}.{column}"),
    };
    let values = bodies
        .iter()
        .zip(&slots_of)
        .map(|(b, slots)| {
            let mut row: Vec<String> = slots
                .iter()
                .zip(&varies)
                .filter(|(_, v)| **v)
                .map(|(a, _)| a.to_string())
                .collect();
            row.extend(
                counts
                    .iter()
                    .map(|&k| format!("{}usize", b.setup[k].repeat)),
            );
            row.push(expected(&b.assertion));
            row
        })
        .collect();
    Some((body, labels, values))
}

/// Whether `tokens` use one of `vars` as a variable: an identifier that is not a segment of a
/// path (`shlex::Shlex::new(..)` names the crate `shlex`, not the variable) nor a field or
/// method after a dot.
fn uses_variable(tokens: proc_macro2::TokenStream, vars: &[&str]) -> bool {
    use proc_macro2::TokenTree;
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let punct =
        |t: Option<&TokenTree>, c: char| matches!(t, Some(TokenTree::Punct(p)) if p.as_char() == c);
    tokens.iter().enumerate().any(|(k, t)| match t {
        TokenTree::Ident(ident) => {
            let before = k.checked_sub(1).and_then(|b| tokens.get(b));
            vars.iter().any(|v| ident == v)
                && !punct(tokens.get(k + 1), ':')
                && !punct(before, ':')
                && !punct(before, '.')
        }
        TokenTree::Group(g) => uses_variable(g.stream(), vars),
        _ => false,
    })
}

/// The value a compared result is expected to be.
fn expected(assertion: &Assertion) -> String {
    match assertion {
        Assertion::Eq { expected } => expected.clone(),
        Assertion::True => "true".into(),
        _ => "false".into(),
    }
}

/// `body` (of key `short`) with the replayed steps a test of key `long` takes that it does
/// not, each taken 0 times (`for _ in 0..0`), when that is all that tells the keys apart: a
/// `next()` with no step before it is a row of the table of `next()`s after one or two.
pub(super) fn without_steps_of(long: &WholeKey, short: &WholeKey, body: &Body) -> Option<Body> {
    let same_call = long.function == short.function
        && long.callee == short.callee
        && long.arity == short.arity
        && long.types == short.types
        && long.checked == short.checked
        && long.effects == short.effects;
    if !same_call || long.setup.len() <= short.setup.len() {
        return None;
    }
    let mut steps = table::counted_loops(body.setup.clone())
        .into_iter()
        .peekable();
    let mut setup = Vec::with_capacity(long.setup.len());
    for (var, mutable, step) in &long.setup {
        let ours = short.setup.get(setup.len() - missing(&setup));
        match (ours, step) {
            (Some((v, m, s)), _) if v == var && m == mutable && s == step => {
                setup.push(steps.next()?);
            }
            (_, Some(expr)) if var == "_" => setup.push(crate::body::Binding {
                var: var.clone(),
                mutable: *mutable,
                expr: expr.clone(),
                repeat: 0,
                times: None,
            }),
            _ => return None,
        }
    }
    steps.peek().is_none().then(|| Body {
        setup,
        ..body.clone()
    })
}

/// How many of `setup`'s bindings are steps taken 0 times (put in by [`without_steps_of`]).
fn missing(setup: &[crate::body::Binding]) -> usize {
    setup.iter().filter(|b| b.repeat == 0).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_variable_is_told_from_a_path_or_field_of_its_name() {
        let uses = |text: &str| uses_variable(text.parse().unwrap(), &["shlex", "y"]);
        assert!(!uses("shlex::Shlex::new(\"a\")"));
        assert!(!uses("x.y"));
        assert!(uses("p::X::from(&y, 2)"));
        assert!(uses("shlex.next()"));
    }
}
