//! Call form: none for a function declared in a file the library does not hold: the binary's
//! (`binary only`) or another crate's.

use carve_storage::FunctionInfo;

use crate::act::call::outside_lib;
use crate::act::target::Target;
use crate::read::crate_api::CrateApi;

/// A function whose declaring file is outside the library's module tree.
pub(crate) fn rule(api: &CrateApi, info: &FunctionInfo) -> Option<Target> {
    outside_lib(api, info)
}
