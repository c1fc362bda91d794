//! The crate's own literals as seeds of the value pools, as fuzzers take a dictionary from the
//! target's string constants and EvoSuite seeds its search from the constants of the class
//! under test: code compares its inputs with the literals it holds (`unit == "tb"`,
//! `bytes < 1024`), and an input equal to one (or next to one) is what takes the branch the
//! recorded run never took. Short text literals become texts of their own and, in a recorded
//! text, the word they can stand for (`"1.5 GiB"` gives `"1.5 tb"`); integer literals and
//! their neighbours join the integer pools of the types they fit; character literals join the
//! `char` pool and make texts (alone, two side by side, one inside a recorded text): a text
//! crate's branches turn on `'\r'` before `'\n'` or a `'\u{200D}'` between two characters.

use std::path::Path;

use syn::visit::Visit;

use crate::pools::{int_lit, Lit};

/// The longest text literal taken as a word.
const MAX_WORD: usize = 16;
/// A first round's pools take at most this many words, integers and characters each
/// ([`Dictionary::first`]); pools grown once a round has run every sequence take them all.
pub const MAX_SEEDS: usize = 16;

/// The short text literals, the integer literals and the character literals of the crate's
/// source files, each once, those compared first, then in the order the files hold them
/// (words: the shortest first).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Dictionary {
    pub words: Vec<String>,
    pub ints: Vec<i128>,
    pub chars: Vec<char>,
    /// Whether the crate folds case (`eq_ignore_ascii_case`, `to_ascii_lowercase`…): then a
    /// recorded text with its letters' case flipped is a neighbour of it, as `n + 1` is of
    /// an integer ([`Self::texts`]).
    pub folds_case: bool,
}

/// The methods by which code compares or rewrites letters regardless of their case.
const CASE_FOLDS: [&str; 7] = [
    "eq_ignore_ascii_case",
    "to_ascii_lowercase",
    "to_ascii_uppercase",
    "make_ascii_lowercase",
    "make_ascii_uppercase",
    "to_lowercase",
    "to_uppercase",
];

/// What the files hold, as read.
#[derive(Default)]
struct Literals {
    words: Vec<String>,
    ints: Vec<i128>,
    /// Integers a comparison holds (`n < 10_000`, `x >= LIMIT` with `const LIMIT: u32 = 64`):
    /// the boundaries, first in the dictionary's integers.
    compared: Vec<i128>,
    /// Names compared (`LIMIT`), and the integer each `const` item of that name holds.
    compared_names: Vec<String>,
    consts: Vec<(String, i128)>,
    chars: Vec<char>,
    /// Characters a comparison or a match arm's pattern holds (`c == '\u{FE0F}'`, `'\r' =>`).
    compared_chars: Vec<char>,
    folds_case: bool,
}

