//! Refused, with [`CLOSURE_ARGUMENT`]: an argument of the tested call that is or holds a closure
//! (an iterator adaptor over one, `Map<I, {closure_env#0}>`) which no rule before this one could
//! replay or write. No test can write the program's closure back.

use crate::arrange::args::site::{Place, Site, Verdict};
use crate::arrange::builder::Builder;
use crate::reasons::CLOSURE_ARGUMENT;

/// The rule: refuse a closure no other rule could pass.
pub(crate) fn rule(site: &Site, _: &mut Builder) -> Verdict {
    if site.place == Place::Tested && site.arg.value.type_name().contains("{closure_env#") {
        Verdict::Refused(CLOSURE_ARGUMENT)
    } else {
        Verdict::Pass
    }
}

#[cfg(test)]
mod tests {
    use crate::arrange::args::{decide, Place, Site, Verdict};
    use crate::arrange::builder::Builder;
    use crate::reasons::CLOSURE_ARGUMENT;
    use crate::testdata::rulebook;

    #[test]
    fn an_iterator_over_a_closure_of_the_program_is_refused() {
        let (verdict, _) = rulebook().arg("rulebook::sum_all", 0, "items", super::rule);
        assert!(matches!(verdict, Verdict::Refused(CLOSURE_ARGUMENT)));
    }

    #[test]
    fn no_rule_before_it_passes_the_adaptor() {
        let book = rulebook();
        let cx = book.cx();
        let call = book.calls_of("rulebook::sum_all")[0];
        let api = &book.callable("rulebook::sum_all").api;
        let same = |addr| addr;
        let site = Site {
            cx: &cx,
            call,
            arg: &call.args[0],
            param: &api.params[0],
            callee: &api.ident,
            place: Place::Tested,
            moved: &same,
        };
        let (rule, decided) = decide(&site, &mut Builder::default());
        assert_eq!(
            (rule, decided.err()),
            ("closure_env", Some(CLOSURE_ARGUMENT))
        );
    }
}
