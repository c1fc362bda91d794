//! What is kept (JET's feasibility, and "keep only what adds"): in, each sequence's answers;
//! out, the sequences that reach a crate line neither the recorded run nor an earlier call
//! reached (`lines.rs`, when the harness has coverage), or give a function an outcome neither
//! a carved test nor an earlier kept sequence gave (`classify`: a variant, `true`/`false`, the
//! sign of a number, empty or not, an error's kind or text), and the findings: panics of a
//! function on inputs where the recording never saw it panic with that message, each with the
//! shortest sequence that gave it. A panic ends its sequence and is never kept as a test; the
//! prefixes that panicked, had no receiver or reached a known state are reported dead so the
//! strategy does not extend them.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::Path;

use carve_generator::CrateApi;
use carve_storage::{Outcome, Trace, Value};
use serde::Serialize;

use crate::api::Callable;
use crate::compares::{Compares, Met};
use crate::harness::run::{with_buffers, CallOutcome, End, SeqResult};
use crate::lines::{Line, Lines};
use crate::strategy::Space;

/// A sequence kept as a test.
#[derive(Debug, Clone, Serialize)]
pub struct Kept {
    pub calls: Vec<u64>,
    pub outcomes: Vec<CallOutcome>,
    /// The (callable, outcome class) pairs it was the first to reach.
    pub new: Vec<(usize, String)>,
    /// The crate lines it was the first to reach (none the recorded run reached).
    pub new_lines: Vec<Line>,
    /// The comparison outcomes at crate lines it was the first to meet (none the recording's
    /// own calls, replayed, met).
    pub new_compares: Vec<Met>,
    /// The crate lines, reached before, on which it was the first to take a branch (an
    /// edge no call before took).
    pub new_branches: Vec<Line>,
    /// Which of `calls` added something (a line, an outcome, a comparison outcome, a branch).
    pub adds: Vec<usize>,
}

impl Kept {
    /// The object slots a `&mut self` call of the sequence changed, each with the place of
    /// its last change, in the order of those last changes (the last is the sequence's last
    /// change).
    pub fn changed_slots(
        &self,
        callables: &[Callable],
        space: &Space,
    ) -> Vec<((usize, u64), usize)> {
        let mut changed: Vec<((usize, u64), usize)> = Vec::new();
        for (at, &call) in self.calls.iter().enumerate() {
            let (f, digits) = space.decode(call);
            let c = &callables[f];
            if let Some(slot) = c.receiver_slot(&digits).filter(|_| c.mutates_receiver()) {
                changed.retain(|(s, _)| *s != slot);
                changed.push((slot, at));
            }
        }
        changed
    }
}

/// A panic (or a crash of the harness) on inputs the run never gave.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// The sequence up to and including the call that panicked.
    pub calls: Vec<u64>,
    /// What the calls before it did (how the reproducer binds what they made).
    pub outcomes: Vec<CallOutcome>,
    /// The callable that panicked (the last call), when known.
    pub callable: Option<usize>,
    pub message: String,
    /// How many sequences met it.
    pub times: u64,
}

/// What was seen so far.
#[derive(Debug, Default)]
pub struct Keeper {
    known: HashSet<(usize, String)>,
    /// Per callable, the one whose outcomes it shares (itself, but for `Display` with a format
    /// spec: `to_string` on the same object type, `formats.rs`); empty: each its own.
    outcomes_of: Vec<usize>,
    /// The callables that write a value as it is (a struct literal, a variant): what they
    /// give is what the test wrote, never a new outcome, and the lines and comparisons its
    /// formatting reaches are none of theirs.
    values: BTreeSet<usize>,
    recorded_panics: BTreeMap<usize, BTreeSet<String>>,
    pub kept: Vec<Kept>,
    pub findings: Vec<Finding>,
    /// The recorded calls the carved suite tests (`carve_generator::carved_calls`).
    pub carved: BTreeSet<u64>,
    /// The recording's own calls, replayed (`replayed`): where the search started.
    pub seeds: Vec<Vec<u64>>,
    /// Calls run (answered by the harness).
    pub calls_run: u64,
    /// Sequences the harness stopped before a prefix already dead (in an earlier batch's
    /// answers or this one's).
    pub stopped_dead: u64,
    /// The crate lines the harness's calls reach, when it was built with coverage.
    pub lines: Option<Lines>,
    /// The comparison outcomes they meet, when it was built to report them.
    pub compares: Option<Compares>,
}

