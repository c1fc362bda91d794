//! Observation: the text an equal value was displayed as in the recording (`arrange/texts.rs`):
//! `assert_eq!(result.to_string(), "1.0 kB")` for a value of a type without `PartialEq`.

use crate::arrange::builder::Builder;
use crate::assert::subject::{Subject, Verdict};
use crate::body::{Assertion, Effect};
use crate::naming;

/// A result whose state a recorded `Display::fmt` wrote a text from.
pub(crate) fn rule(s: &Subject, b: &mut Builder) -> Verdict {
    let Some(ret) = s.call.ret.as_ref() else {
        return Verdict::Pass(None);
    };
    let Some((actual, expected)) = s.cx.texts.check("result", ret) else {
        return Verdict::Pass(None);
    };
    b.effects.push(Effect {
        actual,
        expected,
        message: None,
        observe: None,
    });
    Verdict::Observed((
        Assertion::Observed { unwrap: None },
        Some(naming::value_slug(ret)),
    ))
}

#[cfg(test)]
mod tests {
    use crate::body::Assertion;
    use crate::testdata::rulebook;

    #[test]
    fn a_value_with_no_other_way_in_is_checked_by_the_text_an_equal_one_was_shown_as() {
        let (rule, (assertion, _), b) = rulebook().observe("rulebook::size_of", 0);
        assert_eq!(rule, "display_text");
        assert_eq!(assertion, Assertion::Observed { unwrap: None });
        assert_eq!(b.effects.len(), 1);
        assert_eq!(
            (b.effects[0].actual.as_str(), b.effects[0].expected.as_str()),
            ("result.to_string()", "\"3 kB\"")
        );
    }
}
