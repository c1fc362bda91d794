//! Values observed at verification time (the EvoSuite way): a getter the run never called, a
//! `Display` or a hand-written `Debug` gives a value the recording does not hold, but the carved
//! test runs on the very build it was carved from. So an observation rule (`assert/rules/`)
//! that cannot know the expected value leaves a probe in the test (an effect with `observe`):
//! `println!("\u{1}carve-observed {} {:?}", "TEST#N#KIND", format!("{:?}", ACTUAL))`. Before
//! the file is verified, it is built and run twice with `--nocapture`; each probe that printed
//! the same text both times becomes `assert_eq!(ACTUAL, EXPECTED)`, the expected value written
//! from what it printed by its [`Kind`]; every other probe goes (a value that changes from run
//! to run, a getter that panicked, a test that did not compile). The ordinary verification
//! then builds and runs the file as it always does, so an observed check that fails is taken out
//! like any other. A recorded value is exact or not written; an observed one is what this build
//! gives, checked as often as any other.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use syn::punctuated::Punctuated;
use syn::visit_mut::VisitMut;

use crate::error::GenerateError;
use crate::interrupt::Interrupt;
use crate::read::types::Prim;
use crate::syntax;
use crate::verify::{read_back, repair, rewrite, run_cargo, Verify};

/// Whether `ty` is a path ending in `name` with no generic arguments (`str`, `String`).
fn is_named(ty: &syn::Type, name: &str) -> bool {
    matches!(ty, syn::Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == name && s.arguments.is_empty()))
}

/// What a probe prints its tag after.
const MARK: &str = "\u{1}carve-observed ";

/// Runs of the probing build: a value printed differently by two is no value to expect.
const PROBE_RUNS: usize = 2;

/// Rounds of leaving out the tests that do not compile before the probes are run.
const MAX_ROUNDS: usize = 4;

/// How the text `{:?}` printed for a value becomes a literal it is compared with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An integer of this type: `3` → `3u32`.
    Int(Prim),
    /// A float of this type: `0.5` → `0.5f64` (not NaN or infinite).
    Float(Prim),
    Bool,
    Char,
    /// `&str` or `String`: `"a"` → `"a"` (a `String` equals a `&str`).
    Str,
    /// `Option` of a kind above but `Str` of a `String`: `None`, `Some(3u32)`.
    Opt(Box<Kind>),
    /// Anything else with a `Debug`: its text compared, `format!("{:?}", ACTUAL)`.
    Debug,
}

impl Kind {
    /// The kind a value of the type written `written` (a getter's return type) is observed as,
    /// `None` when it cannot be printed or compared (`debug`: whether a type the kinds do not
    /// name implements `Debug`).
    pub(crate) fn of(written: &str, debug: &dyn Fn(&syn::Type) -> bool) -> Option<Kind> {
        let ty = syn::parse_str::<syn::Type>(written).ok()?;
        Kind::of_type(&ty, debug)
    }

