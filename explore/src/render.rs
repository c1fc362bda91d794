//! Kept sequences as readable tests, findings as reproducers. In, the sequences (call numbers)
//! with their answers; out, Rust source: each call written as the crate's source spells it,
//! pooled values as literals, objects in `let mut` bindings named after their type and slot,
//! and each result asserted as it is now (`assert_eq!` with a literal for numbers, text and
//! `char`, `assert!` for `bool`, the `Debug` text otherwise). Text from the run or from the
//! harness reaches the source only through `{:?}` of a Rust string, or after `syn` has read it
//! as exactly one literal.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use crate::api::{Callable, Explorable, Made, Pass, PoolKind, Ret};
use crate::harness::run::{with_buffers, CallOutcome, Final};
use crate::keep::{Finding, Kept};
use crate::pools::{literal, Lit, Pools};
use crate::strategy::Space;

/// What rendering needs to know about the exploration.
pub struct Context<'a> {
    pub ex: &'a Explorable,
    pub pools: &'a Pools,
    pub space: &'a Space,
}

/// One rendered test.
#[derive(Debug, Clone)]
pub struct RenderedTest {
    pub name: String,
    pub text: String,
    /// It calls a function that reads files: it runs in the rebuilt files (`world.rs`).
    pub reads_files: bool,
}

fn snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.extend(c.to_lowercase());
    }
    out
}

/// A name part from an outcome class: `Err(TooHigh)` → `err_too_high`.
fn slug(class: &str) -> String {
    let words = match class {
        "+" => "positive".to_string(),
        "-" => "negative".to_string(),
        "0" => "zero".to_string(),
        _ => class
            .replace("Ok(+)", "Ok(positive)")
            .replace("(0)", "(zero)")
            .replace("(-)", "(negative)")
            .replace("\"\"", "empty"),
    };
    let mut out = String::new();
    for part in snake(&words)
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|p| !p.is_empty())
    {
        if !out.is_empty() {
            out.push('_');
        }
        out.push_str(part);
    }
    out.truncate(40);
    out
}

/// The argument expression for pooled `lit` passed as `pass`.
fn argument(kind: &PoolKind, lit: &Lit, pass: Pass) -> String {
    let written = literal(kind, lit);
    // Printable bytes as a person writes them: `b"cafe".to_vec()`.
    let bytes = |lit: &Lit| match (lit, kind) {
        (Lit::Seq(elems), PoolKind::Slice(t)) => crate::pools::byte_string(t, elems),
        _ => None,
    };
    let vec = |lit: &Lit| match (lit, bytes(lit)) {
        (_, Some(bytes)) => format!("{bytes}.to_vec()"),
        (Lit::Seq(elems), None) => {
            let scalar = match kind {
                PoolKind::Slice(t) => PoolKind::Scalar(t.clone()),
                PoolKind::Texts => PoolKind::Str,
                other => other.clone(),
            };
            let parts: Vec<String> = elems.iter().map(|e| literal(&scalar, e)).collect();
            format!("vec![{}]", parts.join(", "))
        }
        _ => written.clone(),
    };
    match (pass, kind) {
        (Pass::Value, _) => written.clone(),
        (Pass::Ref, _) => format!("&{written}"),
        (Pass::Owned, PoolKind::Str) => format!("{written}.to_string()"),
        (Pass::Owned, _) => vec(lit),
        (Pass::RefOwned, PoolKind::Str) => format!("&{written}.to_string()"),
        (Pass::RefOwned, _) => format!("&{}", vec(lit)),
        (Pass::MutOwned, PoolKind::Str) => format!("&mut {written}.to_string()"),
        (Pass::MutOwned, _) => format!("&mut {}", vec(lit)),
        // An iterator that does not tell its length up front.
        (Pass::Unsized, _) => format!("{}.into_iter().filter(|_| true)", vec(lit)),
    }
}

/// `text` when `syn` reads it as exactly one literal (a number, `char` or string).
fn as_literal(text: &str) -> Option<&str> {
    let ok = match syn::parse_str::<syn::Expr>(text).ok()? {
        syn::Expr::Lit(_) => true,
        syn::Expr::Unary(u) => {
            matches!(u.op, syn::UnOp::Neg(_)) && matches!(*u.expr, syn::Expr::Lit(_))
        }
        _ => false,
    };
    ok.then_some(text)
}

/// The assertion on `value` (an expression) whose `Debug` text was `text`.
fn assertion(ret: &Ret, value: &str, text: &str) -> String {
    match ret {
        Ret::Scalar(t) if t == "bool" && text == "true" => format!("assert!({value});"),
        Ret::Scalar(t) if t == "bool" && text == "false" => format!("assert!(!{value});"),
        Ret::Scalar(t) if !t.starts_with('f') && t != "bool" => match as_literal(text) {
            Some(lit) if t == "char" => format!("assert_eq!({value}, {lit});"),
            Some(lit) => format!("assert_eq!({value}, {lit}{t});"),
            None => debug_assertion(value, text),
        },
        Ret::Text => match as_literal(text) {
            Some(lit) => format!("assert_eq!({value}, {lit});"),
            None => debug_assertion(value, text),
        },
        Ret::Option(inner, by_ref) => option_assertion((inner, *by_ref), value, text)
            .unwrap_or_else(|| debug_assertion(value, text)),
        // `Ok` of one literal: what it holds, unwrapped (`Err` keeps its `Debug` text).
        Ret::Result(inner) => match text.strip_prefix("Ok(").and_then(|t| t.strip_suffix(')')) {
            Some(ok) if as_literal(ok).is_some() => {
                assertion(inner, &format!("{value}.unwrap()"), ok)
            }
            _ => debug_assertion(value, text),
        },
        _ => debug_assertion(value, text),
    }
}

/// An `Option` of a scalar or text compared as a person writes it: `assert_eq!(m.get(&k),
/// Some(&3u64))`, `assert_eq!(m.name(), None)`, text through `as_deref()` (`String` and `&str`
/// alike); `None` when its `Debug` text is not `None` or `Some` of one literal.
fn option_assertion((inner, by_ref): (&Ret, bool), value: &str, text: &str) -> Option<String> {
    let (value, amp) = match inner {
        Ret::Text if by_ref => return None,
        Ret::Text => (format!("{value}.as_deref()"), ""),
        _ if by_ref => (value.to_string(), "&"),
        _ => (value.to_string(), ""),
    };
    if text == "None" {
        return Some(format!("assert_eq!({value}, None);"));
    }
    let inner_text = text.strip_prefix("Some(")?.strip_suffix(')')?;
    let lit = as_literal(inner_text)?;
    let written = match inner {
        Ret::Scalar(t) if t == "bool" || t == "char" => lit.to_string(),
        Ret::Scalar(t) if !t.starts_with('f') => format!("{lit}{t}"),
        Ret::Text => lit.to_string(),
        _ => return None,
    };
    Some(format!("assert_eq!({value}, Some({amp}{written}));"))
}

