//! `carve show --format chrome-trace`: a run's calls on a timeline, in the Trace Event Format
//! (the JSON that Perfetto, chrome://tracing and speedscope open; uftrace's `dump --chrome`
//! writes the same). One `B` (begin) and one `E` (end) event per call, per thread in nesting
//! order; `pid` is the recorded process, `tid` the thread, `name` the function's path.
//! Timestamps are microseconds since the run started (the format's unit), from the
//! nanoseconds the recorder stored. Every text from the trace is a JSON string written by
//! serde_json, so nothing in a trace can break out of it.

use std::collections::{BTreeMap, HashMap};

use anyhow::Context;
use carve_storage::{CallId, CallTime, FunctionInfo, Run, Store};
use serde_json::json;

/// One run to put on the timeline: the calls `shown` (by index in start order) of it.
pub struct RunView {
    pub run: Run,
    pub functions: Vec<FunctionInfo>,
    pub shown: Vec<bool>,
    pub threads: BTreeMap<i32, String>,
}

/// Writes the timeline of `runs` through `put`, one event per line. Several runs share the
/// time axis: each is placed by when it started (`runs.started_at_ms`) after the first.
pub fn write(
    store: &Store,
    runs: &[RunView],
    put: &mut dyn FnMut(&str) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    let first_ms = runs
        .iter()
        .map(|r| r.run.info.started_at_ms)
        .min()
        .unwrap_or(0);
    let mut events = Vec::new();
    for view in runs {
        let offset_ns =
            u64::try_from(view.run.info.started_at_ms - first_ms).unwrap_or(0) * 1_000_000;
        run_events(store, view, offset_ns, runs.len() == 1, &mut events)?;
    }
    put("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n")?;
    for (i, event) in events.iter().enumerate() {
        let sep = if i + 1 == events.len() { "\n" } else { ",\n" };
        put(&serde_json::to_string(event)?)?;
        put(sep)?;
    }
    put("]}\n")?;
    Ok(())
}

/// The events of one run, its times shifted by `offset_ns`. A run without call times is an
/// error when it is the only one, and is left out among others.
fn run_events(
    store: &Store,
    view: &RunView,
    offset_ns: u64,
    alone: bool,
    events: &mut Vec<serde_json::Value>,
) -> anyhow::Result<()> {
    let RunView {
        run,
        functions,
        shown,
        threads,
    } = view;
    let times = store.call_times(run.id)?;
    if !times.is_empty() && times.iter().all(|t| t.started_ns.is_none()) {
        if !alone {
            return Ok(());
        }
        anyhow::bail!(
            "run {} of {} was recorded before carve stored call times: record it again to see its timeline",
            run.id,
            store.path().display()
        );
    }
    let names: HashMap<_, &str> = functions.iter().map(|f| (f.id, f.path.as_str())).collect();
    let pid = run.info.pid;
    events.push(json!({
        "name": "process_name", "ph": "M", "pid": pid, "tid": pid,
        "args": {"name": format!("{} (run {})", run.info.program, run.id)},
    }));
    for (tid, name) in threads {
        events.push(json!({
            "name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": name},
        }));
    }
    // Shown calls with a start time, per thread, in start order (ids are in start order).
    let mut by_thread: BTreeMap<i32, Vec<&CallTime>> = BTreeMap::new();
    for (t, _) in times
        .iter()
        .zip(shown.iter().chain(std::iter::repeat(&false)))
        .filter(|(t, shown)| **shown && t.started_ns.is_some())
    {
        by_thread.entry(t.shape.thread).or_default().push(t);
    }
    let parent_of: HashMap<CallId, Option<CallId>> =
        times.iter().map(|t| (t.shape.id, t.shape.parent)).collect();
    for (tid, calls) in by_thread {
        // Open calls, innermost last; the last timestamp written on this thread.
        let mut open: Vec<&CallTime> = Vec::new();
        let mut last = offset_ns;
        let end = |call: &CallTime, last: &mut u64, events: &mut Vec<serde_json::Value>| {
            // An end not seen as it happened (unwound, unfinished) is put at the last moment
            // known inside the call, and said to be unknown.
            let at = call.ended_ns.map_or(*last, |e| e + offset_ns).max(*last);
            *last = at;
            events.push(json!({
                "name": names.get(&call.shape.function).copied().unwrap_or("?"),
                "ph": "E", "ts": micros(at), "pid": pid, "tid": tid,
            }));
        };
        for call in calls {
            // Close what is not an ancestor of this call.
            while let Some(top) = open.last() {
                if is_ancestor(top.shape.id, call.shape.id, &parent_of) {
                    break;
                }
                let top = open.pop().context("checked")?;
                end(top, &mut last, events);
            }
            let at = call.started_ns.map_or(last, |s| s + offset_ns).max(last);
            last = at;
            let mut args = json!({"call": call.shape.id.0});
            if call.ended_ns.is_none() {
                args["end"] = json!("not recorded: the call did not return while traced");
            }
            events.push(json!({
                "name": names.get(&call.shape.function).copied().unwrap_or("?"),
                "cat": "call", "ph": "B", "ts": micros(at), "pid": pid, "tid": tid,
                "args": args,
            }));
            open.push(call);
        }
        while let Some(top) = open.pop() {
            end(top, &mut last, events);
        }
    }
    Ok(())
}

/// Microseconds (the format's unit) with the nanoseconds kept as decimals.
fn micros(ns: u64) -> serde_json::Value {
    json!(ns as f64 / 1000.0)
}

/// Whether `ancestor` is `call`'s parent, grandparent...
fn is_ancestor(
    ancestor: CallId,
    call: CallId,
    parent_of: &HashMap<CallId, Option<CallId>>,
) -> bool {
    let mut cur = parent_of.get(&call).copied().flatten();
    let mut steps = 0;
    while let Some(p) = cur {
        if p == ancestor {
            return true;
        }
        steps += 1;
        if steps > parent_of.len() {
            return false; // a cycle of parents in a damaged trace
        }
        cur = parent_of.get(&p).copied().flatten();
    }
    false
}
