//! `carve show` on big and deep traces: every format writes as it reads, so its memory does not
//! grow with its output, and the call tree's indentation stops growing past a depth, so its
//! output grows with the calls, not with the calls times their depth.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::*;

/// What [`run_measured`] saw of a command.
struct Measured {
    code: Option<i32>,
    /// The command's own peak resident memory, in KiB (`ru_maxrss` of wait4: that process
    /// alone, not the test's other children).
    peak_kib: i64,
    stderr: String,
}

/// Runs `cmd` to its end, handing each line of its stdout to `each_line` as it comes (so the
/// test holds none of it), and measures its peak memory.
fn run_measured(cmd: &mut Command, mut each_line: impl FnMut(&str)) -> Measured {
    use std::io::Read;
    // Reaped by wait4 below, which gives this child's own resource usage.
    #[allow(clippy::zombie_processes)]
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("carve runs");
    let mut err = child.stderr.take().unwrap();
    let err = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = err.read_to_string(&mut text);
        text
    });
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = Vec::new();
    loop {
        line.clear();
        if out.read_until(b'\n', &mut line).unwrap() == 0 {
            break;
        }
        each_line(
            std::str::from_utf8(&line)
                .expect("UTF-8 output")
                .trim_end_matches('\n'),
        );
    }
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value, and wait4 is given valid pointers for the
    // child spawned above, which nothing else waits for (the `Child` is dropped unwaited).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as libc::pid_t, "wait4 reaped carve");
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    Measured {
        code,
        peak_kib: usage.ru_maxrss,
        stderr: err.join().unwrap(),
    }
}

/// How many times `step` is called: enough that holding each call's events (2.7 KB a call
/// before) stands out from what reading the trace costs (a few dozen bytes a call).
const CALLS: u64 = 300_000;

/// A C program calling `step` [`CALLS`] times from `main`.
fn looping_program(dir: &Path) -> PathBuf {
    let source = format!(
        "long step(long i, int k) {{ return i * k; }}\n\
         int main(void) {{ long s = 0; for (long i = 0; i < {CALLS}; i++) s += step(i, 3); return s == 0; }}\n"
    );
    compiled(dir, "looping.c", "cc", &["-g", "-O0"], &source)
}

/// Probe row 52: a million calls took 2.66 GB as a chrome trace, every event held until the
/// end (text and JSON streamed in 40-80 MB). Now the events are written as they are made: the
/// output is the same Trace Event JSON, line by line, and the memory stays that of reading.
#[test]
fn a_chrome_trace_of_300000_calls_is_written_as_it_is_made_in_bounded_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let program = looping_program(tmp.path());
    let db = tmp.path().join("t.db");
    let recorded = record(&db, &[], &program, &[]);
    assert_eq!(recorded.status.code(), Some(0), "{}", stderr(&recorded));

    // The document is `{...,"traceEvents":[` on the first line, one event per line (a comma
    // after each but the last) and `]}` on the last: checked line by line, that is valid JSON.
    let mut lines = 0u64;
    let (mut begins, mut ends) = (0u64, 0u64);
    // The event line read last, and whether the closing line came.
    let mut pending: Option<String> = None;
    let mut closed = false;
    let mut event = |text: &str| {
        let event: serde_json::Value = serde_json::from_str(text).expect("an event");
        match event["ph"].as_str() {
            Some("B") => begins += 1,
            Some("E") => ends += 1,
            _ => {}
        }
    };
    let shown = run_measured(
        carve()
            .args(["show", "--format", "chrome-trace", "--db"])
            .arg(&db),
        |line| {
            lines += 1;
            assert!(!closed, "nothing after the closing line: {line}");
            if lines == 1 {
                assert_eq!(line, r#"{"displayTimeUnit":"ns","traceEvents":["#);
                return;
            }
            if let Some(before) = pending.take() {
                if line == "]}" {
                    assert!(!before.ends_with(','), "no comma after the last event");
                    event(&before);
                } else {
                    let before = before.strip_suffix(',').unwrap_or_else(|| {
                        panic!("a comma after each event but the last: {before}")
                    });
                    event(before);
                }
            }
            if line == "]}" {
                closed = true;
            } else {
                pending = Some(line.to_string());
            }
        },
    );
    assert_eq!(shown.code, Some(0), "{}", shown.stderr);
    assert!(closed, "the document was closed");
    // Every call of `step`, and `main` around them.
    assert_eq!((begins, ends), (CALLS + 1, CALLS + 1));
    assert!(
        shown.peak_kib < 200 * 1024,
        "show --format chrome-trace of {CALLS} calls peaked at {} MiB (holding every event took 800 MiB)",
        shown.peak_kib / 1024
    );
}

