//! The errors the compiler reported while building a carved test file, from cargo's JSON
//! messages, each with the line of the file it points at.

use std::path::Path;

use serde::Deserialize;

/// One error the compiler reported while building a carved test file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CompileError {
    /// `error[E0369]: binary operation `==` cannot be applied to type `Result<i32, E>``.
    pub(crate) message: String,
    /// The line of the carved file it points at (its primary span, followed out of macro
    /// expansions such as `assert_eq!`), if it points into that file at all.
    pub(crate) line: Option<usize>,
}

#[derive(Deserialize)]
pub(crate) struct CargoMessage {
    reason: String,
    message: Option<Diagnostic>,
}

#[derive(Deserialize)]
pub(crate) struct Diagnostic {
    message: String,
    level: String,
    code: Option<Code>,
    #[serde(default)]
    spans: Vec<Span>,
}

#[derive(Deserialize)]
pub(crate) struct Code {
    code: String,
}

#[derive(Deserialize)]
pub(crate) struct Span {
    file_name: String,
    line_start: usize,
    is_primary: bool,
    expansion: Option<Box<Expansion>>,
}

#[derive(Deserialize)]
pub(crate) struct Expansion {
    span: Span,
}

/// The errors in `cargo build --message-format=json` output (one JSON object a line; other lines
/// are skipped), each placed in `file_name` (`carved_calc.rs`) where it can be.
pub(crate) fn compile_errors(cargo_json: &str, file_name: &str) -> Vec<CompileError> {
    let in_file = |span: &Span| Path::new(&span.file_name).file_name() == Some(file_name.as_ref());
    cargo_json
        .lines()
        .filter_map(|line| serde_json::from_str::<CargoMessage>(line).ok())
        .filter(|m| m.reason == "compiler-message")
        .filter_map(|m| m.message)
        .filter(|d| d.level.starts_with("error"))
        .map(|d| {
            let first_line = d.message.lines().next().unwrap_or_default();
            let message = match &d.code {
                Some(code) => format!("error[{}]: {first_line}", code.code),
                None => format!("error: {first_line}"),
            };
            // Primary spans first; a span in a macro's definition counts where it was called.
            let line = [true, false].iter().find_map(|&primary| {
                d.spans
                    .iter()
                    .filter(|s| s.is_primary == primary)
                    .find_map(|s| call_site_in(s, &in_file))
            });
            CompileError { message, line }
        })
        .collect()
}

pub(crate) fn call_site_in(span: &Span, in_file: &impl Fn(&Span) -> bool) -> Option<usize> {
    if in_file(span) {
        return Some(span.line_start);
    }
    call_site_in(&span.expansion.as_ref()?.span, in_file)
}
