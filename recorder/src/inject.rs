//! Running system calls inside the traced process on its behalf, the way debuggers do (gdb's
//! `call mmap(…)`): borrow two bytes of code for a `syscall` instruction, point a stopped
//! thread's registers at it, single-step, and put everything back. The in-process capture path
//! (issue 15, docs/inprocess-capture.md) maps its code and ring into the program this way.
//!
//! Only this module and `process`/`tracer` issue ptrace calls.

use nix::sys::ptrace;
use nix::sys::signal::Signal;
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;

use crate::error::RecordError;
use crate::location::Memory;
use crate::process::{get_regs, set_regs, ProcessMemory};

/// `syscall`.
const SYSCALL: [u8; 2] = [0x0f, 0x05];

/// Single steps that may be spent on signal stops before the `syscall` instruction runs.
const MAX_STEPS: usize = 16;

fn ptrace_err(op: &'static str, tid: Pid) -> impl FnOnce(nix::Error) -> RecordError {
    move |source| RecordError::Ptrace {
        op,
        pid: tid.as_raw(),
        source,
    }
}

/// Runs system call `nr` with `args` in the stopped thread `tid` and returns its raw result
/// (`-errno` on failure).
///
/// `scratch` is an executable address the call borrows for two bytes: no other thread may run
/// there meanwhile (the stopped thread's own `rip` while it is the only thread, or code that
/// never runs again such as `_start` once `main` is reached). The thread's registers and the
/// borrowed bytes are restored before this returns, so the thread resumes as if nothing
/// happened; a syscall the thread was stopped in is restarted as the kernel would
/// (`orig_rax` is restored with the rest). Signals that arrive during the step are sent again
/// afterwards, so none is lost.
pub(crate) fn syscall(
    tid: Pid,
    mem: &ProcessMemory,
    scratch: u64,
    nr: i64,
    args: &[u64],
) -> Result<i64, RecordError> {
    assert!(args.len() <= 6, "a system call takes at most six arguments");
    let saved = get_regs(tid)?;
    let mut borrowed = [0u8; 2];
    if !mem.read(scratch, &mut borrowed) {
        return Err(RecordError::Memory {
            op: "read",
            pid: tid.as_raw(),
            addr: scratch,
            source: std::io::Error::other("the scratch address is not readable"),
        });
    }
    mem.write(scratch, &SYSCALL)?;
    let mut regs = saved;
    regs.rip = scratch;
    regs.rax = nr as u64;
    regs.orig_rax = u64::MAX; // not inside a system call: no restart logic on our registers
    let slots = [
        &mut regs.rdi,
        &mut regs.rsi,
        &mut regs.rdx,
        &mut regs.r10,
        &mut regs.r8,
        &mut regs.r9,
    ];
    for (slot, value) in slots.into_iter().zip(args) {
        *slot = *value;
    }
    let result = set_regs(tid, regs).and_then(|()| step_over_syscall(tid, scratch, regs));
    // Put everything back whatever happened; the first error wins.
    let restored = mem
        .write(scratch, &borrowed)
        .and_then(|()| set_regs(tid, saved));
    let (rax, pending) = result?;
    restored?;
    for sig in pending {
        // SAFETY: tgkill with plain integer arguments.
        unsafe {
            libc::syscall(
                libc::SYS_tgkill,
                libc::pid_t::from(tid.as_raw()),
                tid.as_raw(),
                sig as i32,
            );
        }
    }
    Ok(rax as i64)
}