impl Keeper {
    /// Starts from the outcomes the carved suite in `dir` checks (`carve_generator::carved_calls`:
    /// what the recording gave `callables` in the calls it has a test of; an outcome no carved
    /// test checks is still to be found, as smallvec's `IntoIter::size_hint`, called only inside
    /// `extend`, or its `eq_returns_true`, taken out by verification) and the panics the
    /// recording saw.
    pub fn new(trace: &Trace, (api, dir): (&CrateApi, &Path), callables: &[Callable]) -> Keeper {
        let mut keeper = Keeper {
            carved: carve_generator::carved_calls(trace, api, dir),
            values: (callables.iter().enumerate())
                .filter(|(_, c)| c.writes_value())
                .map(|(i, _)| i)
                .collect(),
            outcomes_of: shared_outcomes(callables),
            ..Keeper::default()
        };
        // A generic function explored once per instance has one path for them all.
        let mut index: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (i, c) in callables.iter().enumerate() {
            index.entry(c.path.as_str()).or_default().push(i);
        }
        for call in &trace.calls {
            let Some(f) = trace.function(call.function) else {
                continue;
            };
            let Some(all) = index.get(f.path.as_str()) else {
                continue;
            };
            for &i in all {
                let i = keeper.outcomes_of(i);
                match &call.outcome {
                    Outcome::Returned if keeper.carved.contains(&call.id.0) => {
                        let text = call.ret.as_ref().map_or("()".to_string(), debug_text);
                        keeper.known.insert((i, classify(&text)));
                    }
                    Outcome::Panicked { message } => {
                        let m = message.clone().unwrap_or_default();
                        keeper.recorded_panics.entry(i).or_default().insert(m);
                    }
                    _ => {}
                }
            }
        }
        keeper
    }

    /// The callable whose outcomes callable `f` shares.
    fn outcomes_of(&self, f: usize) -> usize {
        self.outcomes_of.get(f).copied().unwrap_or(f)
    }

    /// Takes in one sequence's answers; returns the length of its dead prefix, if any.
    pub fn observe(&mut self, space: &Space, seq: &[u64], result: &SeqResult) -> Option<usize> {
        self.calls_run += result.calls.len() as u64;
        let mut new = Vec::new();
        let mut new_lines = Vec::new();
        let mut new_compares = Vec::new();
        let mut new_branches = Vec::new();
        let mut adds = Vec::new();
        let mut last_new = None;
        let mut dead = None;
        for (k, outcome) in result.calls.iter().enumerate() {
            let (f, _) = space.decode(seq[k]);
            let ran = result.guards.iter().filter(|(at, _)| *at == k);
            // A value written as it is adds nothing: what crate code ran formatted it.
            let adds_nothing = self.values.contains(&f);
            if let Some(lines) = self.lines.as_mut().filter(|_| !adds_nothing) {
                let (mut reached, mut branches) = (Vec::new(), Vec::new());
                for (_, g) in ran {
                    branches.extend(lines.first_taken(g));
                    reached.extend(lines.first_reached(g));
                }
                // A call that panicked reached them, but is a finding, not a test.
                if !(reached.is_empty() && branches.is_empty())
                    && matches!(outcome, CallOutcome::Returned(_))
                {
                    new_lines.extend(reached);
                    new_branches.extend(branches);
                    last_new = Some(k);
                    adds.push(k);
                }
            }
            if let Some(compares) = self.compares.as_mut().filter(|_| !adds_nothing) {
                let ids = result.compares.iter().filter(|(at, _)| *at == k);
                let met: Vec<Met> = ids.flat_map(|(_, ids)| compares.first_met(ids)).collect();
                if !met.is_empty() && matches!(outcome, CallOutcome::Returned(_)) {
                    new_compares.extend(met);
                    last_new = Some(k);
                    adds.push(k);
                }
            }
            match outcome {
                CallOutcome::Returned(Some(_)) if adds_nothing => {}
                CallOutcome::Returned(Some(text)) => {
                    let goal = (self.outcomes_of(f), classify(with_buffers(text).0));
                    if !self.known.contains(&goal) && !new.contains(&goal) {
                        new.push(goal);
                        last_new = Some(k);
                        adds.push(k);
                    }
                }
                CallOutcome::Returned(None) => {}
                CallOutcome::Panicked(message) => {
                    let recorded = self.recorded_panics.get(&self.outcomes_of(f));
                    if !recorded.is_some_and(|r| r.contains(message)) {
                        self.found((&seq[..=k], &result.calls[..k]), Some(f), message);
                    }
                    dead = Some(k + 1);
                }
                CallOutcome::NoReceiver => dead = Some(k + 1),
            }
        }
        match &result.end {
            End::Redundant => dead = Some(result.calls.len()),
            End::Crashed(why) => self.found((seq, &result.calls), None, why),
            // The harness knew the prefix up to the call it did not run was dead: so does
            // the strategy now (else BE, resumed, would propose its siblings for ever).
            End::Skipped => {
                self.stopped_dead += 1;
                dead = Some(result.calls.len() + 1);
            }
            _ => {}
        }
        if let Some(last) = last_new {
            adds.dedup();
            self.known.extend(new.iter().cloned());
            self.kept.push(Kept {
                calls: seq[..=last].to_vec(),
                outcomes: result.calls[..=last].to_vec(),
                new,
                new_lines,
                new_compares,
                new_branches,
                adds,
            });
        }
        dead
    }

