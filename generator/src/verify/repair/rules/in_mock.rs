//! Repair: an error inside a `mock!` block takes the mock out, and every test that uses it.

use crate::verify::repair::compile_errors::CompileError;
use crate::verify::repair::items::holder;
use crate::verify::repair::items::{Fix, Item};

/// An error in a named item that is no test: a `mock!` block. The last rule: it decides every
/// error the ones before it left.
pub(crate) fn rule(items: &[Item], error: &CompileError, _source: &str) -> Option<Fix> {
    let at = holder(items, error.line?)?;
    (!items[at].is_test).then_some(Fix::Mock { at })
}

#[cfg(test)]
mod tests {
    use crate::verify::repair::compile_errors::CompileError;
    use crate::verify::repair::items::{items, Fix};
    use crate::verify::repair::rules::decide;

    const MOCKED: &str = "use mockall::mock;\n\nmock! {\n    pub Answerer {}\n    impl abc::Answerer for Answerer {\n        fn answer(&self) -> i32;\n    }\n}\n\n#[test]\nfn uses_the_mock() {\n    let a = MockAnswerer::new();\n    assert_eq!(abc::ask(&a), 1);\n}\n";

    #[test]
    fn an_error_in_a_mock_takes_the_mock_out() {
        let error = CompileError {
            message: "error[E0407]: method `answer` is not a member of trait `abc::Answerer`"
                .into(),
            line: Some(6),
        };
        let items = items(MOCKED).unwrap();
        let (rule, fix) = decide(&items, &error, MOCKED);
        assert_eq!(rule, "in_mock");
        let Fix::Mock { at } = fix else {
            panic!("not a mock taken out")
        };
        assert_eq!(items[at].name.as_deref(), Some("MockAnswerer"));
    }
}
