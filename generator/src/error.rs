//! The one error type of the generator: each message names the thing and the fix.

use std::path::PathBuf;

/// Why tests could not be generated. Nothing is written when `generate` returns one of these.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GenerateError {
    #[error("--out {} is not a directory: create it or point --out at the crate's tests/ directory", path.display())]
    OutDirNotADirectory { path: PathBuf },

    #[error("verifying the carved tests failed: {what}{}: check that cargo works in the crate, or pass --no-verify", source.as_ref().map(|e| format!(": {e}")).unwrap_or_default())]
    Verify {
        what: String,
        source: Option<std::io::Error>,
    },

    #[error("cannot find the library crate of `{program}`: pass --crate DIR")]
    CrateNotFound { program: String },

    #[error("the recorded sources are in the crate at {}, not in the crate at {} that --out or the current directory is in; carve builds and tests only the crate you point it at: pass --crate DIR to say which", recorded.display(), found.display())]
    CrateElsewhere { found: PathBuf, recorded: PathBuf },

    #[error("none of the recorded source files is in the crate at {}, at its recorded path or relative to the package root: the trace's sources were under {}; pass --crate DIR naming that crate (or a copy of it)", crate_dir.display(), recorded.display())]
    NoRecordedSource {
        crate_dir: PathBuf,
        recorded: PathBuf,
    },

    #[error("neither --out {} nor the current directory is inside a crate, and the recorded sources are in the crate at {}; carve builds and tests only the crate you point it at: pass --crate DIR (that one, if you mean it)", out_dir.display(), recorded.display())]
    NoCrateAtOut { out_dir: PathBuf, recorded: PathBuf },

    #[error("call {call} of run {run} is its own ancestor (its parent links loop back to it): the trace is damaged; record the program again")]
    ParentCycle { call: u64, run: i64 },

    #[error("`{program}` was recorded from {language} code, and carve generate writes tests for Rust libraries only: record a Rust program (carve show still displays this trace)")]
    NotRust { program: String, language: String },

    #[error("cannot read {}: {source}: pass --crate DIR with the directory of the crate's Cargo.toml", path.display())]
    ReadManifest {
        path: PathBuf,
        source: std::io::Error,
    },

    #[error("{} has no [package] section: pass --crate DIR with the library crate's own directory, not a workspace root", path.display())]
    NotAPackage { path: PathBuf },

    #[error("the crate in {} has no library ({} does not exist): carve writes tests against a library crate; move the code under test into src/lib.rs", dir.display(), lib_root.display())]
    NoLibrary { dir: PathBuf, lib_root: PathBuf },

    #[error("cannot read {}: {source}: check that the crate's source is present and readable", path.display())]
    ReadSource {
        path: PathBuf,
        source: std::io::Error,
    },

    #[error("cannot parse {}: {message}: fix the syntax error (carve reads the crate's source with syn)", path.display())]
    ParseSource { path: PathBuf, message: String },

    #[error("--templates {} is not a directory: point it at a directory holding the templates to override (e.g. test_file.rs.tera)", path.display())]
    TemplatesDirNotADirectory { path: PathBuf },

    #[error("cannot read template {}: {source}: check its permissions or remove it to use the built-in one", path.display())]
    ReadTemplate {
        path: PathBuf,
        source: std::io::Error,
    },

    #[error("template {template} does not parse: {message}: fix it, or remove it from --templates DIR to use the built-in one")]
    TemplateParse { template: String, message: String },

    #[error("rendering {file} with template {template} failed: {message}: fix the template (see the built-in one for the variables it gets)")]
    Render {
        template: String,
        file: String,
        message: String,
    },

    #[error("generated {file} is not valid Rust ({message}): with --templates, fix the template; otherwise this is a carve bug, please report it")]
    InvalidGeneratedCode { file: String, message: String },

    #[error("{} sets `autotests = false` and has a [[test]] target named `{name}` for another file, the name carve gives a carved file's target: rename that target, or carve into an --out DIR it does not build", manifest.display())]
    TestTargetTaken { manifest: PathBuf, name: String },

    #[error("generated {file} holds an item carve did not plan ({item}): with --templates, write only the tests, mocks and uses the template is given; otherwise the trace may hold code made to be injected: do not run it, and report it")]
    UnplannedItem { file: String, item: String },

    #[error("cannot write {}: {source}: check that --out DIR is writable", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },

    #[error("cannot stage the carved files in {}: {source}: carve writes them beside --out first, so the directory holding --out must be writable", path.display())]
    Stage {
        path: PathBuf,
        source: std::io::Error,
    },

    #[error("generate was interrupted; {} is as it was before: run it again to carve the tests", out_dir.display())]
    Interrupted { out_dir: PathBuf },
}