impl Dictionary {
    /// The literals of `files` (a file that does not parse gives none).
    pub fn of_files<'f>(files: impl IntoIterator<Item = &'f Path>) -> Dictionary {
        let mut d = Literals::default();
        for file in files {
            let Ok(text) = std::fs::read_to_string(file) else {
                continue;
            };
            if let Ok(parsed) = syn::parse_file(&text) {
                d.visit_file(&parsed);
            }
        }
        // The shortest words first: tokens rather than messages.
        d.words.sort_by_key(|w| w.chars().count());
        // The integers compared first (literals, then named constants): the boundaries.
        let named = d
            .consts
            .iter()
            .filter(|(name, _)| d.compared_names.contains(name))
            .map(|(_, v)| *v);
        let compared: Vec<i128> = d.compared.iter().copied().chain(named).collect();
        Dictionary {
            words: d.words,
            ints: first_then(compared, d.ints),
            chars: first_then(d.compared_chars, d.chars),
            folds_case: d.folds_case,
        }
    }

    /// The first [`MAX_SEEDS`] words, integers and characters: what a first round's pools
    /// take.
    pub fn first(&self) -> Dictionary {
        Dictionary {
            words: self.words.iter().take(MAX_SEEDS).cloned().collect(),
            ints: self.ints.iter().take(MAX_SEEDS).copied().collect(),
            chars: self.chars.iter().take(MAX_SEEDS).copied().collect(),
            folds_case: self.folds_case,
        }
    }

    /// What a grown text pool takes: [`Self::texts`], then each three characters the files
    /// hold one after the other, in both orders (a state machine's arms name a sequence's
    /// characters in turn: an emoji, a joiner, a tag).
    pub fn grown_texts(&self, recorded: &[Lit]) -> Vec<Lit> {
        let mut out = self.texts(recorded);
        for w in self.chars.windows(3) {
            out.push(Lit::Str(w.iter().collect()));
            out.push(Lit::Str(w.iter().rev().collect()));
        }
        out
    }

    /// The texts the words give: each word, and each recorded text whose last run of letters
    /// is replaced by each word of letters; where the crate folds case, each recorded text
    /// with its ASCII letters' case flipped, one such between two words (`"*.rs"` gives
    /// `"*.RS"`: a pattern matched with and without `case_sensitive`).
    pub fn texts(&self, recorded: &[Lit]) -> Vec<Lit> {
        let words: Vec<Lit> = self.words.iter().map(|w| Lit::Str(w.clone())).collect();
        let mut out = match self.folds_case {
            true => crate::pools::alternating(case_flipped(recorded), words),
            false => words,
        };
        let letters = |w: &str| !w.is_empty() && w.chars().all(char::is_alphabetic);
        // A text that is a word and nothing else gives only the words again: the host has
        // more around its word (`"1.5 GiB"`, not the pool's `"a"`).
        let host = recorded.iter().find_map(|r| match r {
            Lit::Str(s) => last_word(s)
                .filter(|&(a, b)| a > 0 || b < s.len())
                .map(|at| (s, at)),
            _ => None,
        });
        if let Some((s, (start, end))) = host {
            for w in self.words.iter().filter(|w| letters(w)) {
                out.push(Lit::Str(format!("{}{w}{}", &s[..start], &s[end..])));
            }
        }
        out.extend(self.char_texts(recorded));
        out
    }

    /// The texts the characters give: each alone, each two the files hold one after the other
    /// in both orders (`'\n'` then `'\r'` gives `"\r\n"` too), and each after the first
    /// character of the first recorded text of two or more.
    fn char_texts(&self, recorded: &[Lit]) -> Vec<Lit> {
        let mut out: Vec<Lit> = self.chars.iter().map(|c| Lit::Str(c.to_string())).collect();
        for pair in self.chars.windows(2) {
            out.push(Lit::Str(format!("{}{}", pair[0], pair[1])));
            out.push(Lit::Str(format!("{}{}", pair[1], pair[0])));
        }
        let host = recorded.iter().find_map(|r| match r {
            Lit::Str(s) if s.chars().count() >= 2 => Some(s),
            _ => None,
        });
        if let Some(s) = host {
            let at = s.chars().next().map_or(0, char::len_utf8);
            for c in &self.chars {
                out.push(Lit::Str(format!("{}{c}{}", &s[..at], &s[at..])));
            }
        }
        out
    }

    /// The characters, for the `char` pool.
    pub fn chars(&self) -> Vec<Lit> {
        self.chars.iter().map(|c| Lit::Char(*c)).collect()
    }

    /// The integers of type `ty` the literals give: each in range, and its neighbours.
    pub fn ints_of(&self, ty: &str) -> Vec<Lit> {
        let mut out = Vec::new();
        for v in &self.ints {
            for n in [v.checked_sub(1), Some(*v), v.checked_add(1)]
                .into_iter()
                .flatten()
            {
                out.extend(int_lit(ty, n));
            }
        }
        out
    }
}

/// Each text of `recorded` holding an ASCII letter, with every ASCII letter's case flipped.
fn case_flipped(recorded: &[Lit]) -> Vec<Lit> {
    let flip = |c: char| match c {
        'a'..='z' => c.to_ascii_uppercase(),
        'A'..='Z' => c.to_ascii_lowercase(),
        _ => c,
    };
    (recorded.iter())
        .filter_map(|r| match r {
            Lit::Str(s) if s.chars().any(|c| c.is_ascii_alphabetic()) => {
                Some(Lit::Str(s.chars().map(flip).collect()))
            }
            _ => None,
        })
        .collect()
}

/// `first`, then those of `rest` it does not hold.
fn first_then<T: PartialEq>(first: Vec<T>, rest: Vec<T>) -> Vec<T> {
    let mut out = first;
    for x in rest {
        push_new(&mut out, x);
    }
    out
}

/// Adds `x` to `to` unless it is there already.
fn push_new<T: PartialEq>(to: &mut Vec<T>, x: T) {
    if !to.contains(&x) {
        to.push(x);
    }
}

/// Where the last run of letters of `s` is, as byte offsets.
fn last_word(s: &str) -> Option<(usize, usize)> {
    let end = s
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_alphabetic())
        .map(|(i, c)| i + c.len_utf8())?;
    let start = s[..end]
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_alphabetic())
        .last()
        .map(|(i, _)| i)?;
    Some((start, end))
}

