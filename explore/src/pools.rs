//! Value pools (seed 004's test context): per kind of value, the distinct values the run's
//! public calls took and returned, plus the neighbours that find boundaries. Integers: 0, ±1,
//! each recorded value ±1, the type's MIN and MAX; text and slices: empty, each recorded one,
//! one element shorter and one longer. Pools are plain data; the harness and the tests write
//! them as literals (`literal`).

use std::collections::{BTreeMap, BTreeSet};

use carve_storage::{Trace, Value};
use serde::Serialize;

use crate::api::PoolKind;

/// At most this many values per pool: the boundaries first, then the recorded values and
/// their neighbours in the order the run met them.
pub const MAX_POOL: usize = 64;

/// One pooled value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Lit {
    Int(i128),
    Uint(u128),
    Bool(bool),
    Char(char),
    /// An `f64` (an `f32` widened).
    Float(f64),
    Str(String),
    Seq(Vec<Lit>),
    /// `None`, or `Some` of a value of the inner pool.
    Opt(Option<Box<Lit>>),
    /// Source code as it is: a closure (`|x| *x % 2 == 0`).
    Code(String),
    /// A range: `start..end`, `start..=end` (`inclusive`), either end open (`2..`, `..`).
    Range {
        start: Option<Box<Lit>>,
        end: Option<Box<Lit>>,
        inclusive: bool,
    },
}

/// The pools, by kind.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Pools {
    pub by_kind: BTreeMap<PoolKind, Vec<Lit>>,
}

impl Pools {
    pub fn get(&self, kind: &PoolKind) -> &[Lit] {
        self.by_kind.get(kind).map_or(&[], Vec::as_slice)
    }

    /// The pools with the values the crate's literals give (`dictionary.rs`) added to the
    /// text, integer and `char` pools, at most [`MAX_SEEDED`] each; a full pool makes room at
    /// its end (the recorded values its boundaries did not already hold).
    pub fn seeded(mut self, dictionary: &crate::dictionary::Dictionary) -> Pools {
        for (kind, pool) in &mut self.by_kind {
            let mut seeds = match kind {
                PoolKind::Str => dictionary.texts(pool),
                PoolKind::Scalar(ty) if int_range(ty).is_some() => dictionary.ints_of(ty),
                PoolKind::Scalar(ty) if ty == "char" => dictionary.chars(),
                _ => continue,
            };
            seeds.retain(|s| !pool.contains(s));
            seeds.dedup();
            seeds.truncate(MAX_SEEDED);
            pool.truncate(MAX_POOL - seeds.len());
            pool.extend(seeds);
        }
        // An option's pool: `None`, then `Some` of each value of its inner pool.
        let inner: Vec<(PoolKind, Vec<Lit>)> = self
            .by_kind
            .keys()
            .filter_map(|k| match k {
                PoolKind::Option(inner) => Some((k.clone(), self.get(inner).to_vec())),
                _ => None,
            })
            .collect();
        for (kind, values) in inner {
            let pool = std::iter::once(Lit::Opt(None))
                .chain(values.into_iter().map(|v| Lit::Opt(Some(Box::new(v)))))
                .take(MAX_POOL)
                .collect();
            self.by_kind.insert(kind, pool);
        }
        let ranges: Vec<(PoolKind, Vec<Lit>)> = (self.by_kind.keys())
            .filter_map(|k| match k {
                PoolKind::Range(int) => Some((
                    k.clone(),
                    ranges_of(self.get(&PoolKind::Scalar(int.clone()))),
                )),
                _ => None,
            })
            .collect();
        self.by_kind.extend(ranges);
        let closures: Vec<(PoolKind, Vec<Lit>)> = (self.by_kind.keys())
            .filter(|k| matches!(k, PoolKind::Closure(_)))
            .map(|k| (k.clone(), crate::closures::closures(k, &self)))
            .collect();
        self.by_kind.extend(closures);
        if let Some(lists) = self.by_kind.get(&PoolKind::Texts) {
            let mut lists = lists.clone();
            for l in texts_of(self.get(&PoolKind::Str)) {
                if !lists.contains(&l) {
                    lists.push(l);
                }
            }
            lists.truncate(MAX_POOL);
            self.by_kind.insert(PoolKind::Texts, lists);
        }
        self
    }

    /// The pools of a later round, once a round has run every sequence of its space or
    /// levelled off with budget left. The text, integer and `char` pools take what
    /// [`Self::seeded`]'s bounds left out of `dictionary` (every word, integer and
    /// character, each three characters the files hold in a row); once they hold it all, the
    /// text pool takes texts of `kept` (those kept sequences took) edited at random (from
    /// `seed` and the pool's size): one of the dictionary's characters put in, one taken
    /// out, another kept text put after; and, in turn with those, each kept text with each
    /// character after and before it, those compared first first. Before all those, what
    /// the crate compared the kept sequences' values with (`suggested`, `operands.rs`): the
    /// integer and `char` pools take its values, the text pool its kept texts with a
    /// character replaced. As a fuzzer edits the
    /// inputs that found new coverage, a text that reached something grows a character a
    /// round (an emoji, then its modifier, then a joiner). New values go after those a pool
    /// holds, which keep their places (a kept sequence's indices stay valid), at most
    /// [`MAX_GROWN`] a round and [`MAX_GROWN_POOL`] in all. Pools made from others (an
    /// option's, a list's, a range's) stay as they are. `None` when no pool grows.
    pub fn grown(
        &self,
        dictionary: &crate::dictionary::Dictionary,
        (kept, suggested): (&[String], &crate::operands::Suggested),
        seed: u64,
    ) -> Option<Pools> {
        let mut out = self.clone();
        let suggests = out.take_suggested(suggested);
        if out.take_dictionary_rest(dictionary) {
            return Some(out);
        }
        let edited = out.take_kept_edited(kept, &dictionary.chars, seed);
        (suggests || edited).then_some(out)
    }

