//! Call form: the non-generic body of a generic shim, called through the shim.
//!
//! A common idiom keeps generic code small: `fn encode<T: AsRef<[u8]>>(&self, input: T) ->
//! String { fn inner<E: Engine + ?Sized>(engine: &E, input: &[u8]) -> String { .. } inner(self,
//! input.as_ref()) }` (base64's `Engine` methods; std does the same). Where the shim itself is
//! inlined, the run records only `inner`, a function no test can name. When the shim's whole
//! body is that one call, each of the inner function's arguments being one of the shim's
//! parameters as given or through `as_ref()`, `as_mut()`, `into()` or a borrow, a call of the
//! inner function is a call of the shim with the same values: the test calls the shim, by its
//! path with the receiver as the first argument (`<GeneralPurpose as base64::engine::Engine>::
//! encode(&engine, &[..])`), and checks what the inner call returned.

use carve_storage::FunctionInfo;

use crate::act::call::parse_fn_path;
use crate::act::instance;
use crate::act::rules::nested_fn::is_nested_fn;
use crate::act::std_traits::path_call_api;
use crate::act::target::{Callable, Target};
use crate::read::crate_api::CrateApi;

/// A nested function whose enclosing public function is a shim that only calls it.
pub(crate) fn rule(api: &CrateApi, info: &FunctionInfo) -> Option<Target> {
    let segments = parse_fn_path(&info.path).ok()?;
    let (_, rest) = segments.split_first()?;
    let (inner, owners) = rest.split_last()?;
    if !is_nested_fn(api, owners) {
        return None;
    }
    let (outer, parent) = owners.split_last()?;
    let file = api.local_file(std::path::Path::new(info.decl_file.as_deref()?));
    let source = std::fs::read_to_string(file).ok()?;
    let parsed = syn::parse_file(&source).ok()?;
    let shim = find_shim(&parsed.items, outer, inner)?;
    // Every parameter of the inner function comes from one of the shim's, each once.
    if shim.args.len() != info.params.len() {
        return None;
    }
    let mut order = Vec::with_capacity(shim.params.len());
    for p in &shim.params {
        let at = shim.args.iter().position(|a| a == p)?;
        order.push(at);
    }
    if order.len() != shim.args.len() {
        return None;
    }
    let owner_path = std::iter::once(api.crate_name.as_str())
        .chain(parent.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join("::");
    let call_path = if let Some(tr) = api.public_trait(&owner_path) {
        let self_at = shim.params.iter().position(|p| p == "self")?;
        let self_ty = info.params.get(order[self_at])?.type_name.as_str();
        let self_ty = self_ty.strip_prefix('&').unwrap_or(self_ty);
        let self_ty = self_ty.strip_prefix("mut ").unwrap_or(self_ty).trim();
        tr.methods.iter().find(|m| m.name == *outer)?;
        let written = instance::test_spelling(self_ty, api)?;
        format!("<{written} as {owner_path}>::{outer}")
    } else if let Some(ty) = api.public_type(&owner_path) {
        ty.functions.get(outer).filter(|f| f.public)?;
        format!("{owner_path}::{outer}")
    } else {
        let module = api.find_module(parent)?;
        let f = module.functions.get(outer)?;
        let full = format!("{owner_path}::{outer}");
        if !(f.public && (module.reachable || api.public_path(&full).is_some())) {
            return None;
        }
        full
    };
    let mut f = path_call_api(info, outer).ok()?;
    let recorded = std::mem::take(&mut f.params);
    f.params = order.iter().map(|&i| recorded[i].clone()).collect();
    Some(Target::Callable(Box::new(Callable {
        module: Vec::new(),
        call_path,
        subject: outer.clone(),
        api: f,
        self_type: None,
        via_trait: None,
        display: false,
    })))
}

/// A shim: its parameters in order (`self` for the receiver) and, for each argument of its one
/// call of the inner function, the parameter it passes.
#[derive(Debug, PartialEq)]
struct Shim {
    params: Vec<String>,
    args: Vec<String>,
}

/// The function `outer` among `items` (in modules, traits and impls) whose body declares `fn
/// inner` and then only calls it.
fn find_shim(items: &[syn::Item], outer: &str, inner: &str) -> Option<Shim> {
    let mut found = Vec::new();
    for item in items {
        match item {
            syn::Item::Fn(f) => found.extend(shim_of(&f.sig, &f.block, outer, inner)),
            syn::Item::Trait(t) => {
                for ti in &t.items {
                    if let syn::TraitItem::Fn(f) = ti {
                        if let Some(block) = &f.default {
                            found.extend(shim_of(&f.sig, block, outer, inner));
                        }
                    }
                }
            }
            syn::Item::Impl(i) => {
                for ii in &i.items {
                    if let syn::ImplItem::Fn(f) = ii {
                        found.extend(shim_of(&f.sig, &f.block, outer, inner));
                    }
                }
            }
            syn::Item::Mod(m) => {
                if let Some((_, items)) = &m.content {
                    found.extend(find_shim(items, outer, inner));
                }
            }
            _ => {}
        }
    }
    // Two shims of that name that pass differently: which one ran is not known.
    let first = found.pop()?;
    found.iter().all(|s| *s == first).then_some(first)
}

fn shim_of(sig: &syn::Signature, block: &syn::Block, outer: &str, inner: &str) -> Option<Shim> {
    if sig.ident != outer {
        return None;
    }
    let [syn::Stmt::Item(syn::Item::Fn(nested)), syn::Stmt::Expr(tail, None)] =
        block.stmts.as_slice()
    else {
        return None;
    };
    if nested.sig.ident != inner {
        return None;
    }
    let syn::Expr::Call(call) = tail else {
        return None;
    };
    let syn::Expr::Path(callee) = call.func.as_ref() else {
        return None;
    };
    if !callee.path.is_ident(inner) {
        return None;
    }
    let params = sig
        .inputs
        .iter()
        .map(|input| match input {
            syn::FnArg::Receiver(_) => Some("self".to_string()),
            syn::FnArg::Typed(t) => match t.pat.as_ref() {
                syn::Pat::Ident(i) => Some(i.ident.to_string()),
                _ => None,
            },
        })
        .collect::<Option<Vec<String>>>()?;
    let args = call
        .args
        .iter()
        .map(passed_param)
        .collect::<Option<Vec<String>>>()?;
    Some(Shim { params, args })
}

/// The parameter an argument passes on: `x`, `&x`, `&mut x`, `x.as_ref()`, `x.as_mut()`,
/// `x.into()`, `x.borrow()`.
fn passed_param(arg: &syn::Expr) -> Option<String> {
    match arg {
        syn::Expr::Path(p) => p.path.get_ident().map(ToString::to_string),
        syn::Expr::Reference(r) => passed_param(&r.expr),
        syn::Expr::MethodCall(m)
            if m.args.is_empty()
                && matches!(
                    m.method.to_string().as_str(),
                    "as_ref" | "as_mut" | "into" | "borrow" | "borrow_mut"
                ) =>
        {
            passed_param(&m.receiver)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::act::rules::decide;
    use crate::testdata::rulebook;

    #[test]
    fn a_generic_shim_s_inner_body_is_called_through_the_shim() {
        let r = rulebook();
        let (rule, target) = decide(&r.api, r.function("rulebook::shout::inner"));
        assert_eq!(rule, "shim_inner");
        let Target::Callable(c) = target else {
            panic!("rulebook::shout::inner is not callable")
        };
        assert_eq!(c.call_path, "rulebook::shout");
        let params: Vec<&str> = c.api.params.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(params, ["text"]);
        // A nested function whose outer function does more stays private.
        let (rule, target) = decide(&r.api, r.function("rulebook::outer::inner"));
        assert_eq!(rule, "nested_fn");
        assert!(matches!(target, Target::Private));
    }

    #[test]
    fn a_body_that_only_calls_its_inner_function_is_a_shim() {
        let file: syn::File = syn::parse_str(
            r#"
            pub trait Engine {
                fn encode<T: AsRef<[u8]>>(&self, input: T, out: &mut String) {
                    fn inner<E: Engine + ?Sized>(engine: &E, bytes: &[u8], out: &mut String) {}
                    inner(self, input.as_ref(), out)
                }
                fn other(&self) {
                    fn inner() {}
                    let x = 1;
                    inner()
                }
            }
            "#,
        )
        .unwrap();
        assert_eq!(
            find_shim(&file.items, "encode", "inner"),
            Some(Shim {
                params: vec!["self".into(), "input".into(), "out".into()],
                args: vec!["self".into(), "input".into(), "out".into()],
            })
        );
        // A body that does more than call it is no shim.
        assert_eq!(find_shim(&file.items, "other", "inner"), None);
    }
}
