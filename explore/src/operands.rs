//! What the crate compared a kept sequence's values with (input-to-state correspondence, as
//! Redqueen does it): a kept sequence runs again with the harness noting the operands of every
//! comparison and switch its calls make; where one operand at a crate line is a value a call
//! took (an integer, a `char`, a character of a text), the other is what the code wanted
//! there. shlex's `parse_double` compares the character after a backslash with `$`, `` ` ``,
//! `"`, `\` and a newline: a kept `"a\b"` gives `"a\$"` and the others, each an arm no
//! random edit had reached; `n < 10_000_000_000_000_000` met with a kept `n` gives that bound
//! and a value either side of it. A text's or a list's length compared with a bound gives
//! the value at that length and one either side (smallvec's inline capacity of 8 against a
//! list of 3 gives lists of 7, 8 and 9). Suggested values go into the next round's pools first
//! (`Pools::grown`).

use std::collections::{BTreeMap, BTreeSet};

use crate::pools::{int_range, Lit};
use crate::PoolKind;

/// Most sequences asked for their operands a round (half of them kept ones, when there are
/// so many): pulldown-cmark's 512, each parse answering 4,096 operands a call, took a
/// hundred seconds, twice.
pub(crate) const MAX_ASKED: usize = 128;
/// Most occurrences of a character replaced one at a time in a text.
const MAX_OCCURRENCES: usize = 4;
/// The longest text or list a compared length suggests (as long as a kept text grows:
/// texts of a thousand characters made similar's diffs and pulldown-cmark's parses three
/// times slower a call, for lines fewer than the calls they cost).
const MAX_LENGTH: u64 = 64;

/// Values the crate's comparisons suggest, new ones first found first.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Suggested {
    /// Kept texts with one character replaced by what the crate compared it with, or at a
    /// length it compared theirs with.
    pub texts: Vec<String>,
    /// For the integer and `char` pools: what a kept value was compared with (integers: and
    /// one either side of it).
    pub values: BTreeMap<PoolKind, Vec<Lit>>,
}

impl Suggested {
    /// What both `self` and `other` suggest, in `self`'s order.
    pub(crate) fn also_in(self, other: &Suggested) -> Suggested {
        let texts: BTreeSet<&String> = other.texts.iter().collect();
        let values = (self.values.into_iter())
            .map(|(kind, values)| {
                let theirs = other.values.get(&kind).map_or(&[][..], Vec::as_slice);
                let both = values.into_iter().filter(|v| theirs.contains(v)).collect();
                (kind, both)
            })
            .collect();
        Suggested {
            texts: self
                .texts
                .into_iter()
                .filter(|t| texts.contains(t))
                .collect(),
            values,
        }
    }
}

/// One call's values: (pool, value) of each argument it took from a text, integer or `char`
/// pool.
pub(crate) type Inputs = Vec<(PoolKind, Lit)>;

/// The suggestions of `operands` (per call index, flat: site, operand, operand), for calls
/// whose values are `inputs[call]`; `at_crate_line(site)` says whether a comparison site is
/// on one of the crate's lines (the harness's own and the standard library's comparisons
/// suggest nothing).
pub(crate) fn suggestions(
    inputs: &[Inputs],
    operands: &[(usize, Vec<u64>)],
    mut at_crate_line: impl FnMut(u64) -> bool,
    out: &mut Suggested,
) {
    let mut texts: BTreeSet<String> = out.texts.iter().cloned().collect();
    for (call, flat) in operands {
        let Some(values) = inputs.get(*call).filter(|v| !v.is_empty()) else {
            continue;
        };
        let pairs: BTreeSet<(u64, u64)> = (flat.chunks_exact(3))
            .filter(|t| t[1] != t[2] && at_crate_line(t[0]))
            .flat_map(|t| [(t[1], t[2]), (t[2], t[1])])
            .collect();
        for (have, wanted) in pairs {
            for (kind, value) in values {
                match value {
                    Lit::Str(t) => {
                        let lengths = resized(t, have, wanted);
                        for r in replaced(t, have, wanted).into_iter().chain(lengths) {
                            if texts.insert(r.clone()) {
                                out.texts.push(r);
                            }
                        }
                    }
                    _ => {
                        let pool = out.values.entry(kind.clone()).or_default();
                        let values = either_side(kind, value, have, wanted);
                        for v in values.into_iter().chain(resized_list(value, have, wanted)) {
                            if !pool.contains(&v) {
                                pool.push(v);
                            }
                        }
                    }
                }
            }
        }
    }
}

