//! Which recorded functions no test calls, so that grouping may let go of their calls' values
//! ([`LeanValues`]): decided with the call-form rules, before the trace is read.

use std::path::Path;

use carve_storage::{FunctionInfo, ObjectInfo};

use crate::act::rules::resolve;
use crate::act::target::Target;
use crate::error::GenerateError;
use crate::read::crate_api::CrateApi;
use crate::read::group::LeanValues;
use crate::read::paths::trait_of_impl;
use crate::read::types::strip_generics;

impl LeanValues {
    /// Classifies a run's functions and objects against the crate's API.
    pub fn new(api: &CrateApi, functions: &[FunctionInfo], objects: &[ObjectInfo]) -> LeanValues {
        let functions = functions
            .iter()
            .filter(|f| !f.path.contains("{{closure}}"))
            .filter(|f| match trait_of_impl(&f.path) {
                None => !f.path.starts_with('<'),
                Some(tr) => {
                    api.declared_trait(&tr).is_none()
                        && !f.path.ends_with(" as core::fmt::Display>::fmt")
                        && !f.path.ends_with(" as core::ops::drop::Drop>::drop")
                }
            })
            .filter(|f| matches!(resolve(api, f), Target::Private))
            .map(|f| f.id)
            .collect();
        let private_objects = objects
            .iter()
            .filter(|o| {
                let base = strip_generics(&o.type_name);
                api.declared_type(base).is_some() && api.public_type(base).is_none()
            })
            .map(|o| o.id)
            .collect();
        LeanValues {
            functions,
            private_objects,
        }
    }

    /// [`LeanValues::new`] with the API of the crate in `crate_dir`.
    pub fn load(
        crate_dir: &Path,
        functions: &[FunctionInfo],
        objects: &[ObjectInfo],
    ) -> Result<LeanValues, GenerateError> {
        let mut api = CrateApi::load(crate_dir)?;
        // A trace moved with its crate: its files are read where generation will read them.
        crate::read::moved::anchor(&mut api, functions)?;
        Ok(LeanValues::new(&api, functions, objects))
    }
}