    fn of_type(ty: &syn::Type, debug: &dyn Fn(&syn::Type) -> bool) -> Option<Kind> {
        let as_text = || debug(ty).then_some(Kind::Debug);
        let syn::Type::Path(path) = ty else {
            return match ty {
                syn::Type::Reference(r) if is_named(&r.elem, "str") => Some(Kind::Str),
                // `&u32` is not compared with `3u32`: as text.
                syn::Type::Reference(r) => Kind::of_type(&r.elem, debug).map(|_| Kind::Debug),
                syn::Type::Paren(p) => Kind::of_type(&p.elem, debug),
                _ => as_text(),
            };
        };
        let last = path.path.segments.last()?;
        let name = last.ident.to_string();
        if let Some(prim) = Prim::from_name(&name) {
            return Some(match prim {
                Prim::F32 | Prim::F64 => Kind::Float(prim),
                Prim::Bool => Kind::Bool,
                Prim::Char => Kind::Char,
                _ => Kind::Int(prim),
            });
        }
        if name == "String" {
            return Some(Kind::Str);
        }
        let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
            return as_text();
        };
        let inner = args.args.iter().find_map(|a| match a {
            syn::GenericArgument::Type(t) => Some(t),
            _ => None,
        });
        match (name.as_str(), inner) {
            ("Option", Some(inner)) if !is_named(inner, "String") => {
                match Kind::of_type(inner, debug)? {
                    Kind::Debug | Kind::Opt(_) => Some(Kind::Debug),
                    kind => Some(Kind::Opt(Box::new(kind))),
                }
            }
            _ => as_text(),
        }
    }

    /// As a probe's tag writes it (`int:u32`, `opt:str`).
    pub(crate) fn name(&self) -> String {
        match self {
            Kind::Int(p) => format!("int:{}", p.name()),
            Kind::Float(p) => format!("float:{}", p.name()),
            Kind::Bool => "bool".into(),
            Kind::Char => "char".into(),
            Kind::Str => "str".into(),
            Kind::Opt(k) => format!("opt:{}", k.name()),
            Kind::Debug => "debug".into(),
        }
    }

    /// [`Kind::name`] read back.
    pub(crate) fn parse(name: &str) -> Option<Kind> {
        if let Some(inner) = name.strip_prefix("opt:") {
            return Some(Kind::Opt(Box::new(Kind::parse(inner)?)));
        }
        let prim = |n: &str| Prim::from_name(n);
        Some(match name.split_once(':') {
            Some(("int", p)) => Kind::Int(prim(p)?),
            Some(("float", p)) => Kind::Float(prim(p)?),
            _ => match name {
                "bool" => Kind::Bool,
                "char" => Kind::Char,
                "str" => Kind::Str,
                "debug" => Kind::Debug,
                _ => return None,
            },
        })
    }

    /// The literal a value that printed `printed` with `{:?}` equals; `None` when the text is
    /// not what a value of this kind prints (or not one a literal can equal: NaN).
    pub(crate) fn expected(&self, printed: &str) -> Option<String> {
        Some(match self {
            Kind::Int(p) => {
                let digits = printed.strip_prefix('-').unwrap_or(printed);
                let ok = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
                (ok && printed.parse::<i128>().is_ok()).then(|| format!("{printed}{}", p.name()))?
            }
            Kind::Float(p) => {
                let finite = printed.parse::<f64>().ok()?.is_finite();
                let plain = printed
                    .bytes()
                    .all(|b| b.is_ascii_digit() || b"-.e".contains(&b));
                (finite && plain).then(|| format!("{printed}{}", p.name()))?
            }
            Kind::Bool => match printed {
                "true" | "false" => printed.to_string(),
                _ => return None,
            },
            Kind::Char => syntax::char_lit(syn::parse_str::<syn::LitChar>(printed).ok()?.value()),
            Kind::Str => syntax::str_lit(&syn::parse_str::<syn::LitStr>(printed).ok()?.value()),
            Kind::Opt(inner) => match printed {
                "None" => "None".to_string(),
                _ => {
                    let inside = printed.strip_prefix("Some(")?.strip_suffix(')')?;
                    format!("Some({})", inner.expected(inside)?)
                }
            },
            Kind::Debug => syntax::str_lit(printed),
        })
    }

    /// The check a probe of `actual` becomes once the value printed `printed`.
    fn assertion(&self, actual: &str, printed: &str) -> Option<String> {
        let expected = self.expected(printed)?;
        Some(match (self, expected.as_str()) {
            (Kind::Bool, "true") => format!("assert!({actual});"),
            (Kind::Bool, _) => format!("assert!(!{actual});"),
            (Kind::Debug, _) => format!("assert_eq!(format!(\"{{:?}}\", {actual}), {expected});"),
            _ => format!("assert_eq!({actual}, {expected});"),
        })
    }
}

/// The probe tag of effect `index` of test `test`.
#[cfg(test)]
pub(crate) fn tag(test: &str, index: usize, kind: &Kind) -> String {
    format!("{test}#{index}#{}", kind.name())
}

/// Settles the probes of `file` (see the module's documentation): observes them on a copy
/// without the tests that do not compile, then writes the file again with each probe turned
/// into its check or gone.
pub(crate) fn observe_file(
    crate_dir: &Path,
    out_dir: &Path,
    file: &str,
    (v, interrupt): (&Verify, Interrupt),
) -> Result<(), GenerateError> {
    let source = read_back(out_dir, file)?;
    if !source.contains("carve-observed") {
        return Ok(());
    }
    let stem = file.trim_end_matches(".rs");
    let build = [
        "test",
        "--no-run",
        "--test",
        stem,
        "--message-format=json",
        "--color",
        "never",
    ];
    let mut observed = BTreeMap::new();
    for _ in 0..MAX_ROUNDS {
        let Some(built) = run_cargo(crate_dir, &build, (v, interrupt))? else {
            break;
        };
        if built.success {
            observed = probe(crate_dir, stem, (v, interrupt))?;
            break;
        }
        let errors = repair::compile_errors(&built.stdout, file);
        let probing = read_back(out_dir, file)?;
        let Ok(blamed) = repair::blame(&probing, &errors) else {
            break;
        };
        let gone: BTreeSet<String> = blamed
            .remove
            .into_iter()
            .chain(blamed.rows.into_keys())
            .collect();
        if gone.is_empty() {
            break;
        }
        crate::verify::rewrite_without(out_dir, file, &gone)?;
    }
    rewrite(out_dir, file, |_| settle(&source, &observed))
}

