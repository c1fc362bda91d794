//! Compile repair through the real CLI: a carved test that does not compile is taken out alone,
//! with the compiler's message, and its neighbours are kept and pass. The broken test is made
//! for real, by a copy of the built-in template that writes a line that does not type-check.

mod common;

use std::path::Path;

use common::*;

/// The built-in template with `broken` inserted as the first statement of the file's first test.
fn template_breaking_the_first_test(dir: &Path, broken: &str) {
    let built_in = std::fs::read_to_string(repo().join("generator/templates/test_file.rs.tera"))
        .expect("the built-in template");
    let opening = "fn {{ test.name }}() {";
    assert!(built_in.contains(opening), "the template opens tests so");
    let changed = built_in.replacen(
        opening,
        &format!("{opening}\n{{%- if loop.first %}}\n    {broken}\n{{%- endif %}}"),
        1,
    );
    write_tree(dir, &[("test_file.rs.tera", &changed)]);
}

/// The `#[test]` function names in a carved file, in order.
fn test_names(source: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut lines = source.lines();
    while let Some(line) = lines.next() {
        if line.trim() == "#[test]" {
            let name = lines
                .find_map(|l| l.trim().strip_prefix("fn "))
                .and_then(|rest| rest.split('(').next())
                .expect("a test function follows #[test]");
            names.push(name.to_string());
        }
    }
    names
}

fn json(out: &str) -> serde_json::Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

#[test]
fn a_test_that_does_not_compile_is_taken_out_alone_and_its_neighbours_pass() {
    let (tmp, dir) = copy_fixture("account");
    let db = build_and_record(&dir, "account", &[]);
    let templates = tmp.path().join("templates");
    // The real-crate case: `assert_eq!` on a type without `PartialEq`.
    template_breaking_the_first_test(
        &templates,
        "#[derive(Debug)] struct NoEq; assert_eq!(NoEq, NoEq);",
    );
    // What the template renders, before verification: the first test is the broken one.
    let unverified = tmp.path().join("unverified");
    std::fs::create_dir_all(&unverified).unwrap();
    let rendered = carve()
        .args(["generate", "--no-verify", "--db"])
        .arg(&db)
        .arg("--crate")
        .arg(&dir)
        .arg("--out")
        .arg(&unverified)
        .arg("--templates")
        .arg(&templates)
        .output()
        .unwrap();
    assert!(rendered.status.success(), "{}", stderr(&rendered));
    let rendered = std::fs::read_to_string(unverified.join("carved_account.rs")).unwrap();
    let rendered_tests = test_names(&rendered);
    assert!(rendered_tests.len() > 10, "{rendered}");
    assert_eq!(rendered.matches("struct NoEq").count(), 1, "{rendered}");

    let report = json(&generate_into_tests(
        &dir,
        &db,
        &[
            "--templates",
            templates.to_str().unwrap(),
            "--format",
            "json",
        ],
    ));

    let quarantined = report["quarantined"].as_array().unwrap();
    assert_eq!(quarantined.len(), 1, "{quarantined:?}");
    assert_eq!(quarantined[0]["test"], rendered_tests[0].as_str());
    let reason = quarantined[0]["reason"].as_str().unwrap();
    assert_eq!(
        reason,
        "does not compile: error[E0369]: binary operation `==` cannot be applied to type `NoEq`"
    );
    let listed = std::fs::read_to_string(dir.join("tests/carved_quarantine.md")).unwrap();
    assert!(
        listed.contains(&format!("| `{}` | {reason} |", rendered_tests[0])),
        "{listed}"
    );

    // The file on disk is the repaired one: every other test, in order, and nothing else.
    let carved = std::fs::read_to_string(dir.join("tests/carved_account.rs")).unwrap();
    assert_eq!(test_names(&carved), rendered_tests[1..], "{carved}");
    assert!(!carved.contains("NoEq"), "{carved}");
    // The report counts what is left.
    assert_eq!(report["tests_written"], rendered_tests.len() - 1);
    assert!(
        report["skipped"]["failed verification"].as_u64() >= Some(1),
        "{report}"
    );

    let test = cargo_in(&dir, &["test", "--test", "carved_account"]);
    assert!(
        test.status.success(),
        "{}\n{}",
        stdout(&test),
        stderr(&test)
    );
    assert!(
        stdout(&test).contains(&format!("{} passed; 0 failed", rendered_tests.len() - 1)),
        "{}",
        stdout(&test)
    );
}

#[test]
fn an_error_outside_any_test_takes_out_the_file_and_says_why() {
    let (tmp, dir) = copy_fixture("account");
    let db = build_and_record(&dir, "account", &[]);
    let templates = tmp.path().join("templates");
    let built_in =
        std::fs::read_to_string(repo().join("generator/templates/test_file.rs.tera")).unwrap();
    // An import that does not resolve sits above every test.
    let broken = built_in.replacen(
        "{% for test in tests %}",
        "use account::NoSuchThing;\n{% for test in tests %}",
        1,
    );
    assert_ne!(broken, built_in);
    write_tree(&templates, &[("test_file.rs.tera", &broken)]);

    let report = json(&generate_into_tests(
        &dir,
        &db,
        &[
            "--templates",
            templates.to_str().unwrap(),
            "--format",
            "json",
        ],
    ));

    let quarantined = report["quarantined"].as_array().unwrap();
    assert!(quarantined.len() > 10, "{quarantined:?}");
    for q in quarantined {
        let reason = q["reason"].as_str().unwrap();
        assert!(
            reason.starts_with(
                "the file does not compile: error[E0432]: unresolved import `account::NoSuchThing` (line "
            ) && reason.ends_with(
                "`use account::NoSuchThing;`); this error is not inside one test, so no test \
                 could be taken out alone"
            ),
            "{reason}"
        );
    }
    assert!(!dir.join("tests/carved_account.rs").exists());
    assert_eq!(report["tests_written"], 0);
}