/// Single-steps `tid` until the `syscall` at `scratch` has run with the registers `regs`;
/// returns `rax` and the signals that stopped the thread meanwhile (not delivered yet).
///
/// A thread stopped inside a system call (the `PTRACE_EVENT_EXEC` stop of a program a traced
/// process execs) first finishes that call when stepped: the kernel stores its result in `rax`
/// over the system call number set here and reports the step at the call's exit, before any
/// instruction ran. `regs` are set again at every such trap, so the `syscall` instruction runs
/// the intended call (without it, `mmap` ran as `read`, system call 0, and failed with EBADF).
fn step_over_syscall(
    tid: Pid,
    scratch: u64,
    regs: libc::user_regs_struct,
) -> Result<(u64, Vec<Signal>), RecordError> {
    let mut pending = Vec::new();
    for _ in 0..MAX_STEPS {
        ptrace::step(tid, None).map_err(ptrace_err("SINGLESTEP", tid))?;
        match waitpid(tid, Some(WaitPidFlag::__WALL)).map_err(ptrace_err("waitpid", tid))? {
            WaitStatus::Stopped(_, Signal::SIGTRAP) => {
                let now = get_regs(tid)?;
                if now.rip == scratch + SYSCALL.len() as u64 {
                    return Ok((now.rax, pending));
                }
                // A trap before the instruction ran (the exit of the system call the thread
                // was stopped in): the registers again, then step again.
                set_regs(tid, regs)?;
            }
            WaitStatus::Stopped(_, sig) => pending.push(sig),
            other => {
                return Err(RecordError::Ptrace {
                    op: "SINGLESTEP (injected syscall)",
                    pid: tid.as_raw(),
                    source: match other {
                        WaitStatus::Exited(..) | WaitStatus::Signaled(..) => nix::Error::ESRCH,
                        _ => nix::Error::EINTR,
                    },
                })
            }
        }
    }
    Err(RecordError::Ptrace {
        op: "SINGLESTEP (injected syscall never ran)",
        pid: tid.as_raw(),
        source: nix::Error::EAGAIN,
    })
}

/// A region mapped into the traced process by [`map_near`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Region {
    pub start: u64,
    pub len: u64,
}

/// Page size on x86-64 Linux.
const PAGE: u64 = 4096;

/// How far from `near` a region may be for a `jmp rel32` to reach it both ways (2 GiB minus
/// a margin for the code's own size).
const REACH: u64 = (1 << 31) - (1 << 24);

/// Maps `len` bytes of anonymous memory with protection `prot` (`libc::PROT_*`) into the
/// process of `tid`, at a free address within `jmp rel32` reach of `near` (so patched code can
/// jump to it and back). Runs `mmap` in the process with [`syscall`].
pub(crate) fn map_near(
    tid: Pid,
    mem: &ProcessMemory,
    scratch: u64,
    near: u64,
    len: u64,
    prot: i32,
) -> Result<Region, RecordError> {
    let len = len.div_ceil(PAGE) * PAGE;
    let maps = std::fs::read_to_string(format!("/proc/{tid}/maps")).map_err(|source| {
        RecordError::Memory {
            op: "read /proc/PID/maps",
            pid: tid.as_raw(),
            addr: near,
            source,
        }
    })?;
    let used = with_heap_room(used_ranges(&maps), heap_start(tid));
    let start = free_below(&used, near, len).ok_or_else(|| RecordError::Memory {
        op: "find room for the capture code",
        pid: tid.as_raw(),
        addr: near,
        source: std::io::Error::other("no free range within 2 GiB of the program's code"),
    })?;
    let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE;
    let got = syscall(
        tid,
        mem,
        scratch,
        libc::SYS_mmap,
        &[start, len, prot as u64, flags as u64, u64::MAX, 0],
    )?;
    if got < 0 || got as u64 != start {
        if got >= 0 {
            // An old kernel took MAP_FIXED_NOREPLACE as a hint and mapped elsewhere.
            syscall(tid, mem, scratch, libc::SYS_munmap, &[got as u64, len])?;
        }
        return Err(RecordError::Memory {
            op: "mmap in the traced process",
            pid: tid.as_raw(),
            addr: start,
            source: if got < 0 {
                std::io::Error::from_raw_os_error(-got as i32)
            } else {
                std::io::Error::other("mapped at another address")
            },
        });
    }
    Ok(Region { start, len })
}

/// Room kept free above the start of the heap for `brk` to grow into.
const HEAP_ROOM: u64 = 1 << 30;

