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
