//! Render: plans to Rust source. In: a [`crate::plan::Plan`]. Out: the files, written all or
//! nothing (`write.rs`): tera templates (built in, or overridden from a directory), each
//! call as a person spells it (`spell.rs`), then `prettyplease` so the output is formatted the
//! same way on every run.
//!
//! `syn` drops ordinary comments, so before formatting every whole-line `// text` comment is
//! turned into a `__carve_comment!("text");` marker statement, and back again afterwards.

pub(crate) mod hoist;
pub(crate) mod spell;
pub(crate) mod stage;
pub(crate) mod targets;
pub(crate) mod write;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use carve_storage::Trace;
use serde::Serialize;

use crate::error::GenerateError;
use crate::plan::model::{FilePlan, Plan, TestPlan};

/// The template that renders one file of tests.
pub const TEST_FILE_TEMPLATE: &str = "test_file.rs.tera";

/// Built-in templates by file name.
const BUILT_IN: &[(&str, &str)] = &[(
    TEST_FILE_TEMPLATE,
    include_str!("../templates/test_file.rs.tera"),
)];

const COMMENT_MARKER: &str = "__carve_comment!";

/// The loaded templates.
pub struct Templates {
    tera: tera::Tera,
    /// Where each template came from, for error messages.
    origins: Vec<(String, String)>,
}

/// What a test-file template gets. Text from the trace arrives already made safe for where the
/// template puts it: `program` is comment text (see [`crate::syntax`]).
#[derive(Serialize)]
struct FileContext<'a> {
    program: String,
    run_id: i64,
    /// The cargo features the file needs (its tests compile only with them), and the
    /// attribute that says so.
    features: &'a [String],
    features_cfg: Option<String>,
    crate_name: &'a str,
    module_path: &'a str,
    file_name: &'a str,
    tests: &'a [TestPlan],
    mocks: &'a [crate::body::MockDecl],
    uses: &'a [String],
    needs_predicates: bool,
    needs_sequence: bool,
    /// Per test (in order): the recorded test its call came from, as comment text, or empty.
    test_origins: Vec<String>,
    /// The stand-ins the tests use, each an item (`read/stand_ins.rs`).
    stand_ins: Vec<&'a str>,
}

impl Templates {
    /// The built-in templates, each replaced by the same-named file in `overrides` if there is one.
    pub fn load(overrides: Option<&Path>) -> Result<Templates, GenerateError> {
        if let Some(dir) = overrides {
            if !dir.is_dir() {
                return Err(GenerateError::TemplatesDirNotADirectory {
                    path: dir.to_path_buf(),
                });
            }
        }
        let mut tera = tera::Tera::new();
        tera.autoescape_on(Vec::<&'static str>::new());
        let mut origins = Vec::new();
        for (name, built_in) in BUILT_IN {
            let (source, origin) = match overrides.map(|d| d.join(name)).filter(|p| p.is_file()) {
                Some(path) => (
                    fs::read_to_string(&path).map_err(|source| GenerateError::ReadTemplate {
                        path: path.clone(),
                        source,
                    })?,
                    path.display().to_string(),
                ),
                None => ((*built_in).to_string(), format!("{name} (built in)")),
            };
            tera.add_raw_template(name, &source)
                .map_err(|e| GenerateError::TemplateParse {
                    template: origin.clone(),
                    message: one_line(&e),
                })?;
            origins.push(((*name).to_string(), origin));
        }
        Ok(Templates { tera, origins })
    }

    /// Renders and formats one file of the plan.
    pub fn render_file(&self, plan: &Plan, file: &FilePlan) -> Result<String, GenerateError> {
        self.render_file_from(plan, file, &[])
    }

    /// [`Templates::render_file`], saying for each test (`origins`, in the file's test order;
    /// trace text, made comment text here) which recorded test its call came from.
    pub fn render_file_from(
        &self,
        plan: &Plan,
        file: &FilePlan,
        origins: &[String],
    ) -> Result<String, GenerateError> {
        let test_origins = (0..file.tests.len())
            .map(|i| {
                origins
                    .get(i)
                    .map(|o| crate::syntax::comment_text(o))
                    .unwrap_or_default()
            })
            .collect();
        let cfg = crate::features::features_cfg(&plan.features);
        let mut context = FileContext {
            program: crate::syntax::comment_text(&plan.program),
            run_id: plan.run_id,
            features: &plan.features,
            features_cfg: cfg.clone(),
            crate_name: &plan.crate_name,
            module_path: &file.module_path,
            file_name: &file.file_name,
            tests: &file.tests,
            mocks: &file.mocks,
            uses: &file.uses,
            needs_predicates: file.needs_predicates,
            needs_sequence: file.needs_sequence,
            test_origins,
            stand_ins: Vec::new(),
        };
        let template = self.origin(TEST_FILE_TEMPLATE);
        let render_error = |message: String| GenerateError::Render {
            template: template.clone(),
            file: file.file_name.clone(),
            message,
        };
        let render = |context: &FileContext| {
            let context =
                tera::Context::from_serialize(context).map_err(|e| render_error(one_line(&e)))?;
            self.tera
                .render(TEST_FILE_TEMPLATE, &context)
                .map_err(|e| render_error(one_line(&e)))
        };
        let mut source = render(&context)?;
        // The recorded program's types the tests name are declared in the file, once.
        let stand_ins = plan.stand_ins.used_in(&source);
        if !stand_ins.is_empty() {
            context.stand_ins = stand_ins.iter().map(|s| s.definition.as_str()).collect();
            source = render(&context)?;
        }
        let source = crate::read::paths::spell_public(&source, &plan.public_paths);
        let formatted = format_edited(&file.file_name, &source, spell::apply)?;
        let declared: Vec<&str> = stand_ins.iter().map(|s| s.name.as_str()).collect();
        check_items(file, (cfg.as_deref(), &declared), &formatted)?;
        Ok(hoist::long_literals(&formatted))
    }

    fn origin(&self, name: &str) -> String {
        self.origins
            .iter()
            .find(|(n, _)| n == name)
            .map_or_else(|| name.to_string(), |(_, o)| o.clone())
    }
}

/// `/// text`: a doc comment, which is a string literal and nothing else (the line saying
/// which recorded test a carved test's call came from).
fn is_doc_text(attr: &syn::Attribute) -> bool {
    match &attr.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("doc") => matches!(
            &nv.value,
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(_),
                ..
            })
        ),
        _ => false,
    }
}

