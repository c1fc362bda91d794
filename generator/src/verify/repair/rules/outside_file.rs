//! Repair: none for an error that points into no line of the file (another file, cargo itself):
//! the file goes whole.

use crate::verify::repair::compile_errors::CompileError;
use crate::verify::repair::items::{Fix, Item};

/// An error with no line in the carved file.
pub(crate) fn rule(_items: &[Item], error: &CompileError, _source: &str) -> Option<Fix> {
    error
        .line
        .is_none()
        .then(|| Fix::Refuse(format!("{} (not in this file)", error.message)))
}

#[cfg(test)]
mod tests {
    use crate::verify::repair::compile_errors::compile_errors;
    use crate::verify::repair::items::{items, Fix};
    use crate::verify::repair::rules::decide;
    use crate::verify::repair::tests::{CARVED, MESSAGES};

    #[test]
    fn an_error_in_another_file_refuses_the_repair() {
        let errors = compile_errors(MESSAGES, "carved_other.rs");
        let (rule, fix) = decide(&items(CARVED).unwrap(), &errors[0], CARVED);
        assert_eq!(rule, "outside_file");
        assert!(matches!(fix, Fix::Refuse(why) if why.ends_with("(not in this file)")));
    }
}
