//! Observation: a value of the crate that no earlier rule shows but by its variant (a pattern
//! `Origin::Opaque(_)`: what is inside is private, or is the run's and not the call's, as the
//! number url's `Origin::new_opaque()` draws from a global counter), whose type has cheap
//! getters (`assert/getters.rs`): checked by its variant and by what each getter answers on
//! this build, observed at verification (`verify/observe.rs`: two runs, and a getter that
//! answers differently goes). No recorded value is asserted, so the rule stands also where the
//! call is carved with the recording's checks only (`Ctx::weak_oracles`): there a check of the
//! whole value failed verification, and the getters are what is left to tell the value by
//! (`assert_eq!(result.ascii_serialization(), "null")`, not `matches!(result, Opaque(_))`
//! alone). The test is named by the variant, not by the number inside it, which it does not
//! check.

use carve_storage::Value;

use crate::arrange::builder::Builder;
use crate::arrange::values::holds_dyn;
use crate::assert::getters::probed_getters;
use crate::assert::inside::inside;
use crate::assert::pattern;
use crate::assert::subject::{observed_parts, Subject, Verdict};
use crate::body::{Assertion, Effect};
use crate::naming;
use crate::read::types::strip_generics;

/// A struct or enum of the crate with cheap getters.
pub(crate) fn rule(s: &Subject, b: &mut Builder) -> Verdict {
    let Some((value, unwrap)) = s
        .call
        .ret
        .as_ref()
        .and_then(|ret| inside(s.cx, ret, &s.target.call_path))
    else {
        return Verdict::Pass(None);
    };
    let (Value::Enum { ty, .. } | Value::Struct { ty, .. }) = value else {
        return Verdict::Pass(None);
    };
    if holds_dyn(value) {
        return Verdict::Pass(None);
    }
    let type_path = strip_generics(ty);
    let getters = probed_getters(s.cx, "result", type_path);
    if getters.is_empty() {
        return Verdict::Pass(None);
    }
    if !matches!(value, Value::Enum { .. }) {
        b.effects.extend(getters);
        return observed_parts(unwrap, type_path);
    }
    b.effects
        .extend(pattern::of(value, s.cx.api).map(|p| Effect {
            actual: format!("matches!(result, {p})"),
            expected: "true".to_string(),
            message: None,
            observe: None,
        }));
    b.effects.extend(getters);
    Verdict::Observed((
        Assertion::Observed { unwrap },
        Some(naming::variant_slug(value)),
    ))
}

#[cfg(test)]
mod tests {
    use crate::body::Assertion;
    use crate::testdata::{rows, rulebook};

    #[test]
    fn a_value_told_only_by_its_variant_is_checked_by_its_getters_too() {
        // `Ticket::draw()`: `Drawn(Serial(0))`, a number from a global counter; carved again
        // with the recording's checks only, as after its `Debug` text failed verification.
        let (rule, (assertion, slug), b) = rulebook().observe_weak("rulebook::Ticket::draw", 0);
        assert_eq!(rule, "variant_getters");
        assert_eq!(assertion, Assertion::Observed { unwrap: None });
        assert_eq!(slug.as_deref(), Some("drawn"));
        assert_eq!(
            rows(&b.effects),
            [
                ("matches!(result, rulebook::Ticket::Drawn(_))", "true", None),
                ("result.is_named()", "", Some("bool")),
                ("result.label()", "", Some("str")),
            ]
        );
    }

    #[test]
    fn a_value_with_no_getter_is_left_to_the_variant_alone() {
        // `opaque(5)`: `Some(Opaque(5))`, whose type has no method at all.
        let (rule, _, _) = rulebook().observe_weak("rulebook::opaque", 0);
        assert_eq!(rule, "bare_variant");
    }
}
