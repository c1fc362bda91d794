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
    use carve_storage::Call;

    use crate::arrange::args::{decide, Place, Site, Verdict};
    use crate::arrange::builder::Builder;
    use crate::reasons::CLOSURE_ARGUMENT;
    use crate::testdata::{rulebook, Rulebook};

    /// `sum_all([3u32, 4].into_iter().map(|x| x + 1))`: no literal writes an array's
    /// `IntoIter`, so `mapped` cannot write the `Map` over it (a generic instance of its own).
    fn over_an_array(book: &Rulebook) -> &Call {
        book.trace
            .calls
            .iter()
            .find(|c| {
                let f = book.trace.function(c.function);
                f.is_some_and(|f| f.path == "rulebook::sum_all")
                    && c.args[0]
                        .value
                        .type_name()
                        .contains("array::iter::IntoIter")
            })
            .expect("sum_all over an array's IntoIter was recorded")
    }

    /// What the rule `rule` (or, with `None`, the first rule that decides) makes of
    /// `over_an_array`'s argument.
    fn decided(rule: Option<crate::arrange::args::Rule>) -> (&'static str, Verdict) {
        let book = rulebook();
        let cx = book.cx();
        let call = over_an_array(book);
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
        let mut b = Builder::default();
        match rule {
            Some(rule) => ("closure_env", rule(&site, &mut b)),
            None => match decide(&site, &mut b) {
                (name, Ok(_)) => (name, Verdict::Pass),
                (name, Err(why)) => (name, Verdict::Refused(why)),
            },
        }
    }

    #[test]
    fn an_iterator_over_a_closure_of_the_program_is_refused() {
        let (_, verdict) = decided(Some(super::rule));
        assert!(matches!(verdict, Verdict::Refused(CLOSURE_ARGUMENT)));
    }

    #[test]
    fn no_rule_before_it_passes_the_adaptor() {
        let (rule, verdict) = decided(None);
        assert_eq!(rule, "closure_env");
        assert!(matches!(verdict, Verdict::Refused(CLOSURE_ARGUMENT)));
    }
}