    /// Takes in the answers to one of the recording's own calls, replayed: what it reached,
    /// met and gave is where the search starts, not something it adds.
    pub fn replayed(&mut self, space: &Space, seq: &[u64], result: &SeqResult) {
        self.seeds.push(seq.to_vec());
        if let Some(lines) = &mut self.lines {
            for (_, guards) in &result.guards {
                lines.known_already(guards);
            }
        }
        if let Some(compares) = &mut self.compares {
            for (_, ids) in &result.compares {
                compares.known_already(ids);
            }
        }
        for (k, outcome) in result.calls.iter().enumerate() {
            if let CallOutcome::Returned(Some(text)) = outcome {
                let f = self.outcomes_of(space.decode(seq[k]).0);
                self.known.insert((f, classify(with_buffers(text).0)));
            }
        }
    }

    /// Numbers what was kept and found, and the seeds, in `new`, a space whose pools hold
    /// those of `old` at the same places.
    pub fn renumber(&mut self, old: &Space, new: &Space) {
        let calls = (self.kept.iter_mut().map(|k| &mut k.calls))
            .chain(self.findings.iter_mut().map(|f| &mut f.calls))
            .chain(self.seeds.iter_mut());
        for calls in calls {
            for c in calls.iter_mut() {
                let (f, digits) = old.decode(*c);
                *c = new.encode(f, &digits);
            }
        }
    }

    /// Watches another harness's coverage (its guards' `lines` and comparison sites
    /// `compares`), the lines and comparison outcomes known so far still known.
    pub fn replace_coverage(&mut self, (lines, compares): (Option<Lines>, Option<Compares>)) {
        self.lines = match (lines, self.lines.take()) {
            (Some(mut new), Some(old)) => {
                new.carry(old);
                Some(new)
            }
            (new, _) => new,
        };
        self.compares = match (compares, self.compares.take()) {
            (Some(mut new), Some(old)) => {
                new.carry(old);
                Some(new)
            }
            (new, _) => new,
        };
    }

    fn found(
        &mut self,
        (calls, outcomes): (&[u64], &[CallOutcome]),
        callable: Option<usize>,
        message: &str,
    ) {
        let key = without_digits(message);
        let same = |f: &&mut Finding| f.callable == callable && without_digits(&f.message) == key;
        if let Some(f) = self.findings.iter_mut().find(same) {
            f.times += 1;
            if calls.len() < f.calls.len() {
                f.calls = calls.to_vec();
                f.outcomes = outcomes.to_vec();
                f.message = message.to_string();
            }
            return;
        }
        self.findings.push(Finding {
            calls: calls.to_vec(),
            outcomes: outcomes.to_vec(),
            callable,
            message: message.to_string(),
            times: 1,
        });
    }
}

/// Findings that differ only in numbers (`index out of bounds: the len is 3 but the index is
/// 5`) are one.
fn without_digits(s: &str) -> String {
    s.chars().filter(|c| !c.is_ascii_digit()).collect()
}

