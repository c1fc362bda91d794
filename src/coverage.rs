//! `carve coverage`: the lines a run recorded with `--coverage` reached, per source file, and
//! their export in the lcov format (genhtml, Codecov, editor gutters read it).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context;
use carve_storage::{terminal_safe, Coverage, RunId, Store};

use crate::args::{CoverageArgs, CoverageFormat};

pub fn run(a: CoverageArgs) -> anyhow::Result<i32> {
    let store = Store::open(&a.db)?;
    let run = crate::show::pick_run(&store, a.run)?;
    let coverage = store.coverage(run)?;
    let program = store.run(run)?.info.program;
    if let Some(path) = &a.lcov {
        write_atomically(path, &lcov(&coverage))?;
    }
    let text = match a.format {
        CoverageFormat::Human if a.by_thread => {
            human(run, &program, &coverage) + &by_thread(&coverage)
        }
        CoverageFormat::Human => human(run, &program, &coverage),
        CoverageFormat::Json => {
            serde_json::to_string_pretty(&json(run, &program, &coverage))? + "\n"
        }
    };
    crate::emit(&text)?;
    if let Some(path) = &a.lcov {
        eprintln!("carve: wrote {}", path.display());
    }
    Ok(0)
}

/// Trace text on one line of the summary: newlines escaped too (the text as a whole goes through
/// `terminal_safe` again in `emit`, which keeps the summary's own newlines).
fn one_line(text: &str) -> std::borrow::Cow<'_, str> {
    terminal_safe(text, &[])
}

fn percent(hit: usize, all: usize) -> f64 {
    if all == 0 {
        100.0
    } else {
        100.0 * hit as f64 / all as f64
    }
}

/// The terminal summary: one line per file, the total, and the functions no line of which ran.
fn human(run: RunId, program: &str, c: &Coverage) -> String {
    let (hit, all) = c.totals();
    let mut out = format!(
        "# run {run}: {}  ({hit} of {all} lines with code reached, {:.1}%)\n",
        one_line(program),
        percent(hit, all)
    );
    let _ = writeln!(out, "{:>7}  {:>7}  {:>6}  FILE", "REACHED", "LINES", "%");
    for (file, lines) in &c.lines {
        let reached = lines.values().filter(|r| **r).count();
        let _ = writeln!(
            out,
            "{reached:>7}  {:>7}  {:>6.1}  {}",
            lines.len(),
            percent(reached, lines.len()),
            one_line(file),
        );
    }
    let missed: Vec<_> = c.functions.iter().filter(|f| f.reached == 0).collect();
    if !missed.is_empty() {
        let _ = writeln!(out, "functions not reached: {}", missed.len());
        for f in missed {
            let at = match (&f.decl_file, f.decl_line) {
                (Some(file), Some(line)) => format!("  ({}:{line})", one_line(file)),
                _ => String::new(),
            };
            let _ = writeln!(out, "  {}{at}", one_line(&f.path));
        }
    }
    out
}

/// Per thread (per test, for a libtest binary recorded with `--coverage-per-thread`): its
/// name, how many lines it reached and the selected functions they belong to.
fn by_thread(c: &Coverage) -> String {
    let mut out = format!(
        "{:>8}  {:<15}  {:>7}  FUNCTIONS\n",
        "THREAD", "NAME", "LINES"
    );
    for t in &c.threads {
        let functions: Vec<&str> = c
            .functions_reached_by(t)
            .iter()
            .map(|f| f.path.as_str())
            .collect();
        let _ = writeln!(
            out,
            "{:>8}  {:<15}  {:>7}  {}",
            t.thread,
            one_line(t.name.as_deref().unwrap_or("?")),
            t.lines.values().map(|l| l.len()).sum::<usize>(),
            one_line(&functions.join(", "))
        );
    }
    out
}

fn json(run: RunId, program: &str, c: &Coverage) -> serde_json::Value {
    let (hit, all) = c.totals();
    let files: Vec<_> = c
        .lines
        .iter()
        .map(|(file, lines)| {
            let missed: Vec<u32> = lines
                .iter()
                .filter(|(_, r)| !**r)
                .map(|(l, _)| *l)
                .collect();
            serde_json::json!({
                "file": file,
                "lines_with_code": lines.len(),
                "lines_reached": lines.len() - missed.len(),
                "not_reached": missed,
            })
        })
        .collect();
    let functions: Vec<_> = c
        .functions
        .iter()
        .map(|f| {
            serde_json::json!({
                "function": f.path,
                "decl_file": f.decl_file,
                "decl_line": f.decl_line,
                "lines_with_code": f.lines.len(),
                "lines_reached": f.reached,
            })
        })
        .collect();
    let threads: Vec<_> = c
        .threads
        .iter()
        .map(|t| {
            let functions: Vec<&str> = c
                .functions_reached_by(t)
                .iter()
                .map(|f| f.path.as_str())
                .collect();
            serde_json::json!({
                "thread": t.thread,
                "name": t.name,
                "lines_reached": t.lines.values().map(|l| l.len()).sum::<usize>(),
                "functions": functions,
            })
        })
        .collect();
    serde_json::json!({
        "run": run.0,
        "program": program,
        "lines_with_code": all,
        "lines_reached": hit,
        "files": files,
        "functions": functions,
        "threads": threads,
    })
}

