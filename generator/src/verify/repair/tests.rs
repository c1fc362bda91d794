//! Compile repair on a real carved file and cargo's real messages for it.

use super::*;

/// The file behind `testdata/cargo_no_run_errors.json`: cargo 1.9x's messages for it, with
/// the long explanations and rendered text cut.
pub(crate) const CARVED: &str = "use demo::f;

#[test]
fn f_returns_ok_1() {
    let result = f(1);
    assert_eq!(result, Ok(1));
}

#[test]
fn f_1_is_ok() {
    assert!(f(1).is_ok());
}

#[test]
fn f_mismatched() {
    let x: u8 = f(2);
    assert!(x > 0);
}
";

pub(crate) const MESSAGES: &str = include_str!("../../../testdata/cargo_no_run_errors.json");

#[test]
fn errors_are_read_with_their_code_and_the_line_in_the_carved_file() {
    let errors = compile_errors(MESSAGES, "carved_demo.rs");
    assert_eq!(
        errors,
        [
            CompileError {
                message:
                    "error[E0369]: binary operation `==` cannot be applied to type `Result<i32, E>`"
                        .into(),
                // The primary span is in core's `assert_eq!`; its call site is line 6.
                line: Some(6),
            },
            CompileError {
                message: "error[E0308]: mismatched types".into(),
                line: Some(16),
            },
        ]
    );
}

#[test]
fn errors_in_another_file_point_nowhere_in_this_one() {
    let errors = compile_errors(MESSAGES, "carved_other.rs");
    assert!(errors.iter().all(|e| e.line.is_none()), "{errors:?}");
}

#[test]
fn each_error_is_pinned_on_the_test_that_holds_it() {
    let repair = blame(CARVED, &compile_errors(MESSAGES, "carved_demo.rs")).unwrap();
    assert_eq!(
            repair.tests,
            [
                (
                    "f_returns_ok_1".to_string(),
                    "does not compile: error[E0369]: binary operation `==` cannot be applied to type `Result<i32, E>`".to_string()
                ),
                (
                    "f_mismatched".to_string(),
                    "does not compile: error[E0308]: mismatched types".to_string()
                ),
            ]
        );
    let repaired = remove_items(CARVED, &repair.remove).unwrap();
    assert_eq!(
        repaired,
        "use demo::f;\n\n#[test]\nfn f_1_is_ok() {\n    assert!(f(1).is_ok());\n}\n"
    );
}

#[test]
fn an_error_outside_any_test_cannot_be_pinned() {
    let error = CompileError {
        message: "error[E0432]: unresolved import `demo::f`".into(),
        line: Some(1),
    };
    assert_eq!(
        blame(CARVED, std::slice::from_ref(&error)),
        Err("error[E0432]: unresolved import `demo::f` (line 1: `use demo::f;`)".into())
    );
    let elsewhere = CompileError {
        line: None,
        ..error
    };
    assert_eq!(
        blame(CARVED, &[elsewhere]),
        Err("error[E0432]: unresolved import `demo::f` (not in this file)".into())
    );
}

#[test]
fn an_error_in_a_mock_takes_out_the_mock_and_the_tests_using_it() {
    let source = "use mockall::mock;

mock! {
    pub Answerer {}
    impl abc::Answerer for Answerer {
        fn answer(&self) -> i32;
    }
}

#[test]
fn uses_the_mock() {
    let a = MockAnswerer::new();
    assert_eq!(abc::ask(&a), 1);
}

#[test]
fn plain() {
    assert_eq!(abc::one(), 1);
}
";
    let error = CompileError {
        message: "error[E0407]: method `answer` is not a member of trait `abc::Answerer`".into(),
        line: Some(6),
    };
    let repair = blame(source, &[error]).unwrap();
    assert_eq!(
            repair.tests,
            [(
                "uses_the_mock".to_string(),
                "does not compile: the mock `MockAnswerer` it uses does not: error[E0407]: method `answer` is not a member of trait `abc::Answerer`".to_string()
            )]
        );
    assert_eq!(
        remove_items(source, &repair.remove).unwrap(),
        "use mockall::mock;\n\n#[test]\nfn plain() {\n    assert_eq!(abc::one(), 1);\n}\n"
    );
}

#[test]
fn an_error_in_a_row_of_a_table_takes_out_the_row_and_one_in_its_body_the_table() {
    let source = "#[test]
fn f_recorded_cases() {
    let cases: &[(u8, u8)] = &[
        (1u8, 2u8),
        (2u8, 4u8),
    ];
    for (i, case) in cases.iter().enumerate() {
        assert_eq!(demo::f(case.0), case.1, \"case {i}\");
    }
}
";
    let error = |line| CompileError {
        message: "error[E0308]: mismatched types".into(),
        line: Some(line),
    };
    let repair = blame(source, &[error(5)]).unwrap();
    assert!(
        repair.tests.is_empty() && repair.remove.is_empty(),
        "{repair:?}"
    );
    assert_eq!(
        repair.rows["f_recorded_cases"],
        BTreeMap::from([(
            1,
            "does not compile: error[E0308]: mismatched types".to_string()
        )])
    );
    let repair = blame(source, &[error(5), error(8)]).unwrap();
    assert_eq!(repair.tests.len(), 1, "{repair:?}");
    assert!(repair.rows.is_empty(), "the table goes whole: {repair:?}");
}

#[test]
fn removing_the_last_item_takes_the_blank_line_before_it() {
    let names = BTreeSet::from(["f_mismatched".to_string()]);
    let repaired = remove_items(CARVED, &names).unwrap();
    assert!(
        repaired.ends_with("assert!(f(1).is_ok());\n}\n"),
        "{repaired}"
    );
}