fn debug_assertion(value: &str, text: &str) -> String {
    format!("assert_eq!(format!(\"{{:?}}\", {value}), {text:?});")
}

/// The object slots a test has bound so far, and what it did to them: which a `&mut self`
/// call changed since they were bound, which hold what a call of the test made, and which
/// getters it called on them since.
#[derive(Default)]
struct Bound {
    slots: BTreeSet<(usize, u64)>,
    changed: BTreeSet<(usize, u64)>,
    /// Bound to what a call of the test made.
    made: BTreeSet<(usize, u64)>,
    /// The getters (callable indices) the test already called on a slot since a call last
    /// changed it: their answers are checked, not asked again at the end.
    asked: BTreeSet<(usize, u64, usize)>,
}

impl Bound {
    /// The slot's binding no longer stands for it (moved out, or filled by what no call uses).
    fn forget(&mut self, slot: (usize, u64)) {
        self.slots.remove(&slot);
        self.changed.remove(&slot);
        self.made.remove(&slot);
        self.unask(slot);
    }

    /// The slot is bound to what call made.
    fn made(&mut self, slot: (usize, u64)) {
        self.slots.insert(slot);
        self.changed.remove(&slot);
        self.made.insert(slot);
        self.unask(slot);
    }

    fn unask(&mut self, (object, slot): (usize, u64)) {
        self.asked.retain(|a| (a.0, a.1) != (object, slot));
    }
}

/// The longest state text asserted: a longer one is not what a reviewer reads.
const MAX_STATE: usize = 200;

/// The statements of one sequence: each call, and (with `assert`) its result checked (its
/// `Display` text too, as `fin` has it), then each object a `&mut self` call changed, by its
/// `Display` and `Debug` texts after the calls; an object the test made or changed whose
/// `Debug` does not say its state (none, or too long), by its getters.
fn body(
    cx: &Context,
    (calls, outcomes): (&[u64], &[CallOutcome]),
    fin: &Final,
    assert: bool,
) -> String {
    let mut s = String::new();
    let mut bound = Bound::default();
    // Slots whose state only the getters tell.
    let told = |o: usize, slot: u64| {
        fin.debug
            .iter()
            .any(|(d, ds, t)| (*d, *ds) == (o, slot) && t.len() <= MAX_STATE)
    };
    let watched: BTreeSet<(usize, u64)> = fin
        .getters
        .iter()
        .map(|(o, slot, ..)| (*o, *slot))
        .filter(|&(o, slot)| assert && !told(o, slot))
        .collect();
    let read = read_later(cx, (calls, outcomes), &watched);
    for (k, &c) in calls.iter().enumerate() {
        let (f, digits) = cx.space.decode(c);
        let callable = &cx.ex.callables[f];
        let answer = Answer {
            to: f,
            outcome: outcomes.get(k),
            shown: text_of(&fin.results, k),
            error: text_of(&fin.errors, k),
            bind: read[k] || !assert,
        };
        let _ = write!(
            s,
            "{}",
            call_lines(cx, callable, &digits, answer, &mut bound, assert)
        );
    }
    if assert {
        s.push_str(&after_the_calls(cx, fin, &bound, &watched));
    }
    s
}

/// The text call number `k` has in `texts`.
fn text_of(texts: &[(usize, String)], k: usize) -> Option<&str> {
    texts
        .iter()
        .find(|(at, _)| *at == k)
        .map(|(_, t)| t.as_str())
}

/// The checks after the calls: each object a `&mut self` call changed, by its `Display` and
/// `Debug` texts; each `watched` one (its `Debug` does not say its state) the test made or
/// changed, by the getters it did not already call since the last change.
fn after_the_calls(
    cx: &Context,
    fin: &Final,
    bound: &Bound,
    watched: &BTreeSet<(usize, u64)>,
) -> String {
    let mut s = String::new();
    let display = fin.display.iter().map(|(o, slot, t)| (o, slot, t, true));
    let debug = fin.debug.iter().map(|(o, slot, t)| (o, slot, t, false));
    for (object, slot, text, is_display) in display.chain(debug) {
        if text.len() <= MAX_STATE && bound.changed.contains(&(*object, *slot)) {
            let name = var(cx, *object, *slot);
            let line = if is_display {
                display_assertion(&name, text)
            } else {
                debug_assertion(&name, text)
            };
            let _ = writeln!(s, "    {line}");
        }
    }
    for &key in watched {
        let ours = bound.made.contains(&key) || bound.changed.contains(&key);
        if !bound.slots.contains(&key) || !ours {
            continue;
        }
        let name = var(cx, key.0, key.1);
        let fresh = |g: &&(usize, u64, usize, String)| {
            (g.0, g.1) == key && !bound.asked.contains(&(key.0, key.1, g.2))
        };
        for (_, _, k, text) in fin.getters.iter().filter(fresh) {
            if text.len() <= MAX_STATE {
                let getter = &cx.ex.callables[*k];
                let value = format!("{name}.{}()", getter.call);
                let _ = writeln!(s, "    {}", assertion(&getter.ret, &value, text));
            }
        }
    }
    s
}

fn display_assertion(value: &str, text: &str) -> String {
    format!("assert_eq!({value}.to_string(), {text:?});")
}

/// The `Display` check of a result already checked by its `Debug` text `debug`: only when it
/// says something else and is not too long to read.
fn display_check<'a>(ret: &Ret, debug: &str, shown: Option<&'a str>) -> Option<&'a str> {
    let plain = matches!(ret, Ret::Scalar(_) | Ret::Text | Ret::Unit);
    shown.filter(|d| !plain && *d != debug && d.len() <= MAX_STATE)
}

/// The check of an error's `Display` text (what its user reads) beside the result's `Debug`
/// text `debug` (`Err(…)`): only when it is not too long to read.
fn error_check<'a>(debug: &str, error: Option<&'a str>) -> Option<&'a str> {
    error.filter(|e| debug.starts_with("Err(") && e.len() <= MAX_STATE)
}

