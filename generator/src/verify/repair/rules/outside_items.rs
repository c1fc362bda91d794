//! Repair: none for an error outside any test or mock (a `use`, the header): no test could be
//! taken out alone, so the file goes whole.

use crate::verify::repair::compile_errors::CompileError;
use crate::verify::repair::items::holder;
use crate::verify::repair::items::{Fix, Item};

/// An error in no named item.
pub(crate) fn rule(items: &[Item], error: &CompileError, source: &str) -> Option<Fix> {
    let line = error.line?;
    let named = holder(items, line).is_some_and(|at| items[at].name.is_some());
    (!named).then(|| {
        let what = source.lines().nth(line - 1).unwrap_or_default().trim();
        Fix::Refuse(format!("{} (line {line}: `{what}`)", error.message))
    })
}

#[cfg(test)]
mod tests {
    use crate::verify::repair::compile_errors::CompileError;
    use crate::verify::repair::items::{items, Fix};
    use crate::verify::repair::rules::decide;
    use crate::verify::repair::tests::CARVED;

    #[test]
    fn an_error_in_an_import_refuses_the_repair() {
        let error = CompileError {
            message: "error[E0432]: unresolved import `demo::f`".into(),
            line: Some(1),
        };
        let (rule, fix) = decide(&items(CARVED).unwrap(), &error, CARVED);
        assert_eq!(rule, "outside_items");
        assert!(matches!(fix, Fix::Refuse(why) if why.ends_with("(line 1: `use demo::f;`)")));
    }
}
