//! `carve record` ends when the command it ran ends, not when the last process that command
//! started does: a daemon left behind (an sccache server, anything that double-forks) is let go
//! unharmed, with no breakpoint of carve's left in it, and its run says it outlived the command.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use carve_storage::{Outcome, ProcessExit, Store};
use common::*;

/// Far below the daemon's life (an hour): a carve that waited for it is killed and fails.
const LIMIT: Duration = Duration::from_secs(120);

/// A process still running, killed when dropped (the test's daemon must not outlive it).
struct Daemon(i32);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.0),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

/// A `/proc/PID/status` field.
fn status_field(pid: i32, name: &str) -> Option<String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .map(|v| v.trim().to_string())
}

/// The daemon is alive, running or sleeping (not stopped, not a zombie), and nobody traces it.
fn assert_alive_and_free(pid: i32) {
    let state = status_field(pid, "State:").expect("the daemon is still alive");
    assert!(
        state.starts_with('S') || state.starts_with('R'),
        "daemon {pid} is {state}"
    );
    assert_eq!(
        status_field(pid, "TracerPid:").as_deref(),
        Some("0"),
        "daemon {pid} is still traced"
    );
}

/// Records `twotests daemon DIR KIND` (it leaves a daemon behind and exits with 3); returns
/// carve's output and the daemon.
fn record_leaving_a_daemon(dir: &Path, kind: &str) -> (std::process::Output, Daemon) {
    let db = dir.join("t.db");
    let out = output_within(
        carve()
            .arg("record")
            .arg("--db")
            .arg(&db)
            .arg("--")
            .arg(fixture_bin("twotests"))
            .arg("daemon")
            .arg(dir)
            .arg(kind),
        LIMIT,
    );
    let pid: i32 = std::fs::read_to_string(dir.join("daemon.pid"))
        .expect("the daemon wrote its pid")
        .trim()
        .parse()
        .unwrap();
    (out, Daemon(pid))
}

#[test]
fn carve_ends_with_the_command_and_a_shells_background_sleeper_runs_on_untraced() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, daemon) = record_leaving_a_daemon(tmp.path(), "shell");
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "3");
    assert_alive_and_free(daemon.0);
    // Still sleeping a moment later: not stopped by a signal carve left pending.
    std::thread::sleep(Duration::from_millis(200));
    assert_alive_and_free(daemon.0);

    let store = Store::open(&tmp.path().join("t.db")).unwrap();
    let runs = store.runs().unwrap();
    assert_eq!(runs.len(), 1, "only the program with debug info is a run");
    let run = &runs[0];
    assert_eq!(
        run.end.as_ref().map(|e| &e.exit),
        Some(&ProcessExit::Exited { code: 3 })
    );
    let trace = store.load_trace(run.id).unwrap();
    let add = calls_of(&trace, "twotests::add");
    assert_eq!(add.len(), 1);
    assert_eq!(add[0].outcome, Outcome::Returned);
}

#[test]
fn a_recorded_daemon_is_let_go_without_breakpoints_and_calls_a_selected_function_unharmed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (out, daemon) = record_leaving_a_daemon(dir, "self");
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert_alive_and_free(daemon.0);

    let store = Store::open(&dir.join("t.db")).unwrap();
    let runs = store.runs().unwrap();
    // The command, the middle process of the double fork, and the daemon: each this program.
    assert_eq!(runs.len(), 3, "{}", stderr(&out));
    let by_pid = |pid: i32| runs.iter().find(|r| r.info.pid == pid);
    let command = runs.iter().min_by_key(|r| r.id).unwrap();
    assert_eq!(
        command.end.as_ref().map(|e| &e.exit),
        Some(&ProcessExit::Exited { code: 3 })
    );
    let trace = store.load_trace(command.id).unwrap();
    let add = calls_of(&trace, "twotests::add");
    assert_eq!((add.len(), &add[0].outcome), (1, &Outcome::Returned));

    let run = by_pid(daemon.0).expect("the daemon is a run of its own");
    match run.end.as_ref().map(|e| &e.exit) {
        Some(ProcessExit::Lost { reason }) => {
            assert!(reason.contains("outlived the command"), "{reason}")
        }
        other => panic!("the daemon's run must say it outlived the command: {other:?}"),
    }
    assert!(
        stderr(&out).contains("outlived the command"),
        "{}",
        stderr(&out)
    );
    let trace = store.load_trace(run.id).unwrap();
    let open: Vec<&str> = trace
        .calls
        .iter()
        .map(|c| trace.function(c.function).unwrap().path.as_str())
        .collect();
    assert!(open.contains(&"twotests::run_as_daemon"), "{open:?}");
    for call in &trace.calls {
        assert_eq!(call.outcome, Outcome::Unfinished, "{call:?}");
    }
    assert!(calls_of(&trace, "twotests::add").is_empty());

    // Now the daemon calls `twotests::add`, where carve's entry breakpoint was: an int3 left
    // in its code would kill it with SIGTRAP.
    std::fs::write(dir.join("go"), "").unwrap();
    let started = Instant::now();
    let sum = loop {
        if let Ok(sum) = std::fs::read_to_string(dir.join("daemon.out")) {
            break sum;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the daemon never answered (state {:?})",
            status_field(daemon.0, "State:")
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(sum, "42");
    assert_alive_and_free(daemon.0);
}

/// The daemon is started through `posix_spawn` (a `vfork`) in a process group of its own by a
/// middle process that ends at once, and two races killed it on a busy machine, the command
/// then waiting a minute for a pid that never came: the middle's exit served before the
/// daemon's `exec` stop left the daemon attached to the middle's tracer, which took it down
/// (`PTRACE_O_EXITKILL`); and the middle's exit while the daemon sat group-stopped between two
/// tracer threads orphaned its group, so the kernel sent it SIGHUP (the tracer letting it go
/// now waits until it is taken). Busy on purpose here (two spinning threads), eight times
/// over: every daemon lives.
#[test]
fn a_daemon_spawned_by_a_process_that_ends_at_once_lives_on_a_busy_machine() {
    let _busy = Busy::new(2);
    for _ in 0..8 {
        let tmp = tempfile::tempdir().unwrap();
        let (out, daemon) = record_leaving_a_daemon(tmp.path(), "self");
        assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
        assert_alive_and_free(daemon.0);
    }
}

/// Threads spinning until dropped.
struct Busy {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Busy {
    fn new(n: usize) -> Busy {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let threads = (0..n)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                })
            })
            .collect();
        Busy { stop, threads }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}