/// Runs the file's tests [`PROBE_RUNS`] times: the text each probe printed, by tag, when it
/// printed the same every time.
fn probe(
    crate_dir: &Path,
    stem: &str,
    (v, interrupt): (&Verify, Interrupt),
) -> Result<BTreeMap<String, String>, GenerateError> {
    let args = [
        "test",
        "--test",
        stem,
        "--color",
        "never",
        "--",
        "--nocapture",
    ];
    let mut agreed: Option<BTreeMap<String, String>> = None;
    for _ in 0..PROBE_RUNS {
        let Some(ran) = run_cargo(crate_dir, &args, (v, interrupt))? else {
            return Ok(BTreeMap::new());
        };
        let printed = printed(&ran.stdout);
        agreed = Some(match agreed {
            None => printed,
            Some(before) => before
                .into_iter()
                .filter(|(tag, text)| printed.get(tag) == Some(text))
                .collect(),
        });
    }
    Ok(agreed.unwrap_or_default())
}

/// What the probes printed in `stdout`: tag → the text `{:?}` gave.
pub(crate) fn printed(stdout: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for line in stdout.lines() {
        let Some(at) = line.find(MARK) else {
            continue;
        };
        let Some((tag, text)) = line[at + MARK.len()..].split_once(' ') else {
            continue;
        };
        // The `{:?}` of the `{:?}` text: one line, a string literal.
        if let Ok(lit) = syn::parse_str::<syn::LitStr>(text.trim_end()) {
            out.insert(tag.to_string(), lit.value());
        }
    }
    out
}

/// `source` with each probe replaced by its check, from what it printed (`observed`, by tag), or
/// taken out.
pub(crate) fn settle(source: &str, observed: &BTreeMap<String, String>) -> Result<String, String> {
    let mut settler = Settler { observed };
    crate::render::edit_rust(source, |file| settler.visit_file_mut(file))
}

struct Settler<'o> {
    observed: &'o BTreeMap<String, String>,
}

impl VisitMut for Settler<'_> {
    fn visit_block_mut(&mut self, block: &mut syn::Block) {
        let stmts = std::mem::take(&mut block.stmts);
        for stmt in stmts {
            match probe_of(&stmt) {
                Some((tag, actual)) => {
                    let check = tag
                        .rsplit_once('#')
                        .and_then(|(_, kind)| Kind::parse(kind))
                        .zip(self.observed.get(&tag))
                        .and_then(|(kind, printed)| kind.assertion(&actual, printed))
                        .and_then(|check| syn::parse_str::<syn::Stmt>(&check).ok());
                    block.stmts.extend(check);
                }
                None => block.stmts.push(stmt),
            }
        }
        syn::visit_mut::visit_block_mut(self, block);
        unbind_unused_result(block);
    }
}

/// `let result = ...;` becomes `let _ = ...;` when nothing after it reads `result` any more (its
/// probes went).
fn unbind_unused_result(block: &mut syn::Block) {
    let Some(at) = block.stmts.iter().position(|s| {
        matches!(s, syn::Stmt::Local(l) if matches!(&l.pat, syn::Pat::Ident(i) if i.ident == "result"))
    }) else {
        return;
    };
    let read = block.stmts[at + 1..].iter().any(|s| {
        let mut idents = BTreeSet::new();
        crate::verify::repair::items::collect_idents(
            quote::ToTokens::to_token_stream(s),
            &mut idents,
        );
        idents.contains("result")
    });
    if let (false, syn::Stmt::Local(l)) = (read, &mut block.stmts[at]) {
        l.pat = syn::parse_quote!(_);
    }
}

