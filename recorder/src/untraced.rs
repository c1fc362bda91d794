//! One tracer thread for processes that run with no breakpoint (cargo, rustc, the linker, a
//! shell): followed only for the programs they start. The processes they fork stay with the
//! same thread (ptrace attaches them to it), so following one costs its own stops (fork, first
//! stop, exec, signals, thread starts, exits) and nothing else: no thread, no hand-over. Only
//! a process that `exec`s a program that may select something leaves, to be recorded.

use std::collections::HashSet;

use carve_storage::ProcessExit;
use nix::sys::ptrace;
use nix::sys::signal::Signal;
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;

use crate::error::RecordError;
use crate::process::resume;

/// Threads, forks and execs are followed; the program is taken down if carve dies. A forked
/// child inherits these options. Exits stop too (`PTRACE_O_TRACEEXIT`; nothing is open in a
/// process with no breakpoint, the stop is resumed at once): while this thread hands a
/// process over (`crate::handover`), a served parent's exit waits at its stop, and cannot
/// orphan the group of the child sitting group-stopped between two tracers (the kernel would
/// send it SIGHUP).
const OPTIONS: ptrace::Options = ptrace::Options::PTRACE_O_TRACECLONE
    .union(ptrace::Options::PTRACE_O_TRACEFORK)
    .union(ptrace::Options::PTRACE_O_TRACEVFORK)
    .union(ptrace::Options::PTRACE_O_TRACEEXEC)
    .union(ptrace::Options::PTRACE_O_TRACEEXIT)
    .union(ptrace::Options::PTRACE_O_EXITKILL);

/// How serving ended.
pub(crate) enum Served<H> {
    /// Every process served ended; `root`'s exit, when it ended here.
    Done(Option<ProcessExit>),
    /// The root process called `exec` when no other process was left, and waits, stopped at
    /// its exec event, to be traced on this thread.
    Alone,
    /// The root process was taken by another thread (its exit comes through the handle); the
    /// others served ended.
    RootTaken(H),
}

