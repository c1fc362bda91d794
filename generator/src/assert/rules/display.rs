//! Observation: a value of the crate (returned, or inside `Ok`/`Some`/`Err`) that neither `==`,
//! a field, a getter nor a pattern shows, whose type implements `Display`: checked by the text
//! it displays, `assert_eq!(result.to_string(), "1.0 kB")`. The run did not display it (else
//! `display_text` would have the text), so verification observes the text on this build
//! (`verify/observe.rs`).

use crate::arrange::builder::Builder;
use crate::assert::getters::type_api;
use crate::assert::printed::Kind;
use crate::assert::subject::{observed_parts, Subject, Verdict};
use crate::body::Effect;

/// A value of a type that implements `Display`.
pub(crate) fn rule(s: &Subject, b: &mut Builder) -> Verdict {
    let Some((_, unwrap, type_path)) = s.inside_typed() else {
        return Verdict::Pass(None);
    };
    let shows = type_api(s.cx.api, type_path).is_some_and(|t| t.traits.contains("Display"));
    if !shows {
        return Verdict::Pass(None);
    }
    b.effects.push(Effect {
        actual: "result.to_string()".to_string(),
        expected: String::new(),
        message: None,
        observe: Some(Kind::Str.name()),
    });
    observed_parts(unwrap, type_path)
}

#[cfg(test)]
mod tests {
    use crate::body::Assertion;
    use crate::testdata::rulebook;

    #[test]
    fn a_value_shown_only_by_display_is_checked_by_the_text_this_build_gives() {
        // `grade(72)`: a `Grade` with a private field, `Display` and nothing else.
        let (rule, (assertion, slug), b) = rulebook().observe("rulebook::grade", 0);
        assert_eq!(rule, "display");
        assert_eq!(assertion, Assertion::Observed { unwrap: None });
        assert_eq!(slug.as_deref(), Some("grade"));
        assert_eq!(b.effects.len(), 1);
        assert_eq!(b.effects[0].actual, "result.to_string()");
        assert_eq!(b.effects[0].observe.as_deref(), Some("str"));
    }
}
