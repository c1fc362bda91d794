//! Observation: the variant and the parts a pattern can name (`Err(E::At(3usize))`, see
//! `assert/pattern.rs`): it names only parts read exactly (`_` for pointers, opaque or unread
//! memory, truncated strings), so the value need not be exact whole. A pattern naming the
//! variant alone (`Some(_)`) is left to the later rules that look inside (`getters`, `display`,
//! `debug`), and to `bare_variant` when none can.

use crate::arrange::builder::Builder;
use crate::assert::pattern;
use crate::assert::subject::{Subject, Verdict};
use crate::body::Assertion;
use crate::naming;

/// A result with a pattern a test can write.
pub(crate) fn rule(s: &Subject, _b: &mut Builder) -> Verdict {
    matched(s, |p| !pattern::is_bare(p))
}

/// The result matched by its pattern, when it has one that `keep` takes.
pub(super) fn matched(s: &Subject, keep: impl Fn(&str) -> bool) -> Verdict {
    let Some(ret) = s.call.ret.as_ref() else {
        return Verdict::Pass(None);
    };
    match pattern::of(ret, s.cx.api).filter(|p| keep(p)) {
        // A test that checks the variant alone is named by it, not by a value inside.
        Some(pattern) => {
            let slug = if pattern::is_bare(&pattern) {
                naming::variant_slug(ret)
            } else {
                naming::value_slug(ret)
            };
            Verdict::Observed((Assertion::Matches { pattern }, Some(slug)))
        }
        None => Verdict::Pass(None),
    }
}

#[cfg(test)]
mod tests {
    use crate::body::Assertion;
    use crate::testdata::rulebook;

    #[test]
    fn an_enum_without_partial_eq_is_matched_by_its_variant_and_parts() {
        let (rule, (assertion, _), _) = rulebook().observe("rulebook::classify", 1);
        assert_eq!(rule, "pattern");
        assert_eq!(
            assertion,
            Assertion::Matches {
                pattern: "rulebook::Kind::Large { excess: 2u32, .. }".to_string()
            }
        );
    }
}
