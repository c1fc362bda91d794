//! Observation: a struct of the crate that cannot be compared whole (also inside `Ok` or `Some`,
//! which the test unwraps, or behind a reference: `result.line_no`), checked by what a caller
//! can observe of it, its getters and public fields (`arrange/check.rs`), as a developer would.
//! Named after what it returns (`new_returns_versioned_set`).

use carve_storage::Value;

use crate::arrange::builder::Builder;
use crate::arrange::values::returned_struct;
use crate::assert::effects::effects;
use crate::assert::subject::{observed_parts, Subject, Verdict};
use crate::read::types::strip_generics;

/// A returned struct with something to observe, or dependencies whose mocks check what the call
/// did to them (a mock without expectations fails on any call).
pub(crate) fn rule(s: &Subject, b: &mut Builder) -> Verdict {
    let Some((ret, unwrap)) = s
        .call
        .ret
        .as_ref()
        .map(through_ref)
        .and_then(|r| returned_struct(s.cx, r, &s.target.call_path))
    else {
        return Verdict::Pass(None);
    };
    let Value::Struct { ty, .. } = ret else {
        return Verdict::Pass(None);
    };
    let before = b.effects.len();
    effects(s.cx, b, "result", ret, strip_generics(ty));
    if b.effects.len() == before && b.deps.is_empty() {
        return Verdict::Pass(None);
    }
    observed_parts(unwrap, strip_generics(ty))
}

/// A reference to a struct (`Deref::deref`, a getter returning `&Inner`) is observed through the
/// reference, as the value.
fn through_ref(r: &Value) -> &Value {
    match r {
        Value::Ref { target, .. } if matches!(**target, Value::Struct { .. }) => target.as_ref(),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use crate::body::Assertion;
    use crate::testdata::rulebook;

    #[test]
    fn a_struct_without_partial_eq_is_checked_by_its_public_fields() {
        let (rule, (assertion, slug), b) = rulebook().observe("rulebook::stats", 0);
        assert_eq!(rule, "fields");
        assert_eq!(assertion, Assertion::Observed { unwrap: None });
        assert_eq!(slug.as_deref(), Some("stats"));
        let effects: Vec<(&str, &str)> = b
            .effects
            .iter()
            .map(|e| (e.actual.as_str(), e.expected.as_str()))
            .collect();
        assert_eq!(
            effects,
            [("result.count", "3usize"), ("result.max", "9u32")]
        );
    }
}
