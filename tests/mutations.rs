//! For every fixture, an edited copy with a behavioural change in a traced function makes at
//! least one carved test fail, and the failure points at the difference (the test named after
//! the function, the recorded and the new value). expr, abc, dao and mouse have their own, more
//! detailed cases in tests/generate.rs and tests/mocks.rs.

mod common;

use common::*;

/// Records `fixture`'s main, carves tests (verified against the unedited code), then applies
/// `edit` to `file` and runs the carved tests again: they must fail, naming `expect_test`.
fn an_edit_is_caught(fixture: &str, file: &str, from: &str, to: &str, expect_test: &str) {
    let (_tmp, dir) = copy_fixture(fixture);
    let summary = carve_tests(&dir, fixture, &[]);
    assert!(
        !dir.join("tests/carved_quarantine.md").exists(),
        "every carved test passed verification: {summary}"
    );

    let path = dir.join(file);
    let source = std::fs::read_to_string(&path).unwrap();
    let edited = source.replacen(from, to, 1);
    assert_ne!(source, edited, "{from} is in {file}");
    std::fs::write(&path, edited).unwrap();
    let test = cargo_in(&dir, &["test", "--tests", "--no-fail-fast"]);
    let output = stdout(&test);
    assert!(!test.status.success(), "the edit went unnoticed:\n{output}");
    let failed: Vec<&str> = output
        .lines()
        .filter(|l| l.ends_with("... FAILED"))
        .collect();
    assert!(
        failed.iter().any(|l| l.contains(expect_test)),
        "a test of {expect_test} fails: {failed:?}"
    );
    assert!(
        output.contains("left:") || output.contains("panicked"),
        "{output}"
    );
}

#[test]
fn catalog_a_changed_sale_price_fails_the_sell_tests() {
    // The shop's price source is a mock; its own arithmetic is what the tests pin.
    an_edit_is_caught(
        "catalog",
        "src/lib.rs",
        "Ok(price * qty)",
        "Ok(price * qty + 1)",
        "sell_",
    );
}

#[test]
fn catalog_ledgers_written_in_the_other_order_fail_the_split_test() {
    // Two independent stateful dependencies: the order across the mocks is checked.
    an_edit_is_caught(
        "catalog",
        "src/lib.rs",
        "a.record(item, half);\n    b.record(item, cents - half);",
        "b.record(item, cents - half);\n    a.record(item, half);",
        "split_",
    );
}

#[test]
fn dice_a_different_face_mapping_fails_the_face_tests() {
    an_edit_is_caught(
        "dice",
        "src/lib.rs",
        "as u8 + 1",
        "as u8 + 2",
        "face_from_u32",
    );
}

#[test]
fn ping_a_wrong_default_loss_fails_the_packet_loss_tests() {
    an_edit_is_caught(
        "ping",
        "src/lib.rs",
        "map_or(100, |(_, _, loss)| loss)",
        "map_or(100, |(_, _, loss)| loss + 1)",
        "packet_loss_percent",
    );
}

#[test]
fn account_a_changed_cents_format_fails_the_format_tests() {
    an_edit_is_caught("account", "src/lib.rs", "{:02}", "{:03}", "format_cents");
}

#[test]
fn versioned_set_a_version_that_jumps_by_two_fails_the_version_tests() {
    an_edit_is_caught(
        "versioned_set",
        "src/lib.rs",
        "version.wrapping_add(1)",
        "version.wrapping_add(2)",
        "next_version",
    );
}

#[test]
fn threads_a_changed_checksum_fails_the_checksum_tests() {
    an_edit_is_caught(
        "threads",
        "src/lib.rs",
        "(b << 16) | a",
        "(b << 15) | a",
        "checksum",
    );
}

#[test]
fn returns_a_changed_byte_fails_the_byte_tests() {
    an_edit_is_caught(
        "returns",
        "src/lib.rs",
        "(n % 251) as u8",
        "(n % 250) as u8",
        "byte",
    );
}
