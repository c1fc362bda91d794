//! `carve show`: a recorded run as a call tree (like `uftrace replay`), or as JSON.

use std::collections::HashMap;
use std::fmt::Write as _;

use anyhow::Context;
use carve_storage::{
    matches_function, Call, CallId, Outcome, ProcessExit, RunId, Store, Trace, Value,
};

use crate::args::{Format, ShowArgs};

pub fn run(a: ShowArgs) -> anyhow::Result<i32> {
    crate::emit(&text(&a)?)?;
    Ok(0)
}

/// What `carve show` prints for `a`.
pub fn text(a: &ShowArgs) -> anyhow::Result<String> {
    let store = Store::open(&a.db)?;
    let run = pick_run(&store, a.run)?;
    let trace = store.load_trace(run)?;
    let calls: Vec<&Call> = select(&trace, a.function.as_deref(), a.thread);
    Ok(match a.format {
        Format::Json => {
            let json = serde_json::json!({
                "run": trace.run,
                "functions": trace.functions,
                "calls": calls,
            });
            serde_json::to_string_pretty(&json)? + "\n"
        }
        Format::Text => render_tree(&trace, &calls),
    })
}

/// The run to use: the one asked for, or the latest.
pub fn pick_run(store: &Store, run: Option<i64>) -> anyhow::Result<RunId> {
    match run {
        Some(n) => Ok(RunId(n)),
        None => store.latest_run()?.with_context(|| {
            format!(
                "{} holds no recorded run yet: record one with `carve record --db {} -- PROGRAM`",
                store.path().display(),
                store.path().display()
            )
        }),
    }
}

/// The calls to show: all, or those of matching functions and everything under them.
fn select<'t>(trace: &'t Trace, function: Option<&str>, thread: Option<i32>) -> Vec<&'t Call> {
    let by_id: HashMap<CallId, &Call> = trace.calls.iter().map(|c| (c.id, c)).collect();
    let matches = |c: &Call| {
        function.is_none_or(|g| {
            trace
                .function(c.function)
                .is_some_and(|f| matches_function(g, &f.path, &f.name))
        })
    };
    trace
        .calls
        .iter()
        .filter(|c| thread.is_none_or(|t| c.thread == t))
        .filter(|c| {
            // Keep a call when it or one of its ancestors matches.
            let mut cur = Some(*c);
            while let Some(call) = cur {
                if matches(call) {
                    return true;
                }
                cur = call.parent.and_then(|p| by_id.get(&p).copied());
            }
            false
        })
        .collect()
}

fn render_tree(trace: &Trace, calls: &[&Call]) -> String {
    let mut out = String::new();
    let run = &trace.run;
    let exit = match &run.end {
        Some(end) => match &end.exit {
            ProcessExit::Exited { code } => format!("exited with {code}"),
            ProcessExit::Signaled { name, .. } => format!("killed by {name}"),
            ProcessExit::Lost { reason } => reason.clone(),
        },
        None => "recording did not finish".to_string(),
    };
    let _ = writeln!(
        out,
        "# run {}: {} {} (pid {}, {}, {} calls)",
        run.id.0,
        one_line(&run.info.program),
        one_line(&run.info.args.join(" ")),
        run.info.pid,
        one_line(&exit),
        calls.len()
    );
    let _ = writeln!(out, "# {:>7}  CALL TREE", "THREAD");
    let shown: HashMap<CallId, &Call> = calls.iter().map(|c| (c.id, *c)).collect();
    let mut children: HashMap<Option<CallId>, Vec<&Call>> = HashMap::new();
    for c in calls {
        let parent = c.parent.filter(|p| shown.contains_key(p));
        children.entry(parent).or_default().push(c);
    }
    let roots = children.get(&None).cloned().unwrap_or_default();
    for root in roots {
        write_call(&mut out, trace, root, &children, 0);
    }
    out
}

fn write_call(
    out: &mut String,
    trace: &Trace,
    call: &Call,
    children: &HashMap<Option<CallId>, Vec<&Call>>,
    indent: usize,
) {
    let name = trace
        .function(call.function)
        .map(|f| f.path.as_str())
        .unwrap_or("?");
    let args = call
        .args
        .iter()
        .map(|a| match call.object(&a.name) {
            Some(object) => format!("{}#{}: {}", a.name, object.0, a.value),
            None => format!("{}: {}", a.name, a.value),
        })
        .collect::<Vec<_>>()
        .join(", ");
    let pad = "  ".repeat(indent);
    let end = match &call.outcome {
        Outcome::Returned => match &call.ret {
            Some(v) => format!(" = {v}"),
            None => String::new(),
        },
        Outcome::Panicked { message } => match message {
            Some(m) => format!(" !! panicked: {m}"),
            None => " !! panicked".to_string(),
        },
        Outcome::Unwound => " ~ unwound".to_string(),
        Outcome::Unfinished => " … unfinished".to_string(),
    } + &effects(call)
        + &reads(call);
    let (name, args, end) = (one_line(name), one_line(&args), one_line(&end));
    let kids = children.get(&Some(call.id));
    match kids {
        None => {
            let _ = writeln!(out, "[{:>7}] {pad}{name}({args}){end}", call.thread);
        }
        Some(kids) => {
            let _ = writeln!(out, "[{:>7}] {pad}{name}({args}) {{", call.thread);
            for k in kids {
                write_call(out, trace, k, children, indent + 1);
            }
            let _ = writeln!(out, "[{:>7}] {pad}}}{end}", call.thread);
        }
    }
}

/// Text from the trace as it may stand on one line of the tree: no line break or character a
/// terminal would act on (a trace is a shared file, and may have been made to attack a terminal).
fn one_line(text: &str) -> std::borrow::Cow<'_, str> {
    carve_storage::terminal_safe(text, &[])
}

/// ` ⚠ reads clock: std::time::SystemTime::now`: what the call read that a test cannot control.
fn reads(call: &Call) -> String {
    if call.touches.is_empty() {
        return String::new();
    }
    format!(" ⚠ reads {}", call.touches.join(", "))
}

/// ` ⇒ self: Account { balance: 7 }` for each `self` / `&mut` argument the call changed.
fn effects(call: &Call) -> String {
    let mut out = String::new();
    for after in &call.after {
        let before = match call.arg(&after.name) {
            Some(Value::Ref { target, .. }) => Some(&**target),
            other => other,
        };
        if before != Some(&after.value) {
            let _ = write!(out, " ⇒ {}: {}", after.name, after.value);
        }
    }
    out
}