fn var(cx: &Context, object: usize, slot: u64) -> String {
    format!("{}_{slot}", snake(&cx.ex.objects[object].name))
}

/// Per call, whether a later call uses the object it makes (before another call fills that
/// slot again; a maker that gave `Err` or `None` fills nothing), or it is what a `watched`
/// slot holds at the end (its getters are asserted): a made object nothing uses is not bound
/// to a name.
fn read_later(
    cx: &Context,
    (calls, outcomes): (&[u64], &[CallOutcome]),
    watched: &BTreeSet<(usize, u64)>,
) -> Vec<bool> {
    let mut read = vec![false; calls.len()];
    let mut maker: BTreeMap<(usize, u64), usize> = Default::default();
    for (k, &c) in calls.iter().enumerate() {
        let (f, digits) = cx.space.decode(c);
        let callable = &cx.ex.callables[f];
        for slot in callable.slots_read(&digits) {
            if let Some(&m) = maker.get(&slot) {
                read[m] = true;
            }
        }
        if let Some(slot) = callable.filled_slot(&digits, outcomes.get(k)) {
            maker.insert(slot, k);
        }
    }
    for slot in watched {
        if let Some(&m) = maker.get(slot) {
            read[m] = true;
        }
    }
    read
}

/// What the harness answered for one call, and whether the object it makes is bound.
struct Answer<'a> {
    /// The callable (its index) answered.
    to: usize,
    outcome: Option<&'a CallOutcome>,
    /// Its result's `Display` text.
    shown: Option<&'a str>,
    /// The `Display` text of the error it returned.
    error: Option<&'a str>,
    bind: bool,
}

/// The argument expressions of a call of `c`, its pool and slot indices read from `d`; an
/// object argument is its slot's binding (one made from `Default`, into `s`, if none yet);
/// with `buffers`, a buffer the call writes into is bound first (`let mut out = vec![0u8];`,
/// lent as `&mut out`), its name pushed.
fn arguments(
    cx: &Context,
    c: &Callable,
    (d, mut buffers): (&mut impl Iterator<Item = u64>, Option<&mut Vec<String>>),
    bound: &mut Bound,
    s: &mut String,
) -> Vec<String> {
    let mut args = Vec::new();
    for p in &c.params {
        let at = d.next().unwrap_or(0);
        if let PoolKind::Object(o) = p.kind {
            let name = var(cx, o, at);
            if bound.slots.insert((o, at)) {
                let ty = &cx.ex.objects[o].path;
                let _ = writeln!(s, "    let mut {name} = <{ty} as Default>::default();");
            }
            args.push(match p.pass {
                Pass::Ref => format!("&{name}"),
                _ if cx.ex.objects[o].copy => name,
                _ => format!("{name}.clone()"),
            });
            continue;
        }
        let pool = cx.pools.get(&p.kind);
        let lit = &pool[at as usize % pool.len().max(1)];
        let value = argument(&p.kind, lit, p.pass);
        match (buffers.as_deref_mut(), value.strip_prefix("&mut ")) {
            (Some(names), Some(owned)) if p.pass == Pass::MutOwned => {
                let name = buffer_name(&p.name);
                let _ = writeln!(s, "    let mut {name} = {owned};");
                args.push(format!("&mut {name}"));
                names.push(name);
            }
            _ => args.push(value),
        }
    }
    args
}

/// The binding of a buffer lent to a call: its parameter's name, unless that is not a plain
/// name or is one the test uses for something else.
fn buffer_name(param: &str) -> String {
    let plain = syn::parse_str::<syn::Ident>(param).is_ok() && !param.starts_with('_');
    match plain && !["made", "result"].contains(&param) {
        true => param.to_string(),
        false => "buffer".to_string(),
    }
}

/// One call's statements: a call that wrote into buffers (`&mut [u8]`, `&mut String`) is
/// given them bound to its parameters' names, and each is checked after the call's result.
fn call_lines(
    cx: &Context,
    c: &Callable,
    digits: &[u64],
    answer: Answer,
    bound: &mut Bound,
    assert: bool,
) -> String {
    let (result, buffers) = match answer.outcome {
        Some(CallOutcome::Returned(Some(t))) if assert => {
            let (result, buffers) = with_buffers(t);
            (
                Some(CallOutcome::Returned(Some(result.to_string()))),
                buffers,
            )
        }
        _ => (None, Vec::new()),
    };
    let answer = Answer {
        outcome: result.as_ref().or(answer.outcome),
        ..answer
    };
    let mut names = (!buffers.is_empty()).then(Vec::new);
    let mut s = call_statements(cx, c, digits, answer, bound, assert, names.as_mut());
    for (name, text) in names.unwrap_or_default().iter().zip(buffers) {
        let _ = writeln!(s, "    {}", debug_assertion(name, text));
    }
    s
}

