//! How to call a recorded function: the call-form rules, one file each, tried in the order of
//! [`RULES`]; the first that answers gives the function's [`Target`] (how a test calls it, or
//! why none can). A new call form is a new file in `rules/` and one line here, where its
//! conditions are not already taken by a rule before it.

pub(crate) mod associated_fn;
pub(crate) mod crate_trait;
pub(crate) mod dependency_trait;
pub(crate) mod display;
pub(crate) mod foreign_self;
pub(crate) mod free_fn;
pub(crate) mod impl_elsewhere;
pub(crate) mod nested_fn;
pub(crate) mod not_found;
pub(crate) mod not_rust;
pub(crate) mod other_crate;
pub(crate) mod outside_lib;
pub(crate) mod private_self;
pub(crate) mod private_tuple_ctor;
pub(crate) mod provided_method;
pub(crate) mod shim_inner;
pub(crate) mod std_trait;
pub(crate) mod trait_method_shape;
pub(crate) mod unparsable;

use carve_storage::FunctionInfo;

use crate::act::target::Target;
use crate::read::crate_api::CrateApi;

/// A call-form rule: the target of `info` when the rule decides it, `None` to pass it on.
pub(crate) type Rule = fn(&CrateApi, &FunctionInfo) -> Option<Target>;

/// The call-form rules in the order they are tried, by name. The trait-impl rules come first
/// and the last of them decides every trait-impl path; `not_found` decides what is left.
pub(crate) const RULES: &[(&str, Rule)] = &[
    ("not_rust", not_rust::rule),
    ("trait_method_shape", trait_method_shape::rule),
    ("foreign_self", foreign_self::rule),
    ("private_self", private_self::rule),
    ("display", display::rule),
    ("std_trait", std_trait::rule),
    ("dependency_trait", dependency_trait::rule),
    ("crate_trait", crate_trait::rule),
    ("impl_elsewhere", impl_elsewhere::rule),
    ("unparsable", unparsable::rule),
    ("other_crate", other_crate::rule),
    ("outside_lib", outside_lib::rule),
    ("free_fn", free_fn::rule),
    ("associated_fn", associated_fn::rule),
    ("shim_inner", shim_inner::rule),
    ("nested_fn", nested_fn::rule),
    ("provided_method", provided_method::rule),
    ("private_tuple_ctor", private_tuple_ctor::rule),
    ("not_found", not_found::rule),
];

/// How a test calls the function `info` records, by the first rule that decides.
pub(crate) fn resolve(api: &CrateApi, info: &FunctionInfo) -> Target {
    decide(api, info).1
}

/// [`resolve`], with the name of the rule that decided.
pub(crate) fn decide(api: &CrateApi, info: &FunctionInfo) -> (&'static str, Target) {
    RULES
        .iter()
        .find_map(|(name, rule)| rule(api, info).map(|target| (*name, target)))
        .expect("not_found decides every function")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::rulebook;

    #[test]
    fn every_recorded_function_is_decided_by_the_first_rule_that_answers() {
        let r = rulebook();
        let mut decided: Vec<(&str, &str)> = r
            .trace
            .functions
            .iter()
            .map(|f| (f.path.as_str(), decide(&r.api, f).0))
            .collect();
        decided.sort();
        // Every rule of the list but the two no Rust recording of this crate can reach, and
        // `provided_method` and `dependency_trait`, which its recording does not reach (the
        // crate has no dependency; each rule's own test makes the function a run records, and
        // `tests/rules.rs` carves one).
        let mut used: Vec<&str> = decided.iter().map(|(_, rule)| *rule).collect();
        used.sort();
        used.dedup();
        let mut listed: Vec<&str> = RULES
            .iter()
            .map(|(name, _)| *name)
            .filter(|name| {
                ![
                    "not_rust",
                    "other_crate",
                    "provided_method",
                    "dependency_trait",
                ]
                .contains(name)
            })
            .collect();
        listed.sort();
        assert_eq!(used, listed, "{decided:#?}");
        // A trait impl is never left to the rules after the trait-impl ones.
        for (path, rule) in &decided {
            if path.starts_with('<') {
                assert!(
                    RULES[..8].iter().any(|(name, _)| name == rule),
                    "{path} decided by {rule}"
                );
            }
        }
    }
}
