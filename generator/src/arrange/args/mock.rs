//! An argument that is a dependency becomes a mock, written as the parameter takes it: a trait
//! object (`&dyn T`, `&mut dyn T`, `Box<dyn T>`, `Rc<dyn T>`...) or a value of a trait-bounded
//! generic (`repo: R`, `&R`, `&impl Repo`) whose trait a `mock!` can be written for. What the
//! call asked of it, the mock answers as recorded (`arrange/mocks.rs`).

use carve_storage::Value;

use crate::arrange::args::site::{Built, Site, Verdict};
use crate::arrange::builder::Builder;
use crate::arrange::context::Ctx;
use crate::arrange::mocks::mockable;
use crate::arrange::values::dyn_object;
use crate::read::crate_api::ParamApi;
use crate::read::types::DeclType;
use crate::reasons::UNSUPPORTED_TYPE;

/// The rule: the argument as a mock, when it is a dependency.
pub(crate) fn rule(site: &Site, b: &mut Builder) -> Verdict {
    match dep_arg(site.cx, b, &site.arg.value, site.param, site.moved) {
        Some(Ok(expr)) => Verdict::Built(Built::expr(expr)),
        Some(Err(why)) => Verdict::Refused(why),
        None => Verdict::Pass,
    }
}

/// `value` passed for `param` as a mock: `None` when the argument is no dependency; `moved`
/// maps the recorded address to where the object lives in the state the mock stands in for.
pub(crate) fn dep_arg(
    cx: &Ctx,
    b: &mut Builder,
    value: &Value,
    param: &ParamApi,
    moved: impl Fn(u64) -> u64,
) -> Option<Result<String, &'static str>> {
    let addr = match value {
        Value::Ref { addr, .. } => moved(*addr),
        _ => 0,
    };
    if let Some(trait_path) = param.bound.as_ref().filter(|t| mockable(cx.api, t).is_ok()) {
        let var = b.add_dep(trait_path.clone(), addr, &param.name);
        return Some(Ok(match &param.ty {
            DeclType::Ref { mutable: true, .. } => format!("&mut {var}"),
            DeclType::Ref { .. } => format!("&{var}"),
            _ => var,
        }));
    }
    let (trait_path, _) = dyn_object(value)?;
    let var = b.add_dep(trait_path, addr, &param.name);
    Some(wrap_object(value.type_name(), &var))
}

/// `&mock_a`, `&mut mock_a`, `Box::new(mock_a)` or `std::rc::Rc::new(mock_a)` for a parameter
/// of recorded type `ty`.
pub(crate) fn wrap_object(ty: &str, var: &str) -> Result<String, &'static str> {
    if ty.starts_with("&mut ") {
        Ok(format!("&mut {var}"))
    } else if ty.starts_with('&') {
        Ok(format!("&{var}"))
    } else if ty.starts_with("alloc::boxed::Box<") {
        Ok(format!("Box::new({var})"))
    } else if ty.starts_with("alloc::rc::Rc<") {
        Ok(format!("std::rc::Rc::new({var})"))
    } else if ty.starts_with("alloc::sync::Arc<") {
        Ok(format!("std::sync::Arc::new({var})"))
    } else {
        Err(UNSUPPORTED_TYPE)
    }
}

#[cfg(test)]
mod tests {
    use crate::arrange::args::Verdict;
    use crate::testdata::rulebook;

    #[test]
    fn a_trait_object_argument_becomes_a_mock_of_its_trait() {
        let (verdict, b) = rulebook().arg("rulebook::drain", 0, "src", super::rule);
        let Verdict::Built(built) = verdict else {
            panic!("the trait object is mocked")
        };
        assert_eq!(built.expr, "&mut mock_src");
        assert_eq!(b.deps.len(), 1);
        assert_eq!(b.deps[0].trait_path, "rulebook::Source");
    }

    #[test]
    fn a_plain_value_is_no_dependency() {
        let (verdict, b) = rulebook().arg("rulebook::drain", 0, "n", super::rule);
        assert!(matches!(verdict, Verdict::Pass));
        assert!(b.deps.is_empty());
    }
}