    /// What `suggested` holds into the pools it names; whether any was new.
    fn take_suggested(&mut self, suggested: &crate::operands::Suggested) -> bool {
        let texts = suggested.texts.iter().cloned().map(Lit::Str);
        let by_kind = (suggested.values.iter()).map(|(k, v)| (k, v.clone()));
        let mut grew = false;
        for (kind, more) in std::iter::once((&PoolKind::Str, texts.collect())).chain(by_kind) {
            if let Some(pool) = self.by_kind.get_mut(kind) {
                grew |= append_new(pool, more);
            }
        }
        grew
    }

    /// The rest of `dictionary` into the text, integer and `char` pools; whether any was new.
    fn take_dictionary_rest(&mut self, dictionary: &crate::dictionary::Dictionary) -> bool {
        let mut grew = false;
        for (kind, pool) in &mut self.by_kind {
            let more = match kind {
                PoolKind::Str => dictionary.grown_texts(pool),
                PoolKind::Scalar(ty) if int_range(ty).is_some() => dictionary.ints_of(ty),
                PoolKind::Scalar(ty) if ty == "char" => dictionary.chars(),
                _ => continue,
            };
            grew |= append_new(pool, more);
        }
        grew
    }

    /// Texts of `kept` edited (see [`Self::grown`]) into the text pool; whether any was new.
    fn take_kept_edited(&mut self, kept: &[String], chars: &[char], seed: u64) -> bool {
        let Some(texts) = self.by_kind.get_mut(&PoolKind::Str) else {
            return false;
        };
        if kept.is_empty() {
            return false;
        }
        let mut have = texts_in(texts);
        // Those not in the pool yet: a later round goes on where this one stopped.
        let around: Vec<String> = (chars.iter())
            .flat_map(|c| {
                kept.iter()
                    .flat_map(move |t| [format!("{t}{c}"), format!("{c}{t}")])
            })
            .filter(|t| !have.contains(t))
            .take(2 * MAX_GROWN)
            .collect();
        let mut rng = crate::strategy::Rng::new(seed ^ texts.len() as u64);
        let edits: Vec<String> = (0..2 * MAX_GROWN)
            .map(|_| edited(&mut rng, kept, chars))
            .collect();
        let more = alternating(edits, around)
            .into_iter()
            .map(Lit::Str)
            .collect();
        append_new_knowing(texts, &mut have, more)
    }
}

/// The texts `pool` holds.
fn texts_in(pool: &[Lit]) -> std::collections::HashSet<String> {
    (pool.iter())
        .filter_map(|l| match l {
            Lit::Str(s) => Some(s.clone()),
            _ => None,
        })
        .collect()
}

/// `a[0], b[0], a[1], b[1]…`, the longer one's rest at the end.
pub(crate) fn alternating<T>(a: Vec<T>, b: Vec<T>) -> Vec<T> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut a, mut b) = (a.into_iter(), b.into_iter());
    loop {
        match (a.next(), b.next()) {
            (None, None) => return out,
            (x, y) => out.extend(x.into_iter().chain(y)),
        }
    }
}

/// One text of `kept` edited at random: one of `chars` put at a place of it (its start and
/// end among them), one of its characters taken out, or another kept text put after it.
fn edited(rng: &mut crate::strategy::Rng, kept: &[String], chars: &[char]) -> String {
    let pick = |rng: &mut crate::strategy::Rng| &kept[rng.below(kept.len() as u64) as usize];
    let t: Vec<char> = pick(rng).chars().collect();
    match rng.below(4) {
        // Insertions twice as often: a character is what the crate compares.
        0 | 1 if !chars.is_empty() => {
            let mut t = t;
            let c = chars[rng.below(chars.len() as u64) as usize];
            t.insert(rng.below(t.len() as u64 + 1) as usize, c);
            t.into_iter().collect()
        }
        2 if t.len() >= 2 => {
            let mut t = t;
            t.remove(rng.below(t.len() as u64) as usize);
            t.into_iter().collect()
        }
        _ => t.into_iter().chain(pick(rng).chars()).collect(),
    }
}

/// At most this many values join a pool in one round ([`Pools::grown`]).
pub const MAX_GROWN: usize = 2048;
/// At most this many values in a grown pool.
pub const MAX_GROWN_POOL: usize = 16_384;

/// Puts the values of `more` that `pool` does not hold at its end, within [`MAX_GROWN`] and
/// [`MAX_GROWN_POOL`]; whether any was.
fn append_new(pool: &mut Vec<Lit>, more: Vec<Lit>) -> bool {
    let mut texts = texts_in(pool);
    append_new_knowing(pool, &mut texts, more)
}

/// [`append_new`], `texts` being the texts `pool` holds (kept up to date).
fn append_new_knowing(
    pool: &mut Vec<Lit>,
    texts: &mut std::collections::HashSet<String>,
    more: Vec<Lit>,
) -> bool {
    let limit = (pool.len() + MAX_GROWN).min(MAX_GROWN_POOL);
    let before = pool.len();
    for v in more {
        if pool.len() >= limit {
            break;
        }
        let new = match &v {
            Lit::Str(s) => texts.insert(s.clone()),
            v => !pool.contains(v),
        };
        if new {
            pool.push(v);
        }
    }
    pool.len() > before
}

