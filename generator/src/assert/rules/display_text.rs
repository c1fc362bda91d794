//! Observation: the text an equal value was displayed as in the recording (`arrange/texts.rs`):
//! `assert_eq!(result.to_string(), "1.0 kB")` for a value of a type without `PartialEq`. The
//! test is named by that text (`display_returns_500_0_kib`), what it checks, not by the first
//! field of the value (`…_returns_512000`, the bytes behind it).

use crate::arrange::builder::Builder;
use crate::assert::subject::{Subject, Verdict};
use crate::body::{Assertion, Effect};
use crate::naming;
use carve_storage::Value;

/// A result whose state a recorded `Display::fmt` wrote a text from.
pub(crate) fn rule(s: &Subject, b: &mut Builder) -> Verdict {
    let Some(ret) = s.call.ret.as_ref() else {
        return Verdict::Pass(None);
    };
    let Some((actual, expected, text)) = s.cx.texts.check("result", ret) else {
        return Verdict::Pass(None);
    };
    let shown = Value::Str {
        ty: "String".to_string(),
        value: text.to_string(),
        truncated: false,
    };
    let slug = naming::value_slug(&shown);
    b.effects.push(Effect {
        actual,
        expected,
        message: None,
        observe: None,
    });
    Verdict::Observed((Assertion::Observed { unwrap: None }, Some(slug)))
}

#[cfg(test)]
mod tests {
    use crate::body::Assertion;
    use crate::testdata::rulebook;

    #[test]
    fn a_value_with_no_other_way_in_is_checked_by_the_text_an_equal_one_was_shown_as() {
        let (rule, (assertion, slug), b) = rulebook().observe("rulebook::size_of", 0);
        assert_eq!(rule, "display_text");
        // Named by the text it checks, not by the number of bytes behind it.
        assert_eq!(slug.as_deref(), Some("3_kb"));
        assert_eq!(assertion, Assertion::Observed { unwrap: None });
        assert_eq!(b.effects.len(), 1);
        assert_eq!(
            (b.effects[0].actual.as_str(), b.effects[0].expected.as_str()),
            ("result.to_string()", "\"3 kB\"")
        );
    }
}
