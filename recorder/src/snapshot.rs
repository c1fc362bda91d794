//! What is at a path a recorded call reads, looked at from carve's side while the program is
//! stopped at the read (`sources.rs` finds the read, the tracer the path): its kind, a listed
//! directory's entries, a file's contents up to [`CONTENTS_LIMIT`]. A test rebuilds the same
//! files in a temporary directory (the generator's `arrange/world.rs`); what could not be seen
//! whole is marked so (`Found::is_complete`), and such a call keeps reading the world.

use std::fs;
use std::io::ErrorKind;
use std::path::Path;

use carve_storage::{DirEntry, EntryKind, Found};

/// The most bytes of one file carve copies; a longer file is `File { contents: None }`.
pub(crate) const CONTENTS_LIMIT: u64 = 64 * 1024;

/// The most entries of one directory carve lists; a bigger one is not read (a test would not
/// rebuild it anyway, and each listing is stored with its call).
pub(crate) const ENTRIES_LIMIT: usize = 4096;

/// What is at `path` (the bytes the program passed) for the read `op` (see
/// `sources::PATH_READS`): `read_dir` lists a directory, the others only see that it is one.
/// Symbolic links are not followed.
pub(crate) fn snapshot(op: &str, path: &[u8]) -> Found {
    let not_read = |reason: &str| Found::NotRead {
        reason: reason.to_string(),
    };
    let Ok(text) = std::str::from_utf8(path) else {
        return not_read("the path is not UTF-8");
    };
    if !text.starts_with('/') {
        return not_read("a relative path (read against the program's working directory)");
    }
    let path = Path::new(text);
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == ErrorKind::NotFound => return Found::Missing,
        Err(e) => return not_read(&e.to_string()),
    };
    let kind = meta.file_type();
    if kind.is_symlink() {
        return match fs::read_link(path) {
            Ok(target) => Found::Symlink {
                target: target.to_string_lossy().into_owned(),
            },
            Err(e) => not_read(&e.to_string()),
        };
    }
    if kind.is_dir() {
        if op != "read_dir" {
            return Found::Dir { entries: None };
        }
        return match list(path) {
            Ok(entries) => Found::Dir {
                entries: Some(entries),
            },
            Err(reason) => not_read(&reason),
        };
    }
    if !kind.is_file() {
        return not_read("neither a file nor a directory");
    }
    let len = meta.len();
    if len > CONTENTS_LIMIT {
        return Found::File {
            len,
            contents: None,
        };
    }
    match fs::read(path) {
        // Read again, the length is the one of the bytes copied (a file growing meanwhile).
        Ok(bytes) if bytes.len() as u64 <= CONTENTS_LIMIT => Found::File {
            len: bytes.len() as u64,
            contents: Some(bytes),
        },
        Ok(bytes) => Found::File {
            len: bytes.len() as u64,
            contents: None,
        },
        Err(e) => not_read(&e.to_string()),
    }
}

/// A directory's entries, sorted by name.
fn list(path: &Path) -> Result<Vec<DirEntry>, String> {
    let mut entries = Vec::new();
    for entry in fs::read_dir(path).map_err(|e| e.to_string())? {
        let entry = entry.map_err(|e| e.to_string())?;
        if entries.len() == ENTRIES_LIMIT {
            return Err(format!("more than {ENTRIES_LIMIT} entries"));
        }
        let name = entry
            .file_name()
            .into_string()
            .map_err(|_| "an entry's name is not UTF-8".to_string())?;
        let kind = entry.file_type().map_err(|e| e.to_string())?;
        let kind = if kind.is_symlink() {
            EntryKind::Symlink
        } else if kind.is_dir() {
            EntryKind::Dir
        } else if kind.is_file() {
            EntryKind::File
        } else {
            EntryKind::Other
        };
        entries.push(DirEntry { name, kind });
    }
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(dir: &Path, rest: &str) -> Vec<u8> {
        dir.join(rest).to_str().expect("utf-8").as_bytes().to_vec()
    }

    #[test]
    fn a_listed_directory_gives_its_entries_and_their_kinds_by_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::write(dir.path().join("b.txt"), "two").expect("write");
        fs::create_dir(dir.path().join("a")).expect("mkdir");
        std::os::unix::fs::symlink("b.txt", dir.path().join("c")).expect("symlink");
        let entry = |name: &str, kind| DirEntry {
            name: name.into(),
            kind,
        };
        assert_eq!(
            snapshot("read_dir", &at(dir.path(), "")),
            Found::Dir {
                entries: Some(vec![
                    entry("a", EntryKind::Dir),
                    entry("b.txt", EntryKind::File),
                    entry("c", EntryKind::Symlink),
                ])
            }
        );
        // Another read only sees that it is a directory.
        assert_eq!(
            snapshot("metadata", &at(dir.path(), "")),
            Found::Dir { entries: None }
        );
    }

    #[test]
    fn a_directory_with_more_entries_than_the_bound_is_not_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        for i in 0..=ENTRIES_LIMIT {
            fs::write(dir.path().join(i.to_string()), "").expect("write");
        }
        let found = snapshot("read_dir", &at(dir.path(), ""));
        assert!(
            matches!(&found, Found::NotRead { reason } if reason.contains("4096")),
            "{found:?}"
        );
        fs::remove_file(dir.path().join("0")).expect("remove");
        assert!(snapshot("read_dir", &at(dir.path(), "")).is_complete());
    }

    #[test]
    fn a_file_gives_its_contents_up_to_the_bound_and_is_incomplete_past_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::write(dir.path().join("small"), "hello").expect("write");
        let big = vec![b'x'; CONTENTS_LIMIT as usize + 1];
        fs::write(dir.path().join("big"), &big).expect("write");
        let small = snapshot("read_to_string", &at(dir.path(), "small"));
        assert_eq!(
            small,
            Found::File {
                len: 5,
                contents: Some(b"hello".to_vec())
            }
        );
        assert!(small.is_complete());
        let big = snapshot("metadata", &at(dir.path(), "big"));
        assert_eq!(
            big,
            Found::File {
                len: CONTENTS_LIMIT + 1,
                contents: None
            }
        );
        assert!(!big.is_complete());
    }

    #[test]
    fn missing_paths_are_seen_and_links_relative_paths_and_odd_names_are_not_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(
            snapshot("metadata", &at(dir.path(), "none")),
            Found::Missing
        );
        std::os::unix::fs::symlink("/etc", dir.path().join("link")).expect("symlink");
        let link = snapshot("metadata", &at(dir.path(), "link"));
        assert_eq!(
            link,
            Found::Symlink {
                target: "/etc".into()
            }
        );
        assert!(!link.is_complete());
        for path in [&b"src/main.rs"[..], &b"/tmp/\xff"[..]] {
            let found = snapshot("read", path);
            assert!(
                matches!(found, Found::NotRead { .. }) && !found.is_complete(),
                "{found:?}"
            );
        }
    }
}
