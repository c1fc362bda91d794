//! Carved files as cargo test targets. A manifest with `autotests = false` (cargo writes it
//! into every manifest it publishes) builds only the `[[test]]` targets it lists, so each
//! carved file it does not list gets an entry appended at its end; every byte before stays as
//! it was.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::GenerateError;
use crate::read::crate_api::manifest::parse_manifest;
use crate::render::write::write_all;

/// A manifest that must be told of the carved files, as it was before carve touched it.
#[derive(Debug, Clone)]
pub(crate) struct TestTargets {
    crate_dir: PathBuf,
    original: String,
    /// `--out` relative to the crate's directory, `/`-separated (`tests`).
    out: String,
    /// The files its own `[[test]]` targets build, canonical where they exist.
    listed: Vec<PathBuf>,
    /// Its own targets' names, which a carved file's target must not take.
    names: Vec<String>,
}

impl TestTargets {
    /// The crate's manifest when it says `autotests = false` and `out_dir` is inside the
    /// crate; `None` when cargo finds the carved files by itself (or could not build them
    /// wherever they are, outside the package).
    pub(crate) fn needed(crate_dir: &Path, out_dir: &Path) -> Option<TestTargets> {
        let original = fs::read_to_string(crate_dir.join("Cargo.toml")).ok()?;
        let info = parse_manifest(&original);
        if !info.autotests_off {
            return None;
        }
        let crate_dir = crate_dir.canonicalize().ok()?;
        let out = out_dir.canonicalize().ok()?;
        let out = out.strip_prefix(&crate_dir).ok()?;
        let out = out
            .components()
            .map(|c| c.as_os_str().to_str())
            .collect::<Option<Vec<&str>>>()?
            .join("/");
        let listed = info
            .tests
            .iter()
            .filter_map(|t| t.file())
            .map(|f| canonical(&crate_dir.join(f)))
            .collect();
        let names = info.tests.iter().filter_map(|t| t.name.clone()).collect();
        Some(TestTargets {
            crate_dir,
            original,
            out,
            listed,
            names,
        })
    }

    /// Makes the manifest list every carved test file of `files` (the files written in
    /// `--out`) that it does not list itself, starting from the manifest as it was each time
    /// (a file verification removed loses its entry). Gives the names of the targets added.
    pub(crate) fn list(&self, files: &[PathBuf]) -> Result<Vec<String>, GenerateError> {
        let mut text = self.original.clone();
        let mut added = Vec::new();
        for file in files {
            let is_rust = file.extension().is_some_and(|x| x == "rs");
            if !is_rust || !file.is_file() || self.listed.contains(&canonical(file)) {
                continue;
            }
            let (Some(name), Some(file_name)) = (
                file.file_stem().and_then(|s| s.to_str()),
                file.file_name().and_then(|s| s.to_str()),
            ) else {
                continue;
            };
            let manifest = self.crate_dir.join("Cargo.toml");
            if self.names.iter().any(|n| n == name) {
                return Err(GenerateError::TestTargetTaken {
                    manifest,
                    name: name.to_string(),
                });
            }
            let path = match self.out.as_str() {
                "" => file_name.to_string(),
                out => format!("{out}/{file_name}"),
            };
            if !text.ends_with('\n') && !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&entry(name, &path));
            added.push(name.to_string());
        }
        self.write(&text)?;
        Ok(added)
    }

    /// Puts the manifest back as it was: nothing carved stays.
    pub(crate) fn restore(&self) {
        let _ = self.write(&self.original);
    }

    fn write(&self, text: &str) -> Result<(), GenerateError> {
        let manifest = self.crate_dir.join("Cargo.toml");
        if fs::read_to_string(&manifest).is_ok_and(|now| now == text) {
            return Ok(());
        }
        write_all(
            &self.crate_dir,
            &[("Cargo.toml".to_string(), text.to_string())],
        )
        .map(drop)
    }
}

