//! The fates of the calls grouping left out of the trace: each equivalent call shares its
//! representative's, and the calls over a function's cap are counted by the function's kind.

use std::collections::{BTreeMap, HashMap};

use carve_storage::{CallId, FunctionId, Trace};

use crate::plan::model::{OverMax, Plan, PlanOptions, SkippedCall, Summary};
use crate::read::crate_api::CrateApi;
use crate::read::group::Recording;
use crate::reasons::{NEEDS_MOCKALL, OVER_MAX_PER_FUNCTION};

/// Counts the calls the grouper left out over its cap by their function's kind: calls of a
/// public function as skipped `over --max-per-function` (returned per function), the others as
/// private or not supported, as planning them would have.
pub(crate) fn count_over_max(
    plan: &mut Plan,
    trace: &Trace,
    over_max: &BTreeMap<FunctionId, usize>,
    api: &CrateApi,
) -> Vec<OverMax> {
    let summary = &mut plan.summary;
    let mut over = Vec::new();
    for (&function, &n) in over_max {
        let Some(info) = trace.function(function) else {
            *summary
                .unsupported
                .entry("unknown function".to_string())
                .or_default() += n;
            continue;
        };
        match crate::act::rules::resolve(api, info) {
            crate::act::target::Target::Private => summary.private_calls += n,
            crate::act::target::Target::Unsupported(kind) => {
                *summary.unsupported.entry(kind.to_string()).or_default() += n;
                let public_api = !crate::plan::model::OUTSIDE_PUBLIC_API.contains(&kind);
                if public_api {
                    summary.public_api += n;
                }
                match summary
                    .unsupported_functions
                    .iter_mut()
                    .find(|u| u.function == info.path && u.reason == kind)
                {
                    Some(u) => u.calls += n,
                    None => summary.unsupported_functions.push(
                        crate::plan::model::UnsupportedFunction {
                            function: info.path.clone(),
                            reason: kind.to_string(),
                            calls: n,
                            public_api,
                        },
                    ),
                }
            }
            crate::act::target::Target::Callable(_) => {
                summary.in_scope += n;
                summary.public_api += n;
                *summary
                    .skipped
                    .entry(OVER_MAX_PER_FUNCTION.to_string())
                    .or_default() += n;
                over.push(OverMax {
                    function: info.path.clone(),
                    calls: n,
                });
            }
        }
    }
    summary.unsupported_functions.sort_by(|a, b| {
        b.calls
            .cmp(&a.calls)
            .then_with(|| a.function.cmp(&b.function))
    });
    over.sort_by(|a, b| {
        b.calls
            .cmp(&a.calls)
            .then_with(|| a.function.cmp(&b.function))
    });
    over
}

/// Gives the calls grouped under each representative the representative's fate in `plan`: the
/// same test (its `calls`), the same skip reason, or the same kind of call outside the tests.
pub(crate) fn count_equivalent(
    plan: &mut Plan,
    trace: &Trace,
    rows: &[carve_storage::Call],
    equivalent: &BTreeMap<CallId, Vec<CallId>>,
    api: &CrateApi,
    options: &PlanOptions,
) {
    if equivalent.is_empty() {
        return;
    }
    let mut in_test: HashMap<u64, (usize, usize)> = HashMap::new();
    for (f, file) in plan.files.iter().enumerate() {
        for (t, test) in file.tests.iter().enumerate() {
            for &call in &test.calls {
                in_test.insert(call, (f, t));
            }
        }
    }
    let skipped: HashMap<u64, SkippedCall> = plan
        .summary
        .skipped_calls
        .iter()
        .map(|s| (s.call, s.clone()))
        .collect();
    let by_id: HashMap<CallId, &carve_storage::Call> =
        trace.calls.iter().chain(rows).map(|c| (c.id, c)).collect();
    // What planning one call of a function alone says about it: private, or unsupported of
    // which kind (a function's kind does not depend on the call).
    let mut kind_of: HashMap<carve_storage::FunctionId, Summary> = HashMap::new();
    let summary = &mut plan.summary;
    for (representative, others) in equivalent {
        let n = others.len();
        if let Some(&(f, t)) = in_test.get(&representative.0) {
            let test = &mut plan.files[f].tests[t];
            test.calls.extend(others.iter().map(|c| c.0));
            test.calls.sort_unstable();
            // A table's row stands for them too (verification may take it out alone).
            let row = test.table.as_mut().and_then(|table| {
                table
                    .rows
                    .iter_mut()
                    .find(|r| r.calls.contains(&representative.0))
            });
            if let Some(row) = row {
                row.calls.extend(others.iter().map(|c| c.0));
            }
            summary.calls_carved += n;
            summary.in_scope += n;
            summary.public_api += n;
        } else if let Some(skip) = skipped.get(&representative.0) {
            summary.in_scope += n;
            summary.public_api += n;
            if skip.reason == NEEDS_MOCKALL {
                summary.needs_mockall += n;
            }
            *summary.skipped.entry(skip.reason.clone()).or_default() += n;
            summary
                .skipped_calls
                .extend(others.iter().map(|c| SkippedCall {
                    call: c.0,
                    ..skip.clone()
                }));
        } else if let Some(call) = by_id.get(representative) {
            let alone = kind_of.entry(call.function).or_insert_with(|| {
                let mut one = (*call).clone();
                one.parent = None;
                let single = Trace {
                    run: trace.run.clone(),
                    functions: trace.functions.clone(),
                    calls: vec![one],
                    objects: Vec::new(),
                    file_reads: Vec::new(),
                };
                crate::plan::plan(&single, api, options).summary
            });
            summary.private_calls += n * alone.private_calls;
            summary.public_api += n * alone.public_api;
            for (kind, k) in &alone.unsupported {
                *summary.unsupported.entry(kind.clone()).or_default() += n * k;
            }
        }
    }
    summary.skipped_calls.sort_by_key(|s| s.call);
}

/// The plan of a recording, every call grouping left out counted: the plan and the calls over
/// the cap, per function (`tick`: see [`crate::plan::plan_grouped`]).
pub(crate) fn plan_recording(
    rec: &Recording,
    api: &CrateApi,
    options: &PlanOptions,
    tick: &dyn Fn(usize, usize) -> bool,
) -> (Plan, Vec<OverMax>) {
    let mut plan = crate::plan::plan_grouped(
        rec.trace,
        api,
        options,
        rec.equivalent,
        rec.over_max,
        rec.rows,
        tick,
    );
    count_equivalent(&mut plan, rec.trace, rec.rows, rec.equivalent, api, options);
    let over = count_over_max(&mut plan, rec.trace, rec.over_max, api);
    (plan, over)
}
