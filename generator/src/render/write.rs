//! Writing the rendered files all or nothing: each goes to a temporary file in the output
//! directory first, and only when every one of them is written are they renamed into place.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::GenerateError;

/// Writes `files` (name, contents) into `out_dir`, returning the written paths in order.
pub(crate) fn write_all(
    out_dir: &Path,
    files: &[(String, String)],
) -> Result<Vec<PathBuf>, GenerateError> {
    let mut staged: Vec<(PathBuf, PathBuf)> = Vec::with_capacity(files.len());
    for (name, contents) in files {
        let target = out_dir.join(safe_name(name));
        let temp = out_dir.join(format!(
            ".{}.carve-{}.tmp",
            safe_name(name),
            std::process::id()
        ));
        if let Err(source) = fs::write(&temp, contents) {
            let _ = fs::remove_file(&temp);
            discard(&staged);
            return Err(GenerateError::Write { path: temp, source });
        }
        staged.push((temp, target));
    }
    let mut written = Vec::with_capacity(staged.len());
    for (i, (temp, target)) in staged.iter().enumerate() {
        if let Err(source) = fs::rename(temp, target) {
            discard(&staged[i..]);
            return Err(GenerateError::Write {
                path: target.clone(),
                source,
            });
        }
        written.push(target.clone());
    }
    Ok(written)
}

fn discard(staged: &[(PathBuf, PathBuf)]) {
    for (temp, _) in staged {
        let _ = fs::remove_file(temp);
    }
}

/// The file name with anything that could leave the directory replaced (plans only produce
/// `[a-z0-9_].rs` names; this is a last guard).
fn safe_name(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let cleaned = cleaned.trim_start_matches('.').replace("..", "_");
    if cleaned.is_empty() {
        "carved.rs".to_string()
    } else {
        cleaned
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_written_and_no_temporaries_remain() {
        let dir = tempfile::tempdir().unwrap();
        let files = vec![
            ("a.rs".to_string(), "A".to_string()),
            ("b.rs".to_string(), "B".to_string()),
        ];
        let written = write_all(dir.path(), &files).unwrap();
        assert_eq!(written, [dir.path().join("a.rs"), dir.path().join("b.rs")]);
        assert_eq!(fs::read_to_string(dir.path().join("b.rs")).unwrap(), "B");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn a_failed_write_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        // A directory in the way of the second temporary file makes its write fail.
        let blocker = format!(".b.rs.carve-{}.tmp", std::process::id());
        fs::create_dir(dir.path().join(&blocker)).unwrap();
        let files = vec![
            ("a.rs".to_string(), "A".to_string()),
            ("b.rs".to_string(), "B".to_string()),
        ];
        assert!(write_all(dir.path(), &files).is_err());
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, [std::ffi::OsString::from(blocker)]);
    }

    #[test]
    fn names_cannot_escape_the_directory() {
        assert_eq!(safe_name("../../etc/passwd"), "___etc_passwd");
        assert!(!safe_name("../x.rs").contains('/'));
        assert!(!safe_name("..").contains(".."));
        assert_eq!(safe_name("carved_a.rs"), "carved_a.rs");
    }
}