/// Takes out of the manifest in `crate_dir` the `[[test]]` entries carve appended for `files`
/// (carved files the caller removed: `carve assess --write-tests` keeps only those that catch
/// something), so that cargo is not left looking for them.
pub fn forget_test_targets(crate_dir: &Path, files: &[PathBuf]) -> Result<(), GenerateError> {
    let Some(targets) = TestTargets::needed(crate_dir, crate_dir) else {
        return Ok(());
    };
    let mut text = targets.original.clone();
    for file in files {
        let parent = canonical(file.parent().unwrap_or(file));
        let (Some(name), Some(file_name), Ok(rel)) = (
            file.file_stem().and_then(|s| s.to_str()),
            file.file_name().and_then(|s| s.to_str()),
            parent.strip_prefix(&targets.crate_dir),
        ) else {
            continue;
        };
        let path: Vec<&str> = rel
            .iter()
            .filter_map(|c| c.to_str())
            .chain([file_name])
            .collect();
        text = text.replacen(&entry(name, &path.join("/")), "", 1);
    }
    targets.write(&text)
}

/// The `[[test]]` entry carve appends for a carved file (a blank line before it).
fn entry(name: &str, path: &str) -> String {
    format!(
        "\n[[test]]\nname = {}\npath = {}\n",
        toml_str(name),
        toml_str(path)
    )
}

/// A TOML basic string.
fn toml_str(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANIFEST: &str = "[package]\nname = \"p\"\nversion = \"0.1.0\"\nautotests = false\n\n\
                            [[test]]\nname = \"own\"\npath = \"tests/own.rs\"\n";

    fn crate_with(manifest: &str, tests: &[&str]) -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("p");
        fs::create_dir_all(dir.join("tests")).unwrap();
        fs::write(dir.join("Cargo.toml"), manifest).unwrap();
        for t in tests {
            fs::write(dir.join("tests").join(t), "").unwrap();
        }
        (tmp, dir)
    }

    #[test]
    fn each_carved_file_the_manifest_does_not_list_gets_a_target_and_nothing_else_changes() {
        let (_tmp, dir) = crate_with(MANIFEST, &["own.rs", "carved_p.rs", "carved_p_m.rs"]);
        let targets = TestTargets::needed(&dir, &dir.join("tests")).unwrap();
        let files: Vec<PathBuf> = ["own.rs", "carved_p.rs", "carved_p_m.rs", "quarantine.md"]
            .iter()
            .map(|f| dir.join("tests").join(f))
            .collect();
        assert_eq!(targets.list(&files).unwrap(), ["carved_p", "carved_p_m"]);
        let text = fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        let rest = text
            .strip_prefix(MANIFEST)
            .expect("the manifest's bytes kept");
        assert_eq!(
            rest,
            "\n[[test]]\nname = \"carved_p\"\npath = \"tests/carved_p.rs\"\n\
             \n[[test]]\nname = \"carved_p_m\"\npath = \"tests/carved_p_m.rs\"\n"
        );
        // A file verification removed loses its entry; carving again adds nothing twice.
        fs::remove_file(&files[2]).unwrap();
        assert_eq!(targets.list(&files).unwrap(), ["carved_p"]);
        let again = TestTargets::needed(&dir, &dir.join("tests")).unwrap();
        assert!(again.list(&files).unwrap().is_empty());
        forget_test_targets(&dir, &files[1..2]).unwrap();
        assert_eq!(
            fs::read_to_string(dir.join("Cargo.toml")).unwrap(),
            MANIFEST
        );
        targets.list(&files).unwrap();
        targets.restore();
        assert_eq!(
            fs::read_to_string(dir.join("Cargo.toml")).unwrap(),
            MANIFEST
        );
    }

    #[test]
    fn a_manifest_that_finds_its_tests_or_an_out_dir_outside_the_crate_needs_no_target() {
        let (_tmp, dir) = crate_with("[package]\nname = \"p\"\n", &[]);
        assert!(TestTargets::needed(&dir, &dir.join("tests")).is_none());
        let (_tmp, dir) = crate_with(MANIFEST, &[]);
        let elsewhere = tempfile::tempdir().unwrap();
        assert!(TestTargets::needed(&dir, elsewhere.path()).is_none());
    }

    #[test]
    fn a_carved_file_named_like_a_target_of_the_crate_is_refused_with_the_names() {
        let manifest = format!("{MANIFEST}\n[[test]]\nname = \"carved_p\"\npath = \"t/x.rs\"\n");
        let (_tmp, dir) = crate_with(&manifest, &["carved_p.rs"]);
        let targets = TestTargets::needed(&dir, &dir.join("tests")).unwrap();
        let err = targets
            .list(&[dir.join("tests/carved_p.rs")])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("carved_p") && err.contains("Cargo.toml"),
            "{err}"
        );
        assert_eq!(
            fs::read_to_string(dir.join("Cargo.toml")).unwrap(),
            manifest
        );
    }
}
