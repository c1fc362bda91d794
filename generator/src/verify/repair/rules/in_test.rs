//! Repair: an error inside a test takes that test out; its neighbours keep running.

use crate::verify::repair::compile_errors::CompileError;
use crate::verify::repair::items::holder;
use crate::verify::repair::items::{Fix, Item};

/// An error in a test function.
pub(crate) fn rule(items: &[Item], error: &CompileError, _source: &str) -> Option<Fix> {
    let at = holder(items, error.line?)?;
    items[at].is_test.then_some(Fix::Test { at })
}

#[cfg(test)]
mod tests {
    use crate::verify::repair::compile_errors::compile_errors;
    use crate::verify::repair::items::{items, Fix};
    use crate::verify::repair::rules::decide;
    use crate::verify::repair::tests::{CARVED, MESSAGES};

    #[test]
    fn an_error_in_a_test_takes_that_test_out() {
        // cargo's messages for a real carved file: `==` on a `Result` without `PartialEq`.
        let errors = compile_errors(MESSAGES, "carved_demo.rs");
        let items = items(CARVED).unwrap();
        let (rule, fix) = decide(&items, &errors[0], CARVED);
        assert_eq!(rule, "in_test");
        let Fix::Test { at } = fix else {
            panic!("not a test taken out")
        };
        assert_eq!(items[at].name.as_deref(), Some("f_returns_ok_1"));
    }
}
