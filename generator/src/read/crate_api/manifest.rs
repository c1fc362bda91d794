//! What carve reads of a `Cargo.toml`: the package and library names, the library's path,
//! `autotests`, `[[test]]` paths and the dependencies.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// What carve needs from a `Cargo.toml`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ManifestInfo {
    pub package_name: Option<String>,
    pub lib_name: Option<String>,
    pub lib_path: Option<String>,
    /// Keys of `[dependencies]` and `[dev-dependencies]` (also `[dev-dependencies.x]` tables).
    pub dependencies: BTreeSet<String>,
    /// The crate a test derives serde's traits through: `serde` when a `serde` dependency
    /// turns on its `derive` feature, else `serde_derive` when that is a dependency.
    pub serde_derive: Option<String>,
    /// `[package] autotests = false`: cargo builds no `tests/*.rs` file it is not told of.
    pub autotests_off: bool,
    /// The `[[test]]` targets, in order.
    pub tests: Vec<TestTarget>,
}

/// One `[[test]]` table: its `name` and `path` when given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TestTarget {
    pub name: Option<String>,
    pub path: Option<String>,
}

impl TestTarget {
    /// The file cargo builds, relative to the package: `path`, or else `tests/{name}.rs`.
    pub(crate) fn file(&self) -> Option<String> {
        self.path
            .clone()
            .or_else(|| self.name.as_ref().map(|n| format!("tests/{n}.rs")))
    }
}

/// Reads `[package] name` and `autotests`, `[lib] name` and `path`, the `[[test]]` targets and
/// the dependencies from a manifest. Only plain
/// `key = "string"` lines are understood, which is how Cargo writes and people write these keys.
pub(crate) fn parse_manifest(text: &str) -> ManifestInfo {
    let mut info = ManifestInfo::default();
    let mut section = String::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("[[test]]") {
            info.tests.push(TestTarget::default());
        }
        if line.starts_with('[') {
            section = line
                .trim_start_matches('[')
                .split(']')
                .next()
                .unwrap_or("")
                .trim()
                .to_string();
            for table in ["dependencies.", "dev-dependencies."] {
                if let Some(name) = section.strip_prefix(table) {
                    info.dependencies.insert(name.trim_matches('"').to_string());
                }
            }
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim().trim_matches('"');
        if matches!(section.as_str(), "dependencies" | "dev-dependencies") {
            info.dependencies.insert(key.to_string());
        }
        note_serde_derive(&mut info, &section, key, value);
        if section == "package" && key == "autotests" && value.trim() == "false" {
            info.autotests_off = true;
        }
        let Some(value) = toml_string(value.trim()) else {
            continue;
        };
        match (section.as_str(), key) {
            ("package", "name") => info.package_name = Some(value),
            ("lib", "name") => info.lib_name = Some(value),
            ("lib", "path") => info.lib_path = Some(value),
            ("test", "name") => set_last(&mut info.tests, |t| t.name = Some(value)),
            ("test", "path") => set_last(&mut info.tests, |t| t.path = Some(value)),
            _ => {}
        }
    }
    info
}

/// `serde = { .., features = ["derive"] }`, `[dev-dependencies.serde] features = ["derive"]`,
/// or a `serde_derive` dependency (see [`ManifestInfo::serde_derive`]).
fn note_serde_derive(info: &mut ManifestInfo, section: &str, key: &str, value: &str) {
    let in_deps = matches!(section, "dependencies" | "dev-dependencies");
    let serde_table = matches!(section, "dependencies.serde" | "dev-dependencies.serde");
    let derive_feature = |v: &str| {
        v.split_once("features")
            .is_some_and(|(_, f)| f.contains("\"derive\""))
    };
    if (in_deps && key == "serde" && derive_feature(value))
        || (serde_table && key == "features" && value.contains("\"derive\""))
    {
        info.serde_derive = Some("serde".to_string());
    } else if in_deps && key == "serde_derive" && info.serde_derive.is_none() {
        info.serde_derive = Some("serde_derive".to_string());
    }
}

fn set_last(tests: &mut [TestTarget], set: impl FnOnce(&mut TestTarget)) {
    if let Some(last) = tests.last_mut() {
        set(last);
    }
}

/// A basic (`"..."`, with the common escapes) or literal (`'...'`) TOML string at the start of
/// `value`.
pub(crate) fn toml_string(value: &str) -> Option<String> {
    if let Some(rest) = value.strip_prefix('\'') {
        return rest.split('\'').next().map(str::to_string);
    }
    let rest = value.strip_prefix('"')?;
    let mut out = String::new();
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                other => out.push(other),
            },
            c => out.push(c),
        }
    }
    None
}

/// Walks up from `file` to the nearest directory with a `Cargo.toml` that has a `[package]`.
pub(crate) fn find_package_dir(file: &Path) -> Option<PathBuf> {
    let mut dir = file.parent();
    while let Some(d) = dir {
        let manifest = d.join("Cargo.toml");
        if manifest.is_file() {
            if let Ok(text) = fs::read_to_string(&manifest) {
                if parse_manifest(&text).package_name.is_some() {
                    return Some(d.to_path_buf());
                }
            }
        }
        dir = d.parent();
    }
    None
}