/// A recorded value written roughly as its `Debug` (what `classify` needs: variants, types,
/// numbers, text).
pub fn debug_text(v: &Value) -> String {
    let short = |ty: &str| {
        let base = ty.split('<').next().unwrap_or(ty);
        base.rsplit("::").next().unwrap_or(base).to_string()
    };
    match v {
        Value::Unit => "()".to_string(),
        Value::Bool { value } => value.to_string(),
        Value::Int { value, .. } => value.to_string(),
        Value::Uint { value, .. } => value.to_string(),
        Value::Float { ty, bits } if ty == "f32" => format!("{:?}", f32::from_bits(*bits as u32)),
        Value::Float { bits, .. } => format!("{:?}", f64::from_bits(*bits)),
        Value::Char { value } => format!("{value:?}"),
        Value::Str { value, .. } => format!("{value:?}"),
        Value::Ref { target, .. } => debug_text(target),
        Value::Seq { elems, .. } if elems.is_empty() => "[]".to_string(),
        Value::Seq { .. } => "[..]".to_string(),
        Value::Tuple { .. } => "(..)".to_string(),
        Value::Struct { ty, .. } => format!("{} {{ .. }}", short(ty)),
        // `Cow`'s `Debug` is its content's.
        Value::Enum { ty, fields, .. }
            if ty.starts_with("alloc::borrow::Cow") && fields.len() == 1 =>
        {
            debug_text(&fields[0].value)
        }
        Value::Enum {
            variant, fields, ..
        } => match fields.as_slice() {
            [] => variant.clone(),
            [one] if one.name == "__0" => format!("{variant}({})", debug_text(&one.value)),
            _ if fields[0].name == "__0" => format!("{variant}(..)"),
            _ => format!("{variant} {{ .. }}"),
        },
        _ => "?".to_string(),
    }
}

/// The longest word taken as a number's unit (`MiB`, `ms`, `bytes`).
const MAX_UNIT: usize = 8;

/// Per callable, the one whose outcomes it shares: `Display` with a format spec shares
/// `to_string`'s on the same object type (one function, one set of outcomes: `{:>12}` giving
/// "0 B" is not a new outcome of `fmt` once `to_string` gave it); every other one its own.
fn shared_outcomes(callables: &[Callable]) -> Vec<usize> {
    (callables.iter().enumerate())
        .map(|(i, c)| {
            let receiver = c.receiver.map(|r| r.object);
            let plain = |(_, p): &(usize, &Callable)| {
                p.call == "to_string"
                    && p.path == c.path
                    && p.receiver.map(|r| r.object) == receiver
            };
            // A call taking an iterator that does not tell its length shares its twin's.
            let twin = |(_, p): &(usize, &Callable)| {
                (&p.path, &p.call, p.receiver) == (&c.path, &c.call, c.receiver)
                    && p.params
                        .iter()
                        .map(|p| &p.kind)
                        .eq(c.params.iter().map(|p| &p.kind))
            };
            let first = match c.is_format_spec() {
                true => callables.iter().enumerate().find(plain),
                false => callables.iter().enumerate().find(twin),
            };
            first.map_or(i, |(j, _)| j)
        })
        .collect()
}

