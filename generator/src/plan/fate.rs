//! What becomes of one recorded call: not a test (private, not supported yet, skipped for a
//! reason), or the body of a test, built by asking arrange, act and assert ([`body::carve`]).

use std::collections::{BTreeMap, HashMap};

use carve_storage::{Call, FunctionId, Trace};

use crate::act::display;
use crate::act::target::{Callable, Target};
use crate::arrange::context::Ctx;
use crate::plan::body::{self, Carved};
use crate::plan::model::{PlanOptions, Summary, UnsupportedFunction, OUTSIDE_PUBLIC_API};
use crate::reasons::{NEEDS_MOCKALL, UNSUPPORTED_TYPE};

/// How a test calls `call`'s function, when one can; else the call is counted by kind
/// (private, or not supported yet, also by function in `by_fn`) and `None`.
pub(crate) fn callable<'t>(
    trace: &'t Trace,
    targets: &'t HashMap<FunctionId, Target>,
    call: &Call,
    summary: &mut Summary,
    by_fn: &mut BTreeMap<(&'t str, &'static str, bool), usize>,
) -> Option<&'t Callable> {
    match targets.get(&call.function) {
        None => {
            *summary
                .unsupported
                .entry("unknown function".to_string())
                .or_default() += 1;
            None
        }
        Some(Target::Private) => {
            summary.private_calls += 1;
            None
        }
        Some(Target::Unsupported(kind)) => {
            *summary.unsupported.entry((*kind).to_string()).or_default() += 1;
            let public = !OUTSIDE_PUBLIC_API.contains(kind);
            if public {
                summary.public_api += 1;
            }
            let path = trace
                .function(call.function)
                .map_or("", |f| f.path.as_str());
            *by_fn.entry((path, *kind, public)).or_default() += 1;
            None
        }
        Some(Target::Callable(c)) => Some(c),
    }
}

/// The test body of `call`, a call of `callable`; `None` when it gets none, the call then
/// counted as skipped with the reason.
pub(crate) fn carve_call(
    cx: &Ctx,
    options: &PlanOptions,
    call: &Call,
    callable: &Callable,
    summary: &mut Summary,
) -> Option<Carved> {
    // `Display::fmt` is carved as the `to_string()` call it stands for.
    let as_to_string;
    let mut format_spec = None;
    let call = if callable.display {
        match display::as_to_string(call) {
            Ok((c, spec)) => {
                as_to_string = c;
                format_spec = spec;
                &as_to_string
            }
            Err(reason) => {
                summary.skip(call.id.0, &callable.call_path, reason);
                return None;
            }
        }
    } else {
        call
    };
    cx.replay_whole_histories(options.whole_histories.contains(&call.id.0));
    cx.weak_oracles
        .set(options.weak_oracles.contains(&call.id.0));
    let (mut body, name, replayed) = match body::carve(cx, call, callable) {
        Ok(carved) => carved,
        Err(reason) => {
            skip_uncarved(cx, call, callable, reason, summary);
            return None;
        }
    };
    // A formatter with options (`{:>10}`): `format!` hands the call the same ones.
    if let Some(spec) = &format_spec {
        if !display::use_format(&mut body.callee, &mut body.args, spec) {
            summary.skip(call.id.0, &callable.call_path, display::OPTIONS_NOT_DECODED);
            return None;
        }
    }
    if !body.mocks.is_empty() && !cx.api.dev_dependencies.contains("mockall") {
        summary.needs_mockall += 1;
        summary.skip(call.id.0, &callable.call_path, NEEDS_MOCKALL);
        return None;
    }
    Some((body, name, replayed))
}

/// Counts `call` as skipped for `reason` (the one [`body::carve`] gave), with what more the
/// report says about it: a result of a crate not recorded, the public call holding a receiver
/// no test can hold, what an untestable call read.
fn skip_uncarved(
    cx: &Ctx,
    call: &Call,
    callable: &Callable,
    reason: &'static str,
    summary: &mut Summary,
) {
    let api = cx.api;
    // A result of a crate not recorded: say so, and how to record it.
    let reason = match &call.ret {
        Some(ret)
            if reason == UNSUPPORTED_TYPE
                && crate::assert::observe::of_other_crate(ret, &api.crate_name)
                && crate::assert::observe::assertion(Some(ret), &callable.api.ret, api)
                    .is_err() =>
        {
            crate::reasons::UNRECORDED_CRATE_VALUE
        }
        _ => reason,
    };
    summary.skip(call.id.0, &callable.call_path, reason);
    let unreachable = [
        crate::reasons::RECEIVER_NOT_REBUILT,
        crate::reasons::HISTORY_NOT_REPLAYABLE,
        crate::reasons::INSIDE_A_HANDLE,
    ];
    if unreachable.contains(&reason) {
        let outer = crate::plan::through::holding_call(cx, call)
            .or_else(|| crate::plan::through::building_call(cx, call));
        if let Some(outer) = outer {
            summary.through.insert(call.id.0, outer.0);
        }
    }
    if reason == crate::reasons::UNTESTABLE {
        if let Some(last) = summary.skipped_calls.last_mut() {
            last.detail = crate::arrange::context::world_read(cx, call);
        }
    }
}

/// The functions carve does not write tests for yet, with their calls, the most called first:
/// what holds the most calls back.
pub(crate) fn unsupported_functions(
    by_fn: BTreeMap<(&str, &str, bool), usize>,
) -> Vec<UnsupportedFunction> {
    let mut out: Vec<UnsupportedFunction> = by_fn
        .into_iter()
        .map(
            |((function, reason, public_api), calls)| UnsupportedFunction {
                function: function.to_string(),
                reason: reason.to_string(),
                calls,
                public_api,
            },
        )
        .collect();
    out.sort_by(|a, b| {
        b.calls
            .cmp(&a.calls)
            .then_with(|| a.function.cmp(&b.function))
    });
    out
}
