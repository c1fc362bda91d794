//! The files of one `generate`, staged so that the output directory is left as it was unless
//! generation finishes. They are written into a directory of their own beside the output
//! directory (`.carve-generate-PID` in its parent: the same file system, so a rename moves
//! them), put in place only while verification builds them with cargo (which finds tests only
//! in `tests/`), the files they replace moved aside into the staging directory meanwhile, and
//! committed when everything is done. A [`Stage`] dropped without [`Stage::commit`] (an error,
//! an interruption) takes its files out of the output directory, puts back what they replaced
//! and removes the staging directory.

use std::collections::BTreeSet;
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use crate::error::GenerateError;
use crate::render::write;

/// Where the files moved aside wait, inside the staging directory.
const REPLACED: &str = "replaced";

pub(crate) struct Stage {
    out_dir: PathBuf,
    dir: PathBuf,
    /// Written into the staging directory, not yet in the output directory.
    staged: Vec<String>,
    /// In the output directory, put there by this stage.
    placed: Vec<String>,
    /// Files of the output directory moved aside (their names), to put back unless committed.
    replaced: BTreeSet<String>,
    committed: bool,
}

impl Stage {
    /// A new staging directory beside `out_dir`.
    pub(crate) fn new(out_dir: &Path) -> Result<Stage, GenerateError> {
        let failed = |path: &Path, source| GenerateError::Stage {
            path: path.to_path_buf(),
            source,
        };
        let out = out_dir.canonicalize().map_err(|e| failed(out_dir, e))?;
        let parent = out.parent().unwrap_or(&out).to_path_buf();
        let mut n = 0;
        let dir = loop {
            let suffix = if n == 0 {
                String::new()
            } else {
                format!("-{n}")
            };
            let dir = parent.join(format!(".carve-generate-{}{suffix}", std::process::id()));
            match fs::create_dir(&dir) {
                Ok(()) => break dir,
                Err(e) if e.kind() == ErrorKind::AlreadyExists && n < 100 => n += 1,
                Err(e) => return Err(failed(&dir, e)),
            }
        };
        let stage = Stage {
            out_dir: out_dir.to_path_buf(),
            dir,
            staged: Vec::new(),
            placed: Vec::new(),
            replaced: BTreeSet::new(),
            committed: false,
        };
        fs::create_dir(stage.dir.join(REPLACED)).map_err(|e| failed(&stage.dir, e))?;
        Ok(stage)
    }

    /// Writes `files` (name, contents) into the staging directory; returns the paths they will
    /// have in the output directory.
    pub(crate) fn write(
        &mut self,
        files: &[(String, String)],
    ) -> Result<Vec<PathBuf>, GenerateError> {
        let written = write::write_all(&self.dir, files)?;
        let mut paths = Vec::with_capacity(written.len());
        for path in written {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            paths.push(self.out_dir.join(&name));
            if !self.staged.contains(&name) {
                self.staged.push(name);
            }
        }
        Ok(paths)
    }

    /// Moves the staged files into the output directory, each file there of the same name moved
    /// aside first (once: a file this stage put there is its own).
    pub(crate) fn place(&mut self) -> Result<(), GenerateError> {
        for name in std::mem::take(&mut self.staged) {
            let target = self.out_dir.join(&name);
            let is_ours = self.placed.contains(&name);
            if !is_ours && target.symlink_metadata().is_ok() {
                let aside = self.dir.join(REPLACED).join(&name);
                fs::rename(&target, &aside).map_err(|source| GenerateError::Stage {
                    path: target.clone(),
                    source,
                })?;
                self.replaced.insert(name.clone());
            }
            let from = self.dir.join(&name);
            fs::rename(&from, &target).map_err(|source| GenerateError::Write {
                path: target.clone(),
                source,
            })?;
            if !is_ours {
                self.placed.push(name);
            }
        }
        Ok(())
    }