/// The class of an outcome, from the result's `Debug` text: `true`/`false`, the sign of a
/// number (`-`, `0`, `+`, `NaN`...) and the unit a word after it names (`+ MiB..`), empty or
/// not for text and sequences, the variant (inside `Ok`, `Some` and `Err` too), an error's
/// kind, or its text when it is text.
pub fn classify(text: &str) -> String {
    let t = text.trim();
    if matches!(t, "true" | "false" | "()" | "None") {
        return t.to_string();
    }
    if let Ok(n) = t.parse::<f64>() {
        return if n.is_nan() {
            "NaN"
        } else if n.is_infinite() {
            if n > 0.0 {
                "+inf"
            } else {
                "-inf"
            }
        } else if n == 0.0 {
            "0"
        } else if n < 0.0 {
            "-"
        } else {
            "+"
        }
        .to_string();
    }
    // A value written from a number first ("9.5 MiB (10000000 bytes)"): that number's sign,
    // and the unit it is in when a word follows it (a quantity in KiB and one in MiB took
    // different paths to be written).
    let number: String = t
        .chars()
        .take_while(|c| c.is_ascii_digit() || matches!(c, '-' | '.'))
        .collect();
    if number.chars().any(|c| c.is_ascii_digit()) && number.len() < t.len() {
        let unit: String = (t[number.len()..].trim_start().chars())
            .take_while(|c| c.is_alphabetic())
            .collect();
        if (1..=MAX_UNIT).contains(&unit.chars().count()) {
            return format!("{} {unit}..", classify(&number));
        }
        return format!("{}..", classify(&number));
    }
    match t.chars().next() {
        Some('"') => return if t == "\"\"" { "\"\"" } else { "\"..\"" }.to_string(),
        Some('\'') => return "char".to_string(),
        Some('[') => return if t == "[]" { "[]" } else { "[..]" }.to_string(),
        Some('(') => return "(..)".to_string(),
        _ => {}
    }
    let ident: String = t
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    if ident.is_empty() {
        return "value".to_string();
    }
    let inner = t[ident.len()..]
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'));
    match (ident.as_str(), inner) {
        ("Ok" | "Some", Some(inner)) => format!("{ident}({})", classify(inner)),
        ("Err", Some(inner)) if inner.starts_with('"') => format!("Err({})", unquoted(inner)),
        ("Err", Some(inner)) => format!("Err({}{})", classify(inner), counted_fields(inner)),
        _ => ident,
    }
}

/// The integers an error variant reports (`InvalidHexCharacter { c: 'g', index: 1 }`, `At(0)`)
/// as zero, one or many (` { index: 1 }`, `(0)`): where in the input an error lies is part of
/// what it says (the first character, the second, one further on), and the value itself would
/// make every input an outcome of its own. Empty when it reports none.
fn counted_fields(variant: &str) -> String {
    let ident_len = variant
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(variant.len());
    let rest = variant[ident_len..].trim();
    let (named, inside) = if let Some(i) = rest.strip_prefix('{').and_then(|r| r.strip_suffix('}'))
    {
        (true, i)
    } else if let Some(i) = rest.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
        (false, i)
    } else {
        return String::new();
    };
    let counted: Vec<String> = top_level(inside)
        .into_iter()
        .filter_map(|field| {
            let (name, value) = match named {
                true => {
                    let (n, v) = field.split_once(':')?;
                    (Some(n.trim()), v.trim())
                }
                false => (None, field.trim()),
            };
            let n: i128 = value.parse().ok()?;
            let class = match n {
                0 => "0",
                1 => "1",
                n if n < 0 => "-",
                _ => "n",
            };
            Some(name.map_or(class.to_string(), |name| format!("{name}: {class}")))
        })
        .collect();
    match (counted.is_empty(), named) {
        (true, _) => String::new(),
        (false, true) => format!(" {{ {} }}", counted.join(", ")),
        (false, false) => format!("({})", counted.join(", ")),
    }
}

