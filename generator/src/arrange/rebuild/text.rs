//! Objects rebuilt from their text: an object whose state no recorded call can be replayed to
//! reach (it was changed through a handle of another crate whose calls were not recorded,
//! `url.query_pairs_mut().append_pair(..)` with `--filter 'url::*'`), but whose type has a public
//! constructor from a string (`Url::parse(&str)`) and a getter giving its text (`as_str()`)
//! recorded on an object in that very state, or else a getter that gave, on every object it was
//! recorded on, the text the object holds in one field (`as_str()` gives `serialization`): that
//! field's text in the state wanted (a `Url` right after `query_pairs_mut()`, before
//! `set_fragment(..)`, when no getter was called). The test parses that text and checks, before it
//! acts, that the getter gives the recorded text back: `let url = Url::parse("..").unwrap();
//! assert_eq!(url.as_str(), "..");`. That the text round-trips to the recorded state is a
//! hypothesis; the check and the recorded result the test asserts are what verification holds
//! it to, as for the other state-based rules.
//!
//! Only for states recorded whole (no memory behind pointers, no `MaybeUninit` storage): there
//! an equal recorded state is the same state, so the getter's recorded text is the text of the
//! object the test needs. And only for a text the object holds as a field (its serialization),
//! not a piece of it (`scheme()`).

use carve_storage::Value;

use crate::act::target::{Callable, Target};
use crate::arrange::builder::Builder;
use crate::arrange::check::observations;
use crate::arrange::context::{cached, reads_world, Ctx};
use crate::arrange::rebuild::history;
use crate::arrange::rebuild::part_of_returned::returned_public_calls;
use crate::arrange::rebuild::producer::constructed;
use crate::arrange::values::{returned_struct, same_state, strip_ref};
use crate::arrange::wanted::{Answer, Wanted};
use crate::body::{Binding, Effect};
use crate::read::types::DeclType;
use crate::syntax;

/// Adds `let <var> = <T>::<parser>("<text>")<unwrap>;` and the check `<var>.<getter>() ==
/// "<text>"` for an object of `type_path` in `state`, when the recording holds a getter's text of
/// that state and a constructor from a string. `false`, with `b` unchanged, otherwise.
pub(crate) fn rebuild(
    cx: &Ctx,
    b: &mut Builder,
    state: &Value,
    type_path: &str,
    var: &str,
    mutable: bool,
) -> bool {
    if history::incomplete(state) {
        return false;
    }
    let Some((getter, text)) = text_of(cx, state, type_path) else {
        return false;
    };
    let Some((parser, unwrap)) = parser_of(cx, type_path) else {
        return false;
    };
    b.setup.push(Binding {
        var: var.to_string(),
        mutable,
        expr: format!("{parser}({}){unwrap}", syntax::str_lit(&text)),
        repeat: 1,
        times: None,
    });
    b.checks.push(Effect {
        actual: format!("{var}.{getter}()"),
        expected: syntax::str_lit(&text),
        message: None,
        observe: None,
    });
    // And whatever else a caller can observe of the state (other getters, `pub` fields): a
    // text that is not the whole state (`Wallet::new(owner)`) fails here, not silently.
    let checks = observations(cx, var, state, type_path);
    b.checks.extend(
        checks
            .into_iter()
            .filter(|c| c.actual != format!("{var}.{getter}()")),
    );
    true
}

/// `fn getter(&self) -> &str` (or `String`): public, no other parameter.
fn text_getter(c: &Callable, type_path: &str) -> bool {
    let text = match &c.api.ret {
        DeclType::String => true,
        DeclType::Ref {
            mutable: false,
            inner,
        } => matches!(**inner, DeclType::Str),
        _ => false,
    };
    c.api.has_receiver
        && !c.api.mut_receiver
        && c.api.params.is_empty()
        && c.api.blocker.is_none()
        && !c.display
        && c.via_trait.is_none()
        && c.self_type.as_deref() == Some(type_path)
        && text
}

/// A recorded getter's name and the text it gave on an object in `state` (at any time: the
/// state is all the getter reads).
fn text_of(cx: &Ctx, state: &Value, type_path: &str) -> Option<(String, String)> {
    let getters = cached(&cx.text_getters, type_path, || {
        returned_public_calls(cx, |call, c| {
            text_getter(c, type_path)
                && matches!(
                    call.ret.as_ref().map(strip_ref),
                    Some(Value::Str {
                        truncated: false,
                        ..
                    })
                )
                && !reads_world(cx, call)
        })
    });
    // The object must hold the text itself (`Url`'s `serialization`), not a piece of it
    // (`scheme()` gives `"https"`): the other fields are then what parsing it derives.
    let Value::Struct { fields, .. } = state else {
        return None;
    };
    let held = |text: &str| {
        fields.iter().any(
            |f| matches!(&f.value, Value::Str { value, truncated: false, .. } if value == text),
        )
    };
    let on_state = getters.iter().find_map(|&i| {
        let call = &cx.trace.calls[i];
        let pre = strip_ref(call.arg("self")?);
        if !same_state(pre, state) {
            return None;
        }
        let Some(Target::Callable(c)) = cx.targets.get(&call.function) else {
            return None;
        };
        match strip_ref(call.ret.as_ref()?) {
            Value::Str { value, .. } if held(value) => Some((c.api.ident.clone(), value.clone())),
            _ => None,
        }
    });
    on_state.or_else(|| {
        let (getter, field, text) = field_text(cx, &getters, fields)?;
        determines_state(cx, type_path, &field, &text, state).then_some((getter, text))
    })
}

