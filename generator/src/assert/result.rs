//! What a test asserts about the result of its call, the rules tried in order: a panic expected
//! (`#[should_panic]`); the value compared whole (`observe.rs`: `==`, `assert!`, `is_nan()`, a
//! `Cow` against what it holds); the one value of a zero-sized `Result<(), E>`; a struct of the
//! crate observed through its getters and public fields (`effects.rs`); its variant and the
//! parts a pattern can name (`pattern.rs`); the text an equal value was displayed as (the
//! recording's `Display` texts).

use carve_storage::{Call, Value};

use crate::act::target::Callable;
use crate::arrange::builder::Builder;
use crate::arrange::context::Ctx;
use crate::arrange::values::returned_struct;
use crate::assert::effects::effects;
use crate::body::{Assertion, Effect};
use crate::naming;

/// The assertion on `call`'s result (`panicked`: the message it panicked with, when it did) and
/// the slug of the result a test's name ends with; checks it adds on the way go to `b`.
pub(crate) fn observe(
    cx: &Ctx,
    b: &mut Builder,
    call: &Call,
    target: &Callable,
    panicked: Option<Option<&str>>,
) -> Result<(Assertion, Option<String>), &'static str> {
    let api = &target.api;
    Ok(match panicked {
        Some(message) => (
            Assertion::Panics {
                expected: message.and_then(crate::assert::observe::expected_panic),
            },
            None,
        ),
        None => match crate::assert::observe::assertion(call.ret.as_ref(), &api.ret, cx.api) {
            Ok(checked) => checked,
            // Nothing recorded because nothing was returned: a zero-sized `Result<(), E>`.
            Err(reason)
                if call.ret.is_none()
                    && cx
                        .trace
                        .function(call.function)
                        .is_some_and(|f| f.return_type.is_none()) =>
            {
                crate::assert::observe::zero_sized_ok(api.ret_ok_unit).ok_or(reason)?
            }
            Err(reason) => observe_not_comparable(cx, b, call, target).ok_or(reason)?,
        },
    })
}

/// A result `==` cannot compare. A struct of the crate that cannot be compared whole (also
/// inside `Ok` or `Some`, which the test unwraps): what a caller can observe of it (getters,
/// public fields), as a developer would. Else [`matches`].
fn observe_not_comparable(
    cx: &Ctx,
    b: &mut Builder,
    call: &Call,
    target: &Callable,
) -> Option<(Assertion, Option<String>)> {
    let Some((ret, unwrap)) = call
        .ret
        .as_ref()
        .map(through_ref)
        .and_then(|r| returned_struct(cx, r, &target.call_path))
    else {
        return matches(cx, b, call);
    };
    let Value::Struct { ty, .. } = ret else {
        return matches(cx, b, call);
    };
    let before = b.effects.len();
    effects(cx, b, "result", ret, crate::read::types::strip_generics(ty));
    // With nothing to observe, the mocks still check what it did to its dependencies (a mock
    // without expectations fails on any call).
    if b.effects.len() == before && b.deps.is_empty() {
        return matches(cx, b, call);
    }
    // Named after what it returns (`new_returns_versioned_set`): its contents are what the
    // assertions observe, not a short value.
    let short = crate::read::types::strip_generics(ty)
        .rsplit("::")
        .next()
        .unwrap_or("value");
    Some((
        Assertion::Observed { unwrap },
        Some(naming::snake_case(short)),
    ))
}

/// A reference to a struct (`Deref::deref`, a getter returning `&Inner`) is observed through the
/// reference, as the value (`result.line_no`).
fn through_ref(r: &Value) -> &Value {
    match r {
        Value::Ref { target, .. } if matches!(**target, Value::Struct { .. }) => target.as_ref(),
        other => other,
    }
}

/// The variant and the parts a pattern can name (`Err(E::At(3usize))`): the pattern names only
/// parts read exactly (`_` for pointers, opaque or unread memory, truncated strings), so the
/// value need not be exact whole. Else the text an equal value was displayed as (`texts.rs`).
fn matches(cx: &Ctx, b: &mut Builder, call: &Call) -> Option<(Assertion, Option<String>)> {
    let pattern = || {
        let ret = call.ret.as_ref()?;
        let pattern = crate::assert::pattern::of(ret, cx.api)?;
        Some((
            Assertion::Matches { pattern },
            Some(naming::value_slug(ret)),
        ))
    };
    let shown = |b: &mut Builder| {
        let ret = call.ret.as_ref()?;
        let (actual, expected) = cx.texts.check("result", ret)?;
        b.effects.push(Effect {
            actual,
            expected,
            message: None,
        });
        Some((
            Assertion::Observed { unwrap: None },
            Some(naming::value_slug(ret)),
        ))
    };
    pattern().or_else(|| shown(b))
}
