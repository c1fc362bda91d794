//! Call form: none for a function of the crate the source does not show (a macro's, code cfg'd
//! out): the last rule, it decides every function the ones before it left.

use carve_storage::FunctionInfo;

use crate::act::target::Target;
use crate::read::crate_api::CrateApi;

/// Any function left.
pub(crate) fn rule(_api: &CrateApi, _info: &FunctionInfo) -> Option<Target> {
    Some(Target::Unsupported("not found in the source"))
}
