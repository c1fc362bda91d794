//! An argument holding an object of the crate that no literal can write, rebuilt into a new
//! variable from its own recorded provenance (the rebuild rules of `arrange/rebuild/`, as it
//! was when the call was made) and passed as the recorded argument held it: `&var` / `&mut var`
//! (the parameter's declared mutability, or the recorded reference's), `var` by value,
//! `Some(&var)` / `Some(var)`. A `&mut` one is an object whose effects the test may check. A
//! producer's argument is rebuilt so only to [`MAX_PRODUCER_DEPTH`] producers deep, and never
//! while a rebuild asks for plain values only. The last rule: it decides every argument it sees.

use carve_storage::{CallId, ObjectId, Value};

use crate::arrange::args::site::{Built, Place, Site, Verdict};
use crate::arrange::builder::{Builder, MAX_PRODUCER_DEPTH};
use crate::arrange::context::Ctx;
use crate::arrange::wanted::Wanted;
use crate::read::crate_api::ParamApi;
use crate::read::types::DeclType;
use crate::reasons::UNDECODED;

/// The rule: the object rebuilt from its provenance.
pub(crate) fn rule(site: &Site, b: &mut Builder) -> Verdict {
    let object = site.call.object(&site.arg.name);
    let rebuilt = match site.place {
        Place::Tested => object_arg(
            site.cx,
            b,
            &site.arg.value,
            object,
            site.param,
            site.call.id,
        ),
        // A builder step taking another object (`options.base_url(Some(&base))`,
        // `Replace::new(capture)`): that object rebuilt from its own provenance.
        Place::Producer if !b.plain_only && b.producer_depth < MAX_PRODUCER_DEPTH => {
            b.producer_depth += 1;
            let rebuilt = object_arg(
                site.cx,
                b,
                &site.arg.value,
                object,
                site.param,
                site.call.id,
            );
            b.producer_depth -= 1;
            rebuilt
        }
        Place::Producer => Err(UNDECODED),
    };
    match rebuilt {
        Ok((expr, mutated)) => Verdict::Built(Built {
            expr,
            mutated: mutated.map(|var| (site.arg.name.clone(), var)),
            ..Built::default()
        }),
        Err(why) => Verdict::Refused(why),
    }
}

/// `value` (recorded as object `object` of the call `before`) rebuilt for `param`: the
/// expression and, for `&mut`, the variable whose effects the test may check.
pub(crate) fn object_arg(
    cx: &Ctx,
    b: &mut Builder,
    value: &Value,
    object: Option<ObjectId>,
    param: &ParamApi,
    before: CallId,
) -> Result<(String, Option<String>), &'static str> {
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

/// The object inside `value` and how the argument holds it (`&{}`, `Some({})`...).
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

#[cfg(test)]
mod tests {
    use crate::arrange::args::Verdict;
    use crate::testdata::rulebook;

    #[test]
    fn an_object_argument_is_rebuilt_by_its_producer() {
        let (verdict, b) = rulebook().arg("rulebook::twice", 0, "c", super::rule);
        let Verdict::Built(built) = verdict else {
            panic!("the counter is rebuilt")
        };
        assert_eq!(built.expr, "&c");
        assert_eq!(built.mutated, None);
        let setup: Vec<&str> = b.setup.iter().map(|s| s.expr.as_str()).collect();
        assert_eq!(setup, ["rulebook::Counter::new(4u32)"]);
    }
}