/// The lists of texts made from the text pool `texts`: the empty list, each text alone, then
/// each two and each three side by side in the pool (a word list's joints: an empty word
/// between two, a quote after a space), at most [`MAX_POOL`].
fn texts_of(texts: &[Lit]) -> Vec<Lit> {
    let third = MAX_POOL / 3;
    std::iter::once(Vec::new())
        .chain(texts.iter().take(third).map(|t| vec![t.clone()]))
        .chain(texts.windows(2).take(third).map(<[Lit]>::to_vec))
        .chain(texts.windows(3).map(<[Lit]>::to_vec))
        .take(MAX_POOL)
        .map(Lit::Seq)
        .collect()
}

/// The ranges made from an integer pool `ints`: the whole range, then over its smallest
/// non-negative values (0, 1, the recorded ones…), each open at one end (`a..`, `..a`,
/// `..=a`) and each two as `a..b` and `a..=b` (`a <= b`, an empty `a..a` among them), at most
/// [`MAX_POOL`]; then the largest value, a range no collection holds.
fn ranges_of(ints: &[Lit]) -> Vec<Lit> {
    let mut values: Vec<&Lit> = ints
        .iter()
        .filter(|l| int_value(l).is_some_and(|v| v >= 0))
        .collect();
    values.sort_by_key(|l| int_value(l));
    let largest = values.pop();
    values.truncate(6);
    let range = |start: Option<&Lit>, end: Option<&Lit>, inclusive: bool| Lit::Range {
        start: start.map(|l| Box::new(l.clone())),
        end: end.map(|l| Box::new(l.clone())),
        inclusive,
    };
    let mut out = vec![range(None, None, false)];
    for &a in &values {
        out.push(range(Some(a), None, false));
        out.push(range(None, Some(a), false));
        out.push(range(None, Some(a), true));
    }
    for (i, &a) in values.iter().enumerate() {
        for &b in &values[i..] {
            out.push(range(Some(a), Some(b), false));
            out.push(range(Some(a), Some(b), true));
        }
    }
    out.truncate(MAX_POOL - 1);
    out.extend(largest.map(|m| range(Some(m), None, false)));
    out
}

/// At most this many values of a pool come from the crate's literals.
pub const MAX_SEEDED: usize = 40;

/// The pools of `kinds`, from every value the calls of `functions` (recorded paths) took and
/// returned in `trace`, nested values included.
pub fn from_trace(trace: &Trace, functions: &BTreeSet<String>, kinds: &[PoolKind]) -> Pools {
    let wanted: BTreeSet<_> = trace
        .functions
        .iter()
        .filter(|f| functions.contains(&f.path))
        .map(|f| f.id)
        .collect();
    let values = trace
        .calls
        .iter()
        .filter(|c| wanted.contains(&c.function))
        .flat_map(|c| c.args.iter().map(|a| &a.value).chain(c.ret.iter()));
    from_values(values, kinds)
}

/// The pools of `kinds` from `values` (nested values included) and their neighbours.
pub fn from_values<'v>(values: impl Iterator<Item = &'v Value>, kinds: &[PoolKind]) -> Pools {
    let mut recorded: BTreeMap<PoolKind, Vec<Lit>> = BTreeMap::new();
    for v in values {
        collect(v, &mut recorded);
    }
    let by_kind = kinds
        .iter()
        .map(|k| {
            let seen = recorded.get(k).map_or(&[][..], Vec::as_slice);
            (k.clone(), with_neighbours(k, seen))
        })
        .collect();
    Pools { by_kind }
}

/// Where recorded value `v` (a value of `kind` itself, not one inside it) is in `pools`.
pub fn index_of(pools: &Pools, kind: &PoolKind, v: &Value) -> Option<usize> {
    let v = match v {
        Value::Ref { target, .. } => target,
        v => v,
    };
    let mut found = BTreeMap::new();
    collect(v, &mut found);
    let lit = found.get(kind)?.first()?;
    let nested = matches!(
        v,
        Value::Struct { .. } | Value::Enum { .. } | Value::Tuple { .. }
    ) && !matches!(kind, PoolKind::NonZero(_));
    if nested {
        return None;
    }
    pools.get(kind).iter().position(|l| l == lit)
}

/// Adds the poolable values inside `v` to `out`.
fn collect(v: &Value, out: &mut BTreeMap<PoolKind, Vec<Lit>>) {
    let mut add = |k: PoolKind, l: Lit| {
        let pool = out.entry(k).or_default();
        if !pool.contains(&l) {
            pool.push(l);
        }
    };
    match v {
        Value::Int { ty, value } if is_scalar(ty) => add(scalar(ty), Lit::Int(*value)),
        Value::Uint { ty, value } if is_scalar(ty) => add(scalar(ty), Lit::Uint(*value)),
        Value::Bool { value } => add(scalar("bool"), Lit::Bool(*value)),
        Value::Char { value } => add(scalar("char"), Lit::Char(*value)),
        Value::Float { ty, bits } => {
            let f = if ty == "f32" {
                f64::from(f32::from_bits(*bits as u32))
            } else {
                f64::from_bits(*bits)
            };
            add(scalar(ty), Lit::Float(f));
        }
        Value::Str {
            value,
            truncated: false,
            ..
        } => add(PoolKind::Str, Lit::Str(value.clone())),
        Value::Seq {
            elems,
            truncated: false,
            ..
        } => {
            if let Some((ty, lits)) = integer_elems(elems) {
                add(PoolKind::Slice(ty), Lit::Seq(lits));
            }
            let texts: Option<Vec<Lit>> = (elems.iter())
                .map(|e| match e {
                    Value::Str {
                        value,
                        truncated: false,
                        ..
                    } => Some(Lit::Str(value.clone())),
                    _ => None,
                })
                .collect();
            if let Some(texts) = texts.filter(|t| !t.is_empty()) {
                add(PoolKind::Texts, Lit::Seq(texts));
            }
            for e in elems {
                collect(e, out);
            }
        }
        Value::Ref { target, .. } => collect(target, out),
        Value::Struct { ty, fields } if ty.starts_with("core::num::nonzero::NonZero<") => {
            if let Some((int, lit)) = fields.first().and_then(|f| innermost_integer(&f.value)) {
                add(PoolKind::NonZero(int), lit);
            }
        }
        Value::Struct { fields, .. } | Value::Enum { fields, .. } => {
            for f in fields {
                collect(&f.value, out);
            }
        }
        Value::Tuple { elems, .. } => {
            for e in elems {
                collect(e, out);
            }
        }
        _ => {}
    }
}

