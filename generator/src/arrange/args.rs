//! How to build an argument that is not a literal: a dependency as a mock, an object of the
//! crate rebuilt from its own provenance.

use carve_storage::{Arg, Call, CallId, ObjectId, Value};

use crate::arrange::builder::Builder;
use crate::arrange::context::Ctx;
use crate::arrange::literal::Position;
use crate::arrange::mocks::mockable;
use crate::arrange::values::dyn_object;
use crate::arrange::wanted::Wanted;
use crate::arrange::{closure, literal};
use crate::body::Effect;
use crate::naming;
use crate::read::crate_api::{FnApi, ParamApi};
use crate::read::types::DeclType;
use crate::reasons::{CLOSURE_ARGUMENT, UNDECODED, UNSUPPORTED_TYPE};

/// A dependency passed as an argument becomes a mock, written as the parameter takes it: a
/// trait object (`&dyn T`, `Box<dyn T>`, `Rc<dyn T>`...) or a value of a trait-bounded generic
/// (`repo: R`, `&R`, `&impl Repo`). `None` when the argument is no dependency; `moved` maps the
/// recorded address to where the object lives in the state the mock stands in for.
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

/// An argument holding an object of the crate that no literal can write, rebuilt into a new
/// variable from its own recorded provenance (as it was when call `before` was made) and passed
/// as the recorded argument held it: `&var` / `&mut var` (the parameter's declared mutability, or
/// the recorded reference's), `var` by value, `Some(&var)` / `Some(var)`. Gives the expression
/// and, for `&mut`, the variable whose effects the test may check.
pub(crate) fn object_arg(
    cx: &Ctx,
    b: &mut Builder,
    value: &Value,
    object: Option<ObjectId>,
    param: &ParamApi,
    before: CallId,
) -> Result<(String, Option<String>), &'static str> {
    fn shape(value: &Value, declared_mut: Option<bool>) -> Option<(&Value, String)> {
        match value {
            Value::Ref { ty, target, .. } if ty.starts_with('&') => {
                let mutable = declared_mut.unwrap_or_else(|| ty.starts_with("&mut "));
                let (inner, wrap) = shape(target, None)?;
                // Only one reference deep: `&&T` is no shape a test writes from a variable.
                (wrap == "{}").then(|| (inner, if mutable { "&mut {}" } else { "&{}" }.to_string()))
            }
            Value::Struct { ty, .. } | Value::Enum { ty, .. }
                if !ty.starts_with("core::option::Option") =>
            {
                Some((value, "{}".to_string()))
            }
            Value::Enum {
                ty,
                variant,
                fields,
            } if ty.starts_with("core::option::Option") && variant == "Some" => {
                let (inner, wrap) = shape(&fields.first()?.value, None)?;
                Some((inner, format!("Some({wrap})")))
            }
            _ => None,
        }
    }
    let (declared_mut, declared) = match &param.ty {
        DeclType::Ref { mutable, inner } => (Some(*mutable), inner.as_ref()),
        other => (None, other),
    };
    // A scalar or string parameter recorded as an object: the value was not read as declared.
    if matches!(
        declared,
        DeclType::Unit | DeclType::Prim(_) | DeclType::Str | DeclType::String
    ) {
        return Err(UNDECODED);
    }
    let (obj, wrap) = shape(value, declared_mut).ok_or(UNDECODED)?;
    let mutable = wrap.contains("&mut ");
    let obj_type = crate::read::types::strip_generics(obj.type_name()).to_string();
    let var = b.fresh(&param.name);
    let wanted = Wanted {
        state: obj,
        object,
        type_path: &obj_type,
        before,
        var: &var,
        mutable,
    };
    if let Err(e) = cx.rebuild(b, wanted) {
        b.vars.remove(&var);
        return Err(e);
    }
    Ok((wrap.replace("{}", &var), mutable.then_some(var)))
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

/// The arguments of the call a test makes, as Rust expressions, with what else they need.
pub(crate) struct CallArgs {
    pub(crate) exprs: Vec<String>,
    /// Per argument, a slug the test's name is made of.
    pub(crate) slugs: Vec<String>,
    /// `&mut` object arguments: (parameter, variable), whose effects the test may check.
    pub(crate) objects: Vec<(String, String)>,
    /// How many times each replay closure was called, checked first after the call.
    pub(crate) closure_checks: Vec<Effect>,
}

/// Each of `args` (the recorded arguments but `self`, one per parameter of `api`) as the
/// test passes it: a mock, a replay closure, a literal, or an object rebuilt.
pub(crate) fn call_args(
    cx: &Ctx,
    b: &mut Builder,
    call: &Call,
    api: &FnApi,
    args: &[&Arg],
) -> Result<CallArgs, &'static str> {
    let mut out = CallArgs {
        exprs: Vec::with_capacity(api.params.len()),
        slugs: Vec::new(),
        objects: Vec::new(),
        closure_checks: Vec::new(),
    };
    for (arg, param) in args.iter().zip(&api.params) {
        out.slugs.push(naming::value_slug(&arg.value));
        if let Some(expr) = dep_arg(cx, b, &arg.value, param, |addr| addr) {
            out.exprs.push(expr?);
            continue;
        }
        if let Some(replay) = closure::replay(cx, call, arg, &api.ident, param.bound.as_deref()) {
            let (expr, check) = replay?.add_to(b);
            // Named for what it is, not for what it captured.
            if let Some(slug) = out.slugs.last_mut() {
                *slug = "closure".to_string();
            }
            out.exprs.push(expr);
            out.closure_checks.extend(check);
            continue;
        }
        let expr = value_arg(cx, b, call, arg, param, &mut out.objects)?;
        out.exprs.push(expr);
    }
    Ok(out)
}

/// An argument that is neither a dependency nor a closure: a literal, or an object of the crate
/// (by reference, by value, in `Some`) rebuilt too (a `&mut` one added to `objects`).
fn value_arg(
    cx: &Ctx,
    b: &mut Builder,
    call: &Call,
    arg: &Arg,
    param: &ParamApi,
    objects: &mut Vec<(String, String)>,
) -> Result<String, &'static str> {
    let scalar = arg.value.is_scalar_or_string()
        || matches!(&arg.value, Value::Ref { target, .. } if target.is_scalar_or_string());
    match literal::render(&arg.value, &param.ty, Position::Arg) {
        Ok(expr) => Ok(expr),
        Err(e) if scalar => Err(literal::reason(e)),
        Err(_) => match literal::render_value(&arg.value, false, cx.api) {
            Ok(expr) => Ok(expr),
            Err(_) if arg.value.type_name().contains("{closure_env#") => Err(CLOSURE_ARGUMENT),
            Err(_) => {
                let (expr, mutated) =
                    object_arg(cx, b, &arg.value, call.object(&arg.name), param, call.id)?;
                if let Some(var) = mutated {
                    objects.push((arg.name.clone(), var));
                }
                Ok(expr)
            }
        },
    }
}