/// Where the heap of `tid`'s process starts (`start_brk`, field 47 of `/proc/PID/stat`).
fn heap_start(tid: Pid) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{tid}/stat")).ok()?;
    // Fields after the command name, which may hold spaces and parentheses: the third field
    // (state) is the first after the last ')'.
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(47 - 3)?.parse().ok()
}

/// `used` (sorted) with the heap's room to grow (`brk`) counted as used: a mapping there
/// would stop `sbrk` for good (in a non-PIE program the heap starts right after the program's
/// own pages, within reach of its code).
fn with_heap_room(mut used: Vec<(u64, u64)>, start_brk: Option<u64>) -> Vec<(u64, u64)> {
    if let Some(start) = start_brk {
        used.push((start, start.saturating_add(HEAP_ROOM)));
        used.sort_unstable();
    }
    used
}

/// The address ranges `/proc/PID/maps` lists, sorted.
fn used_ranges(maps: &str) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = maps
        .lines()
        .filter_map(|line| {
            let range = line.split_whitespace().next()?;
            let (a, b) = range.split_once('-')?;
            Some((
                u64::from_str_radix(a, 16).ok()?,
                u64::from_str_radix(b, 16).ok()?,
            ))
        })
        .collect();
    out.sort_unstable();
    out
}

/// The highest page-aligned start of a free `len`-byte range that ends at or below `near` and
/// lies within [`REACH`] of it; else the lowest one above `near` within reach.
fn free_below(used: &[(u64, u64)], near: u64, len: u64) -> Option<u64> {
    let low_limit = near.saturating_sub(REACH).max(1 << 16);
    let high_limit = near.saturating_add(REACH);
    let overlaps = |s: u64| used.iter().any(|&(a, b)| s < b && a < s + len);
    // Candidates: just below each used range, then just above each.
    let mut below: Vec<u64> = used
        .iter()
        .filter_map(|&(a, _)| a.checked_sub(len))
        .map(|s| s & !(PAGE - 1))
        .filter(|&s| s >= low_limit && s + len <= near)
        .collect();
    below.sort_unstable_by(|a, b| b.cmp(a));
    if let Some(s) = below.into_iter().find(|&s| !overlaps(s)) {
        return Some(s);
    }
    let mut above: Vec<u64> = used
        .iter()
        .map(|&(_, b)| b.div_ceil(PAGE) * PAGE)
        .filter(|&s| s >= near && s + len <= high_limit)
        .collect();
    above.sort_unstable();
    above.into_iter().find(|&s| !overlaps(s))
}