    /// Takes the placed files out of the output directory and puts back what they replaced (the
    /// staged ones stay staged). Gives the first failure, after trying every file.
    pub(crate) fn take_back(&mut self) -> Result<(), GenerateError> {
        let mut first = None;
        for name in std::mem::take(&mut self.placed) {
            let target = self.out_dir.join(&name);
            if let Err(e) = fs::remove_file(&target) {
                if e.kind() != ErrorKind::NotFound {
                    first.get_or_insert((target.clone(), e));
                }
            }
            if self.replaced.remove(&name) {
                if let Err(e) = fs::rename(self.dir.join(REPLACED).join(&name), &target) {
                    first.get_or_insert((target, e));
                }
            }
        }
        match first {
            None => Ok(()),
            Some((path, source)) => Err(GenerateError::Write { path, source }),
        }
    }

    /// Places what is still staged and removes the staging directory: generation is done.
    /// Returns the files of the output directory that were replaced (or, verification having
    /// taken out all of a file's tests, removed), in name order.
    pub(crate) fn commit(mut self) -> Result<Vec<PathBuf>, GenerateError> {
        self.place()?;
        self.committed = true;
        let _ = fs::remove_dir_all(&self.dir);
        Ok(self.replaced.iter().map(|n| self.out_dir.join(n)).collect())
    }
}

impl Drop for Stage {
    fn drop(&mut self) {
        if !self.committed {
            let _ = self.take_back();
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(n, c)| (n.to_string(), c.to_string()))
            .collect()
    }

    fn listing(dir: &Path) -> Vec<(String, String)> {
        let mut out: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let text = fs::read_to_string(e.path()).unwrap_or_default();
                (e.file_name().to_string_lossy().into_owned(), text)
            })
            .collect();
        out.sort();
        out
    }

    #[test]
    fn nothing_reaches_the_output_directory_before_commit_and_a_drop_puts_it_back() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("tests");
        fs::create_dir(&out).unwrap();
        fs::write(out.join("carved_a.rs"), "old a").unwrap();
        fs::write(out.join("mine.rs"), "mine").unwrap();
        let before = listing(&out);
        {
            let mut stage = Stage::new(&out).unwrap();
            stage
                .write(&files(&[("carved_a.rs", "new a"), ("carved_b.rs", "b")]))
                .unwrap();
            assert_eq!(listing(&out), before);
            stage.place().unwrap();
            assert_eq!(
                fs::read_to_string(out.join("carved_a.rs")).unwrap(),
                "new a"
            );
            // Verification rewrites a placed file: still this stage's, not moved aside again.
            stage.write(&files(&[("carved_a.rs", "newer a")])).unwrap();
            stage.place().unwrap();
            assert_eq!(
                fs::read_to_string(out.join("carved_a.rs")).unwrap(),
                "newer a"
            );
        }
        assert_eq!(listing(&out), before);
        assert_eq!(
            fs::read_dir(root.path()).unwrap().count(),
            1,
            "staging left"
        );
    }

    #[test]
    fn commit_places_everything_and_names_what_it_replaced() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("tests");
        fs::create_dir(&out).unwrap();
        fs::write(out.join("carved_a.rs"), "old a").unwrap();
        fs::write(out.join("carved_c.rs"), "old c").unwrap();
        let mut stage = Stage::new(&out).unwrap();
        stage
            .write(&files(&[
                ("carved_a.rs", "new a"),
                ("carved_c.rs", "new c"),
            ]))
            .unwrap();
        stage.place().unwrap();
        // Verification took out every test of carved_c.rs.
        fs::remove_file(out.join("carved_c.rs")).unwrap();
        stage.write(&files(&[("carved_b.rs", "b")])).unwrap();
        let replaced = stage.commit().unwrap();
        assert_eq!(replaced, [out.join("carved_a.rs"), out.join("carved_c.rs")]);
        assert_eq!(
            listing(&out),
            files(&[("carved_a.rs", "new a"), ("carved_b.rs", "b")])
        );
        assert_eq!(
            fs::read_dir(root.path()).unwrap().count(),
            1,
            "staging left"
        );
    }

    #[test]
    fn an_output_directory_whose_parent_is_read_only_is_named() {
        let err = Stage::new(Path::new("/proc/self")).err().unwrap();
        assert!(
            err.to_string()
                .starts_with("cannot stage the carved files in /proc/"),
            "{err}"
        );
    }
}