/// One call's statements (see [`call_lines`]); the buffers it lends, bound to `buffers` when
/// given.
fn call_statements(
    cx: &Context,
    c: &Callable,
    digits: &[u64],
    answer: Answer,
    bound: &mut Bound,
    assert: bool,
    buffers: Option<&mut Vec<String>>,
) -> String {
    let Answer {
        to: answer_to,
        outcome,
        shown,
        error,
        bind,
    } = answer;
    let mut s = String::new();
    let mut d = digits.iter().copied();
    let mut target = c.call.clone();
    if let Some(r) = c.receiver {
        let slot = d.next().unwrap_or(0);
        let name = var(cx, r.object, slot);
        if bound.slots.insert((r.object, slot)) {
            let ty = &cx.ex.objects[r.object].path;
            let _ = writeln!(s, "    let mut {name} = <{ty} as Default>::default();");
        }
        target = format!("{name}.{}", c.call);
        if r.by_value {
            // The call moves it: a later call on this slot needs it made again.
            bound.forget((r.object, slot));
        } else if r.mutable {
            bound.changed.insert((r.object, slot));
            bound.unask((r.object, slot));
        } else if c.params.is_empty() && c.makes.is_none() && outcome.is_some() && assert {
            bound.asked.insert((r.object, slot, answer_to));
        }
    }
    let args = arguments(cx, c, (&mut d, buffers), bound, &mut s);
    let call = c.written(&target, &args);
    let returned = match outcome {
        Some(CallOutcome::Returned(Some(t))) => Some(t.as_str()),
        _ => None,
    };
    // A value written as it is (a literal, a variant) is not checked: it is what the test says.
    let text = returned.filter(|_| assert && !c.writes_value());
    if let Some((object, made)) = c.makes {
        let slot = d.next().unwrap_or(0);
        let name = var(cx, object, slot);
        let filled = made.fills(outcome);
        let plain = made.shape() == Made::Plain;
        if plain && text.is_none() && bind && outcome.is_some() {
            // Nothing to check of it: bound at once.
            let _ = writeln!(s, "    let mut {name} = {call};");
            bound.made((object, slot));
            return s;
        }
        if text.is_none() && !bind {
            // Nothing to check of it and nothing uses it: the call alone (its lines ran).
            let _ = writeln!(s, "    let _ = {call};");
            if filled {
                bound.forget((object, slot));
            }
            return s;
        }
        // An object a later call uses, made as it is, is checked under its own name.
        let named = plain && filled && bind;
        let holder = if named { name.as_str() } else { "made" };
        let _ = writeln!(
            s,
            "    let {}{holder} = {call};",
            if named { "mut " } else { "" }
        );
        if let Some(t) = text {
            let _ = writeln!(s, "    {}", debug_assertion(holder, t));
            if let Some(d) = display_check(&c.ret, t, shown) {
                let _ = writeln!(s, "    {}", display_assertion(holder, d));
            }
            if let Some(e) = error_check(t, error).filter(|_| !filled) {
                let _ = writeln!(s, "    {}", display_assertion("made.unwrap_err()", e));
            }
        }
        if filled && !bind {
            // The slot holds what no later call uses: the binding before it no longer stands
            // for the slot, so its state is not asserted.
            bound.forget((object, slot));
        }
        if named {
            bound.made((object, slot));
        } else if bind && filled {
            let unwrap = match made.shape() {
                Made::Result => "made.ok().expect(\"made by the explored run\")".to_string(),
                Made::Option => "made.expect(\"made by the explored run\")".to_string(),
                _ => "made".to_string(),
            };
            let _ = writeln!(s, "    let mut {name} = {unwrap};");
            bound.made((object, slot));
        }
        return s;
    }
    let line = match (text, &c.ret) {
        (_, Ret::Unit) => format!("{call};"),
        (Some(t), ret) => {
            let display = display_check(ret, t, shown).map(|d| display_assertion("result", d));
            let error = error_check(t, error).map(|e| display_assertion("result.unwrap_err()", e));
            match display.or(error) {
                Some(then) => format!(
                    "let result = {call};\n    {}\n    {then}",
                    assertion(ret, "result", t),
                ),
                None => assertion(ret, &call, t),
            }
        }
        (None, _) => format!("let _ = {call};"),
    };
    let _ = writeln!(s, "    {line}");
    s
}

/// The test for kept sequence number `n`, with its objects after the calls and its results'
/// `Display` texts (`fin`).
pub fn test(cx: &Context, n: usize, kept: &Kept, fin: &Final, origin: &str) -> RenderedTest {
    // Named by its last new outcome, else by the last call that added something (kept for the
    // lines it reached, or for a comparison outcome alone: a boundary), not by a lookup
    // asked after the calls (`lookups.rs`).
    let last_call = || {
        let last = (kept.adds.last().and_then(|&a| kept.calls.get(a)))
            .or(kept.calls.last())
            .copied()
            .unwrap_or(0);
        let why = if kept.new_lines.is_empty() && !kept.new_compares.is_empty() {
            "boundary"
        } else if kept.new_lines.is_empty() && !kept.new_branches.is_empty() {
            "branch"
        } else {
            "new lines"
        };
        (cx.space.decode(last).0, why.to_string())
    };
    let (f, class) = kept.new.last().cloned().unwrap_or_else(last_call);
    let callable = &cx.ex.callables[f];
    // The function's name (a struct literal's, its type's).
    let short: String = (callable.path.rsplit("::").next().unwrap_or("call"))
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    let name = [format!("explored_{n:03}"), snake(&short), slug(&class)]
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("_");
    let news: Vec<String> = kept
        .new
        .iter()
        .map(|(f, class)| format!("`{}` {}", cx.ex.callables[*f].path, class))
        .collect();
    let mut why = Vec::new();
    if !news.is_empty() {
        why.push(format!(
            "outcomes no carved test checks: {}",
            news.join(", ")
        ));
    }
    if !kept.new_lines.is_empty() {
        why.push(format!(
            "lines the run never reached: {}",
            lines_text(&kept.new_lines)
        ));
    }
    if !kept.new_compares.is_empty() {
        why.push(format!(
            "comparison outcomes met first: {}",
            compares_text(&kept.new_compares)
        ));
    }
    if !kept.new_branches.is_empty() {
        why.push(format!(
            "branches no call before took: {}",
            lines_text(&kept.new_branches)
        ));
    }
    let mut text = String::new();
    let _ = writeln!(
        text,
        "/// Explored ({origin}): {}.",
        why.join("; ")
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect::<String>()
    );
    let _ = writeln!(text, "#[test]\nfn {name}() {{");
    let calls = body(cx, (&kept.calls, &kept.outcomes), fin, true);
    let reads_files = reads_files(cx, &kept.calls);
    text.push_str(&match reads_files {
        true => in_recorded_files(&calls),
        false => calls,
    });
    text.push_str("}\n");
    RenderedTest {
        name,
        text,
        reads_files,
    }
}

/// Whether one of `calls` is of a function that reads files.
fn reads_files(cx: &Context, calls: &[u64]) -> bool {
    let Some(world) = &cx.ex.world else {
        return false;
    };
    (calls.iter()).any(|&n| {
        world
            .readers
            .contains(&cx.ex.callables[cx.space.decode(n).0].path)
    })
}

