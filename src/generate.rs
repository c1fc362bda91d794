//! `carve generate`: turn a recorded run into Rust test files.

use std::path::PathBuf;
use std::time::Duration;

use carve_generator::{
    GenerateOptions, GroupedTrace, Grouper, LeanValues, PlanOptions, Report, Verify,
};
use carve_storage::{CallRange, Store};

use crate::args::{Format, GenerateArgs};

pub fn run(a: GenerateArgs) -> anyhow::Result<i32> {
    let report = generate(&a);
    crate::progress::clear();
    let report = report?;
    let text = match a.format {
        Format::Json => serde_json::to_string_pretty(&report)? + "\n",
        Format::Text => {
            let mut text = String::new();
            for f in &report.files {
                text.push_str(&format!("wrote {}\n", f.display()));
            }
            if let Some(line) = report.test_targets_line() {
                text.push_str(&line);
                text.push('\n');
            }
            text.push_str(&report.summary_line());
            text.push('\n');
            if let Some(line) = report.line_coverage_line() {
                text.push_str(&line);
                text.push('\n');
            }
            text
        }
    };
    crate::emit(&text)?;
    Ok(0)
}

pub fn generate(a: &GenerateArgs) -> anyhow::Result<Report> {
    let store = Store::open(&a.db)?;
    let run = crate::show::pick_run(&store, a.run)?;
    // Equivalent calls are grouped as the trace is read, and only the first distinct calls of
    // each function are kept, so memory follows what is written out, not the trace's length.
    // `--all` wants every call's test: it reads the trace whole.
    let max_per_function = match (a.max_per_function, a.all || a.whole_trace) {
        (Some(n), _) => Some(n as usize),
        (None, true) => None,
        (None, false) => Some(carve_generator::DEFAULT_MAX_PER_FUNCTION),
    };
    let mut grouped = if a.all || a.whole_trace {
        GroupedTrace::whole(store.load_trace(run)?)
    } else {
        let (functions, objects) = (store.functions(run)?, store.objects(run)?);
        // With the crate given, the calls no test can make lose their values once grouped
        // (memory follows what can be written). A crate that does not load keeps them all: its
        // error is reported where it always was, after the trace is read.
        let lean = a
            .crate_dir
            .as_deref()
            .and_then(|dir| LeanValues::load(dir, &functions, &objects).ok());
        let mut grouper = Grouper::new(store.run(run)?, functions, objects);
        if let Some(n) = max_per_function {
            grouper = grouper.max_per_function(n);
        }
        if let Some(lean) = lean {
            grouper = grouper.lean_values(lean);
        }
        let read = crate::progress::Counter::start(&format!("reading the calls of run {}", run.0));
        store.each_call(run, CallRange::default(), |call| {
            read.inc();
            grouper.push(call);
            Ok::<(), carve_storage::StorageError>(())
        })?;
        grouper.finish()
    };
    grouped.threads = store.thread_names(run)?;
    // The reads of the calls kept only (a file's contents may be 64 KiB each).
    let kept: std::collections::HashSet<_> = grouped.trace.calls.iter().map(|c| c.id).collect();
    grouped.trace.file_reads = store.file_reads_of(run, |call| kept.contains(&call))?;
    let options = GenerateOptions {
        out_dir: a.out.clone(),
        crate_dir: a.crate_dir.clone(),
        templates: a.templates.clone(),
        verify: if a.no_verify {
            None
        } else {
            match cargo_for_verification(a.verify_runs) {
                None if a.verify => anyhow::bail!(
                    "--verify needs cargo, and `cargo --version` did not run: install cargo, set CARGO, or pass --no-verify"
                ),
                found => found,
            }
        },
        plan: PlanOptions {
            keep_equivalent: a.all,
            max_per_function,
            ..PlanOptions::default()
        },
        progress: crate::progress::generation(),
    };
    let mut report = carve_generator::generate_grouped(&grouped, &options)?;
    if !a.no_coverage {
        let cargo = options
            .verify
            .as_ref()
            .map_or_else(|| PathBuf::from("cargo"), |v| v.cargo.clone());
        crate::carved_coverage::measure(&store, run, &mut report, &cargo)?;
    }
    Ok(report)
}

/// Verification settings when cargo can be run (`$CARGO` when carve runs under cargo).
fn cargo_for_verification(runs: u32) -> Option<Verify> {
    let cargo = std::env::var_os("CARGO").map_or_else(|| PathBuf::from("cargo"), PathBuf::from);
    let works = std::process::Command::new(&cargo)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    works.then(|| Verify {
        cargo,
        runs: runs.max(1),
        timeout: Duration::from_secs(600),
    })
}