/// The integer inside a value that wraps one (`NonZero<usize>(NonZeroUsizeInner(8))`).
fn innermost_integer(v: &Value) -> Option<(String, Lit)> {
    match v {
        Value::Uint { ty, value } => Some((ty.clone(), Lit::Uint(*value))),
        Value::Int { ty, value } => Some((ty.clone(), Lit::Int(*value))),
        Value::Struct { fields, .. } => innermost_integer(&fields.first()?.value),
        _ => None,
    }
}

fn is_scalar(ty: &str) -> bool {
    carve_generator::Prim::from_name(ty).is_some()
}

fn scalar(ty: &str) -> PoolKind {
    PoolKind::Scalar(ty.to_string())
}

/// The elements of a sequence of integers of one type, as literals.
fn integer_elems(elems: &[Value]) -> Option<(String, Vec<Lit>)> {
    let mut ty = None;
    let mut lits = Vec::new();
    for e in elems {
        let (t, l) = match e {
            Value::Int { ty, value } => (ty, Lit::Int(*value)),
            Value::Uint { ty, value } => (ty, Lit::Uint(*value)),
            _ => return None,
        };
        if ty.get_or_insert(t) != &t {
            return None;
        }
        lits.push(l);
    }
    ty.map(|t| (t.clone(), lits))
}

/// `(min, max)` of an integer type, `isize`/`usize` as 64-bit (the recorder's targets).
pub fn int_range(ty: &str) -> Option<(i128, u128)> {
    Some(match ty {
        "i8" => (i8::MIN.into(), i8::MAX as u128),
        "i16" => (i16::MIN.into(), i16::MAX as u128),
        "i32" => (i32::MIN.into(), i32::MAX as u128),
        "i64" | "isize" => (i64::MIN.into(), i64::MAX as u128),
        "i128" => (i128::MIN, i128::MAX as u128),
        "u8" => (0, u8::MAX.into()),
        "u16" => (0, u16::MAX.into()),
        "u32" => (0, u32::MAX.into()),
        "u64" | "usize" => (0, u64::MAX.into()),
        "u128" => (0, u128::MAX),
        _ => return None,
    })
}

/// An integer as the literal kind its type takes, when it is in the type's range.
pub(crate) fn int_lit(ty: &str, v: i128) -> Option<Lit> {
    let (min, max) = int_range(ty)?;
    if v < min || (v >= 0 && v as u128 > max) {
        return None;
    }
    Some(if ty.starts_with('u') {
        Lit::Uint(v as u128)
    } else {
        Lit::Int(v)
    })
}

/// The start of a pool made from another once that is seeded (`Pools::seeded`): an option's
/// `None` (then `Some` of its inner pool's values), the whole range `..` (then ranges of its
/// integers), the empty list of texts and the `recorded` ones (then lists of the text pool's),
/// no closure (then those `closures.rs` writes).
fn made_later(kind: &PoolKind, recorded: &[Lit]) -> Vec<Lit> {
    match kind {
        PoolKind::Option(_) => vec![Lit::Opt(None)],
        PoolKind::Closure(_) => Vec::new(),
        PoolKind::Range(_) => vec![Lit::Range {
            start: None,
            end: None,
            inclusive: false,
        }],
        _ => std::iter::once(Lit::Seq(Vec::new()))
            .chain(recorded.iter().cloned())
            .collect(),
    }
}

/// The pool of `kind`: boundaries and neighbours of the `recorded` values, deduplicated, at
/// most [`MAX_POOL`].
pub fn with_neighbours(kind: &PoolKind, recorded: &[Lit]) -> Vec<Lit> {
    let mut out: Vec<Lit> = Vec::new();
    let mut push = |l: Lit| {
        if !out.contains(&l) {
            out.push(l);
        }
    };
    match kind {
        PoolKind::Scalar(ty) if int_range(ty).is_some() => {
            let (min, max) = int_range(ty).unwrap_or_default();
            let min_lit = if ty.starts_with('u') {
                Lit::Uint(0)
            } else {
                Lit::Int(min)
            };
            let max_lit = if ty.starts_with('u') {
                Lit::Uint(max)
            } else {
                Lit::Int(max as i128)
            };
            for lit in [0, 1, -1].into_iter().filter_map(|v| int_lit(ty, v)) {
                push(lit);
            }
            push(min_lit);
            push(max_lit);
            for r in recorded {
                let Some(v) = int_value(r) else { continue };
                push(r.clone());
                let next = [v.checked_sub(1), v.checked_add(1)];
                for lit in next.into_iter().flatten().filter_map(|n| int_lit(ty, n)) {
                    push(lit);
                }
            }
        }
        PoolKind::Scalar(ty) if ty == "bool" => {
            push(Lit::Bool(false));
            push(Lit::Bool(true));
        }
        PoolKind::Scalar(ty) if ty == "char" => {
            for c in ['\0', 'a', 'Z', '0', ' ', 'é'] {
                push(Lit::Char(c));
            }
            recorded.iter().cloned().for_each(&mut push);
        }
        PoolKind::Scalar(_) => {
            for f in [
                0.0,
                -0.0,
                1.0,
                -1.0,
                f64::NAN,
                f64::INFINITY,
                f64::NEG_INFINITY,
            ] {
                push(Lit::Float(f));
            }
            recorded.iter().cloned().for_each(&mut push);
        }
        PoolKind::Str => {
            push(Lit::Str(String::new()));
            for r in recorded {
                let Lit::Str(s) = r else { continue };
                push(r.clone());
                let mut shorter = s.clone();
                shorter.pop();
                push(Lit::Str(shorter));
                let last = s.chars().last().unwrap_or('a');
                push(Lit::Str(format!("{s}{last}")));
            }
            push(Lit::Str("a".to_string()));
        }
        PoolKind::NonZero(ty) => non_zero_neighbours(ty, recorded)
            .into_iter()
            .for_each(&mut push),
        PoolKind::Option(_) | PoolKind::Range(_) | PoolKind::Texts | PoolKind::Closure(_) => {
            made_later(kind, recorded).into_iter().for_each(&mut push)
        }
        // Drawn from object slots, not from a pool.
        PoolKind::Object(_) => {}
        PoolKind::Slice(ty) => slice_neighbours(ty, recorded)
            .into_iter()
            .for_each(&mut push),
    }
    out.truncate(MAX_POOL);
    out
}