/// The lcov tracefile: per file, its functions (`FN`/`FNDA`, reached when one of their lines
/// was) and lines (`DA`). carve knows whether a line ran, not how often: a reached line is 1.
pub fn lcov(c: &Coverage) -> String {
    // Functions by the file holding their declaration (or their first line), merged by path.
    let mut functions: BTreeMap<&str, BTreeMap<&str, (u32, bool)>> = BTreeMap::new();
    for f in &c.functions {
        let Some((first_file, first_line)) = f.lines.first() else {
            continue;
        };
        let (file, line) = match (&f.decl_file, f.decl_line) {
            (Some(file), Some(line)) if c.lines.contains_key(file) => (file.as_str(), line),
            _ => (first_file.as_str(), *first_line),
        };
        let entry = functions
            .entry(file)
            .or_default()
            .entry(f.path.as_str())
            .or_insert((line, false));
        entry.1 |= f.reached > 0;
    }
    let safe = |s: &str| terminal_safe(s, &[]).replace(',', "\\u002c");
    let mut out = String::new();
    for (file, lines) in &c.lines {
        let _ = writeln!(out, "TN:\nSF:{}", terminal_safe(file, &[]));
        let fns = functions.get(file.as_str());
        if let Some(fns) = fns {
            for (path, (line, _)) in fns {
                let _ = writeln!(out, "FN:{line},{}", safe(path));
            }
            for (path, (_, reached)) in fns {
                let _ = writeln!(out, "FNDA:{},{}", u8::from(*reached), safe(path));
            }
            let hit = fns.values().filter(|(_, r)| *r).count();
            let _ = writeln!(out, "FNF:{}\nFNH:{hit}", fns.len());
        }
        for (line, reached) in lines {
            let _ = writeln!(out, "DA:{line},{}", u8::from(*reached));
        }
        let hit = lines.values().filter(|r| **r).count();
        let _ = writeln!(out, "LF:{}\nLH:{hit}\nend_of_record", lines.len());
    }
    out
}

/// Writes `text` to `path` through a temporary file beside it and a rename: a reader never
/// sees half a file, and a failure leaves whatever was there before.
fn write_atomically(path: &Path, text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let fix = "check that its directory exists and is writable";
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot write the lcov file {}: {fix}", path.display()))?;
    tmp.write_all(text.as_bytes())
        .and_then(|()| tmp.flush())
        .with_context(|| format!("cannot write the lcov file {}: {fix}", path.display()))?;
    tmp.persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("cannot write the lcov file {}: {fix}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use carve_storage::{FunctionId, FunctionLines};

    #[test]
    fn lcov_lists_functions_then_lines_per_file_with_their_counts() {
        let mut c = Coverage::default();
        c.lines.insert(
            "/s/lib.rs".into(),
            BTreeMap::from([(3, true), (4, false), (9, false)]),
        );
        c.functions = vec![
            FunctionLines {
                id: FunctionId(1),
                path: "a::used".into(),
                decl_file: Some("/s/lib.rs".into()),
                decl_line: Some(2),
                lines: vec![("/s/lib.rs".into(), 3), ("/s/lib.rs".into(), 4)],
                reached: 1,
                reached_lines: vec![("/s/lib.rs".into(), 3)],
            },
            FunctionLines {
                id: FunctionId(2),
                path: "<a::T as b::C<u8, u16>>::unused".into(),
                decl_file: Some("/s/lib.rs".into()),
                decl_line: Some(8),
                lines: vec![("/s/lib.rs".into(), 9)],
                reached: 0,
                reached_lines: Vec::new(),
            },
        ];
        assert_eq!(
            lcov(&c),
            "TN:\nSF:/s/lib.rs\nFN:8,<a::T as b::C<u8\\u002c u16>>::unused\nFN:2,a::used\n\
             FNDA:0,<a::T as b::C<u8\\u002c u16>>::unused\nFNDA:1,a::used\nFNF:2\nFNH:1\n\
             DA:3,1\nDA:4,0\nDA:9,0\nLF:3\nLH:1\nend_of_record\n"
        );
    }
}