/// How deep the recursion of [`recursing_program`] goes.
const DEPTH: u64 = 5_000;

/// A C program whose `down(n)` calls itself down to `down(0)`, from `main`.
fn recursing_program(dir: &Path) -> PathBuf {
    let source = "#include <stdio.h>\n#include <stdlib.h>\n\
                  long down(long n) { if (n == 0) return 0; return 1 + down(n - 1); }\n\
                  int main(int argc, char **argv) { printf(\"%ld\\n\", down(atol(argv[1]))); return 0; }\n";
    compiled(dir, "recursing.c", "cc", &["-g", "-O0"], source)
}

/// Probe row 46: the call tree of a recursion 100,000 deep was 20 GB of text, two spaces of
/// indentation per level on every line. Past 32 levels the indentation stays where it is and
/// each line says its depth (`[depth 4000] down(n: ...)`), so the text grows with the calls;
/// shallower lines read as before.
#[test]
fn the_call_tree_of_a_deep_recursion_stops_indenting_and_says_the_depth() {
    let tmp = tempfile::tempdir().unwrap();
    let program = recursing_program(tmp.path());
    let db = tmp.path().join("t.db");
    let recorded = record(&db, &[], &program, &[&DEPTH.to_string()]);
    assert_eq!(recorded.status.code(), Some(0), "{}", stderr(&recorded));

    let (mut lines, mut bytes, mut longest) = (0u64, 0u64, 0usize);
    let mut seen: Vec<String> = Vec::new();
    // The lines of a few depths, after the thread column.
    let wanted = [
        "down(n: 4998) {",
        "down(n: 4969) {",
        "down(n: 4968) {",
        "down(n: 1000) {",
        "down(n: 0) = 0",
    ];
    let shown = run_measured(carve().args(["show", "--db"]).arg(&db), |line| {
        lines += 1;
        bytes += line.len() as u64 + 1;
        longest = longest.max(line.len());
        if let Some((_, tree)) = line.split_once("] ") {
            if wanted.iter().any(|w| tree.trim_start().ends_with(w)) {
                seen.push(tree.to_string());
            }
            if tree.trim_start().starts_with("[depth 4000] }") {
                seen.push(tree.to_string());
            }
        }
    });
    assert_eq!(shown.code, Some(0), "{}", shown.stderr);
    // `main`, then `down` 5,001 times: an opening and a closing line each but for the leaf.
    assert_eq!(lines, 2 + 2 * (DEPTH + 2) - 1);
    let pad = |levels: usize| " ".repeat(2 * levels);
    assert_eq!(
        seen,
        [
            // main is depth 0, down(5000) depth 1: as before, two spaces a level.
            format!("{}down(n: 4998) {{", pad(3)),
            format!("{}down(n: 4969) {{", pad(32)),
            // Deeper, the indentation stays at 32 levels and the depth is written.
            format!("{}[depth 33] down(n: 4968) {{", pad(32)),
            format!("{}[depth 4001] down(n: 1000) {{", pad(32)),
            format!("{}[depth 5001] down(n: 0) = 0", pad(32)),
            format!("{}[depth 4000] }} = 1001", pad(32)),
        ]
    );
    assert!(longest < 200, "the longest line has {longest} bytes");
    // Two spaces a level would have made 2 * 5,000² bytes (50 MB).
    assert!(bytes < 2_000_000, "{bytes} bytes of call tree");
}
