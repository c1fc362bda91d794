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
