//! Mock trees end to end: record the real `abc` and `dao` fixtures, carve tests whose
//! trait-object dependencies are mockall mocks, run them with cargo in a copy of the crate, then
//! change the crate's behaviour and watch the mocks catch it.
//!
//! mockall compiles slowly, so each fixture is copied and built once per test.

mod common;

use common::*;

#[test]
fn abc_tests_mock_the_asker_and_the_answerer_and_catch_an_extra_call() {
    let (_tmp, dir) = copy_fixture("abc");
    let summary = carve_tests(&dir, "abc", &[]);
    assert!(summary.contains("with mocks: 3 tests"), "{summary}");
    let file = std::fs::read_to_string(dir.join("tests/carved_abc.rs")).unwrap();
    assert!(
        file.contains(
            "impl abc::Asker for Asker {\n        fn ask(&self, a: &dyn abc::Answerer) -> i32;"
        ),
        "{file}"
    );
    assert!(
        file.contains("mock_b.expect_ask().times(1).return_const(43i32);"),
        "{file}"
    );
    assert!(
        file.contains("let c = abc::C::new(Box::new(mock_a), Box::new(mock_b));"),
        "{file}"
    );
    assert!(file.contains("assert_eq!(result, Ok(43i32));"), "{file}");
    assert!(
        file.contains("mock_a.expect_answer().times(1).return_const(42i32);"),
        "{file}"
    );
    assert!(file.contains("let result = b.ask(&mock_a);"), "{file}");
    let (ok, out) = cargo_test(&dir);
    assert!(ok, "{out}");
    assert!(
        out.contains("test calls_b_with_a_returns_ok_43 ... ok"),
        "{out}"
    );
    assert!(out.contains("test ask_returns_43 ... ok"), "{out}");

    // One more call to the asker than recorded: the mock says so.
    edit(
        &dir.join("src/lib.rs"),
        "let answer = self.b.ask(self.a.as_ref());",
        "let answer = self.b.ask(self.a.as_ref()).max(self.b.ask(self.a.as_ref()));",
    );
    let (ok, out) = cargo_test(&dir);
    assert!(!ok, "the extra call must fail a test: {out}");
    assert!(
        out.contains("test calls_b_with_a_returns_ok_43 ... FAILED"),
        "{out}"
    );
    assert!(
        out.contains("MockAsker::ask") && out.contains("called 2 times"),
        "the failure names the mock and the count: {out}"
    );
}

#[test]
fn dao_tests_replay_the_connection_statement_rows_tree_and_catch_a_changed_query() {
    let (_tmp, dir) = copy_fixture("dao");
    let summary = carve_tests(&dir, "dao", &[]);
    assert!(
        summary.contains("with mocks: 3 tests (3 mock! blocks)"),
        "{summary}"
    );
    let file = std::fs::read_to_string(dir.join("tests/carved_dao.rs")).unwrap();
    for expected in [
        "fn prepare(&self, sql: &str) -> Box<dyn dao::Statement>;",
        ".with(eq(\"SELECT name, occupation FROM people WHERE name = ?\"))",
        ".return_once(move |_| Box::new(mock_statement));",
        // bind(&mut self) changes the statement: bind, then query, in that order.
        "let mut seq_statement = Sequence::new();",
        ".in_sequence(&mut seq_statement)\n        .return_once(move || Box::new(mock_rows));",
        ".with(eq(1usize), eq(\"Gandhi\"))",
        "let data_access_object = dao::DataAccessObject::new(Box::new(mock_conn));",
        "assert_eq!(result, Err(dao::DaoError::NotFound(String::from(\"Nobody\"))));",
    ] {
        assert!(file.contains(expected), "{expected} in {file}");
    }
    let (ok, out) = cargo_test(&dir);
    assert!(ok, "{out}");
    assert!(
        out.contains("test get_user_details_returns_ok_gandhi ... ok"),
        "{out}"
    );
    assert!(
        out.contains("test get_user_details_returns_err_not_found_nobody ... ok"),
        "{out}"
    );

    // A different query: no expectation matches, and the message shows the new SQL.
    edit(
        &dir.join("src/lib.rs"),
        "\"SELECT name, occupation FROM people WHERE name = ?\"",
        "\"SELECT name FROM people WHERE name = ?\"",
    );
    let (ok, out) = cargo_test(&dir);
    assert!(!ok, "the changed query must fail a test: {out}");
    assert!(
        out.contains("MockConnection::prepare(\"SELECT name FROM people WHERE name = ?\")"),
        "the failure names the mock and the new SQL: {out}"
    );
    assert!(out.contains("No matching expectation found"), "{out}");

    // The same calls in another order: querying before binding is a different behaviour.
    edit(
        &dir.join("src/lib.rs"),
        "\"SELECT name FROM people WHERE name = ?\"",
        "\"SELECT name, occupation FROM people WHERE name = ?\"",
    );
    edit(
        &dir.join("src/lib.rs"),
        "stmt.bind(1, name);\n        let mut rows = stmt.query();",
        "let mut rows = stmt.query();\n        stmt.bind(1, name);",
    );
    let (ok, out) = cargo_test(&dir);
    assert!(!ok, "querying before binding must fail a test: {out}");
    assert!(out.contains("Method sequence violation"), "{out}");
}
