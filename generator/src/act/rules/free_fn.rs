//! Call form: a free function of one of the crate's modules, by the path a test writes
//! (`expr::lexer::precedence(..)`, or the public path a `pub use` gives it); a generic one names
//! the recorded instance where its arguments do not (`parse_as::<u8>(..)`). Private when no test
//! can reach it.

use carve_storage::FunctionInfo;

use crate::act::call::{callable, parse_fn_path};
use crate::act::target::Target;
use crate::read::crate_api::CrateApi;

/// A function declared in the module its path names.
pub(crate) fn rule(api: &CrateApi, info: &FunctionInfo) -> Option<Target> {
    let segments = parse_fn_path(&info.path).ok()?;
    let (_, rest) = segments.split_first()?;
    let (fn_name, owners) = rest.split_last()?;
    let (module, f) = api
        .find_module(owners)
        .and_then(|m| Some((m, m.functions.get(fn_name)?)))?;
    let full = format!("{}::{}", api.crate_name, rest.join("::"));
    if !(f.public && (module.reachable || api.public_path(&full).is_some())) {
        return Some(Target::Private);
    }
    Some(callable(api, info, module, None, f))
}

#[cfg(test)]
mod tests {
    use crate::act::rules::decide;
    use crate::act::target::Target;
    use crate::testdata::rulebook;

    #[test]
    fn a_free_function_is_called_by_its_path() {
        let r = rulebook();
        let (rule, target) = decide(&r.api, r.function("rulebook::add"));
        assert_eq!(rule, "free_fn");
        let Target::Callable(c) = target else {
            panic!("{} is not callable", "rulebook::add")
        };
        assert_eq!(c.call_path, "rulebook::add");
    }
}
