//! A program's own SIGTRAP handler, kept working under carve's breakpoints (issue 32, row 44).
//!
//! An `int3` of carve's hit while the thread blocks SIGTRAP (inside the program's own SIGTRAP
//! handler, which runs with SIGTRAP blocked) makes the kernel force the signal through: it
//! sets the program's SIGTRAP action back to `SIG_DFL` and unblocks SIGTRAP in that thread
//! (`force_sig_info_to_task`), before carve even sees the stop. The program's next SIGTRAP of
//! its own (`raise`, its own `int3`) would then kill it.
//!
//! So carve learns the program's action whenever the program's own SIGTRAP is about to be
//! delivered (the only way its handler comes to run), and after each of its own traps checks
//! whether the process still catches SIGTRAP (`SigCgt` in `/proc/PID/status`); when the
//! kernel took the handler away, carve puts the action back (`rt_sigaction` run in the
//! thread, [`crate::inject::syscall`]) and blocks SIGTRAP in the thread again, as it was.

use nix::unistd::Pid;

use crate::error::RecordError;
use crate::process::ProcessMemory;

/// SIGTRAP's bit in a kernel signal set.
const SIGTRAP_BIT: u64 = 1 << (libc::SIGTRAP - 1);
/// `PTRACE_GETSIGMASK` / `PTRACE_SETSIGMASK`.
const PTRACE_GETSIGMASK: libc::c_uint = 0x420a;
const PTRACE_SETSIGMASK: libc::c_uint = 0x420b;
/// The kernel's `struct sigaction` on x86-64: handler, flags, restorer, mask.
const KERNEL_SIGACTION: u64 = 32;
/// The red zone below `rsp` a leaf function may use: scratch memory goes below it.
const RED_ZONE: u64 = 128;

/// The program's SIGTRAP action as carve last saw it, when it is a handler of its own.
#[derive(Debug, Default)]
pub(crate) struct Guard {
    /// The kernel's `struct sigaction` words.
    action: Option<[u64; 4]>,
}

impl Guard {
    /// The program's own SIGTRAP is about to be delivered to `tid`, stopped: learns the action
    /// it will run (a handler is the case to protect; `SIG_DFL` or `SIG_IGN` need nothing).
    /// `scratch` is code [`crate::inject::syscall`] may borrow now.
    pub(crate) fn learn(&mut self, tid: Pid, mem: &ProcessMemory, scratch: u64) {
        if let Ok(action) = read_action(tid, mem, scratch) {
            let handler = action[0];
            let caught = handler != libc::SIG_DFL as u64 && handler != libc::SIG_IGN as u64;
            // A one-shot handler (SA_RESETHAND) is meant to go back to SIG_DFL.
            let one_shot = action[1] & libc::SA_RESETHAND as u64 != 0;
            self.action = (caught && !one_shot).then_some(action);
        }
    }

    /// After a trap of carve's in `tid` (a breakpoint, or the single step past one): when the
    /// process no longer catches SIGTRAP though it had a handler, the trap took it away and
    /// unblocked SIGTRAP in `tid`, where it was blocked. Puts the action back first (the
    /// injected call's own single step must find SIGTRAP unblocked, or it would take the
    /// action away again), then blocks SIGTRAP in `tid` again.
    pub(crate) fn after_trap(&mut self, tid: Pid, mem: &ProcessMemory, scratch: u64) {
        let Some(action) = self.action else {
            return;
        };
        if catches_sigtrap(tid) == Some(false) && write_action(tid, mem, scratch, &action).is_ok() {
            block_sigtrap(tid);
        }
    }
}

/// Whether the process of `tid` catches SIGTRAP now (`SigCgt`); `None` when unreadable.
fn catches_sigtrap(tid: Pid) -> Option<bool> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    let mask = status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())?;
    Some(mask & SIGTRAP_BIT != 0)
}

/// Adds SIGTRAP to the blocked signals of the stopped thread `tid`.
fn block_sigtrap(tid: Pid) {
    let mut mask: u64 = 0;
    // SAFETY: PTRACE_GETSIGMASK / SETSIGMASK with an 8-byte kernel sigset of ours.
    unsafe {
        if libc::ptrace(
            PTRACE_GETSIGMASK,
            tid.as_raw(),
            std::mem::size_of::<u64>(),
            &mut mask as *mut u64,
        ) == 0
        {
            mask |= SIGTRAP_BIT;
            libc::ptrace(
                PTRACE_SETSIGMASK,
                tid.as_raw(),
                std::mem::size_of::<u64>(),
                &mask as *const u64,
            );
        }
    }
}

/// Where the stopped thread's scratch memory for a `struct sigaction` goes: below its red
/// zone, as a signal frame would (the thread's stack is not otherwise touched).
fn scratch_memory(tid: Pid) -> Result<u64, RecordError> {
    let regs = crate::process::get_regs(tid)?;
    Ok((regs.rsp - RED_ZONE - KERNEL_SIGACTION) & !15)
}

/// The program's SIGTRAP action, read by `rt_sigaction(SIGTRAP, NULL, &old)` in `tid`.
fn read_action(tid: Pid, mem: &ProcessMemory, scratch: u64) -> Result<[u64; 4], RecordError> {
    let at = scratch_memory(tid)?;
    let args = [libc::SIGTRAP as u64, 0, at, 8];
    let got = crate::inject::syscall(tid, mem, scratch, libc::SYS_rt_sigaction, &args)?;
    let mut bytes = [0u8; KERNEL_SIGACTION as usize];
    if got != 0 || !crate::location::Memory::read(mem, at, &mut bytes) {
        return Err(failed(tid, at));
    }
    let mut action = [0u64; 4];
    for (word, chunk) in action.iter_mut().zip(bytes.chunks_exact(8)) {
        *word = u64::from_le_bytes(chunk.try_into().unwrap());
    }
    Ok(action)
}

/// Installs `action` as the program's SIGTRAP action: `rt_sigaction(SIGTRAP, &action, NULL)`.
fn write_action(
    tid: Pid,
    mem: &ProcessMemory,
    scratch: u64,
    action: &[u64; 4],
) -> Result<(), RecordError> {
    let at = scratch_memory(tid)?;
    let bytes: Vec<u8> = action.iter().flat_map(|w| w.to_le_bytes()).collect();
    mem.write(at, &bytes)?;
    let args = [libc::SIGTRAP as u64, at, 0, 8];
    match crate::inject::syscall(tid, mem, scratch, libc::SYS_rt_sigaction, &args)? {
        0 => Ok(()),
        _ => Err(failed(tid, at)),
    }
}

fn failed(tid: Pid, at: u64) -> RecordError {
    RecordError::Memory {
        op: "read or set the program's SIGTRAP action",
        pid: tid.as_raw(),
        addr: at,
        source: std::io::Error::other("rt_sigaction failed in the program"),
    }
}
