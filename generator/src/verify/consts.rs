//! What the crate's public consts hold, asked of the compiler: a const is written into the
//! program where it is used, so no recorded call shows it, and an initializer that calls a
//! `const fn` (`GeneralPurpose::new(&alphabet::STANDARD, PAD)`) is more than carve can read
//! from the source. A small program built against the crate prints `{:?}` of each such const
//! (those whose type has `Debug`; the others print nothing), and the rebuild rule
//! `public_const` compares that text with the derived `Debug` of a recorded state
//! (`arrange/debug_repr.rs`, which knows it only where every type inside derives `Debug`).
//!
//! The program is a package of its own in `target/carve-const-probe/` of the crate (its own
//! `[workspace]`, the crate a path dependency); nothing is written among the crate's sources.
//! Asked only when generate verifies (it has cargo then). Whatever goes wrong (the crate does
//! not build, a const cannot be named) leaves the consts unprobed: the rules then do without.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::error::GenerateError;
use crate::interrupt::Interrupt;
use crate::read::crate_api::manifest::parse_manifest;
use crate::read::crate_api::CrateApi;
use crate::verify::cargo::{run_cargo, Verify};

/// The marker of one const's text in the program's output: `\u{1}carve-const INDEX LEN`, the
/// text (LEN bytes) on the next line.
const MARKER: &str = "\u{1}carve-const ";

/// Types whose consts the source says everything of.
const PRIMITIVES: &[&str] = &[
    "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize", "f32",
    "f64", "bool", "char", "str",
];

/// How many consts one program prints at most.
const MAX_CONSTS: usize = 2_000;

/// Fills in [`crate::read::crate_api::ConstApi::probed`] for the consts of `api` whose
/// initializer calls something; gives how many were probed.
pub(crate) fn probe(
    api: &mut CrateApi,
    crate_dir: &Path,
    (v, interrupt): (&Verify, Interrupt),
) -> Result<usize, GenerateError> {
    let mut wanted = candidates(api);
    if wanted.is_empty() {
        return Ok(0);
    }
    let Some(dir) = write_package(api, crate_dir, &v.features) else {
        return Ok(0);
    };
    // The probe is a package of its own: the crate's features are on its dependency line.
    let v = &Verify {
        features: Vec::new(),
        ..v.clone()
    };
    // A const the program cannot name (or print) is left out, once.
    let mut texts = None;
    for _ in 0..2 {
        write_main(&dir, api, &wanted);
        match build(&dir, (v, interrupt))? {
            Built::Ok => {
                texts = run(&dir, (v, interrupt))?;
                break;
            }
            Built::Failed(lines) if !lines.is_empty() => {
                let first = main_first_line();
                wanted = (wanted.into_iter().enumerate())
                    .filter(|(k, _)| !lines.contains(&(first + k)))
                    .map(|(_, w)| w)
                    .collect();
            }
            Built::Failed(_) => break,
        }
    }
    let Some(texts) = texts else {
        return Ok(0);
    };
    let mut probed = 0;
    for (i, text) in texts {
        let Some((module, ident)) = wanted.get(i) else {
            continue;
        };
        if let Some(c) = api
            .modules
            .get_mut(module)
            .and_then(|m| m.consts.get_mut(ident))
        {
            c.probed = Some(text);
            probed += 1;
        }
    }
    Ok(probed)
}

/// The consts to print: (module path, ident) of each reachable const of a path type other than
/// a primitive whose initializer calls a function or a macro.
fn candidates(api: &CrateApi) -> Vec<(Vec<String>, String)> {
    api.modules
        .values()
        .filter(|m| m.reachable)
        .flat_map(|m| m.consts.values().map(move |c| (m, c)))
        .filter(|(_, c)| {
            !c.type_name.is_empty()
                && !PRIMITIVES.contains(&c.type_name.as_str())
                && (c.expr.contains('(') || c.expr.contains('!'))
        })
        .map(|(m, c)| (m.path.clone(), c.ident.clone()))
        .take(MAX_CONSTS)
        .collect()
}

