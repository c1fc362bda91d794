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

/// Writes the timeline of `runs` through `put`, one event per line, as the calls are read: a
/// run's call times are held (a few dozen bytes a call), never its events. Several runs share
/// the time axis: each is placed by when it started (`runs.started_at_ms`) after the first.
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
    let mut events = Events { put, written: None };
    for view in runs {
        let times = store.call_times(view.run.id)?;
        if !times.is_empty() && times.iter().all(|t| t.started_ns.is_none()) {
            // Left out among others; alone, refused before anything is written.
            if runs.len() > 1 {
                continue;
            }
            anyhow::bail!(
                "run {} of {} was recorded before carve stored call times: record it again to see its timeline",
                view.run.id,
                store.path().display()
            );
        }
        let offset_ns =
            u64::try_from(view.run.info.started_at_ms - first_ms).unwrap_or(0) * 1_000_000;
        run_events(view, &times, offset_ns, &mut events)?;
    }
    events.finish()
}

/// The `traceEvents` array as it is written: the document's opening before the first event,
/// a comma before each other one.
struct Events<'p> {
    put: &'p mut dyn FnMut(&str) -> std::io::Result<()>,
    /// How many events were written, once the opening was.
    written: Option<u64>,
}

impl Events<'_> {
    const OPENING: &'static str = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";

    fn push(&mut self, event: serde_json::Value) -> anyhow::Result<()> {
        let text = serde_json::to_string(&event)?;
        match self.written {
            None => (self.put)(Self::OPENING)?,
            Some(_) => (self.put)(",\n")?,
        }
        (self.put)(&text)?;
        self.written = Some(self.written.unwrap_or(0) + 1);
        Ok(())
    }

    fn finish(self) -> anyhow::Result<()> {
        match self.written {
            None => (self.put)(Self::OPENING)?,
            Some(_) => (self.put)("\n")?,
        }
        (self.put)("]}\n")?;
        Ok(())
    }
}

/// The events of one run, its times shifted by `offset_ns`.
fn run_events(
    view: &RunView,
    times: &[CallTime],
    offset_ns: u64,
    events: &mut Events,
) -> anyhow::Result<()> {
    let RunView {
        run,
        functions,
        shown,
        threads,
    } = view;
    let names: HashMap<_, &str> = functions.iter().map(|f| (f.id, f.path.as_str())).collect();
    let pid = run.info.pid;
    events.push(json!({
        "name": "process_name", "ph": "M", "pid": pid, "tid": pid,
        "args": {"name": format!("{} (run {})", run.info.program, run.id)},
    }))?;
    for (tid, name) in threads {
        events.push(json!({
            "name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": name},
        }))?;
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
    for (tid, calls) in by_thread {
        // Open calls, innermost last; the last timestamp written on this thread.
        let mut open: Vec<&CallTime> = Vec::new();
        let mut last = offset_ns;
        let end = |call: &CallTime, last: &mut u64, events: &mut Events| {
            // An end not seen as it happened (unwound, unfinished) is put at the last moment
            // known inside the call, and said to be unknown.
            let at = call.ended_ns.map_or(*last, |e| e + offset_ns).max(*last);
            *last = at;
            events.push(json!({
                "name": names.get(&call.shape.function).copied().unwrap_or("?"),
                "ph": "E", "ts": micros(at), "pid": pid, "tid": tid,
            }))
        };
        for call in calls {
            // Close what is not an ancestor of this call.
            while let Some(top) = open.last() {
                if is_ancestor(top.shape.id, call.shape.id, times) {
                    break;
                }
                let top = open.pop().context("checked")?;
                end(top, &mut last, events)?;
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
            }))?;
            open.push(call);
        }
        while let Some(top) = open.pop() {
            end(top, &mut last, events)?;
        }
    }
    Ok(())
}

/// Microseconds (the format's unit) with the nanoseconds kept as decimals.
fn micros(ns: u64) -> serde_json::Value {
    json!(ns as f64 / 1000.0)
}

/// Whether `ancestor` is `call`'s parent, grandparent... (`times` is in id order).
fn is_ancestor(ancestor: CallId, call: CallId, times: &[CallTime]) -> bool {
    let parent_of = |id: CallId| {
        times
            .binary_search_by_key(&id, |t| t.shape.id)
            .ok()
            .and_then(|i| times[i].shape.parent)
    };
    let mut cur = parent_of(call);
    let mut steps = 0;
    while let Some(p) = cur {
        if p == ancestor {
            return true;
        }
        steps += 1;
        if steps > times.len() {
            return false; // a cycle of parents in a damaged trace
        }
        cur = parent_of(p);
    }
    false
}