/// A slice pool: empty, each recorded one, one element shorter, one longer (its last again),
/// its last element changed (to 0, or 1 where it was 0: bytes wrong only at their end, where a
/// decoder's error lies last, hex's odd index; texts are not given one: url's search reached
/// fewer lines with them), and `[0]`.
fn slice_neighbours(ty: &str, recorded: &[Lit]) -> Vec<Lit> {
    let mut out: Vec<Lit> = vec![Lit::Seq(Vec::new())];
    let mut push = |l: Lit| {
        if !out.contains(&l) {
            out.push(l);
        }
    };
    for r in recorded {
        let Lit::Seq(s) = r else { continue };
        push(r.clone());
        push(Lit::Seq(s[..s.len().saturating_sub(1)].to_vec()));
        let mut longer = s.clone();
        longer.push(s.last().cloned().unwrap_or(Lit::Uint(0)));
        push(Lit::Seq(longer));
        if let (Some(Lit::Uint(last)), Some(zero), Some(one)) =
            (s.last(), int_lit(ty, 0), int_lit(ty, 1))
        {
            let mut changed = s.clone();
            changed.pop();
            changed.push(if *last == 0 { one } else { zero });
            push(Lit::Seq(changed));
        }
    }
    if let Some(zero) = int_lit(ty, 0) {
        push(Lit::Seq(vec![zero]));
    }
    out
}

/// A non-zero integer pool: 1, 2, each recorded value and its neighbours; no MAX: a non-zero
/// integer is mostly a capacity, and one of `usize::MAX` asks for all the memory there is.
fn non_zero_neighbours(ty: &str, recorded: &[Lit]) -> Vec<Lit> {
    let mut out: Vec<Lit> = [int_lit(ty, 1), int_lit(ty, 2)]
        .into_iter()
        .flatten()
        .collect();
    for v in recorded.iter().filter_map(int_value) {
        let near = [v.checked_sub(1), Some(v), v.checked_add(1)];
        out.extend(
            near.into_iter()
                .flatten()
                .filter(|n| *n != 0)
                .filter_map(|n| int_lit(ty, n)),
        );
    }
    out
}

/// An integer literal's value (a `u128` past `i128::MAX` as `i128::MAX`).
fn int_value(lit: &Lit) -> Option<i128> {
    match lit {
        Lit::Int(v) => Some(*v),
        Lit::Uint(v) => Some(i128::try_from(*v).unwrap_or(i128::MAX)),
        _ => None,
    }
}

/// A pooled value written as Rust source for a value of `kind` (in a `&[T]` array of the pool:
/// text as `&str`, slices as `&[T]`). Text goes through `{:?}`, which escapes every quote,
/// backslash and control character: a trace's text never becomes code.
pub fn literal(kind: &PoolKind, lit: &Lit) -> String {
    let ty = match kind {
        PoolKind::Scalar(t) | PoolKind::Slice(t) => t.as_str(),
        PoolKind::NonZero(t) => {
            let int = literal(&PoolKind::Scalar(t.clone()), lit);
            return format!("std::num::NonZero::<{t}>::new({int}).unwrap()");
        }
        PoolKind::Str | PoolKind::Texts => "str",
        PoolKind::Object(_) => return "_".to_string(),
        PoolKind::Option(inner) => {
            return match lit {
                Lit::Opt(Some(v)) => format!("Some({})", literal(inner, v)),
                _ => "None".to_string(),
            };
        }
        PoolKind::Range(t) => return range_literal(t, lit),
        PoolKind::Closure(_) => {
            return match lit {
                Lit::Code(code) => code.clone(),
                _ => "|| ()".to_string(),
            }
        }
    };
    match lit {
        Lit::Int(v) if int_range(ty).is_some() => {
            let (min, max) = int_range(ty).unwrap_or_default();
            if *v == min && min != 0 {
                format!("{ty}::MIN")
            } else if *v >= 0 && *v as u128 == max {
                format!("{ty}::MAX")
            } else {
                format!("{v}{ty}")
            }
        }
        Lit::Uint(u) if int_range(ty).is_some() => {
            if Some(*u) == int_range(ty).map(|r| r.1) {
                format!("{ty}::MAX")
            } else {
                format!("{u}{ty}")
            }
        }
        Lit::Int(v) => format!("{v}"),
        Lit::Uint(v) => format!("{v}"),
        Lit::Bool(b) => b.to_string(),
        Lit::Char(c) => format!("{c:?}"),
        Lit::Float(f) => float_literal(*f, ty),
        Lit::Str(s) => format!("{s:?}"),
        Lit::Seq(elems) if *kind == PoolKind::Texts => {
            let parts: Vec<String> = elems.iter().map(|e| literal(&PoolKind::Str, e)).collect();
            format!("&[{}]", parts.join(", "))
        }
        Lit::Seq(elems) => match byte_string(ty, elems) {
            Some(bytes) => bytes,
            None => {
                let scalar = PoolKind::Scalar(ty.to_string());
                let parts: Vec<String> = elems.iter().map(|e| literal(&scalar, e)).collect();
                format!("&[{}]", parts.join(", "))
            }
        },
        Lit::Opt(_) => "None".to_string(),
        Lit::Range { .. } => "..".to_string(),
        Lit::Code(code) => code.clone(),
    }
}