/// Puts a file's pages behind `region` (mapped by [`map_near`], readable and writable, its
/// contents not needed) and maps the same pages into carve: the program and carve then share
/// them, and carve reads what the program writes there in place, without a system call.
///
/// In the process: `memfd_create` (named by bytes written at the region's start),
/// `ftruncate` to the region's length, `mmap(MAP_SHARED | MAP_FIXED)` of it over the region,
/// `close`. carve maps the file through `/proc/PID/fd/N` in between. The file descriptor lives
/// only for those calls (opened close-on-exec), so the program never sees it. On any failure
/// the region is left as it was (private to the program, still usable) and the error says
/// which step failed.
pub(crate) fn share(
    tid: Pid,
    mem: &ProcessMemory,
    scratch: u64,
    region: Region,
) -> Result<memmap2::MmapRaw, RecordError> {
    let fail = |op: &'static str, source: std::io::Error| RecordError::Memory {
        op,
        pid: tid.as_raw(),
        addr: region.start,
        source,
    };
    let errno = |got: i64| std::io::Error::from_raw_os_error(-got as i32);
    const NAME: &[u8] = b"carve-ring\0";
    mem.write(region.start, NAME)?;
    // The region's bytes as they were (zero) unless the file's pages replaced them.
    let unnamed = || mem.write(region.start, &[0; NAME.len()]);
    let fd = match syscall(
        tid,
        mem,
        scratch,
        libc::SYS_memfd_create,
        &[region.start, libc::MFD_CLOEXEC as u64],
    ) {
        Ok(fd) if fd >= 0 => fd,
        Ok(got) => {
            unnamed()?;
            return Err(fail("memfd_create in the traced process", errno(got)));
        }
        Err(e) => {
            let _ = unnamed();
            return Err(e);
        }
    };
    let mapped = (|| {
        let got = syscall(
            tid,
            mem,
            scratch,
            libc::SYS_ftruncate,
            &[fd as u64, region.len],
        )?;
        if got < 0 {
            return Err(fail("ftruncate in the traced process", errno(got)));
        }
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(format!("/proc/{tid}/fd/{fd}"))
            .map_err(|e| fail("open the traced process's shared memory", e))?;
        let local = memmap2::MmapRaw::map_raw(&file)
            .map_err(|e| fail("map the traced process's shared memory", e))?;
        if local.len() as u64 != region.len {
            return Err(fail(
                "map the traced process's shared memory",
                std::io::Error::other("its length is not the region's"),
            ));
        }
        let flags = libc::MAP_SHARED | libc::MAP_FIXED;
        let prot = libc::PROT_READ | libc::PROT_WRITE;
        let got = syscall(
            tid,
            mem,
            scratch,
            libc::SYS_mmap,
            &[
                region.start,
                region.len,
                prot as u64,
                flags as u64,
                fd as u64,
                0,
            ],
        )?;
        if got < 0 || got as u64 != region.start {
            return Err(fail(
                "mmap shared memory in the traced process",
                if got < 0 {
                    errno(got)
                } else {
                    std::io::Error::other("mapped at another address")
                },
            ));
        }
        Ok(local)
    })();
    let closed = syscall(tid, mem, scratch, libc::SYS_close, &[fd as u64]);
    if mapped.is_err() {
        unnamed()?;
    }
    let local = mapped?;
    closed?;
    Ok(local)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_free_range_is_found_just_below_the_program_and_never_overlaps() {
        let used = [
            (0x5555_5555_4000, 0x5555_5556_0000),
            (0x5555_5556_0000, 0x5555_5558_0000),
            (0x7fff_f7dd_0000, 0x7fff_f7ff_0000),
        ];
        let s = free_below(&used, 0x5555_5555_8000, 0x2000).unwrap();
        assert_eq!(s, 0x5555_5555_2000);
        // The range right below is taken: the next free one below it.
        let used2 = [(0x5555_5555_2000, 0x5555_5555_4000), used[0], used[1]];
        let s = free_below(&used2, 0x5555_5555_8000, 0x2000).unwrap();
        assert_eq!(s, 0x5555_5555_0000);
        assert!(!used2.iter().any(|&(a, b)| s < b && a < s + 0x2000));
    }

    #[test]
    fn the_heaps_room_to_grow_is_never_offered() {
        // A non-PIE program: its pages at 0x400000, the heap right after them; 4 MiB do not
        // fit below the program.
        let used = vec![(0x40_0000, 0x40_5000), (0x7fff_f7dd_0000, 0x7fff_f7ff_0000)];
        let heap = 0x40_5000;
        let s = free_below(&with_heap_room(used, Some(heap)), 0x40_1000, 4 << 20).unwrap();
        assert!(s >= heap + HEAP_ROOM, "{s:#x} is in the heap's way");
        // This process's own heap start is read from /proc.
        let start = heap_start(nix::unistd::Pid::this()).expect("start_brk");
        // SAFETY: sbrk(0) only reads the current break.
        let now = unsafe { libc::sbrk(0) } as u64;
        assert!(
            start > 0 && start <= now,
            "start_brk {start:#x}, break {now:#x}"
        );
    }

    #[test]
    fn no_range_out_of_jump_reach_is_offered() {
        // Everything within 2 GiB below and above is taken.
        let near = 0x4000_0000_0000u64;
        let used = [(near - (1 << 32), near + (1 << 32))];
        assert_eq!(free_below(&used, near, 0x1000), None);
    }
}