impl<'ast> Visit<'ast> for Literals {
    fn visit_lit_str(&mut self, lit: &'ast syn::LitStr) {
        let v = lit.value();
        let short = (1..=MAX_WORD).contains(&v.chars().count());
        if short && !v.chars().any(char::is_control) && !self.words.contains(&v) {
            self.words.push(v);
        }
    }

    fn visit_lit_char(&mut self, lit: &'ast syn::LitChar) {
        push_new(&mut self.chars, lit.value());
    }

    // A byte a parser of bytes compares (`b'#'`) is an ASCII character of a text.
    fn visit_lit_byte(&mut self, lit: &'ast syn::LitByte) {
        if lit.value().is_ascii() {
            push_new(&mut self.chars, char::from(lit.value()));
        }
    }

    fn visit_arm(&mut self, arm: &'ast syn::Arm) {
        let mut pattern = CharsOf::default();
        pattern.visit_pat(&arm.pat);
        for c in pattern.0 {
            push_new(&mut self.compared_chars, c);
        }
        syn::visit::visit_arm(self, arm);
    }

    fn visit_lit_int(&mut self, lit: &'ast syn::LitInt) {
        // 0 and 1 are in every integer pool already.
        if let Ok(v) = lit.base10_parse::<i128>() {
            if !(0..=1).contains(&v) && !self.ints.contains(&v) {
                self.ints.push(v);
            }
        }
    }

    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        self.folds_case |= CASE_FOLDS.contains(&m.method.to_string().as_str());
        syn::visit::visit_expr_method_call(self, m);
    }

    // `map(char::to_ascii_lowercase)`, `u8::eq_ignore_ascii_case(a, b)`.
    fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
        if let Some(last) = p.path.segments.last() {
            self.folds_case |= CASE_FOLDS.contains(&last.ident.to_string().as_str());
        }
        syn::visit::visit_expr_path(self, p);
    }

    fn visit_expr_binary(&mut self, e: &'ast syn::ExprBinary) {
        use syn::BinOp::{Eq, Ge, Gt, Le, Lt, Ne};
        if matches!(e.op, Eq(_) | Ne(_) | Lt(_) | Le(_) | Gt(_) | Ge(_)) {
            for side in [e.left.as_ref(), e.right.as_ref()] {
                match side {
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Int(lit),
                        ..
                    }) => {
                        if let Ok(v) = lit.base10_parse::<i128>() {
                            if !(0..=1).contains(&v) && !self.compared.contains(&v) {
                                self.compared.push(v);
                            }
                        }
                    }
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Char(lit),
                        ..
                    }) => push_new(&mut self.compared_chars, lit.value()),
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Byte(lit),
                        ..
                    }) if lit.value().is_ascii() => {
                        push_new(&mut self.compared_chars, char::from(lit.value()));
                    }
                    syn::Expr::Path(p) => {
                        if let Some(name) = p.path.segments.last() {
                            self.compared_names.push(name.ident.to_string());
                        }
                    }
                    _ => {}
                }
            }
        }
        syn::visit::visit_expr_binary(self, e);
    }

    fn visit_item_const(&mut self, c: &'ast syn::ItemConst) {
        if let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(lit),
            ..
        }) = c.expr.as_ref()
        {
            if let Ok(v) = lit.base10_parse::<i128>() {
                self.consts.push((c.ident.to_string(), v));
            }
        }
        syn::visit::visit_item_const(self, c);
    }

    // Tests of the crate are not what its callers give it.
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        let is_test = m.attrs.iter().any(|a| {
            a.path().is_ident("cfg") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "test")
        });
        if !is_test {
            syn::visit::visit_item_mod(self, m);
        }
    }
}

/// The character literals of a pattern.
#[derive(Default)]
struct CharsOf(Vec<char>);

impl<'ast> Visit<'ast> for CharsOf {
    fn visit_lit_char(&mut self, lit: &'ast syn::LitChar) {
        self.0.push(lit.value());
    }

