//! Calls that read files by absolute path are carved with those files rebuilt: the recorder
//! stores what each read saw (`file_reads`), and the carved test builds the same directory
//! under a fresh temporary one (the program deleted the original), with the recorded path
//! written as that directory in the arguments and the expected values.

mod common;

use common::*;

const LIB: &str = r#"
use std::path::PathBuf;

/// The names of the `.txt` files in `dir`, sorted.
pub fn text_files(dir: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".txt"))
        .collect();
    names.sort();
    names
}

/// The first line of the file at `path`.
pub fn first_line(path: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines().next().map(str::to_string)
}

/// The subdirectories of `dir`, as full paths, sorted.
pub fn subdirs(dir: &str) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// Reads the clock besides a file: still untestable.
pub fn stamped_line(path: &str) -> String {
    let now = std::time::SystemTime::now();
    format!("{:?} {}", now.elapsed().is_ok(), first_line(path).unwrap_or_default())
}
"#;

const MAIN: &str = r##"
fn main() {
    let root = std::env::temp_dir().join(format!("world-files-{}", std::process::id()));
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(root.join("a.txt"), "alpha\nsecond").unwrap();
    std::fs::write(root.join("b.txt"), "beta").unwrap();
    std::fs::write(root.join("c.md"), "c").unwrap();
    let dir = root.to_str().unwrap();
    println!("{:?}", files::text_files(dir));
    println!("{:?}", files::first_line(&format!("{dir}/a.txt")));
    println!("{:?}", files::subdirs(dir));
    println!("{}", files::stamped_line(&format!("{dir}/b.txt")));
    std::fs::remove_dir_all(&root).unwrap();
}
"##;

#[test]
fn calls_reading_files_by_absolute_path_are_carved_with_the_files_rebuilt() {
    let c = carve_small_crate_with("files", LIB, MAIN, &["--filter", "files::*"], &[]);

    // The recording holds what each read saw at the moment it read.
    let trace = load(&c.db);
    let first_line = calls_of(&trace, "files::first_line")[0].id;
    let read = trace
        .file_reads
        .iter()
        .find(|r| r.call == first_line && r.op == "read_to_string")
        .unwrap_or_else(|| panic!("{:#?}", trace.file_reads));
    assert!(read.path.ends_with("/a.txt"), "{read:?}");
    assert_eq!(
        read.found,
        carve_storage::Found::File {
            len: 12,
            contents: Some(b"alpha\nsecond".to_vec())
        }
    );

    // The listing keeps each entry's kind: a test builds files as files, directories as such.
    let text_files = calls_of(&trace, "files::text_files")[0].id;
    let listed = trace
        .file_reads
        .iter()
        .find(|r| r.call == text_files && r.op == "read_dir")
        .unwrap_or_else(|| panic!("{:#?}", trace.file_reads));
    let entry = |name: &str, kind| carve_storage::DirEntry {
        name: name.into(),
        kind,
    };
    assert_eq!(
        listed.found,
        carve_storage::Found::Dir {
            entries: Some(vec![
                entry("a.txt", carve_storage::EntryKind::File),
                entry("b.txt", carve_storage::EntryKind::File),
                entry("c.md", carve_storage::EntryKind::File),
                entry("sub", carve_storage::EntryKind::Dir),
            ])
        }
    );

    // `carve show` says what each call found.
    let shown = carve().args(["show", "--db"]).arg(&c.db).output().unwrap();
    let shown = stdout(&shown);
    let line = shown
        .lines()
        .find(|l| l.contains("files::first_line(") && l.contains("/a.txt"))
        .unwrap_or_else(|| panic!("{shown}"));
    assert!(
        line.contains("(files seen: /") && line.contains("/a.txt: 12 bytes)"),
        "{line}"
    );

    let file = std::fs::read_to_string(c.dir.join("tests/carved_files.rs")).unwrap();
    assert_carved(
        &file,
        &c.summary,
        &[
            "files::text_files(recorded_files.at(\"\"))",
            "files::first_line(recorded_files.at(\"/a.txt\"))",
            "std::fs::write(files.0.join(\"a.txt\"), \"alpha\\nsecond\")",
            "std::fs::create_dir_all(files.0.join(\"sub\"))",
            "std::path::PathBuf::from(recorded_files.at(\"/sub\"))",
        ],
    );
    // The clock keeps its call untestable.
    assert!(!file.contains("stamped_line"), "{file}");
    assert!(c.summary.contains("untestable"), "{}", c.summary);
    assert_pass_then_fail_after(
        &c.dir,
        "n.ends_with(\".txt\")",
        "n.ends_with(\".md\")",
        "text_files",
    );
}
