//! Call form: none for a path no test can write (a closure, compiler-generated code, a path
//! whose segments are no Rust path): not supported, by kind.

use carve_storage::FunctionInfo;

use crate::act::call::parse_fn_path;
use crate::act::target::Target;
use crate::read::crate_api::CrateApi;

/// A path [`parse_fn_path`] refuses.
pub(crate) fn rule(_api: &CrateApi, info: &FunctionInfo) -> Option<Target> {
    parse_fn_path(&info.path).err().map(Target::Unsupported)
}