/// The backstop against code smuggled in through a trace: the file's items must be exactly the
/// ones the plan asked for (its `use`s, one `mock!` per mock, one `#[test] fn` per test, in any
/// order) and its only attributes the `//!` header and the planned `cfg` (the features the
/// file needs). Trace text reaches the source only through [`crate::syntax`]; this checks the
/// whole file once more, after the template has run.
fn check_items(
    file: &FilePlan,
    (cfg, stand_ins): (Option<&str>, &[&str]),
    source: &str,
) -> Result<(), GenerateError> {
    let unplanned = |what: String| GenerateError::UnplannedItem {
        file: file.file_name.clone(),
        item: what,
    };
    let parsed = syn::parse_file(source).map_err(|e| GenerateError::InvalidGeneratedCode {
        file: file.file_name.clone(),
        message: e.to_string(),
    })?;
    let planned = cfg
        .and_then(|cfg| syn::parse_str::<syn::File>(cfg).ok())
        .and_then(|f| f.attrs.into_iter().next());
    if let Some(attr) =
        (parsed.attrs.iter()).find(|a| !a.path().is_ident("doc") && Some(*a) != planned.as_ref())
    {
        return Err(unplanned(format!(
            "#![{}]",
            quote::ToTokens::to_token_stream(&attr.meta)
        )));
    }
    let mut tests: std::collections::BTreeSet<&str> =
        file.tests.iter().map(|t| t.name.as_str()).collect();
    let mut mocks = file.mocks.len();
    for item in &parsed.items {
        match item {
            syn::Item::Use(u) if u.attrs.is_empty() => {}
            // A stand-in the plan declares: derives, `allow` and its doc line only.
            syn::Item::Struct(s)
                if stand_ins.contains(&s.ident.to_string().as_str())
                    && s.generics.params.is_empty()
                    && s.attrs.iter().all(|a| {
                        a.path().is_ident("derive") || a.path().is_ident("allow") || is_doc_text(a)
                    }) => {}
            syn::Item::Macro(m) if m.mac.path.is_ident("mock") && m.attrs.is_empty() => {
                if mocks == 0 {
                    return Err(unplanned("a mock! the plan does not have".to_string()));
                }
                mocks -= 1;
            }
            syn::Item::Fn(f)
                if f.attrs.iter().any(|a| a.path().is_ident("test"))
                    && f.attrs.iter().all(|a| {
                        a.path().is_ident("test")
                            || a.path().is_ident("should_panic")
                            || is_doc_text(a)
                    })
                    && tests.remove(f.sig.ident.to_string().as_str()) => {}
            other => {
                let shown = quote::ToTokens::to_token_stream(other).to_string();
                let shown: String = shown.chars().take(60).collect();
                return Err(unplanned(crate::syntax::comment_text(&shown)));
            }
        }
    }
    Ok(())
}

