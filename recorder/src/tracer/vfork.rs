//! A `vfork` child of a recorded process (issue 32, row 40). It shares its parent's memory,
//! carve's int3s and in-process patches included, until it calls `exec` or exits, while the
//! thread that called `vfork` waits in the kernel. So carve keeps tracing it on the parent's
//! tracer meanwhile: its traps on carve's breakpoints are stepped over as any thread's (the
//! program runs as natively) and nothing of it is recorded, since a forked child's calls are
//! not the parent's. Its in-process records carry the waiting thread's thread pointer (the
//! child runs on that thread's registers); they are dropped until the parent's
//! `PTRACE_EVENT_VFORK_DONE`. At its `exec` it is handed on like any forked child that may run
//! a program to record; at its exit it is simply gone.

use nix::sys::ptrace;
use nix::sys::signal::Signal;
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;

use super::{get_regs, int3_trap, set_regs, Forked, Thread, Tracer};
use crate::error::RecordError;

impl Tracer<'_> {
    /// Thread `parent` called `vfork` and `child` (at its first stop) shares this process's
    /// memory from now on.
    pub(super) fn vfork_started(&mut self, parent: Pid, child: Pid) -> Result<(), RecordError> {
        self.collect_first_stop(child);
        let pointer = self
            .thread_pointers
            .iter()
            .find(|(_, t)| **t == parent)
            .map(|(p, _)| *p)
            .or_else(|| get_regs(parent).ok().map(|r| r.fs_base));
        if let Some(pointer) = pointer.filter(|p| *p != 0) {
            self.vforking.insert(parent, pointer);
        }
        self.threads.insert(
            child,
            Thread {
                vfork_child: true,
                ..Thread::default()
            },
        );
        self.resume(child, None)
    }

    /// The child of `parent`'s `vfork` no longer shares its memory (its `exec` or exit): the
    /// records with `parent`'s thread pointer are `parent`'s again. Called once the ring's
    /// records of the child (all committed: it is gone from this memory) were dropped.
    pub(super) fn vfork_done(&mut self, parent: Pid) {
        self.vforking.remove(&parent);
    }

    /// A record with this thread pointer was written by a `vfork` child, not by its thread.
    pub(super) fn written_by_vfork_child(&self, pointer: u64) -> bool {
        self.vforking.values().any(|p| *p == pointer)
    }

    pub(super) fn is_vfork_child(&self, tid: Pid) -> bool {
        self.threads.get(&tid).is_some_and(|t| t.vfork_child)
    }

    /// Handles a stop or the end of the `vfork` child `child`.
    pub(super) fn vfork_child_status(&mut self, status: WaitStatus) -> Result<(), RecordError> {
        match status {
            WaitStatus::Stopped(child, Signal::SIGTRAP) => self.vfork_child_trap(child),
            WaitStatus::Stopped(child, sig) => {
                if let Some(t) = self
                    .threads
                    .get_mut(&child)
                    .filter(|t| t.stepping.is_some())
                {
                    // Delivered after the step, as for any thread.
                    t.pending_signal = Some(sig);
                    return self.single_step(child);
                }
                self.resume(child, Some(sig))
            }
            WaitStatus::PtraceEvent(child, _, libc::PTRACE_EVENT_EXEC) => {
                // A new program in memory of its own: nothing of ours is in it any more.
                self.forget_vfork_child(child);
                let forked = Forked {
                    pid: child,
                    breakpoints: Default::default(),
                    frames: Vec::new(),
                    lines: Default::default(),
                    recorded: false,
                    execed: true,
                };
                let taken = self.follow.as_mut().is_some_and(|follow| follow(forked));
                if !taken {
                    let _ = ptrace::detach(child, None);
                }
                Ok(())
            }
            WaitStatus::PtraceEvent(child, _, event) => {
                if matches!(
                    event,
                    libc::PTRACE_EVENT_FORK | libc::PTRACE_EVENT_VFORK | libc::PTRACE_EVENT_CLONE
                ) {
                    // What the child starts in turn runs untraced.
                    if let Ok(new) = ptrace::getevent(child) {
                        let new = Pid::from_raw(new as i32);
                        crate::process::collect_stop(new);
                        self.release_child(new, event == libc::PTRACE_EVENT_FORK);
                    }
                }
                self.resume(child, None)
            }
            WaitStatus::Exited(child, _) | WaitStatus::Signaled(child, _, _) => {
                self.forget_vfork_child(child);
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// A SIGTRAP of the child: the end of a step past one of carve's breakpoints, one of them
    /// (stepped over, nothing recorded), or the program's own.
    fn vfork_child_trap(&mut self, child: Pid) -> Result<(), RecordError> {
        if self
            .threads
            .get(&child)
            .is_some_and(|t| t.stepping.is_some())
        {
            return self.on_trap(child);
        }
        let mut regs = get_regs(child)?;
        let pc = regs.rip.wrapping_sub(1);
        let ours = self.breakpoints.get(&pc).map(|b| b.inserted);
        match ours {
            Some(true) => self.step_over(child, pc, regs),
            Some(false) if int3_trap(child) => {
                // Taken out while the child was trapping on it.
                regs.rip = pc;
                set_regs(child, regs)?;
                self.resume(child, None)
            }
            _ if self.removed.contains(&pc) && int3_trap(child) => {
                regs.rip = pc;
                set_regs(child, regs)?;
                self.resume(child, None)
            }
            _ => self.resume(child, Some(Signal::SIGTRAP)),
        }
    }

    /// The child left this memory: it no longer steps over anything here.
    /// The `vfork` children still attached when the process ended, each served to its `exec`
    /// (handed on or let go) or its exit. The parent runs on as soon as the child's memory is
    /// its own, so its exit can come before the child's `exec` stop is served; left attached,
    /// the child would die with this tracer (`PTRACE_O_EXITKILL`): a daemon started through
    /// `posix_spawn` by a process that then ends at once was killed, under load.
    pub(super) fn finish_vfork_children(&mut self) {
        let children: Vec<Pid> = self
            .threads
            .iter()
            .filter(|(_, t)| t.vfork_child)
            .map(|(tid, _)| *tid)
            .collect();
        for child in children {
            while self.is_vfork_child(child) {
                let served = waitpid(child, Some(WaitPidFlag::__WALL))
                    .map_err(|_| ())
                    .and_then(|status| self.vfork_child_status(status).map_err(|_| ()));
                if served.is_err() {
                    self.forget_vfork_child(child);
                }
            }
        }
    }

    fn forget_vfork_child(&mut self, child: Pid) {
        let stepping = self.threads.remove(&child).and_then(|t| t.stepping);
        if let Some(super::Step::InPlace { addr }) = stepping {
            // It left while its breakpoint was lifted for it: the threads need it back.
            let _ = self.reinsert_if_wanted(addr);
        }
        self.waiting.retain(|(t, _)| *t != child);
        if self.scratch_owner == Some(child) {
            self.scratch_owner = None;
            let _ = self.next_waiting();
        }
    }
}