/// Serves `root` (stopped, traced by this thread) and every process it starts, until all end.
/// At each `exec` of a served process, `may_select` says whether the new program may have
/// functions to record (it must be cheap: everything served waits meanwhile); if not, it runs
/// on here. If it may, the root process alone here is left to the caller ([`Served::Alone`]);
/// any other is let go and given to `hand_over` (with `true`: it execed), which starts the
/// thread that takes it over and returns that thread's handle; serving waits until it has.
///
/// With `own_child` (root is this thread's own child, the program carve started), root never
/// leaves this thread: ptrace lets the real parent's thread collect the stops of a child traced
/// by another thread of the same process, so a thread of carve's that waits for any child would
/// steal them. The processes root forks are handed over instead, at their first stop (`false`),
/// and root is always alone here when it execs.
///
/// With `ending` (a process other than the command's own), serving stops when the command
/// carve ran has ended: every process still served is let go ([`let_all_go`]).
pub(crate) fn serve<H>(
    root: Pid,
    own_child: bool,
    ending: Option<&crate::ending::Ending>,
    may_select: &mut dyn FnMut(Pid) -> bool,
    hand_over: &mut dyn FnMut(crate::handover::Handover, bool) -> H,
) -> Result<Served<H>, RecordError> {
    ptrace::setoptions(root, OPTIONS).map_err(|source| RecordError::Ptrace {
        op: "SETOPTIONS",
        pid: root.as_raw(),
        source,
    })?;
    // Threads (of any served process) seen stopped at least once.
    let mut live: HashSet<Pid> = HashSet::from([root]);
    // Announced by a clone or fork event, first stop not seen yet: not gone, though not live.
    let mut announced: HashSet<Pid> = HashSet::new();
    // With `own_child`: root's children whose first stop came before root's fork event.
    let mut early_children: HashSet<Pid> = HashSet::new();
    let mut root_exit = None;
    let mut root_taken = None;
    resume(root, None)?;
    loop {
        if ending.is_some_and(|e| e.command_ended()) {
            let gone = let_all_go(root, &mut live, &mut announced, &mut early_children)?;
            if root_exit.is_none() && root_taken.is_none() {
                root_exit = Some(gone.unwrap_or(ProcessExit::Lost {
                    reason: crate::ending::OUTLIVED.into(),
                }));
            }
            break;
        }
        let status = match waitpid(None, Some(WaitPidFlag::__WALL | WaitPidFlag::__WNOTHREAD)) {
            Ok(s) => s,
            Err(nix::errno::Errno::ECHILD) => break,
            Err(nix::errno::Errno::EINTR) => continue,
            Err(source) => {
                return Err(RecordError::Ptrace {
                    op: "waitpid",
                    pid: root.as_raw(),
                    source,
                })
            }
        };
        match status {
            WaitStatus::Stopped(tid, _)
                if own_child
                    && !live.contains(&tid)
                    && !announced.contains(&tid)
                    && is_child_process(root, tid) =>
            {
                // Left stopped for root's fork event, which hands it over.
                early_children.insert(tid);
            }
            WaitStatus::Stopped(tid, sig) => {
                // A new thread or process starts with a SIGSTOP of ptrace's, which is not the
                // program's to see; its first stop can come before the event announcing it.
                let first = announced.remove(&tid) || !live.contains(&tid);
                live.insert(tid);
                let pass = if first && sig == Signal::SIGSTOP {
                    None
                } else {
                    Some(sig)
                };
                resume(tid, pass)?;
            }
            WaitStatus::PtraceEvent(pid, _, libc::PTRACE_EVENT_EXEC) => {
                // A thread other than the leader that calls exec takes the leader's id; its
                // own id is gone without an exit report.
                if let Ok(former) = ptrace::getevent(pid) {
                    let former = Pid::from_raw(former as i32);
                    if former != pid {
                        live.remove(&former);
                    }
                }
                if !may_select(pid) {
                    resume(pid, None)?;
                } else if pid == root && (own_child || (announced.is_empty() && live.len() == 1)) {
                    return Ok(Served::Alone);
                } else {
                    live.remove(&pid);
                    let handle = crate::handover::hand_over(pid, |h| hand_over(h, true));
                    if pid == root {
                        root_taken = Some(handle);
                    }
                }
            }
            WaitStatus::PtraceEvent(tid, _, libc::PTRACE_EVENT_FORK | libc::PTRACE_EVENT_VFORK)
                if own_child && is_thread_of(root, tid) =>
            {
                if let Ok(child) = ptrace::getevent(tid) {
                    let child = Pid::from_raw(child as i32);
                    // It must be in its first stop before it can be let go.
                    if !early_children.remove(&child) {
                        crate::process::collect_stop(child);
                    }
                    crate::handover::hand_over(child, |h| hand_over(h, false));
                }
                resume(tid, None)?;
            }
            WaitStatus::PtraceEvent(tid, _, event) => {
                if matches!(
                    event,
                    libc::PTRACE_EVENT_CLONE | libc::PTRACE_EVENT_FORK | libc::PTRACE_EVENT_VFORK
                ) {
                    if let Ok(new) = ptrace::getevent(tid) {
                        let new = Pid::from_raw(new as i32);
                        if !live.contains(&new) {
                            announced.insert(new);
                        }
                    }
                }
                resume(tid, None)?;
            }
            WaitStatus::Exited(tid, code) => {
                live.remove(&tid);
                if tid == root {
                    root_exit = Some(ProcessExit::Exited { code });
                }
            }
            WaitStatus::Signaled(tid, sig, _) => {
                live.remove(&tid);
                if tid == root {
                    root_exit = Some(ProcessExit::Signaled {
                        signal: sig as i32,
                        name: sig.as_str().to_string(),
                    });
                }
            }
            _ => {}
        }
    }
    Ok(match root_taken {
        Some(handle) => Served::RootTaken(handle),
        None => Served::Done(root_exit),
    })
}

