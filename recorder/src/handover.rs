//! A process passed from the tracer thread that has it to another: ptrace ties a tracee to one
//! tracer thread, so the first lets it go ([`hand_over`]) and the second attaches
//! ([`Handover::take_over`]).
//!
//! Between the two the process sits in a group stop (a SIGSTOP queued before the detach, so it
//! runs no instruction untraced). A group stop is visible to the kernel's orphaned-group rule
//! (POSIX): when a process exits and thereby orphans a process group that has a stopped
//! member, every member gets SIGHUP then SIGCONT. A daemon started in a group of its own by a
//! middle process that exits at once died of it when the middle's exit came inside that
//! window (one recording in 25 on a busy machine, where the new thread is slow to run). So
//! [`hand_over`] returns only once the process is taken: the exits of the letting thread's own
//! tracees wait at their exit stops meanwhile, and none can orphan the group while its member
//! is stopped.

use std::sync::mpsc::{sync_channel, SyncSender};
use std::time::Duration;

use nix::sys::ptrace;
use nix::sys::signal::Signal;
use nix::unistd::Pid;

use crate::error::RecordError;

/// How long the letting thread waits for the taking one before it runs on regardless (a
/// thread that cannot be scheduled for this long is a machine in trouble; running on is what
/// carve did before it waited at all).
const WAIT: Duration = Duration::from_secs(5);

/// The taking thread's end: the process to attach.
pub(crate) struct Handover {
    pid: Pid,
    /// Dropped once the process is taken (or cannot be): the letting thread runs on.
    taken: SyncSender<()>,
}

/// Hands stopped tracee `pid` of this thread to another: lets it go, calls `start_taker`
/// (which starts the thread that calls [`Handover::take_over`]) and returns what it returned
/// once the process is taken (or its taker gave up), at most [`WAIT`] later. A SIGSTOP is
/// queued before the detach, so the process stops (a group stop) before it runs a single
/// instruction: a signal given to `PTRACE_DETACH` itself would be dropped at an event stop
/// (such as `exec`'s). The detach comes before the taker starts, so its attach cannot come
/// while this thread still traces it.
pub(crate) fn hand_over<R>(pid: Pid, start_taker: impl FnOnce(Handover) -> R) -> R {
    let _ = nix::sys::signal::kill(pid, Signal::SIGSTOP);
    let _ = ptrace::detach(pid, None);
    let (taken, waiting) = sync_channel(1);
    let started = start_taker(Handover { pid, taken });
    let _ = waiting.recv_timeout(WAIT);
    started
}

impl Handover {
    pub(crate) fn pid(&self) -> Pid {
        self.pid
    }

    /// Makes this thread the tracer: attaches, collects the attach stop, and wakes the process
    /// from its group stop (it stays in its ptrace stop until resumed; the SIGCONT comes back
    /// as a signal to pass on). ESRCH: the process was killed meanwhile. Either way the
    /// letting thread runs on.
    pub(crate) fn take_over(self) -> Result<(), RecordError> {
        let pid = self.pid;
        ptrace::attach(pid).map_err(|source| RecordError::Ptrace {
            op: "ATTACH",
            pid: pid.as_raw(),
            source,
        })?;
        crate::process::collect_stop(pid);
        let _ = nix::sys::signal::kill(pid, Signal::SIGCONT);
        drop(self.taken);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_letting_thread_waits_until_the_taker_has_attached_and_woken_the_process() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = Pid::from_raw(child.id() as i32);
        ptrace::attach(pid).unwrap();
        crate::process::collect_stop(pid);
        let started = std::time::Instant::now();
        let taker = hand_over(pid, |handover| {
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(200));
                handover.take_over().unwrap();
                // Still traced by this thread, stopped, and no longer group-stopped.
                let state = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
                let _ = ptrace::detach(pid, None);
                state
            })
        });
        assert!(started.elapsed() >= Duration::from_millis(200));
        let state = taker.join().unwrap();
        let field = |name: &str| {
            state
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .map(str::trim)
                .unwrap_or_default()
                .to_string()
        };
        assert!(field("State:").starts_with('t'), "{state}");
        assert_ne!(field("TracerPid:"), "0");
        let _ = child.kill();
        let _ = child.wait();
    }
}