/// A tera error on one line: the message and where, without the source excerpt.
fn one_line(e: &tera::Error) -> String {
    match e.kind() {
        tera::ErrorKind::SyntaxError(report) | tera::ErrorKind::RenderingError(report) => {
            format!("{} (line {})", report.message(), report.span().start_line)
        }
        _ => {
            let text = e.to_string();
            let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
            lines.next().unwrap_or("unknown error").to_string()
        }
    }
}

/// Parses `source` with syn and prints it with prettyplease, keeping whole-line comments.
pub fn format_rust(file_name: &str, source: &str) -> Result<String, GenerateError> {
    format_edited(file_name, source, |_| {})
}

/// [`format_rust`], `source` changed by `edit` on its syntax tree first (parsed once).
fn format_edited(
    file_name: &str,
    source: &str,
    edit: impl FnOnce(&mut syn::File),
) -> Result<String, GenerateError> {
    let marked = mark_comments(source);
    let mut parsed = syn::parse_file(&marked).map_err(|e| GenerateError::InvalidGeneratedCode {
        file: file_name.to_string(),
        message: e.to_string(),
    })?;
    edit(&mut parsed);
    Ok(space_items(&tidy_mocks(&unmark_comments(
        &prettyplease::unparse(&parsed),
    ))))
}

/// `source` (a file [`format_rust`] wrote) changed by `edit` on its syntax tree, formatted the
/// same way, whole-line comments kept.
pub(crate) fn edit_rust(source: &str, edit: impl FnOnce(&mut syn::File)) -> Result<String, String> {
    let marked = mark_comments(source);
    let mut parsed =
        syn::parse_file(&marked).map_err(|e| format!("the file does not parse: {e}"))?;
    edit(&mut parsed);
    Ok(space_items(&tidy_mocks(&unmark_comments(
        &prettyplease::unparse(&parsed),
    ))))
}

