//! Values observed at verification time (the EvoSuite way): a getter the run never called, a
//! `Display` or a hand-written `Debug` gives a value the recording does not hold, but the carved
//! test runs on the very build it was carved from. So an observation rule (`assert/rules/`)
//! that cannot know the expected value leaves a probe in the test (an effect with `observe`):
//! `println!("\u{1}carve-observed {} {:?}", "TEST#N#KIND", format!("{:?}", ACTUAL))`. Before
//! the file is verified, it is built and run twice with `--nocapture`; each probe that printed
//! the same text both times becomes `assert_eq!(ACTUAL, EXPECTED)`, the expected value written
//! from what it printed by its [`Kind`] (`assert/printed.rs`); every other probe goes (a value
//! that changes from run to run, a getter that panicked, a test that did not compile). The
//! ordinary verification then builds and runs the file as it always does, so an observed check
//! that fails is taken out like any other. A recorded value is exact or not written; an
//! observed one is what this build gives, checked as often as any other.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use syn::punctuated::Punctuated;
use syn::visit_mut::VisitMut;

use crate::assert::printed::Kind;
use crate::error::GenerateError;
use crate::interrupt::Interrupt;
use crate::verify::cargo::{build_args, read_back, rewrite, rewrite_without, run_cargo, Verify};
use crate::verify::repair;

/// What a probe prints its tag after.
const MARK: &str = "\u{1}carve-observed ";

/// The probe statement (no `;`) printing `actual`'s `{:?}` text under `tag` (`TEST#N#KIND`),
/// as the template writes it for a test's own effects: what a fold writes for the checks it
/// moves into another test (`distil/fold/story.rs`).
pub(crate) fn probe_statement(tag: &str, actual: &str) -> String {
    let mark = MARK.escape_default();
    format!("println!(\"{mark}{{}} {{:?}}\", \"{tag}\", format!(\"{{:?}}\", {actual}))")
}

/// Runs of the probing build: a value printed differently by two is no value to expect.
const PROBE_RUNS: usize = 2;

/// Rounds of leaving out the tests that do not compile before the probes are run.
const MAX_ROUNDS: usize = 4;

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
    let build = build_args(stem);
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
        rewrite_without(out_dir, file, &gone)?;
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
    let binds_result = |s: &syn::Stmt| match s {
        syn::Stmt::Local(l) => matches!(&l.pat, syn::Pat::Ident(i) if i.ident == "result"),
        _ => false,
    };
    let Some(at) = block.stmts.iter().position(binds_result) else {
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

    /// The probe tag of effect `index` of test `test`, as the template writes it.
    fn tag(test: &str, index: usize, kind: &Kind) -> String {
        format!("{test}#{index}#{}", kind.name())
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