/// Bytes as a person writes them when they are printable ASCII text: `b"cafe"` (of the same
/// type as `&[99u8, 97u8, 102u8, 101u8]`, `&[u8; 4]`); `None` for other bytes, other
/// elements or none.
pub fn byte_string(ty: &str, elems: &[Lit]) -> Option<String> {
    let text: String = (ty == "u8" && !elems.is_empty())
        .then_some(elems)?
        .iter()
        .map(|e| match e {
            Lit::Uint(b @ 0x20..=0x7e) => Some(char::from(*b as u8)),
            Lit::Int(b @ 0x20..=0x7e) => Some(char::from(*b as u8)),
            _ => None,
        })
        .collect::<Option<String>>()?;
    Some(format!("b{text:?}"))
}

/// A range as a test writes it: `1..3`, `..=2`, `5..` (the integer type is inferred from
/// the parameter's bound; its extremes by name, `usize::MAX..`).
fn range_literal(ty: &str, lit: &Lit) -> String {
    let Lit::Range {
        start,
        end,
        inclusive,
    } = lit
    else {
        return "..".to_string();
    };
    let end_of = |l: &Option<Box<Lit>>| {
        l.as_deref().map_or(String::new(), |l| {
            let written = literal(&PoolKind::Scalar(ty.to_string()), l);
            match written.strip_suffix(ty) {
                Some(bare) if !bare.ends_with("::") => bare.to_string(),
                _ => written,
            }
        })
    };
    let dots = if *inclusive { "..=" } else { ".." };
    format!("{}{dots}{}", end_of(start), end_of(end))
}

/// A pooled value as the harness's pool constants hold it: a range as the pair of its
/// bounds (one type for every range: `(Bound<usize>, Bound<usize>)`, a `RangeBounds<usize>`),
/// anything else as a test writes it.
pub fn harness_literal(kind: &PoolKind, lit: &Lit) -> String {
    let (
        PoolKind::Range(t),
        Lit::Range {
            start,
            end,
            inclusive,
        },
    ) = (kind, lit)
    else {
        return literal(kind, lit);
    };
    let int = PoolKind::Scalar(t.clone());
    let bound = |l: &Option<Box<Lit>>, included: bool| match l.as_deref() {
        None => "std::ops::Bound::Unbounded".to_string(),
        Some(l) if included => format!("std::ops::Bound::Included({})", literal(&int, l)),
        Some(l) => format!("std::ops::Bound::Excluded({})", literal(&int, l)),
    };
    format!("({}, {})", bound(start, true), bound(end, *inclusive))
}

