//! A closure the program passed to the called function becomes a replay closure that gives
//! back the recorded answers in order (`arrange/closure.rs` plans and writes it); the test
//! checks after the call that it was called as often as recorded. Only for the tested call: a
//! producer's closure arguments are left to the rules after this one.

use crate::arrange::args::site::{Built, Place, Site, Verdict};
use crate::arrange::builder::Builder;
use crate::arrange::closure;

/// The rule: a replay closure for a closure argument of the tested call.
pub(crate) fn rule(site: &Site, b: &mut Builder) -> Verdict {
    if site.place != Place::Tested {
        return Verdict::Pass;
    }
    let bound = site.param.bound.as_deref();
    match closure::replay(site.cx, site.call, site.arg, site.callee, bound) {
        Some(Ok(replay)) => {
            let (expr, check) = replay.add_to(b);
            Verdict::Built(Built {
                expr,
                check,
                check_last: replay.kept,
                // Named for what it is, not for what it captured.
                slug: Some("closure"),
                ..Built::default()
            })
        }
        Some(Err(why)) => Verdict::Refused(why),
        None => Verdict::Pass,
    }
}

#[cfg(test)]
mod tests {
    use crate::arrange::args::Verdict;
    use crate::testdata::rulebook;

    #[test]
    fn a_closure_of_the_program_is_replayed_from_its_recorded_calls() {
        let (verdict, b) = rulebook().arg("rulebook::apply_each", 0, "f", super::rule);
        let Verdict::Built(built) = verdict else {
            panic!("the closure is replayed")
        };
        assert_eq!(built.slug, Some("closure"));
        assert!(built.expr.starts_with("|x| {"), "{}", built.expr);
        assert!(
            built.check.is_some(),
            "the test checks how often it was called"
        );
        let setup: Vec<&str> = b.setup.iter().map(|s| s.expr.as_str()).collect();
        // What the library gave the closure (1, 2) and what it answered (2, 3).
        assert_eq!(setup, ["vec![(1u32, 2u32), (2u32, 3u32)].into_iter()"]);
    }

    #[test]
    fn a_value_is_no_closure() {
        let (verdict, _) = rulebook().arg("rulebook::apply_each", 0, "xs", super::rule);
        assert!(matches!(verdict, Verdict::Pass));
    }
}