/// `text` split at its top-level commas (not those inside brackets, quotes or char literals).
fn top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start, mut quoted, mut escaped) = (0i32, 0, None, false);
    for (i, c) in text.char_indices() {
        if let Some(q) = quoted {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, c) if c == q => quoted = None,
                _ => {}
            }
            continue;
        }
        match c {
            '"' | '\'' => quoted = Some(c),
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// An error's text without the values it quotes (`couldn't parse \"e\" into…`: the
/// input echoed back is not what kind of error it is). `text` is the `Debug` of the message;
/// a quoted value inside the message runs to its closing quote, a backslash escaping the
/// next character (an input written with `{:?}` keeps its own quotes escaped).
fn unquoted(text: &str) -> String {
    // The message as written, read as the Rust literal its `Debug` is (as the generator
    // reads printed texts).
    let Ok(message) = syn::parse_str::<syn::LitStr>(text).map(|l| l.value()) else {
        return text.to_string();
    };
    let mut out = String::new();
    let mut chars = message.chars();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '"' {
            while let Some(q) = chars.next() {
                match q {
                    '\\' => {
                        chars.next();
                    }
                    '"' => break,
                    _ => {}
                }
            }
            out.push_str("..\"");
        }
    }
    format!("{out:?}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::run::{End, Final};

    #[test]
    fn a_twin_taking_an_iterator_that_hides_its_length_shares_its_outcomes() {
        use crate::api::{Param, Pass, PoolKind};
        // `Gauge::fill_from(&mut self, xs: Vec<u8>)`, taken as `impl IntoIterator`.
        let fill = Callable {
            params: vec![Param {
                name: "xs".into(),
                kind: PoolKind::Slice("u8".into()),
                pass: Pass::Owned,
            }],
            ..crate::testdata::change("fill_from")
        };
        assert!(fill.unsized_twin(&[]).is_none());
        let twin = fill
            .unsized_twin(&[0])
            .expect("a list whose length it hides");
        assert_eq!(twin.params[0].pass, Pass::Unsized);
        let ex = crate::testdata::gauge_api(vec![fill, twin]);
        // new (0), fill_from (1), its twin (2): one function's outcomes.
        assert_eq!(shared_outcomes(&ex.callables), vec![0, 1, 1]);
    }

    #[test]
    fn outcome_classes_tell_variants_signs_emptiness_and_error_kinds() {
        let cases = [
            ("5", "+"),
            ("-3", "-"),
            ("0", "0"),
            ("0.0", "0"),
            ("NaN", "NaN"),
            ("true", "true"),
            ("\"\"", "\"\""),
            ("\"abc\"", "\"..\""),
            ("Ok(3)", "Ok(+)"),
            ("Ok(0)", "Ok(0)"),
            ("Err(Empty)", "Err(Empty)"),
            ("Err(TooHigh(11))", "Err(TooHigh(n))"),
            ("Err(TooHigh(1))", "Err(TooHigh(1))"),
            // Where an error lies: the first character, the second, one further on.
            (
                "Err(InvalidHexCharacter { c: 'g', index: 0 })",
                "Err(InvalidHexCharacter { index: 0 })",
            ),
            (
                "Err(InvalidHexCharacter { c: ',', index: 7 })",
                "Err(InvalidHexCharacter { index: n })",
            ),
            ("Err(OddLength)", "Err(OddLength)"),
            ("Err(NotANumber(\"x\"))", "Err(NotANumber)"),
            ("Err(\"too big\")", "Err(\"too big\")"),
            (
                "Err(\"couldn't parse \\\"e\\\" into a size\")",
                "Err(\"couldn't parse \\\"..\\\" into a size\")",
            ),
            // The input, quoted inside the text, held quotes of its own.
            (
                r#"Err("couldn't parse \"  \\\"521TB\\\".\" into a size")"#,
                r#"Err("couldn't parse \"..\" into a size")"#,
            ),
            (
                r#"Err("bad \\n in \"a\\\"b\"")"#,
                r#"Err("bad \\n in \"..\"")"#,
            ),
            ("Ok(9.5 MiB (10000000 bytes))", "Ok(+ MiB..)"),
            ("Ok(1.0 KiB (1024 bytes))", "Ok(+ KiB..)"),
            ("-3 dB", "- dB.."),
            ("12:30", "+.."),
            ("3 overwhelmingly", "+.."),
            ("Gauge { level: 0, max: 10 }", "Gauge"),
            ("Some([])", "Some([])"),
            ("None", "None"),
        ];
        for (text, class) in cases {
            assert_eq!(classify(text), class, "{text}");
        }
    }

    #[test]
    fn recorded_values_classify_as_the_harness_sees_them() {
        use carve_storage::Field;
        let err = Value::Enum {
            ty: "core::result::Result<u8, bounds::LevelError>".into(),
            variant: "Err".into(),
            fields: vec![Field {
                name: "__0".into(),
                value: Value::Enum {
                    ty: "bounds::LevelError".into(),
                    variant: "TooHigh".into(),
                    fields: vec![Field {
                        name: "__0".into(),
                        value: Value::Uint {
                            ty: "u8".into(),
                            value: 11,
                        },
                    }],
                },
            }],
        };
        assert_eq!(classify(&debug_text(&err)), classify("Err(TooHigh(11))"));
    }

    fn space() -> Space {
        Space::new(vec![vec![4], vec![4]]).unwrap()
    }

    fn returned(s: &str) -> CallOutcome {
        CallOutcome::Returned(Some(s.to_string()))
    }

    #[test]
    fn a_sequence_is_kept_up_to_its_last_new_outcome_and_only_once() {
        let mut k = Keeper::default();
        let r = SeqResult {
            calls: vec![returned("1"), returned("2"), returned("0"), returned("3")],
            end: End::Done,
            guards: Vec::new(),
            compares: Vec::new(),
            states: Final::default(),
        };
        assert_eq!(k.observe(&space(), &[0, 1, 2, 3], &r), None);
        assert_eq!(k.kept.len(), 1);
        assert_eq!(k.kept[0].calls, [0, 1, 2], "the last call adds nothing");
        assert_eq!(k.kept[0].new, [(0, "+".to_string()), (0, "0".to_string())]);
        k.observe(&space(), &[0, 1, 2, 3], &r);
        assert_eq!(k.kept.len(), 1, "nothing new the second time");
        assert_eq!(k.calls_run, 8);
    }

    #[test]
    fn an_unrecorded_panic_is_a_finding_with_its_shortest_reproducer_never_a_test() {
        let mut k = Keeper::default();
        let long = SeqResult {
            calls: vec![
                CallOutcome::Returned(None),
                CallOutcome::Panicked("attempt to divide by zero".into()),
            ],
            end: End::Panicked,
            guards: Vec::new(),
            compares: Vec::new(),
            states: Final::default(),
        };
        assert_eq!(k.observe(&space(), &[0, 5, 1], &long), Some(2));
        let short = SeqResult {
            calls: vec![CallOutcome::Panicked("attempt to divide by zero".into())],
            end: End::Panicked,
            guards: Vec::new(),
            compares: Vec::new(),
            states: Final::default(),
        };
        k.observe(&space(), &[6], &short);
        assert!(k.kept.is_empty());
        assert_eq!(k.findings.len(), 1);
        assert_eq!(k.findings[0].calls, [6]);
        assert_eq!(k.findings[0].callable, Some(1));
        assert_eq!(k.findings[0].times, 2);
    }

    #[test]
    fn a_panic_the_recording_had_is_no_finding() {
        let mut k = Keeper::default();
        k.recorded_panics
            .entry(1)
            .or_default()
            .insert("boom".to_string());
        let r = SeqResult {
            calls: vec![CallOutcome::Panicked("boom".into())],
            end: End::Panicked,
            guards: Vec::new(),
            compares: Vec::new(),
            states: Final::default(),
        };
        assert_eq!(k.observe(&space(), &[5], &r), Some(1));
        assert!(k.findings.is_empty());
    }

    #[test]
    fn a_redundant_state_ends_its_prefix() {
        let mut k = Keeper::default();
        let r = SeqResult {
            calls: vec![returned("1")],
            end: End::Redundant,
            guards: Vec::new(),
            compares: Vec::new(),
            states: Final::default(),
        };
        assert_eq!(k.observe(&space(), &[0, 1], &r), Some(1));
    }

    #[test]
    fn a_sequence_reaching_a_line_the_run_never_reached_is_kept_up_to_that_call() {
        let dir = std::path::Path::new("/c");
        let placed = vec![
            Some(("/c/src/lib.rs".to_string(), 3)),
            Some(("/c/src/lib.rs".to_string(), 8)),
        ];
        let run = crate::RunLines {
            reached: [("/c/src/lib.rs".to_string(), 3)].into_iter().collect(),
            with_code: Default::default(),
            ..Default::default()
        };
        let mut k = Keeper {
            lines: Some(Lines::new(placed, dir, &run)),
            ..Keeper::default()
        };
        // Known outcomes: only the line of guard 2, run by the second call, is new.
        k.known.insert((0, "+".into()));
        k.known.insert((1, "+".into()));
        let r = SeqResult {
            calls: vec![returned("1"), returned("2"), returned("3")],
            end: End::Done,
            guards: vec![(0, vec![1]), (1, vec![2])],
            compares: Vec::new(),
            states: Final::default(),
        };
        assert_eq!(k.observe(&space(), &[0, 4, 0], &r), None);
        assert_eq!(k.kept.len(), 1);
        assert_eq!(k.kept[0].calls, vec![0, 4]);
        assert_eq!(k.kept[0].new_lines, vec![("/c/src/lib.rs".to_string(), 8)]);
        assert!(k.kept[0].new.is_empty());
        // The same line again adds nothing; one reached by a call that panicked is no test.
        let again = SeqResult {
            calls: vec![returned("1")],
            end: End::Done,
            guards: vec![(0, vec![2])],
            compares: Vec::new(),
            states: Final::default(),
        };
        assert_eq!(k.observe(&space(), &[4], &again), None);
        assert_eq!(k.kept.len(), 1);
        // A value written as it is (callable 0 here) adds nothing, even where formatting it
        // reached a new line and gave a new class.
        k.values.insert(0);
        let value = SeqResult {
            calls: vec![returned("Options(ENABLE_TABLES)")],
            end: End::Done,
            guards: vec![(0, vec![0])],
            compares: Vec::new(),
            states: Final::default(),
        };
        let placed_again = vec![Some(("/c/src/lib.rs".to_string(), 9))];
        k.lines = Some(Lines::new(placed_again, dir, &run));
        assert_eq!(k.observe(&space(), &[0], &value), None);
        assert_eq!(k.kept.len(), 1);
    }

    #[test]
    fn a_comparison_outcome_no_call_met_keeps_its_call_and_a_replayed_one_does_not() {
        use crate::compares::{Compares, Side};
        let mut k = Keeper::default();
        // Comparison site 0x40 is the crate's line 3.
        let place = |addr: u64| (addr == 0x40).then(|| ("src/lib.rs".to_string(), 3));
        let dir = std::path::Path::new("/c");
        k.compares = Some(Compares::new(Box::new(place), dir, BTreeSet::new()));
        let (below, equal) = (0x40 << 2, 0x40 << 2 | 1);
        let answer = |ids: Vec<u64>| SeqResult {
            calls: vec![returned("1")],
            end: End::Done,
            guards: Vec::new(),
            compares: vec![(0, ids)],
            states: Final::default(),
        };
        // The recording's own call met it below: the search starts there.
        k.replayed(&space(), &[0], &answer(vec![below]));
        assert!(k.known.contains(&(0, "+".to_string())));
        k.observe(&space(), &[1], &answer(vec![below]));
        assert!(k.kept.is_empty(), "{:?}", k.kept);
        k.observe(&space(), &[2], &answer(vec![below, equal]));
        assert_eq!(k.kept.len(), 1);
        let line = ("/c/src/lib.rs".to_string(), 3);
        assert_eq!(k.kept[0].new_compares, vec![(line, Side::Equal)]);
        k.observe(&space(), &[3], &answer(vec![equal]));
        assert_eq!(k.kept.len(), 1, "met once");
    }

    #[test]
    fn a_grown_round_renumbers_what_was_kept_and_still_knows_what_was_met() {
        use crate::compares::{Compares, Side};
        let mut k = Keeper::default();
        let site_at =
            |site: u64| move |addr: u64| (addr == site).then(|| ("src/lib.rs".to_string(), 3));
        let dir = std::path::Path::new("/c");
        k.compares = Some(Compares::new(Box::new(site_at(0x40)), dir, BTreeSet::new()));
        let answer = |site: u64| SeqResult {
            calls: vec![returned("1")],
            end: End::Done,
            guards: Vec::new(),
            compares: vec![(0, vec![site << 2 | 1])],
            states: Final::default(),
        };
        // Callable 1's pool of 4 grows to 6: its call 1 (index 1) is call 7 (6 + 1) now.
        let (old, new) = (space(), Space::new(vec![vec![6], vec![6]]).unwrap());
        k.observe(&old, &[5], &answer(0x40));
        assert_eq!(k.kept.len(), 1);
        k.renumber(&old, &new);
        assert_eq!(k.kept[0].calls, [7]);
        assert_eq!(new.decode(7), old.decode(5));
        // The next harness has the comparison at another site: met there, it is not new.
        let elsewhere = Compares::new(Box::new(site_at(0x80)), dir, BTreeSet::new());
        k.replace_coverage((None, Some(elsewhere)));
        k.observe(&new, &[8], &answer(0x80));
        assert_eq!(k.kept.len(), 1, "{:?}", k.kept);
        let met = &k.compares.as_ref().unwrap().met;
        assert_eq!(met.len(), 1);
        assert!(met.contains(&(("/c/src/lib.rs".to_string(), 3), Side::Equal)));
    }
}