fn float_literal(f: f64, ty: &str) -> String {
    if f.is_nan() {
        format!("{ty}::NAN")
    } else if f == f64::INFINITY {
        format!("{ty}::INFINITY")
    } else if f == f64::NEG_INFINITY {
        format!("{ty}::NEG_INFINITY")
    } else {
        format!("{f:?}{ty}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(kind: &str, recorded: &[i128]) -> Vec<String> {
        let k = PoolKind::Scalar(kind.to_string());
        let rec: Vec<Lit> = recorded
            .iter()
            .map(|&v| int_lit(kind, v).unwrap())
            .collect();
        with_neighbours(&k, &rec)
            .iter()
            .map(|l| literal(&k, l))
            .collect()
    }

    #[test]
    fn integer_pools_hold_zero_one_the_extremes_and_each_recorded_value_with_its_neighbours() {
        assert_eq!(
            ints("i32", &[5, 10]),
            [
                "0i32", "1i32", "-1i32", "i32::MIN", "i32::MAX", "5i32", "4i32", "6i32", "10i32",
                "9i32", "11i32"
            ]
        );
    }

    #[test]
    fn unsigned_pools_stay_in_range() {
        assert_eq!(ints("u8", &[0, 255]), ["0u8", "1u8", "u8::MAX", "254u8"]);
    }

    #[test]
    fn text_pools_hold_empty_recorded_shorter_and_longer() {
        let pool = with_neighbours(&PoolKind::Str, &[Lit::Str("ab".into())]);
        let texts: Vec<String> = pool.iter().map(|l| literal(&PoolKind::Str, l)).collect();
        assert_eq!(texts, ["\"\"", "\"ab\"", "\"a\"", "\"abb\""]);
    }

    #[test]
    fn printable_bytes_are_written_as_a_byte_string() {
        let k = PoolKind::Slice("u8".into());
        let bytes = |b: &[u8]| Lit::Seq(b.iter().map(|&b| Lit::Uint(b.into())).collect());
        assert_eq!(literal(&k, &bytes(b"cafe")), "b\"cafe\"");
        assert_eq!(literal(&k, &bytes(b"say \"hi\"")), "b\"say \\\"hi\\\"\"");
        assert_eq!(literal(&k, &bytes(&[99, 0])), "&[99u8, 0u8]");
        assert_eq!(literal(&k, &bytes(&[])), "&[]");
        let words = PoolKind::Slice("u16".into());
        assert_eq!(literal(&words, &bytes(b"ab")), "&[97u16, 98u16]");
    }

    #[test]
    fn slice_pools_hold_empty_recorded_shorter_and_longer() {
        let k = PoolKind::Slice("u8".into());
        let pool = with_neighbours(&k, &[Lit::Seq(vec![Lit::Uint(1), Lit::Uint(2)])]);
        let texts: Vec<String> = pool.iter().map(|l| literal(&k, l)).collect();
        assert_eq!(
            texts,
            [
                "&[]",
                "&[1u8, 2u8]",
                "&[1u8]",
                "&[1u8, 2u8, 2u8]",
                "&[1u8, 0u8]",
                "&[0u8]"
            ]
        );
    }

    #[test]
    fn an_option_pool_is_none_then_some_of_each_value_of_its_inner_pool() {
        let kind = PoolKind::Option(Box::new(PoolKind::Scalar("u16".into())));
        let pools = from_values(
            [Value::Uint {
                ty: "u16".into(),
                value: 8080,
            }]
            .iter(),
            &[kind.clone(), PoolKind::Scalar("u16".into())],
        )
        .seeded(&crate::dictionary::Dictionary::default());
        let pool = pools.get(&kind);
        assert_eq!(literal(&kind, &pool[0]), "None");
        let written: Vec<String> = pool.iter().map(|l| literal(&kind, l)).collect();
        assert!(
            written.contains(&"Some(8080u16)".to_string()),
            "{written:?}"
        );
        assert!(
            written.contains(&"Some(u16::MAX)".to_string()),
            "{written:?}"
        );
        assert_eq!(
            pool.len(),
            pools.get(&PoolKind::Scalar("u16".into())).len() + 1
        );
    }

    #[test]
    fn a_list_of_texts_is_made_from_the_text_pool() {
        let text = |s: &str| Value::Str {
            ty: "&str".into(),
            value: s.into(),
            truncated: false,
        };
        let recorded = Value::Seq {
            ty: "[&str; 2]".into(),
            elems: vec![text("ls"), text("-l")],
            truncated: false,
        };
        let pools = from_values(
            [text("a b"), recorded].iter(),
            &[PoolKind::Texts, PoolKind::Str],
        )
        .seeded(&crate::dictionary::Dictionary::default());
        let texts = pools.get(&PoolKind::Str);
        let lists = pools.get(&PoolKind::Texts);
        let written: Vec<String> = lists.iter().map(|l| literal(&PoolKind::Texts, l)).collect();
        // The empty list, the recorded one, then lists of the pool's texts.
        assert_eq!(written[..2], ["&[]", "&[\"ls\", \"-l\"]"]);
        assert!(written.contains(&"&[\"a b\"]".to_string()), "{written:?}");
        // Each two and three side by side: the empty text next to the recorded one.
        let pair = literal(&PoolKind::Texts, &Lit::Seq(texts[..2].to_vec()));
        assert!(written.contains(&pair), "{written:?}");
        assert!(lists
            .iter()
            .any(|l| matches!(l, Lit::Seq(v) if v.len() == 3)));
        assert!(lists.len() <= MAX_POOL);
    }

    #[test]
    fn ranges_are_made_from_the_integer_pool_and_written_as_a_test_writes_them() {
        let usize_kind = PoolKind::Scalar("usize".into());
        let kind = PoolKind::Range("usize".into());
        let pools = from_values(
            [Value::Uint {
                ty: "usize".into(),
                value: 3,
            }]
            .iter(),
            &[kind.clone(), usize_kind],
        )
        .seeded(&crate::dictionary::Dictionary::default());
        let written: Vec<String> = (pools.get(&kind).iter())
            .map(|l| literal(&kind, l))
            .collect();
        assert_eq!(written[0], "..");
        for r in [
            "0..",
            "..1",
            "..=3",
            "1..3",
            "2..=4",
            "3..3",
            "usize::MAX..",
        ] {
            assert!(written.contains(&r.to_string()), "{r} not in {written:?}");
        }
        assert!(written.len() <= MAX_POOL);
        // The harness holds each as the pair of its bounds: one type for them all.
        let r = pools
            .get(&kind)
            .iter()
            .find(|l| literal(&kind, l) == "1..=3");
        assert_eq!(
            harness_literal(&kind, r.unwrap()),
            "(std::ops::Bound::Included(1usize), std::ops::Bound::Included(3usize))"
        );
        assert_eq!(
            harness_literal(&kind, &pools.get(&kind)[0]),
            "(std::ops::Bound::Unbounded, std::ops::Bound::Unbounded)"
        );
    }

    #[test]
    fn text_is_written_escaped() {
        let l = literal(&PoolKind::Str, &Lit::Str("a\"b\\\n\u{1b}[2J".into()));
        assert_eq!(l, r#""a\"b\\\n\u{1b}[2J""#);
        assert!(syn::parse_str::<syn::LitStr>(&l).is_ok());
    }

    #[test]
    fn pools_hold_the_values_nested_in_recorded_ones_and_their_neighbours() {
        use carve_storage::Field;
        let int = |v| Value::Int {
            ty: "i32".into(),
            value: v,
        };
        let ok = Value::Enum {
            ty: "Result".into(),
            variant: "Ok".into(),
            fields: vec![Field {
                name: "__0".into(),
                value: int(7),
            }],
        };
        let text = Value::Str {
            ty: "&str".into(),
            value: "x".into(),
            truncated: false,
        };
        let k = PoolKind::Scalar("i32".into());
        let pools = from_values([int(3), ok, text].iter(), &[k.clone(), PoolKind::Str]);
        let texts: Vec<String> = pools.get(&k).iter().map(|l| literal(&k, l)).collect();
        for want in ["3i32", "7i32", "8i32", "2i32"] {
            assert!(texts.contains(&want.to_string()), "{want} in {texts:?}");
        }
        assert_eq!(
            pools.get(&PoolKind::Str).len(),
            4,
            "\"\", \"x\", \"xx\", \"a\""
        );
    }

    #[test]
    fn a_recorded_non_zero_integer_pools_its_value_and_neighbours_never_zero_or_max() {
        use carve_storage::Field;
        let wrap = |ty: &str, value: Value| Value::Struct {
            ty: ty.into(),
            fields: vec![Field::new("__0", value)],
        };
        let cap = wrap(
            "core::num::nonzero::NonZero<usize>",
            wrap(
                "core::num::niche_types::NonZeroUsizeInner",
                Value::Uint {
                    ty: "usize".into(),
                    value: 8,
                },
            ),
        );
        let k = PoolKind::NonZero("usize".into());
        let pools = from_values([cap.clone()].iter(), std::slice::from_ref(&k));
        let written: Vec<String> = pools.get(&k).iter().map(|l| literal(&k, l)).collect();
        let nz = |n: &str| format!("std::num::NonZero::<usize>::new({n}usize).unwrap()");
        assert_eq!(written, [nz("1"), nz("2"), nz("7"), nz("8"), nz("9")]);
        assert_eq!(index_of(&pools, &k, &cap), Some(3));
    }

    #[test]
    fn the_crates_literals_seed_the_text_and_integer_pools_within_their_bound() {
        let dictionary = crate::dictionary::Dictionary {
            words: vec!["tb".into()],
            ints: vec![1024],
            chars: Vec::new(),
            folds_case: false,
        };
        let u = PoolKind::Scalar("u64".into());
        let full: Vec<Lit> = (0..MAX_POOL as u128).map(|v| Lit::Uint(v + 5000)).collect();
        let pools = Pools {
            by_kind: BTreeMap::from([
                (PoolKind::Str, vec![Lit::Str("1 KiB".into())]),
                (u.clone(), full),
            ]),
        }
        .seeded(&dictionary);
        let texts: Vec<&Lit> = pools.get(&PoolKind::Str).iter().collect();
        assert_eq!(
            texts,
            [
                &Lit::Str("1 KiB".into()),
                &Lit::Str("tb".into()),
                &Lit::Str("1 tb".into())
            ]
        );
        let ints = pools.get(&u);
        assert_eq!(ints.len(), MAX_POOL);
        assert_eq!(ints[MAX_POOL - 3..], [1023, 1024, 1025].map(Lit::Uint));
    }

    #[test]
    fn a_grown_pool_keeps_its_values_in_place_and_takes_the_rest_of_the_dictionary() {
        let words: Vec<String> = (0..20).map(|i| format!("w{i:02}")).collect();
        let dictionary = crate::dictionary::Dictionary {
            words,
            ints: vec![1024],
            chars: vec!['a', 'b', 'c'],
            folds_case: false,
        };
        let u = PoolKind::Scalar("u16".into());
        let pools = Pools {
            by_kind: BTreeMap::from([
                (PoolKind::Str, vec![Lit::Str("x".into())]),
                (u.clone(), vec![Lit::Uint(7)]),
                (PoolKind::Scalar("bool".into()), vec![Lit::Bool(false)]),
            ]),
        }
        .seeded(&dictionary.first());
        let first = pools.get(&PoolKind::Str).to_vec();
        assert!(!first.contains(&Lit::Str("w19".into())), "{first:?}");
        let grown = pools
            .grown(&dictionary, (&[], &Default::default()), 1)
            .expect("the dictionary has more");
        let texts = grown.get(&PoolKind::Str);
        assert_eq!(
            texts[..first.len()],
            first[..],
            "the values keep their places"
        );
        for t in ["w16", "w19", "abc", "cba"] {
            assert!(texts.contains(&Lit::Str(t.into())), "{t} in {texts:?}");
        }
        assert_eq!(
            grown.get(&u),
            pools.get(&u),
            "the first round had every integer"
        );
        assert_eq!(
            grown.get(&PoolKind::Scalar("bool".into())),
            [Lit::Bool(false)]
        );
        assert!(
            grown
                .grown(&dictionary, (&[], &Default::default()), 1)
                .is_none(),
            "nothing is left to add"
        );
        // Then the texts kept sequences took are edited: a character put in (anywhere), one
        // taken out, another kept text put after.
        let kept = ["x".to_string(), "w03".to_string()];
        let again = grown
            .grown(&dictionary, (&kept, &Default::default()), 1)
            .expect("kept texts grow");
        let texts = again.get(&PoolKind::Str);
        let before = grown.get(&PoolKind::Str);
        assert_eq!(texts[..before.len()], before[..]);
        for t in ["xa", "ax", "w0c3", "cw03", "w3", "xw03", "w03x"] {
            assert!(texts.contains(&Lit::Str(t.into())), "{t} in {texts:?}");
        }
        let same = grown
            .grown(&dictionary, (&kept, &Default::default()), 1)
            .expect("kept texts grow");
        assert_eq!(
            same.get(&PoolKind::Str),
            texts,
            "reproducible from the seed"
        );
        assert_eq!(again.get(&u), pools.get(&u));
    }
}