/// Whether, across every recorded state of the type, the text held in `field` determines the
/// whole state: every recorded state holding `text` there is `state` (`Url`'s other fields are
/// what parsing its `serialization` derives). A `Wallet` whose `owner` is `"ada"` both at
/// balance 0 and at balance 100 is not made by parsing its owner.
fn determines_state(cx: &Ctx, type_path: &str, field: &str, text: &str, state: &Value) -> bool {
    cx.trace.calls.iter().all(|call| {
        let Some(other @ Value::Struct { ty, fields, .. }) = call.arg("self").map(strip_ref) else {
            return true;
        };
        let holds_text = fields.iter().any(|f| {
            f.name == field
                && matches!(&f.value, Value::Str { value, truncated: false, .. } if value == text)
        });
        crate::read::types::strip_generics(ty) != type_path
            || !holds_text
            || same_state(other, state)
    })
}

/// A state no getter was called on (a `Url` right after `query_pairs_mut()`, before
/// `set_fragment(..)`): a getter that gave, on every object of the type it was recorded on,
/// the text that object holds in one and the same field (`as_str()` gives `serialization`),
/// and that field's text in `state`. The getter is the one the test checks it with.
fn field_text(
    cx: &Ctx,
    getters: &[usize],
    fields: &[carve_storage::Field],
) -> Option<(String, String, String)> {
    // Per getter: the field it always gave, `None` once a call gave something else.
    let mut gave: Vec<(carve_storage::FunctionId, Option<&str>)> = Vec::new();
    for &i in getters {
        let call = &cx.trace.calls[i];
        let Some(Value::Struct { fields: own, .. }) = call.arg("self").map(strip_ref) else {
            continue;
        };
        let Some(Value::Str { value, .. }) = call.ret.as_ref().map(strip_ref) else {
            continue;
        };
        let holding = own.iter().find(
            |f| matches!(&f.value, Value::Str { value: v, truncated: false, .. } if v == value),
        );
        let name = holding.map(|f| f.name.as_str());
        match gave.iter_mut().find(|(f, _)| *f == call.function) {
            Some((_, known)) => {
                if *known != name {
                    *known = None;
                }
            }
            None => gave.push((call.function, name)),
        }
    }
    gave.into_iter().find_map(|(function, field)| {
        let field = field?;
        let text = fields.iter().find_map(|f| match &f.value {
            Value::Str {
                value,
                truncated: false,
                ..
            } if f.name == field => Some(value.clone()),
            _ => None,
        })?;
        let Some(Target::Callable(c)) = cx.targets.get(&function) else {
            return None;
        };
        Some((c.api.ident.clone(), field.to_string(), text))
    })
}

/// A recorded public constructor of `type_path` from one `&str` (`Url::parse`), as a test calls
/// it, and the `.unwrap()` its recorded result needs (`Ok`/`Some` as recorded).
fn parser_of(cx: &Ctx, type_path: &str) -> Option<(String, String)> {
    cx.trace.calls.iter().find_map(|call| {
        let Some(Target::Callable(c)) = cx.targets.get(&call.function) else {
            return None;
        };
        let from_str = matches!(c.api.params.as_slice(),
            [p] if matches!(&p.ty, DeclType::Ref { mutable: false, inner } if matches!(**inner, DeclType::Str)));
        let fits = !c.api.has_receiver
            && c.api.blocker.is_none()
            && c.api.uninferable_generics == 0
            && c.via_trait.is_none()
            && c.self_type.as_deref() == Some(type_path)
            && from_str
            && !reads_world(cx, call)
            && constructed(cx, call, type_path).is_some();
        if !fits {
            return None;
        }
        let (_, unwrap) = returned_struct(cx, call.ret.as_ref()?, &c.call_path)?;
        Some((c.call_path.clone(), unwrap.unwrap_or_default()))
    })
}

/// The rule: no call leads to the state, but its text does (`Url::parse(..)` of what
/// `as_str()` gave on it); the rule checks that text itself.
pub(crate) fn rule(cx: &Ctx, b: &mut Builder, w: Wanted) -> Answer {
    if rebuild(cx, b, w.state, w.type_path, w.var, w.mutable) {
        Answer::Built { check: false }
    } else {
        Answer::Pass(None)
    }
}

#[cfg(test)]
mod tests {
    use crate::testdata::rulebook;

    #[test]
    fn a_state_only_its_text_gives_is_parsed_from_it_and_checked() {
        // The tag after `append_raw(".2")`, which was not recorded: `as_str()` gave its text.
        let rebuilt = rulebook().rebuilt("rulebook::Tag::len", 0, "rulebook::Tag", false);
        let (rule, setup, checks) = (rebuilt.rule, rebuilt.setup, rebuilt.checks);
        assert_eq!(rule, "text");
        assert_eq!(setup, ["rulebook::Tag::parse(\"v1.2\").unwrap()"]);
        assert_eq!(checks, ["receiver.as_str() == \"v1.2\""]);
    }
}