/// A test body (lines indented 4) run inside the rebuilt files.
fn in_recorded_files(body: &str) -> String {
    let mut out = String::from("    in_recorded_files(|| {\n");
    for line in body.lines() {
        match line.is_empty() {
            true => out.push('\n'),
            false => {
                out.push_str("    ");
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out.push_str("    });\n");
    out
}

/// `lib.rs:12 equal, lib.rs:30 below`: comparison outcomes by file name and line, in order.
fn compares_text(met: &[crate::compares::Met]) -> String {
    let mut met: Vec<(&str, u32, &str)> = met
        .iter()
        .map(|((file, line), side)| {
            let name = file.rsplit('/').next().unwrap_or(file);
            (name, *line, side.word())
        })
        .collect();
    met.sort_unstable();
    met.dedup();
    let mut text: Vec<String> = met
        .iter()
        .take(MAX_LISTED)
        .map(|(f, n, s)| format!("{f}:{n} {s}"))
        .collect();
    if met.len() > MAX_LISTED {
        text.push(format!("{} more", met.len() - MAX_LISTED));
    }
    text.join(", ")
}

/// At most this many comparison outcomes are named in a kept test's doc line.
const MAX_LISTED: usize = 6;

/// `lib.rs:12, 14, 15; other.rs:3`: lines by file name, in order.
fn lines_text(lines: &[(String, u32)]) -> String {
    let mut by_file: BTreeMap<&str, Vec<u32>> = Default::default();
    for (file, line) in lines {
        let name = file.rsplit('/').next().unwrap_or(file);
        by_file.entry(name).or_default().push(*line);
    }
    by_file
        .into_iter()
        .map(|(file, mut ns)| {
            ns.sort_unstable();
            ns.dedup();
            let ns: Vec<String> = ns.iter().map(u32::to_string).collect();
            format!("{file}:{}", ns.join(", "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The test file: a header (with the `cfg` of the cargo features the recorded program was built
/// with, which the file needs), then the tests.
pub fn file(
    (program, run, features): (&str, i64, &[String]),
    tests: &[RenderedTest],
    files_helper: Option<String>,
) -> String {
    let mut text = format!(
        "//! Explored by carve from a recording of {program:?} (run {run}): call sequences beyond the\n\
         //! run, each kept for lines the run never reached, an outcome of a function it never\n\
         //! had, or a comparison outcome (a boundary) or a branch no call before it met.\n\
         //! Regenerate rather than edit.\n"
    );
    if let Some(cfg) = carve_generator::features_cfg(features) {
        text.push_str(&cfg);
        text.push('\n');
    }
    text.push_str("#![allow(unused_mut, unused_variables, clippy::all)]\n");
    if let Some(helper) = files_helper.filter(|_| tests.iter().any(|t| t.reads_files)) {
        text.push('\n');
        text.push_str(&helper);
    }
    if tests
        .iter()
        .any(|t| t.text.contains(crate::trait_calls::INTO_COLLECTED))
    {
        text.push('\n');
        text.push_str(crate::trait_calls::COLLECTED);
    }
    for t in tests {
        text.push('\n');
        text.push_str(&t.text);
    }
    // A long text written twice is one `const` at the top, as in carved files (verification
    // drops one no test left uses any more).
    carve_generator::hoist_long_literals(&text)
}

/// A finding as Markdown: what panicked, how often, and the calls that reproduce it.
pub fn finding(cx: &Context, f: &Finding) -> String {
    let who = f.callable.map_or("the harness".to_string(), |c| {
        format!("`{}`", cx.ex.callables[c].path)
    });
    let mut text = format!(
        "## {who} panics: {:?}\n\nMet {} time(s) while exploring; the run never gave these inputs. \
         Reproducer:\n\n```rust\n",
        f.message, f.times
    );
    let calls = body(cx, (&f.calls, &f.outcomes), &Final::default(), false);
    match reads_files(cx, &f.calls) {
        // In the files the run read, as the kept tests are (`explored_CRATE.rs` has the helper).
        true => text.push_str(&in_recorded_files(&calls)),
        false => text.push_str(&calls),
    }
    text.push_str("```\n");
    if calls.contains(crate::trait_calls::INTO_COLLECTED) {
        text.push_str("\nWith `Collected` as the top of the explored tests' file defines it.\n");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Param;
    use crate::testdata;

    fn cx_parts() -> (Explorable, Pools, Space) {
        let parse = Callable {
            path: "g::parse".into(),
            call: "g::parse".into(),
            receiver: None,
            params: vec![Param {
                name: "s".into(),
                kind: PoolKind::Str,
                pass: Pass::Owned,
            }],
            makes: None,
            ret: Ret::Other,
        };
        let ex = testdata::gauge_api(vec![testdata::getter("is_full", "bool"), parse]);
        let pools = testdata::pools(vec![(PoolKind::Str, vec![Lit::Str(String::new())])]);
        let space = Space::new(vec![vec![2, 2], vec![2], vec![1]]).unwrap();
        (ex, pools, space)
    }

    /// The rendering context over [`cx_parts`].
    fn context<'a>((ex, pools, space): &'a (Explorable, Pools, Space)) -> Context<'a> {
        Context { ex, pools, space }
    }

    #[test]
    fn a_kept_sequence_reads_as_a_test_with_its_objects_and_assertions() {
        let parts = cx_parts();
        let (cx, space) = (context(&parts), &parts.2);
        // Gauge::new(0) into slot 1, then slot 1's is_full, then parse("").
        let calls = [
            space.encode(0, &[0, 1]),
            space.encode(1, &[1]),
            space.encode(2, &[0]),
        ];
        let kept = Kept {
            calls: calls.to_vec(),
            outcomes: vec![
                CallOutcome::Returned(Some("Gauge { level: 0, max: 0 }".into())),
                CallOutcome::Returned(Some("true".into())),
                CallOutcome::Returned(Some("Err(Empty)".into())),
            ],
            new: vec![(1, "true".into()), (2, "Err(Empty)".into())],
            new_lines: Vec::new(),
            new_compares: Vec::new(),
            new_branches: Vec::new(),
            adds: vec![1, 2],
        };
        let t = test(&cx, 1, &kept, &Final::default(), "R, seed 1");
        assert_eq!(t.name, "explored_001_parse_err_empty");
        let expected = "    let mut gauge_1 = g::Gauge::new(0u8);\n    \
            assert_eq!(format!(\"{:?}\", gauge_1), \"Gauge { level: 0, max: 0 }\");\n    \
            assert!(gauge_1.is_full());\n    \
            assert_eq!(format!(\"{:?}\", g::parse(\"\".to_string())), \"Err(Empty)\");\n";
        assert!(t.text.contains(expected), "{}", t.text);
        // A made object no later call uses is not bound to a name.
        let alone = Kept {
            calls: vec![space.encode(0, &[0, 1])],
            outcomes: kept.outcomes[..1].to_vec(),
            new: vec![(0, "Gauge".into())],
            adds: vec![0],
            ..kept.clone()
        };
        let t1 = test(&cx, 2, &alone, &Final::default(), "R, seed 1");
        assert!(!t1.text.contains("let mut gauge"), "{}", t1.text);
        // With nothing to check either (no `Debug`): the call alone.
        let unseen = Kept {
            outcomes: vec![CallOutcome::Returned(None)],
            ..alone
        };
        let t2 = test(&cx, 2, &unseen, &Final::default(), "R, seed 1");
        assert!(
            t2.text.contains("    let _ = g::Gauge::new(0u8);\n}"),
            "{}",
            t2.text
        );
        let file = file(("bounds", 1, &[]), std::slice::from_ref(&t), None);
        assert!(syn::parse_file(&file).is_ok(), "{file}");
        assert!(!file.contains("#![cfg"), "{file}");
        // Recorded with features beyond the crate's defaults: the file compiles only with them.
        let gated = super::file(("bounds", 1, &["alloc".into(), "std".into()]), &[t], None);
        let parsed = syn::parse_file(&gated).expect("parses");
        assert!(
            gated.contains("#![cfg(all(feature = \"alloc\", feature = \"std\"))]\n"),
            "{gated}"
        );
        assert_eq!(
            parsed
                .attrs
                .iter()
                .filter(|a| !a.path().is_ident("doc"))
                .count(),
            2
        );
    }

    #[test]
    fn results_show_their_display_and_objects_a_mut_call_changed_are_asserted_after_the_calls() {
        let fill = Callable {
            receiver: Some(crate::api::Receiver {
                object: 0,
                mutable: true,
                by_value: false,
            }),
            ret: Ret::Unit,
            ..testdata::getter("fill", "bool")
        };
        let ex = testdata::gauge_api(vec![testdata::getter("is_full", "bool"), fill]);
        let pools = testdata::pools(Vec::new());
        let space = Space::new(vec![vec![2, 2], vec![2], vec![2]]).unwrap();
        let cx = Context {
            ex: &ex,
            pools: &pools,
            space: &space,
        };
        // Slot 0 made then filled; slot 1 made and only read.
        let calls = vec![
            space.encode(0, &[1, 0]),
            space.encode(2, &[0]),
            space.encode(0, &[0, 1]),
            space.encode(1, &[1]),
        ];
        let kept = Kept {
            calls,
            outcomes: vec![
                CallOutcome::Returned(Some("Gauge { level: 0, max: 255 }".into())),
                CallOutcome::Returned(None),
                CallOutcome::Returned(Some("Gauge { level: 0, max: 0 }".into())),
                CallOutcome::Returned(Some("true".into())),
            ],
            new: Vec::new(),
            new_lines: vec![("lib.rs".into(), 3)],
            new_compares: Vec::new(),
            new_branches: Vec::new(),
            adds: vec![1],
        };
        let fin = Final {
            debug: vec![
                (0, 0, "Gauge { level: 255, max: 255 }".to_string()),
                (0, 1, "Gauge { level: 0, max: 0 }".to_string()),
            ],
            display: vec![
                (0, 0, "255 of 255".to_string()),
                (0, 1, "0 of 0".to_string()),
            ],
            results: vec![(0, "0 of 255".to_string()), (3, "true".to_string())],
            errors: Vec::new(),
            getters: Vec::new(),
            operands: Vec::new(),
        };
        let t = test(&cx, 2, &kept, &fin, "R, seed 1");
        assert!(
            t.text.contains(
                "    let mut gauge_0 = g::Gauge::new(u8::MAX);\n    \
                 assert_eq!(format!(\"{:?}\", gauge_0), \"Gauge { level: 0, max: 255 }\");\n    \
                 assert_eq!(gauge_0.to_string(), \"0 of 255\");\n    \
                 gauge_0.fill();\n    let mut gauge_1 = g::Gauge::new(0u8);\n    \
                 assert_eq!(format!(\"{:?}\", gauge_1), \"Gauge { level: 0, max: 0 }\");\n    \
                 assert!(gauge_1.is_full());\n    \
                 assert_eq!(gauge_0.to_string(), \"255 of 255\");\n    \
                 assert_eq!(format!(\"{:?}\", gauge_0), \"Gauge { level: 255, max: 255 }\");\n}"
            ),
            "{}",
            t.text
        );
        assert!(!t.text.contains("gauge_1.to_string()"), "{}", t.text);
        // Its `Debug` text is its value checked once made, not a state after the calls.
        let debugs = t.text.matches("format!(\"{:?}\", gauge_1)").count();
        assert_eq!(debugs, 1, "{}", t.text);
        // A state past what a reviewer reads is left out.
        let long = Final {
            debug: vec![(0, 0, format!("Gauge {{ {} }}", "x".repeat(MAX_STATE)))],
            ..Final::default()
        };
        let t = test(&cx, 2, &kept, &long, "R, seed 1");
        assert!(!t.text.contains(&"x".repeat(MAX_STATE)), "{}", t.text);
        // Slot 0 filled again by a maker whose object nothing uses: gauge_0 no longer stands
        // for the slot, and the slot's state is not asserted on it.
        let refilled = Kept {
            calls: vec![
                space.encode(0, &[1, 0]),
                space.encode(2, &[0]),
                space.encode(0, &[0, 0]),
            ],
            outcomes: kept.outcomes[..3].to_vec(),
            ..kept.clone()
        };
        let t = test(&cx, 2, &refilled, &fin, "R, seed 1");
        assert!(t.text.contains("gauge_0.fill();"), "{}", t.text);
        assert!(!t.text.contains("\"255 of 255\""), "{}", t.text);
    }

    #[test]
    fn an_object_made_without_debug_is_checked_by_its_getters() {
        let ex = testdata::gauge_api(vec![testdata::getter("level", "u8")]);
        let pools = testdata::pools(Vec::new());
        let space = Space::new(vec![vec![2, 2], vec![2]]).unwrap();
        let cx = Context {
            ex: &ex,
            pools: &pools,
            space: &space,
        };
        assert_eq!(ex.getters(0), vec![1]);
        let kept = Kept {
            calls: vec![space.encode(0, &[1, 0])],
            outcomes: vec![CallOutcome::Returned(None)],
            new: Vec::new(),
            new_lines: vec![("lib.rs".into(), 3)],
            new_compares: Vec::new(),
            new_branches: Vec::new(),
            adds: vec![0],
        };
        let fin = Final {
            getters: vec![(0, 0, 1, "255".to_string())],
            ..Final::default()
        };
        let t = test(&cx, 1, &kept, &fin, "R, seed 1");
        assert!(
            t.text.contains(
                "    let mut gauge_0 = g::Gauge::new(u8::MAX);\n    assert_eq!(gauge_0.level(), 255u8);\n}"
            ),
            "{}",
            t.text
        );
        // A `Debug` that says the state makes the getters needless.
        let told = Final {
            debug: vec![(0, 0, "Gauge { level: 255 }".to_string())],
            ..fin.clone()
        };
        let t = test(&cx, 1, &kept, &told, "R, seed 1");
        assert!(!t.text.contains(".level()"), "{}", t.text);
        // A getter the test called since the last change is not asked again.
        let asked = Kept {
            calls: vec![space.encode(0, &[1, 0]), space.encode(1, &[0])],
            outcomes: vec![
                CallOutcome::Returned(None),
                CallOutcome::Returned(Some("255".into())),
            ],
            ..kept
        };
        let t = test(&cx, 1, &asked, &fin, "R, seed 1");
        assert_eq!(t.text.matches(".level()").count(), 1, "{}", t.text);
    }

    #[test]
    fn a_long_literal_used_twice_in_a_file_is_one_const() {
        let doc = format!(
            "{:?}",
            format!("# Title\n\n{}\"quoted\" 'x'", "word ".repeat(50))
        );
        let long_once = format!("{:?}", "y".repeat(205));
        let test = |name: &str, body: String| RenderedTest {
            name: name.to_string(),
            text: format!("#[test]\nfn {name}() {{\n{body}}}\n"),
            reads_files: false,
        };
        let tests = [
            test(
                "a",
                format!("    let c = '\"';\n    f({doc});\n    g(\"short\");\n"),
            ),
            test(
                "b",
                format!("    let q = '\\'';\n    assert_eq!(x, {doc});\n    h(\"short\");\n"),
            ),
            test("c", format!("    once({long_once});\n")),
        ];
        let out = file(("app", 1, &[]), &tests, None);
        let consts: Vec<&str> = out.lines().filter(|l| l.starts_with("const ")).collect();
        assert_eq!(consts, [format!("const TITLE_WORD_WORD: &str = {doc};")]);
        // After the inner attribute, which no item may precede.
        assert!(
            out.contains("clippy::all)]\n\nconst TITLE_WORD_WORD"),
            "{out}"
        );
        assert!(
            out.contains("f(TITLE_WORD_WORD);\n    g(\"short\")"),
            "{out}"
        );
        assert!(out.contains("assert_eq!(x, TITLE_WORD_WORD);"), "{out}");
        assert!(
            out.contains("let c = '\"';") && out.contains("let q = '\\'';"),
            "{out}"
        );
        // A long literal used once stays where it is.
        assert!(out.contains(&format!("once({long_once})")), "{out}");
    }

    #[test]
    fn a_maker_that_gave_err_leaves_the_slot_to_the_object_made_before() {
        let parse = testdata::parse();
        let ex = testdata::gauge_api(vec![testdata::getter("is_full", "bool"), parse]);
        let pools = testdata::pools(vec![(PoolKind::Str, vec![Lit::Str("x".into())])]);
        let space = Space::new(vec![vec![2, 2], vec![2], vec![1, 2]]).unwrap();
        let cx = Context {
            ex: &ex,
            pools: &pools,
            space: &space,
        };
        // new(0) into slot 0; parse("x") into slot 0 gives Err; slot 0's is_full.
        let kept = Kept {
            calls: vec![
                space.encode(0, &[0, 0]),
                space.encode(2, &[0, 0]),
                space.encode(1, &[0]),
            ],
            outcomes: vec![
                CallOutcome::Returned(Some("Gauge { level: 0, max: 0 }".into())),
                CallOutcome::Returned(Some("Err(Empty)".into())),
                CallOutcome::Returned(Some("true".into())),
            ],
            new: vec![(1, "true".into())],
            new_lines: Vec::new(),
            new_compares: Vec::new(),
            new_branches: Vec::new(),
            adds: vec![2],
        };
        let t = test(&cx, 1, &kept, &Final::default(), "R, seed 1");
        assert!(
            t.text.contains("let mut gauge_0 = g::Gauge::new(0u8);"),
            "{}",
            t.text
        );
        assert!(!t.text.contains("Default"), "{}", t.text);
        // The error's `Display` text, what its user reads, is checked beside its `Debug`.
        let fin = Final {
            errors: vec![(1, "empty gauge text".to_string())],
            ..Final::default()
        };
        let t = test(&cx, 1, &kept, &fin, "R, seed 1");
        assert!(
            t.text.contains(
                "    let made = g::Gauge::parse(\"x\");\n    \
                 assert_eq!(format!(\"{:?}\", made), \"Err(Empty)\");\n    \
                 assert_eq!(made.unwrap_err().to_string(), \"empty gauge text\");\n"
            ),
            "{}",
            t.text
        );
    }

    #[test]
    fn an_error_a_call_returned_is_checked_by_its_display_text() {
        let check = Callable {
            path: "g::Gauge::check".into(),
            call: "check".into(),
            ..testdata::parse()
        };
        let check = Callable {
            receiver: testdata::getter("x", "u8").receiver,
            makes: None,
            ..check
        };
        let ex = testdata::gauge_api(vec![check]);
        let pools = testdata::pools(vec![(PoolKind::Str, vec![Lit::Str("x".into())])]);
        let space = Space::new(vec![vec![2, 2], vec![2, 1]]).unwrap();
        let cx = Context {
            ex: &ex,
            pools: &pools,
            space: &space,
        };
        let kept = Kept {
            calls: vec![space.encode(1, &[0, 0])],
            outcomes: vec![CallOutcome::Returned(Some("Err(Empty)".into()))],
            new: vec![(1, "Err(Empty)".into())],
            new_lines: Vec::new(),
            new_compares: Vec::new(),
            new_branches: Vec::new(),
            adds: vec![0],
        };
        let fin = Final {
            errors: vec![(0, "empty gauge text".to_string())],
            ..Final::default()
        };
        let t = test(&cx, 1, &kept, &fin, "R, seed 1");
        assert!(
            t.text.contains(
                "    let result = gauge_0.check(\"x\");\n    \
                 assert_eq!(format!(\"{:?}\", result), \"Err(Empty)\");\n    \
                 assert_eq!(result.unwrap_err().to_string(), \"empty gauge text\");\n"
            ),
            "{}",
            t.text
        );
        // An `Ok` has no error to show; a text past what a reviewer reads is left out.
        let long = Final {
            errors: vec![(0, "e".repeat(MAX_STATE + 1))],
            ..Final::default()
        };
        let t = test(&cx, 1, &kept, &long, "R, seed 1");
        assert!(!t.text.contains("unwrap_err"), "{}", t.text);
    }

    #[test]
    fn a_receiver_used_before_any_constructor_starts_from_default() {
        let parts = cx_parts();
        let (cx, space) = (context(&parts), &parts.2);
        let finding = Finding {
            outcomes: Vec::new(),
            calls: vec![space.encode(1, &[0])],
            callable: Some(1),
            message: "boom".into(),
            times: 3,
        };
        let text = super::finding(&cx, &finding);
        assert!(
            text.contains("`g::Gauge::is_full` panics: \"boom\""),
            "{text}"
        );
        assert!(text.contains("let mut gauge_0 = <g::Gauge as Default>::default();\n    let _ = gauge_0.is_full();"), "{text}");
    }

    #[test]
    fn a_test_or_reproducer_calling_a_reader_of_files_runs_in_the_recorded_files() {
        let (mut ex, pools, space) = cx_parts();
        ex.world = Some(crate::world::World {
            readers: ["g::Gauge::is_full".to_string()].into(),
            ..Default::default()
        });
        let cx = Context {
            ex: &ex,
            pools: &pools,
            space: &space,
        };
        let finding = Finding {
            outcomes: Vec::new(),
            calls: vec![space.encode(1, &[0])],
            callable: Some(1),
            message: "boom".into(),
            times: 1,
        };
        let text = super::finding(&cx, &finding);
        assert!(
            text.contains("    in_recorded_files(|| {\n        let mut gauge_0 ="),
            "{text}"
        );
        let kept = Kept {
            calls: vec![space.encode(2, &[0]), space.encode(1, &[0])],
            outcomes: vec![
                CallOutcome::Returned(Some("Err(Empty)".into())),
                CallOutcome::Returned(Some("true".into())),
            ],
            new: vec![(1, "true".into())],
            new_lines: Vec::new(),
            new_compares: Vec::new(),
            new_branches: Vec::new(),
            adds: vec![1],
        };
        let t = test(&cx, 1, &kept, &Final::default(), "R, seed 1");
        assert!(t.reads_files);
        assert!(
            t.text.contains("    in_recorded_files(|| {\n"),
            "{}",
            t.text
        );
        assert!(t.text.ends_with("    });\n}\n"), "{}", t.text);
        // Without a reader among its calls, a test runs where it is.
        let alone = Kept {
            calls: vec![space.encode(2, &[0])],
            outcomes: vec![CallOutcome::Returned(Some("Err(Empty)".into()))],
            new: vec![(2, "Err(Empty)".into())],
            adds: vec![0],
            ..kept
        };
        let t = test(&cx, 2, &alone, &Final::default(), "R, seed 1");
        assert!(
            !t.reads_files && !t.text.contains("in_recorded_files"),
            "{}",
            t.text
        );
    }

    #[test]
    fn a_reproducer_binds_the_objects_the_calls_before_the_panic_made() {
        let parts = cx_parts();
        let (cx, space) = (context(&parts), &parts.2);
        let finding = Finding {
            calls: vec![space.encode(0, &[1, 0]), space.encode(1, &[0])],
            outcomes: vec![CallOutcome::Returned(Some(
                "Gauge { level: 0, max: 255 }".into(),
            ))],
            callable: Some(1),
            message: "boom".into(),
            times: 1,
        };
        let text = super::finding(&cx, &finding);
        assert!(
            text.contains(
                "let mut gauge_0 = g::Gauge::new(u8::MAX);\n    let _ = gauge_0.is_full();"
            ),
            "{text}"
        );
    }

    #[test]
    fn numbers_and_text_are_asserted_as_literals_only_when_they_are_one() {
        let u8r = Ret::Scalar("u8".into());
        assert_eq!(assertion(&u8r, "x", "5"), "assert_eq!(x, 5u8);");
        assert_eq!(
            assertion(&Ret::Scalar("i32".into()), "x", "-5"),
            "assert_eq!(x, -5i32);"
        );
        assert_eq!(
            assertion(&Ret::Text, "x", "\"a\\\"b\""),
            "assert_eq!(x, \"a\\\"b\");"
        );
        assert_eq!(
            assertion(&Ret::Text, "x", "\"a\"); evil(); (\""),
            "assert_eq!(format!(\"{:?}\", x), \"\\\"a\\\"); evil(); (\\\"\");"
        );
        assert_eq!(
            assertion(&Ret::Scalar("f64".into()), "x", "NaN"),
            "assert_eq!(format!(\"{:?}\", x), \"NaN\");"
        );
        // Options of them, as a person writes them.
        let opt = |r: Ret, by_ref: bool| Ret::Option(Box::new(r), by_ref);
        assert_eq!(
            assertion(&opt(u8r.clone(), true), "m.get(&1u8)", "Some(5)"),
            "assert_eq!(m.get(&1u8), Some(&5u8));"
        );
        assert_eq!(
            assertion(&opt(u8r.clone(), false), "m.pop()", "None"),
            "assert_eq!(m.pop(), None);"
        );
        assert_eq!(
            assertion(&opt(Ret::Text, false), "m.name()", "Some(\"a b\")"),
            "assert_eq!(m.name().as_deref(), Some(\"a b\"));"
        );
        // An `Ok` of one literal, unwrapped; an `Err` by its `Debug` text.
        let res = |r: Ret| Ret::Result(Box::new(r));
        assert_eq!(
            assertion(&res(Ret::Text), "q.join(w)", "Ok(\"a 'b c'\")"),
            "assert_eq!(q.join(w).unwrap(), \"a 'b c'\");"
        );
        assert_eq!(
            assertion(&res(u8r.clone()), "p(s)", "Err(Nul)"),
            "assert_eq!(format!(\"{:?}\", p(s)), \"Err(Nul)\");"
        );
        assert_eq!(
            assertion(&opt(Ret::Scalar("f64".into()), false), "x", "Some(0.5)"),
            "assert_eq!(format!(\"{:?}\", x), \"Some(0.5)\");"
        );
    }
}
