//! A std `Map` adaptor the program gave (`words.iter().map(|w| w.trim())`), over an iterator a
//! literal writes, is written as the program wrote it, its closure a replay closure
//! (`arrange/closure.rs`) answering the calls the tested call made of it: the recorder traces a
//! closure an argument holds, under the call that got it.
//!
//! ```text
//! shlex::try_join([..].iter().map(|arg1| { let (seen, reply) = replies.next()..; reply }))
//! ```
//!
//! Only for the tested call, as replay closures are; any other `Map` is left to the rules after
//! this one (`closure_env` refuses it).

use carve_storage::{Arg, Value};

use crate::arrange::args::borrowed;
use crate::arrange::args::site::{Built, Place, Site, Verdict};
use crate::arrange::builder::Builder;
use crate::arrange::closure;
use crate::arrange::context::Constructing;
use crate::arrange::literal;
use crate::read::types::strip_generics;

/// The rule: `inner.map(replay closure)` for a recorded `Map { iter, f }`.
pub(crate) fn rule(site: &Site, b: &mut Builder) -> Verdict {
    if site.place != Place::Tested {
        return Verdict::Pass;
    }
    let Value::Struct { ty, fields } = &site.arg.value else {
        return Verdict::Pass;
    };
    if strip_generics(ty) != "core::iter::adapters::map::Map" {
        return Verdict::Pass;
    }
    let field = |name: &str| fields.iter().find(|f| f.name == name).map(|f| &f.value);
    let (Some(iter), Some(f)) = (field("iter"), field("f")) else {
        return Verdict::Pass;
    };
    let Ok(inner) = literal::render_value(iter, false, &Constructing(site.cx, None)) else {
        return Verdict::Pass;
    };
    let f = Arg {
        name: "f".to_string(),
        value: f.clone(),
    };
    // `map` asks `FnMut` of its closure.
    match closure::replay(site.cx, site.call, &f, site.callee, Some("FnMut")) {
        Some(Ok(replay)) => {
            let (expr, check) = replay.add_to(b);
            let built = Built {
                expr: format!("{}.map({expr})", crate::syntax::method_receiver(&inner)),
                check,
                check_last: replay.kept,
                slug: Some("mapped"),
                ..Built::default()
            };
            Verdict::Built(borrowed::bound(site, b, built))
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
    fn a_map_over_a_literal_is_written_with_a_replay_closure() {
        // `sum_all([1u32, 2].into_iter().map(|x| x * 10))`.
        let (verdict, b) = rulebook().arg("rulebook::sum_all", 0, "items", super::rule);
        let Verdict::Built(built) = verdict else {
            panic!("the map is written")
        };
        assert!(
            built.expr.starts_with("[1u32, 2u32].iter().map(|x| {"),
            "{}",
            built.expr
        );
        assert_eq!(built.slug, Some("mapped"));
        let setup: Vec<&str> = b.setup.iter().map(|s| s.expr.as_str()).collect();
        // What `sum` gave the closure (1, 2) and what it answered (10, 20).
        assert_eq!(setup, ["vec![(1u32, 10u32), (2u32, 20u32)].into_iter()"]);
    }

    #[test]
    fn a_value_is_no_map() {
        let (verdict, _) = rulebook().arg("rulebook::apply_each", 0, "xs", super::rule);
        assert!(matches!(verdict, Verdict::Pass));
    }
}
