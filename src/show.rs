//! `carve show`: a recorded run as a call tree (like `uftrace replay`), or as JSON.
//!
//! Streams: the tree's shape (ids, parents, functions, threads) is read first, a few dozen bytes
//! a call, then the calls' values one at a time in the order they are printed, so a trace of a
//! million calls prints in bounded memory.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write;

use anyhow::Context;
use carve_storage::{
    matches_function, Call, CallId, CallRange, CallShape, FunctionInfo, Outcome, ProcessExit, Run,
    RunId, Store, Value,
};

use crate::args::{ShowArgs, ShowFormat};

pub fn run(a: ShowArgs) -> anyhow::Result<i32> {
    let stdout = std::io::stdout().lock();
    let mut out = Safe(std::io::BufWriter::new(stdout));
    match write(&a, &mut out).and_then(|()| Ok(out.0.flush()?)) {
        // A reader that went away (`carve show | head`) does not want the rest.
        Err(e) if is_broken_pipe(&e) => Ok(0),
        Err(e) => Err(e),
        Ok(()) => Ok(0),
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.downcast_ref::<std::io::Error>()
        .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
}

/// What `carve show` prints for `a`, as one string (the demo prints its first lines).
pub fn text(a: &ShowArgs) -> anyhow::Result<String> {
    let mut out = Safe(Vec::new());
    write(a, &mut out)?;
    Ok(String::from_utf8(out.0)?)
}

/// Output that no trace text can act on a terminal through: every piece goes through
/// `terminal_safe` (JSON stays valid: the escapes are JSON's own).
struct Safe<W: Write>(W);

impl<W: Write> Safe<W> {
    fn put(&mut self, text: &str) -> std::io::Result<()> {
        self.0
            .write_all(carve_storage::terminal_safe(text, &['\n', '\t']).as_bytes())
    }
}

/// Writes what `carve show` prints for `a` to `out`, as it reads the trace.
fn write<W: Write>(a: &ShowArgs, out: &mut Safe<W>) -> anyhow::Result<()> {
    let store = Store::open(&a.db)?;
    if a.all_runs {
        anyhow::ensure!(
            a.format == ShowFormat::ChromeTrace,
            "--all-runs puts runs on one timeline: use it with --format chrome-trace"
        );
        let mut runs = Vec::new();
        for run in store.runs()? {
            let functions = store.functions(run.id)?;
            let shapes = store.call_shapes(run.id)?;
            let shown = select(&shapes, &functions, a.function.as_deref(), a.thread);
            let threads = store.thread_names(run.id)?;
            runs.push(crate::timeline::RunView {
                run,
                functions,
                shown,
                threads,
            });
        }
        let mut put = |text: &str| out.put(text);
        return crate::timeline::write(&store, &runs, &mut put);
    }
    let run = pick_run(&store, a.run)?;
    let run_row = store.run(run)?;
    let functions = store.functions(run)?;
    let shapes = store.call_shapes(run)?;
    let shown = select(&shapes, &functions, a.function.as_deref(), a.thread);
    let threads = store.thread_names(run)?;
    match a.format {
        ShowFormat::Json => {
            write_json(&store, &run_row, &functions, &shapes, &shown, &threads, out)
        }
        ShowFormat::Text => {
            write_tree(&store, &run_row, &functions, &shapes, &shown, &threads, out)
        }
        ShowFormat::ChromeTrace => {
            // The timeline reads the calls' times, with their shapes, itself.
            drop(shapes);
            let view = crate::timeline::RunView {
                run: run_row,
                functions,
                shown,
                threads,
            };
            let mut put = |text: &str| out.put(text);
            crate::timeline::write(&store, &[view], &mut put)
        }
    }
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

/// Where a call stands among the shapes (which are in id order), if it was recorded.
fn index_of(shapes: &[CallShape], id: CallId) -> Option<usize> {
    shapes.binary_search_by_key(&id, |s| s.id).ok()
}

/// Which calls to show (by index into `shapes`): all, or those of matching functions and
/// everything under them, on the chosen thread.
fn select(
    shapes: &[CallShape],
    functions: &[FunctionInfo],
    function: Option<&str>,
    thread: Option<i32>,
) -> Vec<bool> {
    let matching: std::collections::HashSet<_> = functions
        .iter()
        .filter(|f| function.is_none_or(|g| matches_function(g, &f.path, &f.name)))
        .map(|f| f.id)
        .collect();
    // Whether a call or one of its ancestors matches; parents start before their children, so
    // the answer for a parent is known when its child comes (odd traces walk up instead).
    let mut under_match = vec![false; shapes.len()];
    for i in 0..shapes.len() {
        let mut cur = Some(i);
        let mut steps = 0;
        under_match[i] = loop {
            let Some(c) = cur else { break false };
            if matching.contains(&shapes[c].function) {
                break true;
            }
            if c < i {
                break under_match[c];
            }
            steps += 1;
            if steps > shapes.len() {
                break false; // a cycle of parents in a damaged trace
            }
            cur = shapes[c].parent.and_then(|p| index_of(shapes, p));
        };
    }
    shapes
        .iter()
        .zip(under_match)
        .map(|(s, under)| under && thread.is_none_or(|t| s.thread == t))
        .collect()
}

fn write_json<W: Write>(
    store: &Store,
    run: &Run,
    functions: &[FunctionInfo],
    shapes: &[CallShape],
    shown: &[bool],
    threads: &BTreeMap<i32, String>,
    out: &mut Safe<W>,
) -> anyhow::Result<()> {
    // serde_json's pretty form of `{"calls": [...], "functions": [...], "run": {...},
    // "threads": {...}}` (keys in order), one call at a time.
    let indented = |value: serde_json::Value, by: &str| -> anyhow::Result<String> {
        Ok(serde_json::to_string_pretty(&value)?.replace('\n', &format!("\n{by}")))
    };
    if !shown.contains(&true) {
        out.put("{\n  \"calls\": [],\n")?;
    } else {
        out.put("{\n  \"calls\": [")?;
        let mut first = true;
        let mut i = 0;
        store.each_call(run.id, CallRange::default(), |call| {
            let keep = shapes.get(i).is_some_and(|s| s.id == call.id) && shown[i];
            i += 1;
            if keep {
                out.put(if first { "\n    " } else { ",\n    " })?;
                first = false;
                out.put(&indented(serde_json::to_value(&call)?, "    ")?)?;
            }
            Ok::<(), anyhow::Error>(())
        })?;
        out.put("\n  ],\n")?;
    }
    out.put("  \"functions\": ")?;
    out.put(&indented(serde_json::to_value(functions)?, "  ")?)?;
    out.put(",\n  \"run\": ")?;
    out.put(&indented(serde_json::to_value(run)?, "  ")?)?;
    // Thread names by thread id (a libtest test's thread is named after the test).
    out.put(",\n  \"threads\": ")?;
    out.put(&indented(serde_json::to_value(threads)?, "  ")?)?;
    out.put("\n}\n")?;
    Ok(())
}

fn write_tree<W: Write>(
    store: &Store,
    run: &Run,
    functions: &[FunctionInfo],
    shapes: &[CallShape],
    shown: &[bool],
    threads: &BTreeMap<i32, String>,
    out: &mut Safe<W>,
) -> anyhow::Result<()> {
    let exit = match &run.end {
        Some(end) => match &end.exit {
            ProcessExit::Exited { code } => format!("exited with {code}"),
            ProcessExit::Signaled { name, .. } => format!("killed by {name}"),
            ProcessExit::Lost { reason } => reason.clone(),
        },
        None => "recording did not finish".to_string(),
    };
    // Calls the recorder counted as repeats of a stored one (not stored, not shown one by one).
    let repeats = store.repeat_counts(run.id)?;
    let counted = if repeats.is_empty() {
        String::new()
    } else {
        let n: u64 = repeats.values().sum();
        format!(", and {n} repeats of them counted, not stored")
    };
    out.put(&format!(
        "# run {}: {} {} (pid {}, {}, {} calls{counted})\n",
        run.id.0,
        one_line(&run.info.program),
        one_line(&run.info.args.join(" ")),
        run.info.pid,
        one_line(&exit),
        shown.iter().filter(|s| **s).count()
    ))?;
    out.put(&format!("# {:>7}  CALL TREE\n", "THREAD"))?;
    // The shown tree: a shown call's parent is its parent when that is shown, else it is a root.
    let parent_of = |i: usize| {
        shapes[i]
            .parent
            .and_then(|p| index_of(shapes, p))
            .filter(|&p| shown[p])
    };
    let mut kids: Vec<Vec<u32>> = Vec::new();
    let mut kid_start = vec![u32::MAX; shapes.len()];
    let mut roots = Vec::new();
    for i in (0..shapes.len()).filter(|&i| shown[i]) {
        match parent_of(i) {
            None => roots.push(i),
            Some(p) => {
                if kid_start[p] == u32::MAX {
                    kid_start[p] = kids.len() as u32;
                    kids.push(Vec::new());
                }
                kids[kid_start[p] as usize].push(i as u32);
            }
        }
    }
    let children = |i: usize| -> &[u32] {
        match kid_start[i] {
            u32::MAX => &[],
            k => &kids[k as usize],
        }
    };
    let name_of = |c: &Call| {
        functions
            .iter()
            .find(|f| f.id == c.function)
            .map(|f| f.path.as_str())
            .unwrap_or("?")
    };
    // What each call saw of the files it read (a few per call; usually none at all).
    let file_reads = store.file_reads(run.id)?;
    let mut seen: std::collections::HashMap<CallId, Vec<&carve_storage::FileRead>> =
        std::collections::HashMap::new();
    for read in &file_reads {
        seen.entry(read.call).or_default().push(read);
    }
    let mut last_thread = None;
    for root in roots {
        // A named thread other than the main one (libtest runs each test on a thread named
        // after it) is introduced by its name where its calls start.
        let thread = shapes[root].thread;
        if last_thread != Some(thread) && thread != run.info.pid {
            if let Some(name) = threads.get(&thread) {
                out.put(&format!("# thread {thread}: {}\n", one_line(name)))?;
            }
        }
        last_thread = Some(thread);
        // The root's subtree in the order it prints (depth first), with each call's depth.
        let mut order: Vec<(usize, usize)> = Vec::new();
        let mut todo = vec![(root, 0usize)];
        while let Some((i, depth)) = todo.pop() {
            order.push((i, depth));
            todo.extend(children(i).iter().rev().map(|&k| (k as usize, depth + 1)));
        }
        // Open calls: (depth, thread, what follows their closing brace).
        let mut open: Vec<(usize, i32, String)> = Vec::new();
        let mut print = |call: Call, depth: usize, out: &mut Safe<W>| -> anyhow::Result<()> {
            while open.last().is_some_and(|(d, _, _)| *d >= depth) {
                let (d, thread, end) = open.pop().expect("checked");
                out.put(&format!("[{thread:>7}] {}}}{end}\n", indent(d)))?;
            }
            let i = index_of(shapes, call.id).expect("a shown call has a shape");
            let (line, mut end) = call_line(&call, name_of(&call), depth);
            if let Some(reads) = seen.get(&call.id) {
                end.push_str(&one_line(&files_seen(reads)));
            }
            if let Some(n) = repeats.get(&call.id) {
                let calls = if *n == 1 { "call" } else { "calls" };
                end.push_str(&format!("  (and {n} more {calls} alike)"));
            }
            if children(i).is_empty() {
                out.put(&format!("{line}{end}\n"))?;
            } else {
                out.put(&format!("{line} {{\n"))?;
                open.push((depth, call.thread, end));
            }
            Ok(())
        };
        // A thread's calls start in the order a depth-first walk prints them: read the root's
        // range of its thread once. Anything else (a damaged trace) is read call by call.
        let in_order = order.windows(2).all(|w| {
            shapes[w[0].0].id < shapes[w[1].0].id && shapes[w[0].0].thread == shapes[w[1].0].thread
        });
        if in_order {
            let last = shapes[order[order.len() - 1].0].id;
            let range = CallRange {
                thread: Some(shapes[root].thread),
                from: Some(shapes[root].id),
                until: Some(CallId(last.0 + 1)),
            };
            let mut next = order.iter().peekable();
            store.each_call(run.id, range, |call| {
                if let Some(&&(i, depth)) = next.peek() {
                    if shapes[i].id == call.id {
                        next.next();
                        print(call, depth, out)?;
                    }
                }
                Ok::<(), anyhow::Error>(())
            })?;
        } else {
            for &(i, depth) in &order {
                let range = CallRange {
                    thread: None,
                    from: Some(shapes[i].id),
                    until: Some(CallId(shapes[i].id.0 + 1)),
                };
                store.each_call(run.id, range, |call| print(call, depth, out))?;
            }
        }
        while let Some((d, thread, end)) = open.pop() {
            out.put(&format!("[{thread:>7}] {}}}{end}\n", indent(d)))?;
        }
    }
    Ok(())
}

/// How many levels of the call tree are shown by indentation (two spaces each).
const MAX_INDENT: usize = 32;

/// What stands before a call at `depth` (and before its closing brace): two spaces a level up
/// to [`MAX_INDENT`] levels; deeper, that indentation and the depth (`[depth 4000] `), so a
/// recursion 100,000 deep prints lines of the same width, not 20 GB of spaces.
fn indent(depth: usize) -> String {
    if depth <= MAX_INDENT {
        "  ".repeat(depth)
    } else {
        format!("{}[depth {depth}] ", "  ".repeat(MAX_INDENT))
    }
}

/// `[  tid] <indent>name(args)` and what follows the call (` = value`, effects, reads), each
/// on one line.
fn call_line(call: &Call, name: &str, depth: usize) -> (String, String) {
    let args = call
        .args
        .iter()
        .map(|a| match call.object(&a.name) {
            Some(object) => format!("{}#{}: {}", a.name, object.0, a.value),
            None => format!("{}: {}", a.name, a.value),
        })
        .collect::<Vec<_>>()
        .join(", ");
    let pad = indent(depth);
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
    (
        format!("[{:>7}] {pad}{name}({args})", call.thread),
        end.into_owned(),
    )
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

/// ` (files seen: /r: dir of 2 entries, /r/a: 12 bytes, /r/x: missing)`: what the call's file
/// reads found, each path once, the first five.
fn files_seen(reads: &[&carve_storage::FileRead]) -> String {
    use carve_storage::Found;
    const SHOWN: usize = 5;
    let mut shown = Vec::new();
    for read in reads {
        let what = match &read.found {
            Found::Missing => "missing".to_string(),
            Found::File { len, contents } => match contents {
                Some(_) => format!("{len} bytes"),
                None => format!("{len} bytes, not kept"),
            },
            Found::Dir { entries: None } => "dir".to_string(),
            Found::Dir {
                entries: Some(entries),
            } => format!("dir of {} entries", entries.len()),
            Found::Symlink { target } => format!("symlink to {target}"),
            Found::NotRead { reason } => format!("not read: {reason}"),
        };
        let item = format!("{}: {what}", read.path);
        if !shown.contains(&item) {
            shown.push(item);
        }
    }
    let more = shown.len().saturating_sub(SHOWN);
    shown.truncate(SHOWN);
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!(" (files seen: {}{more})", shown.join(", "))
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
