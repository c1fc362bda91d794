//! A trace moved with its crate. DWARF names source files by absolute path, so a trace recorded
//! in one folder names files that a copy of its crate holds somewhere else. Recorded files are
//! matched relative to the package root: the recorded crate's root is where a recorded file's
//! path ends in a file the crate being carved holds (`/a/calc/src/lib.rs` against `/b/calc`:
//! `/a/calc`), and the recorded files under it are read under the crate
//! ([`CrateApi::recorded_root`]). This never chooses the crate: it is the one the user named
//! (`crate_dir.rs`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use carve_storage::{FunctionInfo, Language};

use crate::error::GenerateError;
use crate::read::crate_api::{canonical, CrateApi};

/// Finds where the trace's sources were when it was recorded with the crate elsewhere (the
/// root the files of the crate's own functions, by their paths, agree on), and tells `api`. Refuses, naming where the trace's sources were, when no recorded source file
/// of Rust code is in the crate, as recorded or moved; a trace naming no source file at all
/// (stripped of it) is left as it is.
pub(crate) fn anchor(api: &mut CrateApi, functions: &[FunctionInfo]) -> Result<(), GenerateError> {
    let mut weight: BTreeMap<&Path, usize> = BTreeMap::new();
    for f in functions.iter().filter(|f| f.language == Language::Rust) {
        if let Some(file) = f.decl_file.as_deref() {
            *weight.entry(Path::new(file)).or_default() += 1;
        }
    }
    if weight.is_empty() {
        return Ok(());
    }
    let crate_dir = canonical(&api.dir);
    let in_crate = weight
        .keys()
        .any(|file| file.is_file() && canonical(file).starts_with(&crate_dir));
    if in_crate {
        return Ok(());
    }
    // Another crate's files can end alike (`src/lib.rs`): only the files of functions of this
    // crate, by their paths, say where it was.
    let mut own: BTreeMap<&Path, usize> = BTreeMap::new();
    for f in functions
        .iter()
        .filter(|f| of_crate(&f.path, &api.crate_name))
    {
        if let Some(file) = f.decl_file.as_deref() {
            *own.entry(Path::new(file)).or_default() += 1;
        }
    }
    let mut roots: BTreeMap<PathBuf, usize> = BTreeMap::new();
    for (file, w) in &own {
        if let Some(root) = recorded_root(file, &crate_dir) {
            *roots.entry(root).or_default() += w;
        }
    }
    // The root most recorded functions agree on; ties go to the first in order.
    let best = roots.into_iter().fold(
        None,
        |best: Option<(PathBuf, usize)>, (root, w)| match best {
            Some((_, bw)) if bw >= w => best,
            _ => Some((root, w)),
        },
    );
    match best {
        Some((root, _)) => {
            api.recorded_root = Some(root);
            Ok(())
        }
        None => Err(GenerateError::NoRecordedSource {
            crate_dir: api.dir.clone(),
            recorded: where_recorded(&weight),
        }),
    }
}

/// Whether demangled function path `path` names an item of crate `name`: `calc::add`,
/// `<calc::Num as core::fmt::Display>::fmt`, `<u8 as calc::Double>::double`.
fn of_crate(path: &str, name: &str) -> bool {
    path.match_indices(name).any(|(at, _)| {
        let before = path[..at].chars().last();
        path[at + name.len()..].starts_with("::")
            && !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
    })
}

/// The directory `file` (recorded) was in the crate's place: the shortest prefix of its path
/// whose rest is a file of `crate_dir`. `None` when no ending of its path is.
fn recorded_root(file: &Path, crate_dir: &Path) -> Option<PathBuf> {
    if !file.is_absolute() {
        return None;
    }
    let parts: Vec<_> = file.components().collect();
    (1..parts.len()).find_map(|at| {
        let rest: PathBuf = parts[at..].iter().collect();
        crate_dir
            .join(&rest)
            .is_file()
            .then(|| parts[..at].iter().collect())
    })
}

