//! Which crate `generate` reads, builds and tests, and what the recording must be for it to.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use carve_storage::{CallId, FunctionId, Language, Trace};

use crate::error::GenerateError;
use crate::read::crate_api::{self, CrateApi};
use crate::read::group::Recording;
use crate::read::tree::call_in_parent_cycle;

pub(crate) fn program_name(trace: &Trace) -> String {
    let program = &trace.run.info.program;
    Path::new(program)
        .file_name()
        .map_or_else(|| program.clone(), |n| n.to_string_lossy().into_owned())
}

/// The crate `generate` reads, builds and tests when `--crate` does not name it: the package
/// holding `--out`, or else the current directory (the nearest `Cargo.toml` with a
/// `[package]` at or above it). A trace is a file people share, so what it says never chooses
/// what runs: when its source files point into another crate, it is refused with both paths.
pub(crate) fn crate_to_build(
    trace: &Trace,
    equivalent: &BTreeMap<CallId, Vec<CallId>>,
    over_max: &BTreeMap<FunctionId, usize>,
    rows: &[carve_storage::Call],
    out_dir: &Path,
) -> Result<PathBuf, GenerateError> {
    let found = package_at_or_above(out_dir).or_else(|| package_at_or_above(Path::new(".")));
    let recorded = find_crate_dir(trace, equivalent, over_max, rows);
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    match (found, recorded) {
        (Some(found), Some(recorded)) if !same(&found, &recorded) => {
            Err(GenerateError::CrateElsewhere { found, recorded })
        }
        // Spelled as the recorded sources spell it: their paths are compared with it.
        (Some(_), Some(recorded)) => Ok(recorded),
        (Some(found), None) => Ok(found),
        (None, Some(recorded)) => Err(GenerateError::NoCrateAtOut {
            out_dir: out_dir.to_path_buf(),
            recorded,
        }),
        (None, None) => Err(GenerateError::CrateNotFound {
            program: program_name(trace),
        }),
    }
}

/// The nearest directory at or above `dir` (made absolute) with a `Cargo.toml` that has a
/// `[package]`.
pub(crate) fn package_at_or_above(dir: &Path) -> Option<PathBuf> {
    let dir = dir.canonicalize().ok()?;
    crate_api::manifest::find_package_dir(&dir.join("Cargo.toml"))
}

/// The package with a library that most recorded calls point into, found by walking up from
/// the functions' source files to their `Cargo.toml`.
pub(crate) fn find_crate_dir(
    trace: &Trace,
    equivalent: &BTreeMap<CallId, Vec<CallId>>,
    over_max: &BTreeMap<FunctionId, usize>,
    rows: &[carve_storage::Call],
) -> Option<PathBuf> {
    let mut calls_per_function: HashMap<_, usize> =
        over_max.iter().map(|(&f, &n)| (f, n)).collect();
    for row in rows {
        *calls_per_function.entry(row.function).or_default() += 1;
    }
    for call in &trace.calls {
        *calls_per_function.entry(call.function).or_default() +=
            1 + equivalent.get(&call.id).map_or(0, Vec::len);
    }
    let mut package_of_dir: HashMap<PathBuf, Option<PathBuf>> = HashMap::new();
    let mut weight: BTreeMap<PathBuf, usize> = BTreeMap::new();
    for f in &trace.functions {
        if f.language != Language::Rust {
            continue;
        }
        let Some(file) = f
            .decl_file
            .as_deref()
            .map(Path::new)
            .filter(|p| p.is_file())
        else {
            continue;
        };
        let Some(parent) = file.parent() else {
            continue;
        };
        let package = package_of_dir
            .entry(parent.to_path_buf())
            .or_insert_with(|| {
                crate_api::manifest::find_package_dir(file).filter(|dir| has_library(dir))
            })
            .clone();
        if let Some(dir) = package {
            // Functions with no calls still vote, a little.
            *weight.entry(dir).or_default() +=
                1 + calls_per_function.get(&f.id).copied().unwrap_or(0);
        }
    }
    // Highest weight; ties go to the first path in order, for determinism.
    weight
        .into_iter()
        .fold(
            None,
            |best: Option<(PathBuf, usize)>, (dir, w)| match best {
                Some((_, bw)) if bw >= w => best,
                _ => Some((dir, w)),
            },
        )
        .map(|(dir, _)| dir)
}

pub(crate) fn has_library(dir: &Path) -> bool {
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap_or_default();
    let info = crate_api::manifest::parse_manifest(&manifest);
    dir.join(info.lib_path.as_deref().unwrap_or("src/lib.rs"))
        .is_file()
}

/// Checks the recording (`rows`: calls kept aside as table rows) and finds the crate: refuses a
/// trace of no Rust code or with looping parent links, and one whose recorded sources the
/// crate does not hold (`moved.rs`: a trace moved with its crate is read relative to its
/// root). Gives the crate's directory and its public API.
pub(crate) fn check(
    rec: &Recording,
    crate_dir: Option<&PathBuf>,
    out_dir: &Path,
) -> Result<(PathBuf, CrateApi), GenerateError> {
    let trace = rec.trace;
    if !trace.functions.is_empty() && trace.functions.iter().all(|f| f.language != Language::Rust) {
        return Err(GenerateError::NotRust {
            program: program_name(trace),
            language: match trace.functions[0].language {
                Language::C => "C",
                _ => "non-Rust",
            }
            .to_string(),
        });
    }
    if let Some(call) = call_in_parent_cycle(trace.calls.iter().chain(rec.rows)) {
        return Err(GenerateError::ParentCycle {
            call: call.0,
            run: trace.run.id.0,
        });
    }
    let crate_dir = match crate_dir {
        Some(dir) => dir.clone(),
        None => crate_to_build(trace, rec.equivalent, rec.over_max, rec.rows, out_dir)?,
    };
    let api = CrateApi::load_recorded(&crate_dir, &trace.functions)?;
    Ok((crate_dir, api))
}