/// A probe statement's tag and the expression it prints (as source).
fn probe_of(stmt: &syn::Stmt) -> Option<(String, String)> {
    let syn::Stmt::Macro(m) = stmt else {
        return None;
    };
    if !m.mac.path.is_ident("println") {
        return None;
    }
    let args = m
        .mac
        .parse_body_with(Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated)
        .ok()?;
    let mut args = args.into_iter();
    let (Some(format), Some(tag), Some(printed)) = (args.next(), args.next(), args.next()) else {
        return None;
    };
    let lit = |e: &syn::Expr| match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => Some(s.value()),
        _ => None,
    };
    if !lit(&format)?.starts_with(MARK) {
        return None;
    }
    let tag = lit(&tag)?;
    let syn::Expr::Macro(inner) = printed else {
        return None;
    };
    let inner = inner
        .mac
        .parse_body_with(Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated)
        .ok()?;
    let actual = inner.into_iter().nth(1)?;
    Some((tag, quote::ToTokens::to_token_stream(&actual).to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_debug(_: &syn::Type) -> bool {
        false
    }

    #[test]
    fn a_declared_type_gives_the_kind_its_printed_value_is_read_as() {
        let kind = |src: &str| Kind::of(src, &no_debug).map(|k| k.name());
        assert_eq!(kind("u32").as_deref(), Some("int:u32"));
        assert_eq!(kind("&'a str").as_deref(), Some("str"));
        assert_eq!(kind("String").as_deref(), Some("str"));
        assert_eq!(kind("Option<usize>").as_deref(), Some("opt:int:usize"));
        assert_eq!(kind("Option<&'a str>").as_deref(), Some("opt:str"));
        assert_eq!(kind("Option<String>"), None);
        assert_eq!(
            Kind::of("Option<String>", &|_| true)
                .map(|k| k.name())
                .as_deref(),
            Some("debug")
        );
        assert_eq!(kind("Node<'a>"), None);
        assert_eq!(kind("()"), None);
        for k in [
            "int:u32",
            "opt:str",
            "opt:int:i8",
            "debug",
            "float:f64",
            "char",
        ] {
            assert_eq!(Kind::parse(k).map(|k| k.name()).as_deref(), Some(k));
        }
    }

    #[test]
    fn what_a_value_printed_becomes_the_literal_it_equals() {
        let expected = |k: &str, printed: &str| Kind::parse(k).unwrap().expected(printed);
        assert_eq!(expected("int:u32", "7").as_deref(), Some("7u32"));
        assert_eq!(expected("int:i64", "-7").as_deref(), Some("-7i64"));
        assert_eq!(expected("int:u32", "0x7"), None);
        assert_eq!(expected("float:f64", "0.5").as_deref(), Some("0.5f64"));
        assert_eq!(expected("float:f64", "NaN"), None);
        assert_eq!(expected("str", "\"a\\\"b\"").as_deref(), Some("\"a\\\"b\""));
        assert_eq!(
            expected("opt:str", "Some(\"x\")").as_deref(),
            Some("Some(\"x\")")
        );
        assert_eq!(expected("opt:int:u8", "None").as_deref(), Some("None"));
        assert_eq!(expected("char", "'\\''").as_deref(), Some("'\\''"));
        assert_eq!(
            expected("debug", "Node { id: 1 }").as_deref(),
            Some("\"Node { id: 1 }\"")
        );
    }

    #[test]
    fn probes_become_checks_from_what_they_printed_or_go() {
        let source = "//! Carved.\n\n#[test]\nfn f_returns_node() {\n    // Act\n    let result = k::f().unwrap();\n    // Assert\n    println!(\"\\u{1}carve-observed {} {:?}\", \"f_returns_node#0#int:u32\", format!(\"{:?}\", result.id()));\n    println!(\"\\u{1}carve-observed {} {:?}\", \"f_returns_node#1#bool\", format!(\"{:?}\", result.is_leaf()));\n    println!(\"\\u{1}carve-observed {} {:?}\", \"f_returns_node#2#str\", format!(\"{:?}\", result.name()));\n}\n";
        let stdout = "running 1 test\n\u{1}carve-observed f_returns_node#0#int:u32 \"3\"\n\
            test f_returns_node ... \u{1}carve-observed f_returns_node#1#bool \"true\"\nok\n";
        let observed = printed(stdout);
        assert_eq!(observed.len(), 2);
        let out = settle(source, &observed).unwrap();
        assert!(out.contains("assert_eq!(result.id(), 3u32);"), "{out}");
        assert!(out.contains("assert!(result.is_leaf());"), "{out}");
        assert!(!out.contains("carve-observed"), "{out}");
        assert!(out.contains("    // Act\n"), "comments stay: {out}");
        assert_eq!(tag("f", 2, &Kind::Str), "f#2#str");
        let none = settle(source, &BTreeMap::new()).unwrap();
        assert!(none.contains("let _ = k::f().unwrap();"), "{none}");
    }
}
