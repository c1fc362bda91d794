//! A trace moved with its crate (issue 30, shape 8): recorded in one folder, the crate copied
//! to another. The recorded source paths are absolute, so they are matched relative to the
//! package root: `--crate` naming the copy carves the same tests, which pass there and reach the
//! recorded lines. A crate that holds none of the recorded sources is refused in one line naming
//! where they were.

mod common;

use std::path::Path;

use common::*;

const LIB: &str = r#"
/// A running total.
#[derive(Debug, Default)]
pub struct Total {
    sum: i64,
}

impl Total {
    pub fn add(&mut self, x: i64) -> i64 {
        self.sum += x;
        self.sum
    }
}

pub fn halve(x: i64) -> i64 {
    x / 2
}
"#;

const MAIN: &str = r#"
fn main() {
    let mut t = moving::Total::default();
    for x in [4, 10, -3] {
        println!("{}", moving::halve(t.add(x)));
    }
}
"#;

/// The carved `.rs` files under `dir`, by name, with their text.
fn carved(dir: &Path) -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    files.sort();
    files
}

fn copy_crate(from: &Path, to: &Path) {
    for file in ["Cargo.toml", "src/lib.rs", "src/main.rs"] {
        std::fs::create_dir_all(to.join(file).parent().unwrap()).unwrap();
        std::fs::copy(from.join(file), to.join(file)).unwrap();
    }
}

#[test]
fn a_trace_recorded_in_one_folder_carves_the_same_tests_for_a_copy_of_its_crate() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a/moving");
    let manifest =
        "[package]\nname = \"moving\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n";
    write_tree(
        &a,
        &[
            ("Cargo.toml", manifest),
            ("src/lib.rs", LIB),
            ("src/main.rs", MAIN),
        ],
    );
    let built = cargo_in(&a, &["build", "--quiet"]);
    assert!(built.status.success(), "{}", stderr(&built));
    let db = tmp.path().join("trace.db");
    let recorded = record(&db, &["--coverage"], &a.join("target/debug/moving"), &[]);
    assert!(recorded.status.success(), "{}", stderr(&recorded));
    let unverified = |out: &Path, krate: &Path| {
        std::fs::create_dir_all(out).unwrap();
        let o = generate_unverified(&db, out, &["--crate", krate.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        carved(out)
    };
    let in_a = unverified(&tmp.path().join("out-a"), &a);
    assert!(
        in_a.iter().any(|(_, text)| text.contains("halve(")),
        "{in_a:?}"
    );

    // Copied to another folder, the recorded one still there: the same tests.
    let b = tmp.path().join("b/moving");
    copy_crate(&a, &b);
    assert_eq!(unverified(&tmp.path().join("out-b"), &b), in_a);

    // The recorded folder gone: carved into the copy, verified, and they pass there.
    std::fs::rename(tmp.path().join("a"), tmp.path().join("gone")).unwrap();
    let printed = generate_into_tests(&b, &db, &["--crate", b.to_str().unwrap()]);
    let (in_scope, carved_calls) = carved_share(&printed);
    assert!(carved_calls > 0 && carved_calls == in_scope, "{printed}");
    assert_eq!(carved(&b.join("tests")), in_a, "{printed}");
    // The recording's lines are the copy's lines too: every one of the library's is reached.
    let coverage = printed
        .lines()
        .find(|l| l.starts_with("carved tests reach "))
        .unwrap_or_else(|| panic!("the carved tests' line coverage in {printed}"));
    assert!(coverage.contains("(100%)"), "{coverage}");
    let (ok, out) = cargo_test(&b);
    assert!(ok, "{out}");

    // A crate that holds none of the recorded sources (its `src/lib.rs` is another crate's):
    // one line saying where they were and what to pass; nothing written.
    let other = tmp.path().join("other");
    write_tree(
        &other,
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"other\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
            ),
            (
                "src/lib.rs",
                "pub fn halve(x: i64) -> i64 {\n    x / 2\n}\n",
            ),
        ],
    );
    let out = other.join("tests");
    std::fs::create_dir_all(&out).unwrap();
    let refused = generate_unverified(&db, &out, &["--crate", other.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(2), "{}", stdout(&refused));
    let err = stderr(&refused);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    for piece in [
        a.to_str().unwrap(),
        other.to_str().unwrap(),
        "pass --crate DIR",
    ] {
        assert!(err.contains(piece), "{piece} in {err}");
    }
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
}