/// Lets every served process go, unharmed, once the command carve ran has ended: each running
/// thread is stopped with a SIGSTOP of its own and detached at that very stop (the signal
/// suppressed), so no stop is left pending; a thread or process at its first stop goes at once.
/// Returns `root`'s exit when it ended meanwhile.
fn let_all_go(
    root: Pid,
    live: &mut HashSet<Pid>,
    announced: &mut HashSet<Pid>,
    early_children: &mut HashSet<Pid>,
) -> Result<Option<ProcessExit>, RecordError> {
    for child in early_children.drain() {
        let _ = ptrace::detach(child, None);
    }
    let mut asked: HashSet<Pid> = HashSet::new();
    for tid in live.iter() {
        let pid = tgid(*tid).unwrap_or(*tid);
        crate::ending::ask_to_stop(pid, *tid);
        asked.insert(*tid);
    }
    let mut root_exit = None;
    while let Some(status) = crate::ending::next_status(root)? {
        match status {
            WaitStatus::Stopped(tid, sig) if asked.contains(&tid) => {
                if sig == Signal::SIGSTOP {
                    asked.remove(&tid);
                    live.remove(&tid);
                    let _ = ptrace::detach(tid, None);
                } else {
                    // Its own signal; the SIGSTOP asked for follows.
                    resume(tid, Some(sig))?;
                }
            }
            WaitStatus::Stopped(tid, sig) => {
                // A new thread's or process's first stop: its SIGSTOP is ptrace's.
                announced.remove(&tid);
                let _ = ptrace::detach(tid, (sig != Signal::SIGSTOP).then_some(sig));
            }
            WaitStatus::PtraceEvent(pid, _, libc::PTRACE_EVENT_EXEC) => {
                // The thread that called exec now has the leader's id; the others are gone,
                // and a SIGSTOP asked of them with them.
                if let Ok(former) = ptrace::getevent(pid) {
                    let former = Pid::from_raw(former as i32);
                    if former != pid {
                        asked.remove(&former);
                        live.remove(&former);
                    }
                }
                crate::ending::ask_to_stop(pid, pid);
                asked.insert(pid);
                resume(pid, None)?;
            }
            WaitStatus::PtraceEvent(tid, _, _) => resume(tid, None)?,
            WaitStatus::Exited(tid, code) => {
                asked.remove(&tid);
                live.remove(&tid);
                if tid == root {
                    root_exit = Some(ProcessExit::Exited { code });
                }
            }
            WaitStatus::Signaled(tid, sig, _) => {
                asked.remove(&tid);
                live.remove(&tid);
                if tid == root {
                    root_exit = Some(ProcessExit::Signaled {
                        signal: sig as i32,
                        name: sig.as_str().to_string(),
                    });
                }
            }
            _ => {}
        }
    }
    Ok(root_exit)
}

/// The process thread `tid` belongs to.
fn tgid(tid: Pid) -> Option<Pid> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    let tgid = status.lines().find_map(|l| l.strip_prefix("Tgid:"))?;
    tgid.trim().parse().ok().map(Pid::from_raw)
}

/// `tid` is a thread of process `pid` (the kernel lists it under the process's `task`).
fn is_thread_of(pid: Pid, tid: Pid) -> bool {
    tid == pid || std::path::Path::new(&format!("/proc/{pid}/task/{tid}")).exists()
}

/// `tid` is a process (not a thread) whose parent is `parent`.
fn is_child_process(parent: Pid, tid: Pid) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{tid}/status")) else {
        return false;
    };
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse::<i32>().ok())
    };
    field("Tgid:") == Some(tid.as_raw()) && field("PPid:") == Some(parent.as_raw())
}
