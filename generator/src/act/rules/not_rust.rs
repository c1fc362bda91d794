//! Call form: none for a function that is not Rust (a C program's): not supported.

use carve_storage::FunctionInfo;

use crate::act::target::Target;
use crate::read::crate_api::CrateApi;

/// A function of another language.
pub(crate) fn rule(_api: &CrateApi, info: &FunctionInfo) -> Option<Target> {
    (info.language != carve_storage::Language::Rust).then_some(Target::Unsupported("not Rust"))
}
