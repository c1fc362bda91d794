//! Observation, the last resort: the variant alone (`matches!(result, Some(_))`), for a result
//! where nothing inside is observable, no field, getter, `PartialEq`, `Display` or `Debug`
//! (`pattern` takes the patterns that name more). The report counts the tests left with only
//! such a check (`report/bare.rs`).

use crate::arrange::builder::Builder;
use crate::assert::subject::{Subject, Verdict};

/// A result whose pattern names only its variant.
pub(crate) fn rule(s: &Subject, _b: &mut Builder) -> Verdict {
    super::pattern::matched(s, |_| true)
}

#[cfg(test)]
mod tests {
    use crate::body::Assertion;
    use crate::testdata::rulebook;

    #[test]
    fn a_value_with_nothing_observable_inside_is_matched_by_its_variant() {
        // `opaque(5)`: `Some(Opaque)`, a private field and no trait, getter or `Display`.
        let (rule, (assertion, slug), _) = rulebook().observe("rulebook::opaque", 0);
        assert_eq!(rule, "bare_variant");
        // Named by the variant it checks, not `some_5` after a number it does not.
        assert_eq!(slug.as_deref(), Some("some"));
        assert_eq!(
            assertion,
            Assertion::Matches {
                pattern: "Some(_)".to_string()
            }
        );
    }
}
