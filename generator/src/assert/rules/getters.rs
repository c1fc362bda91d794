//! Observation: a struct of the crate (returned, or inside `Ok`/`Some`/`Err`) with cheap getters
//! other than the namesakes of its fields (`assert/getters.rs`: `&self`, no argument, a name
//! that says no cost or change): checked by its public fields and field getters, as the
//! `fields` rule does, and by each such getter: `assert_eq!(result.tag_name(), "item")`. Its
//! values come from the recording where the run called the getter on an object recorded
//! exactly equal, else from this build at verification (`verify/observe.rs`). One level: a
//! getter returning another struct of the crate is compared by its `Debug` text, not looked
//! into. A struct with no such getter, or holding trait objects (a getter may call into them:
//! mocks, in a test), is the `fields` rule's; a call whose test failed verification with these
//! checks is carved again without them (`Ctx::weak_oracles`).

use carve_storage::Value;

use crate::arrange::builder::Builder;
use crate::assert::effects::effects;
use crate::assert::getters::other_getters;
use crate::assert::subject::{observed_parts, Subject, Verdict};

/// A struct with a getter that is not its field's.
pub(crate) fn rule(s: &Subject, b: &mut Builder) -> Verdict {
    let Some((value @ Value::Struct { .. }, unwrap, type_path)) = s.inside_typed() else {
        return Verdict::Pass(None);
    };
    let extra = other_getters(s.cx, "result", value, type_path);
    if extra.is_empty() {
        return Verdict::Pass(None);
    }
    effects(s.cx, b, "result", value, type_path);
    b.effects.extend(extra);
    observed_parts(unwrap, type_path)
}

#[cfg(test)]
mod tests {
    use crate::body::Assertion;
    use crate::testdata::{rows, rulebook};

    #[test]
    fn a_struct_with_private_fields_is_checked_by_its_getters() {
        // `lookup("root")`: a `Some(Node)` whose `label()` and `child_count()` no field holds.
        let (rule, (assertion, slug), b) = rulebook().observe("rulebook::lookup", 0);
        assert_eq!(rule, "getters");
        assert_eq!(
            assertion,
            Assertion::Observed {
                unwrap: Some(".unwrap()".to_string())
            }
        );
        assert_eq!(slug.as_deref(), Some("node"));
        assert_eq!(
            rows(&b.effects),
            [
                ("result.id()", "1u32", None),
                ("result.name()", "\"root\"", None),
                ("result.child_count()", "", Some("int:usize")),
                ("result.first_child()", "", Some("opt:int:u32")),
                ("result.is_leaf()", "", Some("bool")),
                ("result.label()", "\"root#1\"", None),
            ]
        );
    }
}