/// `text` with one occurrence of character `have` replaced by `wanted` (each of the first
/// few occurrences in turn), when both are characters.
fn replaced(text: &str, have: u64, wanted: u64) -> Vec<String> {
    let (Some(have), Some(wanted)) = (char_of(have), char_of(wanted)) else {
        return Vec::new();
    };
    (text.char_indices())
        .filter(|(_, c)| *c == have)
        .take(MAX_OCCURRENCES)
        .map(|(at, _)| {
            let mut r = String::with_capacity(text.len() + 4);
            r.push_str(&text[..at]);
            r.push(wanted);
            r.push_str(&text[at + have.len_utf8()..]);
            r
        })
        .collect()
}

/// The lengths a length `have` compared with `wanted` suggests: `wanted` and one either
/// side, none over [`MAX_LENGTH`].
fn lengths(have: u64, wanted: u64) -> Vec<usize> {
    [wanted.checked_sub(1), Some(wanted), wanted.checked_add(1)]
        .into_iter()
        .flatten()
        .filter(|&l| l != have && l <= MAX_LENGTH)
        .map(|l| l as usize)
        .collect()
}

/// `text`, when its length in bytes or in characters is `have`, at the lengths comparing it
/// with `wanted` suggests: cut short, or longer by its last character repeated (`a` for an
/// empty text).
fn resized(text: &str, have: u64, wanted: u64) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if have != text.len() as u64 && have != chars.len() as u64 {
        return Vec::new();
    }
    let last = chars.last().copied().unwrap_or('a');
    (lengths(have, wanted).into_iter())
        .map(|l| {
            let mut r: String = chars.iter().take(l).collect();
            r.extend(std::iter::repeat_n(last, l.saturating_sub(chars.len())));
            r
        })
        .collect()
}

/// A list whose length is `have`, at the lengths comparing it with `wanted` suggests: cut
/// short, or longer by its last item repeated (an empty list gives none).
fn resized_list(value: &Lit, have: u64, wanted: u64) -> Vec<Lit> {
    let Lit::Seq(items) = value else {
        return Vec::new();
    };
    let Some(last) = items.last().filter(|_| have == items.len() as u64) else {
        return Vec::new();
    };
    (lengths(have, wanted).into_iter())
        .map(|l| {
            let mut r: Vec<Lit> = items.iter().take(l).cloned().collect();
            r.resize(l, last.clone());
            Lit::Seq(r)
        })
        .collect()
}

fn char_of(operand: u64) -> Option<char> {
    char::from_u32(u32::try_from(operand).ok()?)
}