/// `target/carve-const-probe/` of the crate with its `Cargo.toml` (the crate with `features`);
/// `None` when the crate's manifest names no package or the directory cannot be written.
fn write_package(api: &CrateApi, crate_dir: &Path, features: &[String]) -> Option<PathBuf> {
    let manifest = std::fs::read_to_string(crate_dir.join("Cargo.toml")).ok()?;
    let package = parse_manifest(&manifest).package_name?;
    let dir = crate_dir.join("target").join("carve-const-probe");
    std::fs::create_dir_all(dir.join("src")).ok()?;
    let path = std::fs::canonicalize(crate_dir).ok()?;
    let toml = format!(
        "# Written by carve generate (verify/consts.rs): prints the crate's consts.\n\
         [package]\nname = \"carve-const-probe\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\
         publish = false\n\n[dependencies]\n{} = {{ package = {:?}, path = {:?}, features = {:?} }}\n\n\
         [workspace]\n",
        api.crate_name,
        package,
        path.display().to_string(),
        features,
    );
    std::fs::write(dir.join("Cargo.toml"), toml).ok()?;
    Some(dir)
}

/// The program's lines before the first const's.
const PRELUDE: &str = "\
// Written by carve generate (verify/consts.rs): `{:?}` of each const, where it has `Debug`.
#![allow(warnings)]
struct P<T>(T);
trait ViaDebug { fn text(&self) -> Option<String>; }
impl<T: ::core::fmt::Debug> ViaDebug for P<T> { fn text(&self) -> Option<String> { Some(format!(\"{:?}\", self.0)) } }
trait NoDebug { fn text(&self) -> Option<String>; }
impl<T> NoDebug for &P<T> { fn text(&self) -> Option<String> { None } }
fn show(i: usize, text: Option<String>) {
    if let Some(text) = text { println!(\"\\u{1}carve-const {i} {}\", text.len()); println!(\"{text}\"); }
}
fn main() {
";

/// The line (1-based) of `src/main.rs` that prints the first const.
fn main_first_line() -> usize {
    PRELUDE.lines().count() + 1
}

fn write_main(dir: &Path, api: &CrateApi, wanted: &[(Vec<String>, String)]) {
    let mut main = PRELUDE.to_string();
    for (i, (module, ident)) in wanted.iter().enumerate() {
        let mut path = vec![api.crate_name.clone()];
        path.extend(module.iter().cloned());
        path.push(ident.clone());
        let _ = writeln!(main, "    show({i}, (&P(&::{})).text());", path.join("::"));
    }
    main.push_str("}\n");
    let _ = std::fs::write(dir.join("src").join("main.rs"), main);
}

enum Built {
    Ok,
    /// The lines of `src/main.rs` the errors point at (none: the crate itself failed).
    Failed(Vec<usize>),
}

fn build(dir: &Path, run: (&Verify, Interrupt)) -> Result<Built, GenerateError> {
    let args = ["build", "--message-format=json", "--color", "never"];
    let Some(out) = run_cargo(dir, &args, run)? else {
        return Ok(Built::Failed(Vec::new()));
    };
    if out.success {
        return Ok(Built::Ok);
    }
    let mut lines = Vec::new();
    for message in out.stdout.lines() {
        let Ok(m) = serde_json::from_str::<serde_json::Value>(message) else {
            continue;
        };
        let m = &m["message"];
        if m["level"] != "error" {
            continue;
        }
        for span in m["spans"].as_array().into_iter().flatten() {
            if span["file_name"] == "src/main.rs" {
                if let Some(line) = span["line_start"].as_u64() {
                    lines.push(line as usize);
                }
            }
        }
    }
    Ok(Built::Failed(lines))
}

/// The texts the program printed, by const index.
fn run(
    dir: &Path,
    run: (&Verify, Interrupt),
) -> Result<Option<Vec<(usize, String)>>, GenerateError> {
    let args = ["run", "--quiet", "--color", "never"];
    let Some(out) = run_cargo(dir, &args, run)? else {
        return Ok(None);
    };
    Ok(out.success.then(|| texts(&out.stdout)))
}

/// The texts of the program's output (see [`MARKER`]).
fn texts(stdout: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut rest = stdout;
    while let Some(at) = rest.find(MARKER) {
        rest = &rest[at + MARKER.len()..];
        let Some((header, after)) = rest.split_once('\n') else {
            break;
        };
        let mut words = header.split(' ');
        let (Some(Ok(i)), Some(Ok(len))) = (
            words.next().map(str::parse::<usize>),
            words.next().map(str::parse::<usize>),
        ) else {
            continue;
        };
        let Some(text) = after.get(..len) else {
            break;
        };
        found.push((i, text.to_string()));
        rest = &after[len..];
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_programs_output_gives_each_consts_text_even_over_several_lines() {
        let out =
            "\u{1}carve-const 0 12\nSize(1, \"a\")\n\u{1}carve-const 3 9\nLines {\n}\nnoise\n";
        assert_eq!(
            texts(out),
            [
                (0, "Size(1, \"a\")".to_string()),
                (3, "Lines {\n}".to_string())
            ]
        );
    }
}
