//! Snapshots (insta) of the tests carved from the deterministic fixtures, so any change in what
//! the generator writes shows up in review. Every snapshotted file passed verification (it
//! compiled and its tests passed three times against the fixture) before it was compared.

mod common;

use common::*;

/// Records `fixture` run with `args`, carves verified tests, and returns (file name, contents)
/// of each file.
fn carved(fixture: &str, args: &[&str]) -> Vec<(String, String)> {
    let (_tmp, dir) = copy_fixture(fixture);
    carve_tests(&dir, fixture, args);
    let tests = dir.join("tests");
    let mut files: Vec<(String, String)> = std::fs::read_dir(&tests)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("carved_")
        })
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    files.sort();
    assert!(
        files.iter().all(|(name, _)| name.ends_with(".rs")),
        "nothing was quarantined: {:?}",
        files.iter().map(|(n, _)| n).collect::<Vec<_>>()
    );
    files
}

fn snapshot(fixture: &str) {
    snapshot_run(fixture, &[]);
}

fn snapshot_run(fixture: &str, args: &[&str]) {
    for (name, contents) in carved(fixture, args) {
        insta::assert_snapshot!(format!("{fixture}__{name}"), contents);
    }
}

#[test]
fn account_tests_are_pinned() {
    snapshot("account");
}

#[test]
fn versioned_set_tests_are_pinned() {
    snapshot("versioned_set");
}

#[test]
fn returns_tests_are_pinned() {
    snapshot("returns");
}

#[test]
fn expr_tests_are_pinned() {
    snapshot("expr");
}

#[test]
fn mouse_tests_are_pinned() {
    snapshot("mouse");
}

/// Mocks for a trait-bounded type parameter, `impl Trait`, `&P` and `Rc<dyn T>` arguments.
#[test]
fn catalog_tests_are_pinned() {
    snapshot("catalog");
}

#[test]
fn abc_tests_are_pinned() {
    snapshot("abc");
}

#[test]
fn dao_tests_are_pinned() {
    snapshot("dao");
}

#[test]
fn ping_tests_are_pinned() {
    snapshot("ping");
}

#[test]
fn dice_tests_are_pinned_for_a_seeded_run() {
    snapshot_run("dice", &["7"]);
}

/// Eight threads run in a different order each time; the carved file must not change with it.
#[test]
fn threads_tests_are_pinned_whatever_order_the_threads_ran_in() {
    snapshot("threads");
}