    fn visit_lit_byte(&mut self, lit: &'ast syn::LitByte) {
        if lit.value().is_ascii() {
            self.0.push(char::from(lit.value()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of_source(src: &str) -> Dictionary {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("lib.rs");
        std::fs::write(&file, src).unwrap();
        Dictionary::of_files([file.as_path()])
    }

    #[test]
    fn short_text_and_integer_literals_are_the_seeds_not_the_tests_ones() {
        let d = of_source(
            r#"
            pub const KIB: u64 = 1024;
            pub fn unit(u: &str) -> u64 {
                match u { "kb" => 1000, "tb" => 1, _ => panic!("an unknown unit, and a long message") }
            }
            #[cfg(test)]
            mod tests { fn t() { let _ = ("zz", 77); } }
            "#,
        );
        assert_eq!(d.words, ["kb", "tb"]);
        assert_eq!(d.ints, [1024, 1000]);
        assert_eq!(
            of_source("pub fn f(n: u64) -> u64 { n * 3 + 7 }").ints,
            [3, 7]
        );
        let texts = d.texts(&[Lit::Str("a".into()), Lit::Str("1.5 GiB".into())]);
        let texts: Vec<&Lit> = texts.iter().collect();
        assert_eq!(
            texts,
            [
                &Lit::Str("kb".into()),
                &Lit::Str("tb".into()),
                &Lit::Str("1.5 kb".into()),
                &Lit::Str("1.5 tb".into())
            ]
        );
        assert_eq!(
            d.ints_of("u16"),
            [1023, 1024, 1025, 999, 1000, 1001].map(Lit::Uint)
        );
        assert_eq!(d.ints_of("u8"), Vec::<Lit>::new());
    }

    #[test]
    fn integers_a_comparison_holds_come_first_named_constants_too() {
        let d = of_source(
            r#"
            const D: u128 = 10_000_000_000_000_000;
            pub fn f(n: u128, m: u32) -> u128 {
                let table = [5, 6, 7];
                if n < D { return n * 3; }
                if m >= 100 { 4 } else { table[2] }
            }
            "#,
        );
        assert_eq!(d.ints, [100, 10_000_000_000_000_000, 5, 6, 7, 3, 4, 2]);
    }

    #[test]
    fn characters_compared_or_matched_come_first_and_make_texts_alone_paired_and_inside_one() {
        let d = of_source(
            r#"
            const DOC: char = '#';
            pub fn width(c: char, next: char) -> usize {
                match c {
                    '\n' => 1,
                    '\r' if next == '\n' => 0,
                    '\u{1F1E6}'..='\u{1F1FF}' => 2,
                    _ if c == '\u{200D}' => 0,
                    _ => 1,
                }
            }
            "#,
        );
        assert_eq!(
            d.chars,
            ['\n', '\r', '\u{1F1E6}', '\u{1F1FF}', '\u{200D}', '#']
        );
        assert_eq!(d.chars()[1], Lit::Char('\r'));
        let texts = d.texts(&[Lit::Str("a".into()), Lit::Str("Zoë".into())]);
        let has = |t: &str| texts.contains(&Lit::Str(t.into()));
        assert!(has("\r") && has("\u{200D}"), "{texts:?}");
        assert!(has("\r\n") && has("\n\r"), "{texts:?}");
        assert!(has("\u{1F1E6}\u{1F1FF}"), "{texts:?}");
        assert!(has("Z\u{200D}oë") && !has("a\u{200D}"), "{texts:?}");
    }

    #[test]
    fn where_the_crate_folds_case_a_recorded_text_with_its_case_flipped_is_a_neighbour() {
        let folds = of_source(
            r#"
            pub fn same(a: &str, b: &str, sensitive: bool) -> bool {
                if sensitive { a == b } else { a.eq_ignore_ascii_case(b) }
            }
            "#,
        );
        assert!(folds.folds_case && folds.first().folds_case);
        let recorded = [Lit::Str("*.rs".into()), Lit::Str("42".into())];
        // Between the words: none here, so the flipped texts alone; "42" has no letter.
        assert_eq!(folds.texts(&recorded), [Lit::Str("*.RS".into())]);
        let by_path = of_source(
            "pub fn low(s: &str) -> String { s.chars().map(char::to_ascii_lowercase).collect() }",
        );
        assert!(by_path.folds_case);
        let exact = of_source("pub fn same(a: &str, b: &str) -> bool { a == b }");
        assert!(!exact.folds_case);
        assert!(exact.texts(&recorded).is_empty());
    }

    #[test]
    fn ascii_bytes_a_parser_compares_are_characters_too() {
        let d = of_source(
            r#"
            pub fn heading(line: &[u8]) -> usize {
                let n = line.iter().take_while(|&&b| b == b'#').count();
                match line.get(n) {
                    Some(b' ') | Some(b'\t') => n,
                    _ => 0,
                }
            }
            const HIGH: u8 = b'\xff';
            "#,
        );
        assert_eq!(d.chars, ['#', ' ', '\t']);
    }
}
