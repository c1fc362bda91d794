//! Call form: an associated function or method of one of the crate's types, by the type's path
//! (`expr::parser::Parser::new(..)`, `var.method(..)` on a rebuilt receiver); a generic type's
//! associated function on the recorded instance (`Stack::<u32>::new()`). Private when no test
//! can reach the type or the function.

use carve_storage::FunctionInfo;

use crate::act::call::{callable, parse_fn_path};
use crate::act::target::Target;
use crate::read::crate_api::CrateApi;

/// A function declared in an impl of the type its path names.
pub(crate) fn rule(api: &CrateApi, info: &FunctionInfo) -> Option<Target> {
    let segments = parse_fn_path(&info.path).ok()?;
    let (_, rest) = segments.split_first()?;
    let (fn_name, owners) = rest.split_last()?;
    let (type_name, module_path) = owners.split_last()?;
    let module = api.find_module(module_path)?;
    let ty = module.types.get(type_name)?;
    let f = ty.functions.get(fn_name)?;
    let type_path = format!("{}::{}", api.crate_name, owners.join("::"));
    let reachable = module.reachable || api.public_path(&type_path).is_some();
    if !(reachable && ty.public && f.public) {
        return Some(Target::Private);
    }
    Some(callable(api, info, module, Some(ty), f))
}

#[cfg(test)]
mod tests {
    use crate::act::rules::decide;
    use crate::act::target::Target;
    use crate::testdata::rulebook;

    #[test]
    fn a_method_is_called_on_a_receiver_of_its_type() {
        let r = rulebook();
        let (rule, target) = decide(&r.api, r.function("rulebook::Counter::total"));
        assert_eq!(rule, "associated_fn");
        let Target::Callable(c) = target else {
            panic!("{} is not callable", "rulebook::Counter::total")
        };
        assert_eq!(c.call_path, "rulebook::Counter::total");
        assert!(c.api.has_receiver);
        assert_eq!(c.self_type.as_deref(), Some("rulebook::Counter"));
    }
}