/// Where the trace's sources were, for the error: the package root of the file most functions
/// were declared in, as its path spells it (the directory above its `src/`), or its directory.
fn where_recorded(weight: &BTreeMap<&Path, usize>) -> PathBuf {
    let Some((file, _)) = weight.iter().max_by_key(|(_, w)| **w) else {
        return PathBuf::new();
    };
    let parts: Vec<_> = file.components().collect();
    match parts.iter().rposition(|c| c.as_os_str() == "src") {
        Some(at) if at > 0 => parts[..at].iter().collect(),
        _ => file.parent().map(Path::to_path_buf).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use carve_storage::{FunctionId, Language};

    fn declared_in(files: &[&str]) -> Vec<FunctionInfo> {
        files
            .iter()
            .enumerate()
            .map(|(i, file)| FunctionInfo {
                id: FunctionId(i as u32),
                path: format!("calc::f{i}"),
                name: format!("f{i}"),
                linkage_name: None,
                language: Language::Rust,
                decl_file: Some((*file).to_string()),
                decl_line: None,
                low_pc: 0,
                params: Vec::new(),
                return_type: None,
            })
            .collect()
    }

    fn calc() -> (tempfile::TempDir, CrateApi) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("calc");
        std::fs::create_dir_all(dir.join("src/ops")).unwrap();
        std::fs::write(
            dir.join("Cargo.toml"),
            "[package]\nname = \"calc\"\nversion = \"0.1.0\"\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("src/lib.rs"),
            "pub mod ops;\npub fn one() -> u8 { 1 }\n",
        )
        .unwrap();
        std::fs::write(dir.join("src/ops.rs"), "pub fn two() -> u8 { 2 }\n").unwrap();
        std::fs::write(dir.join("src/main.rs"), "fn main() {}\n").unwrap();
        let api = CrateApi::load(&dir).unwrap();
        (tmp, api)
    }

    #[test]
    fn sources_recorded_in_another_folder_are_read_in_the_crate_relative_to_its_root() {
        let (_tmp, mut api) = calc();
        let functions = declared_in(&[
            "/home/a/work/calc/src/lib.rs",
            "/home/a/work/calc/src/ops.rs",
            "/home/a/work/calc/src/main.rs",
            "/home/a/.cargo/registry/src/dep-1.0/src/util.rs",
            "/rustc/0123/library/core/src/fmt/mod.rs",
        ]);
        anchor(&mut api, &functions).unwrap();
        assert_eq!(
            api.recorded_root.as_deref(),
            Some(Path::new("/home/a/work/calc"))
        );
        assert!(api.contains_file(Path::new("/home/a/work/calc/src/ops.rs")));
        assert!(!api.contains_file(Path::new("/home/a/work/calc/src/main.rs")));
        assert!(!api.contains_file(Path::new("/rustc/0123/library/core/src/fmt/mod.rs")));
    }

    #[test]
    fn sources_in_the_crate_or_none_at_all_need_no_anchor() {
        let (_tmp, mut api) = calc();
        let here = api.dir.join("src/lib.rs").display().to_string();
        anchor(&mut api, &declared_in(&[&here])).unwrap();
        assert_eq!(api.recorded_root, None);
        anchor(&mut api, &[]).unwrap();
        assert_eq!(api.recorded_root, None);
    }

    #[test]
    fn a_trace_of_another_crate_is_refused_naming_where_its_sources_were() {
        let (_tmp, mut api) = calc();
        let err = anchor(
            &mut api,
            &declared_in(&["/home/a/other/src/parse.rs", "/home/a/other/src/parse.rs"]),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("/home/a/other")
                && err.contains(&api.dir.display().to_string())
                && err.contains("--crate DIR"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1);
        // Its files end as the crate's do, but its functions are another crate's.
        let (_tmp, mut api) = calc();
        let mut other = declared_in(&["/home/a/other/src/lib.rs"]);
        other[0].path = "<other::Num as core::fmt::Display>::fmt".into();
        let err = anchor(&mut api, &other).unwrap_err().to_string();
        assert!(err.contains("/home/a/other;"), "{err}");
    }

    #[test]
    fn a_function_path_names_its_crate_by_a_whole_segment() {
        assert!(of_crate("calc::add", "calc"));
        assert!(of_crate("<calc::Num as core::fmt::Display>::fmt", "calc"));
        assert!(of_crate("<u8 as calc::Double>::double", "calc"));
        assert!(!of_crate("mycalc::add", "calc"));
        assert!(!of_crate("other::calc", "calc"));
    }
}
