//! Observation: a value of the crate (returned, or inside `Ok`/`Some`/`Err`) that neither `==`,
//! a field, a getter, a pattern nor `Display` shows, whose type implements `Debug`: checked by
//! what `{:?}` prints, `assert_eq!(format!("{:?}", result), "Token { .. }")`. A derived `Debug`
//! of a value recorded exactly prints what the recording says (`arrange/debug_repr.rs`); any
//! other is observed on this build at verification (`verify/observe.rs`), where a text that
//! changes from run to run (an address, a hash map's order) is dropped. A type whose
//! definition the source does not show (made by a macro, as url's `ParseError` is) is probed
//! too: if it is not `Debug` the probe does not compile and goes. A type of std (what a
//! `str::Split` prints is std's inside, not the crate's behaviour) or of another crate (it has
//! a skip reason of its own) is not.

use crate::arrange::builder::Builder;
use crate::arrange::debug_repr::debug_repr;
use crate::assert::getters::type_api;
use crate::assert::printed::Kind;
use crate::assert::subject::{observed_parts, Subject, Verdict};
use crate::body::Effect;
use crate::syntax;

/// A value of a type that implements `Debug`.
pub(crate) fn rule(s: &Subject, b: &mut Builder) -> Verdict {
    let Some((value, unwrap, type_path)) = s.inside_typed() else {
        return Verdict::Pass(None);
    };
    // A type the source does not show (a macro's, another crate's) may well be `Debug`: the
    // probe's build says (one that does not compile goes, and its test keeps what it had).
    let debug = match type_api(s.cx.api, type_path) {
        Some(t) if t.declared => t.traits.contains("Debug"),
        // Only the crate's own: what std's types print is std's inside (`Split(SplitInternal
        // { .. })`), and a value of a crate the run did not record has a reason of its own.
        _ => type_path.split("::").next() == Some(s.cx.api.crate_name.as_str()),
    };
    if !debug {
        return Verdict::Pass(None);
    }
    let actual = "format!(\"{:?}\", result)".to_string();
    b.effects.push(match debug_repr(value, s.cx.api) {
        Some(text) => Effect {
            actual,
            expected: syntax::str_lit(&text),
            message: None,
            observe: None,
        },
        None => Effect {
            actual: "result".to_string(),
            expected: String::new(),
            message: None,
            observe: Some(Kind::Debug.name()),
        },
    });
    observed_parts(unwrap, type_path)
}

#[cfg(test)]
mod tests {
    use crate::body::Assertion;
    use crate::testdata::rulebook;

    #[test]
    fn a_value_with_only_a_derived_debug_is_checked_by_what_it_prints() {
        // `token("ab")`: `Some(Token::Word(Span))`, a derived `Debug` and a `Span` whose
        // fields are private.
        let (rule, (assertion, _), b) = rulebook().observe("rulebook::token", 0);
        assert_eq!(rule, "debug");
        assert_eq!(
            assertion,
            Assertion::Observed {
                unwrap: Some(".unwrap()".to_string())
            }
        );
        assert_eq!(b.effects.len(), 1);
        assert_eq!(b.effects[0].actual, "format!(\"{:?}\", result)");
        assert_eq!(b.effects[0].expected, "\"Word(Span { at: 0, len: 2 })\"");
    }

    #[test]
    fn an_error_a_macro_defines_is_probed_for_debug() {
        // `check_code(7)`: `Err(CodeError::Odd(7))`, an enum `code_error!` makes.
        let (rule, (assertion, _), b) = rulebook().observe("rulebook::check_code", 0);
        assert_eq!(rule, "debug");
        assert_eq!(
            assertion,
            Assertion::Observed {
                unwrap: Some(".unwrap_err()".to_string())
            }
        );
        assert_eq!(b.effects[0].observe.as_deref(), Some("debug"));
    }

    #[test]
    fn a_hand_written_debug_is_observed_on_the_build() {
        // `mark(3)`: a `Mark` whose `Debug` is written by hand.
        let (rule, _, b) = rulebook().observe("rulebook::mark", 0);
        assert_eq!(rule, "debug");
        assert_eq!(b.effects[0].actual, "result");
        assert_eq!(b.effects[0].observe.as_deref(), Some("debug"));
    }
}