/// What a pool of `kind` takes when its `value` was compared as `have` with `wanted`: the
/// `char` `wanted`; for an integer, `wanted` and one either side of it, those in the type's
/// range (operands are unsigned: a negative value is not matched).
fn either_side(kind: &PoolKind, value: &Lit, have: u64, wanted: u64) -> Vec<Lit> {
    let PoolKind::Scalar(ty) = kind else {
        return Vec::new();
    };
    let matches = match value {
        Lit::Int(i) => u64::try_from(*i).is_ok_and(|i| i == have),
        Lit::Uint(u) => u64::try_from(*u).is_ok_and(|u| u == have),
        Lit::Char(c) => u64::from(*c as u32) == have,
        _ => false,
    };
    if !matches {
        return Vec::new();
    }
    if ty == "char" {
        return char_of(wanted).map(Lit::Char).into_iter().collect();
    }
    let Some((_, max)) = int_range(ty) else {
        return Vec::new();
    };
    let wanted = u128::from(wanted);
    [wanted.checked_sub(1), Some(wanted), wanted.checked_add(1)]
        .into_iter()
        .flatten()
        .filter(|w| *w <= max)
        .map(|w| match value {
            Lit::Int(_) => Lit::Int(w as i128),
            _ => Lit::Uint(w),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flat(triples: &[(u64, u64, u64)]) -> Vec<u64> {
        triples.iter().flat_map(|&(s, a, b)| [s, a, b]).collect()
    }

    #[test]
    fn a_character_compared_at_a_crate_line_is_replaced_by_what_it_was_compared_with() {
        // Call 0 took `"a\b"`; at crate site 7 its `b` met `$` and `"` (a switch's cases),
        // and at site 9 (the harness's) met `x`.
        let inputs = vec![vec![(PoolKind::Str, Lit::Str("\"a\\b\"".to_string()))]];
        let ops = vec![(
            0,
            flat(&[
                (7, 'b' as u64, '$' as u64),
                (7, 'b' as u64, '"' as u64),
                (9, 'b' as u64, 'x' as u64),
            ]),
        )];
        let mut out = Suggested::default();
        suggestions(&inputs, &ops, |site| site == 7, &mut out);
        // Either operand may be the value taken: the quotes met `b` too.
        let texts = ["ba\\b\"", "\"a\\bb", "\"a\\\"\"", "\"a\\$\""];
        assert_eq!(out.texts, texts);
        // Operands of a call that took no text, or that are no character, suggest nothing.
        let mut none = Suggested::default();
        suggestions(&inputs, &[(1, flat(&[(7, 98, 36)]))], |_| true, &mut none);
        suggestions(
            &inputs,
            &[(0, flat(&[(7, 98, u64::MAX)]))],
            |_| true,
            &mut none,
        );
        assert_eq!(none, Suggested::default());
    }

    #[test]
    fn only_what_two_processes_both_suggest_is_kept() {
        let u64s = PoolKind::Scalar("u64".to_string());
        let of = |texts: &[&str], values: &[u128]| Suggested {
            texts: texts.iter().map(|t| t.to_string()).collect(),
            values: [(u64s.clone(), values.iter().map(|&v| Lit::Uint(v)).collect())].into(),
        };
        let first = of(&["a$", "a\"", "b"], &[7, 140_733_899_702_400, 8]);
        let second = of(&["b", "a$"], &[8, 140_722_259_344_608, 7]);
        assert_eq!(first.also_in(&second), of(&["a$", "b"], &[7, 8]));
    }

    #[test]
    fn each_of_the_first_occurrences_is_replaced_in_turn() {
        assert_eq!(
            replaced("abab", 'b' as u64, 'c' as u64),
            vec!["acab", "abac"]
        );
        assert_eq!(replaced("é", 'é' as u64, 'e' as u64), vec!["e"]);
        assert!(replaced("abc", 'z' as u64, 'c' as u64).is_empty());
    }

    #[test]
    fn a_length_compared_with_a_bound_suggests_the_value_at_that_length_and_either_side() {
        let texts = ["ab", "abb", "abbb"];
        // A length met equal gives one either side.
        let either = ["ab", "abcc"];
        assert_eq!(resized("abc", 3, 3), either);
        assert_eq!(resized("abcd", 4, 3)[0], "ab");
        assert_eq!(resized("ab", 2, 3), texts[1..].to_vec());
        // "é" is one character and two bytes: either length is its length.
        assert_eq!(resized("é", 1, 2).len(), 2);
        assert!(resized("abc", 7, 3).is_empty());
        assert!(resized("a", 1, MAX_LENGTH + 5).is_empty());
        let list = Lit::Seq(vec![Lit::Uint(1), Lit::Uint(2), Lit::Uint(3)]);
        let four = Lit::Seq([1, 2, 3, 3].map(Lit::Uint).into());
        assert_eq!(resized_list(&list, 3, 4)[0], four);
        assert_eq!(resized_list(&Lit::Seq(Vec::new()), 0, 4), Vec::<Lit>::new());
        // Through `suggestions`: a list of 3 compared with an inline capacity of 8.
        let u32s = PoolKind::Slice("u32".to_string());
        let inputs = vec![vec![(u32s.clone(), list)]];
        let mut out = Suggested::default();
        suggestions(&inputs, &[(0, flat(&[(1, 3, 8)]))], |_| true, &mut out);
        let lengths: Vec<usize> = (out.values[&u32s].iter())
            .map(|l| match l {
                Lit::Seq(items) => items.len(),
                _ => 0,
            })
            .collect();
        assert_eq!(lengths, vec![7, 8, 9]);
    }

    #[test]
    fn an_integer_compared_with_a_bound_suggests_the_bound_and_one_either_side_in_its_range() {
        let u8s = PoolKind::Scalar("u8".to_string());
        let inputs = vec![vec![
            (u8s.clone(), Lit::Uint(3)),
            (PoolKind::Scalar("char".to_string()), Lit::Char('a')),
        ]];
        let ops = vec![(
            0,
            flat(&[(1, 3, 255), (1, 'a' as u64, 'z' as u64), (1, 5, 9)]),
        )];
        let mut out = Suggested::default();
        suggestions(&inputs, &ops, |_| true, &mut out);
        assert_eq!(out.values[&u8s], vec![Lit::Uint(254), Lit::Uint(255)]);
        assert_eq!(
            out.values[&PoolKind::Scalar("char".to_string())],
            vec![Lit::Char('z')]
        );
        let i64s = PoolKind::Scalar("i64".to_string());
        assert_eq!(
            either_side(&i64s, &Lit::Int(-1), u64::MAX, 0),
            Vec::<Lit>::new()
        );
        assert_eq!(
            either_side(&i64s, &Lit::Int(4), 4, 0),
            vec![Lit::Int(0), Lit::Int(1)]
        );
    }
}