/// prettyplease prints a macro's tokens as they come (`fn answer(& self) -> i32;`): lay out
/// each top-level `mock! { pub Name {} impl Trait for Name { ... } }` like the trait it mocks.
fn tidy_mocks(formatted: &str) -> String {
    let mut out = String::with_capacity(formatted.len());
    let mut block: Option<String> = None;
    for line in formatted.lines() {
        if let Some(text) = block.as_mut() {
            text.push(' ');
            text.push_str(line.trim());
            if line == "}" {
                let text = block.take().unwrap_or_default();
                out.push_str(&tidy_mock(&text).unwrap_or(text));
                out.push('\n');
            }
            continue;
        }
        if line == "mock! {" {
            block = Some(line.to_string());
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    if let Some(text) = block {
        out.push_str(&text);
        out.push('\n');
    }
    out
}

fn tidy_mock(text: &str) -> Option<String> {
    let body = text
        .strip_prefix("mock! {")?
        .trim()
        .strip_suffix('}')?
        .trim();
    let impl_at = body.find(" impl ")?;
    let head = body[..impl_at].trim();
    let rest = body[impl_at..].trim();
    let open = rest.find('{')?;
    let header = tokens_tidy(rest[..open].trim());
    let methods = rest[open..].trim();
    let as_trait = format!("trait CarveMock {methods}");
    let parsed = syn::parse_file(&as_trait).ok()?;
    let pretty = prettyplease::unparse(&parsed);
    let mut out = format!("mock! {{\n    {head}\n    {header} {{\n");
    for line in pretty.lines().skip(1).take_while(|l| *l != "}") {
        out.push_str("    ");
        out.push_str(line);
        out.push('\n');
    }
    out.push_str("    }\n}");
    Some(out)
}

/// `abc :: Answerer` → `abc::Answerer`.
fn tokens_tidy(tokens: &str) -> String {
    let mut out = tokens.to_string();
    for (from, to) in [
        (" :: ", "::"),
        (":: ", "::"),
        (" ::", "::"),
        (" <", "<"),
        ("< ", "<"),
        (" >", ">"),
    ] {
        out = out.replace(from, to);
    }
    out
}

/// Puts a blank line between top-level items (prettyplease writes them back to back), keeping
/// runs of `use` lines together.
fn space_items(formatted: &str) -> String {
    let mut out = String::with_capacity(formatted.len() + formatted.len() / 8);
    let mut prev: Option<&str> = None;
    for line in formatted.lines() {
        let top_level = !line.is_empty() && !line.starts_with(char::is_whitespace);
        if let Some(p) = prev {
            let item_ended = p == "}" || (p.ends_with(';') && !p.starts_with(char::is_whitespace));
            let inner_attrs_ended = (p.starts_with("//!") || p.starts_with("#!["))
                && !line.starts_with("//!")
                && !line.starts_with("#![");
            let uses = p.starts_with("use ") && line.starts_with("use ");
            let closing = line.starts_with(['}', ')', ']']);
            if top_level && !closing && !uses && (item_ended || inner_attrs_ended) {
                out.push('\n');
            }
        }
        out.push_str(line);
        out.push('\n');
        prev = Some(line);
    }
    out
}

fn mark_comments(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    for line in source.lines() {
        let trimmed = line.trim_start();
        let is_plain_comment =
            trimmed.starts_with("//") && !trimmed.starts_with("///") && !trimmed.starts_with("//!");
        if is_plain_comment {
            let indent = &line[..line.len() - trimmed.len()];
            let text = trimmed
                .trim_start_matches('/')
                .strip_prefix(' ')
                .unwrap_or(trimmed.trim_start_matches('/'));
            out.push_str(&format!("{indent}{COMMENT_MARKER}({text:?});\n"));
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

fn unmark_comments(formatted: &str) -> String {
    let mut out = String::with_capacity(formatted.len());
    let mut lines = formatted.lines();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if !trimmed.starts_with(COMMENT_MARKER) {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        // prettyplease wraps a long marker over several lines: join them back first.
        let mut marker = trimmed.to_string();
        let mut consumed = vec![line];
        while !marker.ends_with(");") && !marker.ends_with(')') {
            let Some(next) = lines.next() else { break };
            consumed.push(next);
            marker.push_str(next.trim());
        }
        let text = marker
            .strip_prefix(COMMENT_MARKER)
            .and_then(|rest| rest.strip_prefix('('))
            .and_then(|rest| rest.strip_suffix(");").or_else(|| rest.strip_suffix(')')))
            .and_then(|lit| syn::parse_str::<syn::LitStr>(lit.trim().trim_end_matches(',')).ok());
        match text {
            Some(lit) => {
                let indent = &line[..line.len() - trimmed.len()];
                let text = lit.value();
                if text.is_empty() {
                    out.push_str(&format!("{indent}//\n"));
                } else {
                    out.push_str(&format!("{indent}// {text}\n"));
                }
            }
            None => {
                for l in consumed {
                    out.push_str(l);
                    out.push('\n');
                }
            }
        }
    }
    out
}

/// The template file names a `--templates` directory may override.
pub const TEMPLATE_NAMES: &[&str] = &[TEST_FILE_TEMPLATE];

/// Renders every file of `plan` (those with tests) and stages them all or nothing.
pub(crate) fn render_and_stage(
    plan: &Plan,
    templates: &Templates,
    stage: &mut stage::Stage,
    trace: &Trace,
    threads: &BTreeMap<i32, String>,
) -> Result<Vec<PathBuf>, GenerateError> {
    let rendered = plan
        .files
        .iter()
        .filter(|file| !file.tests.is_empty())
        .map(|file| {
            let origins: Vec<String> = file
                .tests
                .iter()
                .map(|t| test_origin(trace, threads, &t.calls).unwrap_or_default())
                .collect();
            let source = templates.render_file_from(plan, file, &origins)?;
            Ok((file.file_name.clone(), source))
        })
        .collect::<Result<Vec<_>, GenerateError>>()?;
    stage.write(&rendered)
}

/// Which test of which test binary the first of `calls` was made in, when a cargo test binary
/// made it on a named thread other than the main one (libtest runs each test on a thread
/// named after it):
/// ``test `adds` of `a` `` for a call of `tests/a.rs`'s test `adds`.
pub(crate) fn test_origin(
    trace: &Trace,
    threads: &BTreeMap<i32, String>,
    calls: &[u64],
) -> Option<String> {
    let first = calls.first()?;
    let call = trace.calls.iter().find(|c| c.id.0 == *first)?;
    if call.thread == trace.run.info.pid {
        return None;
    }
    let test = threads.get(&call.thread)?;
    let binary = Path::new(&trace.run.info.program)
        .file_name()?
        .to_string_lossy();
    // cargo names a test binary `TARGET-HASH` (16 hex digits); any other program's named
    // threads are its own, not tests.
    let (target, hash) = binary.rsplit_once('-')?;
    if hash.len() != 16 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    Some(format!("test `{test}` of `{target}`"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_comment_too_long_for_one_line_survives_formatting() {
        let long = "Assert: the call panics, as it did in the recording, with the message it had";
        let source = format!("fn f() {{\n    let x = 1;\n    // {long}\n}}\n");
        let formatted = format_rust("t.rs", &source).unwrap();
        assert!(formatted.contains(&format!("// {long}")), "{formatted}");
        assert!(!formatted.contains(COMMENT_MARKER), "{formatted}");
    }
    use crate::body::Body;
    use crate::plan::{Assertion, Summary};

    fn plan() -> Plan {
        let test = |name: &str, args: &[&str], assertion| TestPlan {
            name: name.to_string(),
            body: Body {
                function_path: "calc::ops::f".to_string(),
                mocks: Vec::new(),
                ordered_expectations: Vec::new(),
                setup: Vec::new(),
                checks: Vec::new(),
                callee: "calc::ops::f".to_string(),
                args: args.iter().map(|s| s.to_string()).collect(),
                assertion,
                effects: Vec::new(),
                sequence: false,
                mock_decls: Vec::new(),
                trait_uses: Vec::new(),
                replays_closures: false,
            },
            calls: vec![1],
            replayed: Vec::new(),
            arranged: Vec::new(),
            table: None,
            story: false,
            name_parts: None,
        };
        Plan {
            crate_name: "calc".to_string(),
            program: "calc".to_string(),
            run_id: 3,
            features: Vec::new(),
            public_paths: Vec::new(),
            stand_ins: Default::default(),
            files: vec![FilePlan {
                file_name: "carved_calc_ops.rs".to_string(),
                module_path: "calc::ops".to_string(),
                tests: vec![
                    test(
                        "f_returns_1",
                        &["1i32", "\"a\""],
                        Assertion::Eq {
                            expected: "1u8".to_string(),
                        },
                    ),
                    test("f_returns_true", &[], Assertion::True),
                    test("f_returns_false", &[], Assertion::False),
                    test("f_returns_nan", &[], Assertion::Nan),
                    test("f_runs", &[], Assertion::Unit),
                ],
                mocks: Vec::new(),
                uses: Vec::new(),
                needs_predicates: false,
                needs_sequence: false,
            }],
            summary: Summary::default(),
        }
    }

    #[test]
    fn a_test_says_which_recorded_test_its_call_came_from_in_one_doc_line() {
        let plan = plan();
        let hostile = "test `x\n#[cfg(any())]` of `a` */ fn evil() {}".to_string();
        let origins = vec!["test `adds` of `a`".to_string(), String::new(), hostile];
        let out = Templates::load(None)
            .unwrap()
            .render_file_from(&plan, &plan.files[0], &origins)
            .unwrap();
        assert!(
            out.contains("/// Carved from a call made in test `adds` of `a` (run 3).\n#[test]\nfn f_returns_1() {"),
            "{out}"
        );
        assert!(out.contains("edit.\n\n/// Carved"), "{out}");
        assert!(out.contains("\n#[test]\nfn f_returns_true() {"), "{out}");
        // Trace text stays on its doc line: the line break is escaped, nothing else is code.
        assert!(
            out.contains("/// Carved from a call made in test `x\\n#[cfg(any())]` of"),
            "{out}"
        );
        assert!(!out.contains("\n#[cfg"), "{out}");
    }

    #[test]
    fn calls_are_spelled_as_a_person_writes_them_with_their_public_paths() {
        let mut plan = plan();
        plan.public_paths = vec![("calc::ops::Size".into(), "calc::Size".into())];
        let from_str = "<calc::ops::Size as std::str::FromStr>::from_str";
        let body = &mut plan.files[0].tests[0].body;
        body.setup.push(crate::body::Binding {
            var: "size".into(),
            mutable: false,
            expr: format!("{from_str}(\"2k\").unwrap()"),
            repeat: 1,
            times: None,
        });
        body.callee = from_str.into();
        body.args = vec!["\"3k\"".into()];
        let out = Templates::load(None)
            .unwrap()
            .render_file(&plan, &plan.files[0])
            .unwrap();
        assert!(
            out.contains("let size = \"2k\".parse::<calc::Size>().unwrap();\n"),
            "{out}"
        );
        assert!(
            out.contains("let result = \"3k\".parse::<calc::Size>();\n"),
            "{out}"
        );
    }

    #[test]
    fn the_built_in_template_renders_formatted_rust_with_comments() {
        let plan = plan();
        let out = Templates::load(None)
            .unwrap()
            .render_file(&plan, &plan.files[0])
            .unwrap();
        assert!(out.starts_with("//! Carved by carve from a recording of `calc` (run 3). Regenerate rather than edit.\n"), "{out}");
        assert!(out.contains("    // Act\n    let result = calc::ops::f(1i32, \"a\");\n    // Assert\n    assert_eq!(result, 1u8);\n"), "{out}");
        assert!(out.contains("assert!(result);"));
        assert!(out.contains("assert!(!result);"), "{out}");
        assert!(out.contains("assert!(result.is_nan());"));
        assert!(
            out.contains("fn f_runs() {\n    // Act\n    calc::ops::f();\n}\n"),
            "{out}"
        );
        assert!(
            out.contains("edit.\n\n#[test]\nfn f_returns_1() {"),
            "{out}"
        );
        assert!(out.contains("}\n\n#[test]\nfn f_returns_true() {"), "{out}");
        assert!(!out.contains(COMMENT_MARKER));
    }

    #[test]
    fn a_template_override_replaces_the_built_in_one() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(
            dir.path().join(TEST_FILE_TEMPLATE),
            "// {{ module_path }}\n{% for t in tests %}#[test]\nfn {{ t.name }}() {}\n{% endfor %}",
        )
        .unwrap();
        let plan = plan();
        let out = Templates::load(Some(dir.path()))
            .unwrap()
            .render_file(&plan, &plan.files[0])
            .unwrap();
        assert!(
            out.starts_with(
                "// calc::ops\n#[test]\nfn f_returns_1() {}\n#[test]\nfn f_returns_true() {}\n"
            ),
            "{out}"
        );
    }

    #[test]
    fn an_item_the_plan_does_not_have_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let plan = plan();
        for extra in [
            "fn only() {}",
            "#![allow(warnings)]",
            "#[test]\nfn f_returns_1() {}",
            "static X: u8 = 1;",
        ] {
            fs::write(
                dir.path().join(TEST_FILE_TEMPLATE),
                format!("{extra}\n{{% for t in tests %}}#[test]\nfn {{{{ t.name }}}}() {{}}\n{{% endfor %}}"),
            )
            .unwrap();
            let err = Templates::load(Some(dir.path()))
                .unwrap()
                .render_file(&plan, &plan.files[0])
                .unwrap_err();
            assert!(
                matches!(err, GenerateError::UnplannedItem { .. }),
                "{extra}: {err}"
            );
        }
    }

    #[test]
    fn a_broken_template_is_reported_by_its_file() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join(TEST_FILE_TEMPLATE), "{% for x in %}").unwrap();
        let err = Templates::load(Some(dir.path())).err().unwrap();
        let msg = err.to_string();
        assert!(
            msg.contains("test_file.rs.tera") && msg.contains("does not parse"),
            "{msg}"
        );
        assert!(!msg.contains('\n'), "{msg}");
    }

    #[test]
    fn a_template_producing_invalid_rust_is_reported_by_the_generated_file() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join(TEST_FILE_TEMPLATE), "fn broken( {").unwrap();
        let plan = plan();
        let err = Templates::load(Some(dir.path()))
            .unwrap()
            .render_file(&plan, &plan.files[0])
            .unwrap_err();
        assert!(
            matches!(err, GenerateError::InvalidGeneratedCode { ref file, .. } if file == "carved_calc_ops.rs"),
            "{err}"
        );
    }

    #[test]
    fn comments_survive_formatting() {
        let out = format_rust(
            "x.rs",
            "fn f() {\n  // Arrange: \"quoted\"\n  let x = 1;\n  //\n}\n",
        )
        .unwrap();
        assert_eq!(
            out,
            "fn f() {\n    // Arrange: \"quoted\"\n    let x = 1;\n    //\n}\n"
        );
    }
}
