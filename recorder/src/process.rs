//! The live process: spawning it under ptrace, its load bias, its registers and its memory.
//! The only module besides the tracer loop that issues ptrace calls.

use std::ffi::OsString;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::os::unix::process::CommandExt;
use std::path::Path;

use nix::sys::ptrace;
use nix::sys::wait::{waitpid, WaitStatus};
use nix::unistd::Pid;

use crate::addr::LoadBias;
use crate::error::RecordError;
use crate::location::Memory;

/// Starts `program` with `args`, stopped at its first instruction after exec.
pub(crate) fn spawn(
    program: &Path,
    args: &[OsString],
    output: Option<&Path>,
) -> Result<Pid, RecordError> {
    let mut cmd = std::process::Command::new(program);
    cmd.args(args);
    if let Some(path) = output {
        let open = |path: &Path| {
            std::fs::File::create(path).map_err(|source| RecordError::Spawn {
                path: path.to_path_buf(),
                source,
            })
        };
        let file = open(path)?;
        let copy = file.try_clone().map_err(|source| RecordError::Spawn {
            path: path.to_path_buf(),
            source,
        })?;
        cmd.stdout(file).stderr(copy);
    }
    // SAFETY: only async-signal-safe calls between fork and exec (ptrace, personality).
    unsafe {
        cmd.pre_exec(|| {
            ptrace::traceme().map_err(std::io::Error::from)?;
            // Repeatable addresses, as gdb does; failure only costs repeatability.
            let _ = nix::sys::personality::set(nix::sys::personality::Persona::ADDR_NO_RANDOMIZE);
            Ok(())
        });
    }
    let child = cmd.spawn().map_err(|source| RecordError::Spawn {
        path: program.to_path_buf(),
        source,
    })?;
    let pid = Pid::from_raw(child.id() as i32);
    // The child is reaped through waitpid from now on, never through `child`.
    std::mem::forget(child);
    match waitpid(pid, None) {
        Ok(WaitStatus::Stopped(_, nix::sys::signal::Signal::SIGTRAP)) => Ok(pid),
        Ok(other) => Err(RecordError::Spawn {
            path: program.to_path_buf(),
            source: std::io::Error::other(format!("unexpected first stop: {other:?}")),
        }),
        Err(e) => Err(RecordError::Ptrace {
            op: "waitpid",
            pid: pid.as_raw(),
            source: e,
        }),
    }
}

/// Where the executable at `exe` is mapped in `pid`: mapping start minus its first segment's
/// virtual address.
pub(crate) fn load_bias(
    pid: Pid,
    exe: &Path,
    first_load_vaddr: u64,
    is_pie: bool,
) -> Result<LoadBias, RecordError> {
    if !is_pie {
        return Ok(LoadBias(0));
    }
    let err = || RecordError::LoadAddress {
        path: exe.to_path_buf(),
        pid: pid.as_raw(),
    };
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).map_err(|_| err())?;
    let exe = std::fs::canonicalize(exe).unwrap_or_else(|_| exe.to_path_buf());
    for line in maps.lines() {
        let mut parts = line.split_whitespace();
        let (Some(range), _, Some(offset), _, _, Some(path)) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            continue;
        };
        if Path::new(path) != exe || u64::from_str_radix(offset, 16).ok() != Some(0) {
            continue;
        }
        let start = range
            .split('-')
            .next()
            .and_then(|s| u64::from_str_radix(s, 16).ok())
            .ok_or_else(err)?;
        return Ok(LoadBias(start - (first_load_vaddr & !0xfff)));
    }
    Err(err())
}

/// The traced process's memory, read with `process_vm_readv` (one syscall per read) and written
/// through `/proc/PID/mem` (which can write to read-only text, unlike process_vm_writev).
pub(crate) struct ProcessMemory {
    pid: Pid,
    mem: File,
}

impl ProcessMemory {
    pub(crate) fn open(pid: Pid) -> Result<ProcessMemory, RecordError> {
        let mem = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(format!("/proc/{pid}/mem"))
            .map_err(|source| RecordError::Memory {
                op: "open",
                pid: pid.as_raw(),
                addr: 0,
                source,
            })?;
        Ok(ProcessMemory { pid, mem })
    }

    pub(crate) fn pid(&self) -> Pid {
        self.pid
    }

    pub(crate) fn write(&self, addr: u64, bytes: &[u8]) -> Result<(), RecordError> {
        self.mem
            .write_all_at(bytes, addr)
            .map_err(|source| RecordError::Memory {
                op: "write",
                pid: self.pid.as_raw(),
                addr,
                source,
            })
    }

    pub(crate) fn read_byte(&self, addr: u64) -> Result<u8, RecordError> {
        let mut b = [0u8];
        self.mem
            .read_exact_at(&mut b, addr)
            .map_err(|source| RecordError::Memory {
                op: "read",
                pid: self.pid.as_raw(),
                addr,
                source,
            })?;
        Ok(b[0])
    }
}

impl Memory for ProcessMemory {
    fn read(&self, addr: u64, buf: &mut [u8]) -> bool {
        if buf.is_empty() {
            return true;
        }
        let local = [std::io::IoSliceMut::new(buf)];
        let remote = [nix::sys::uio::RemoteIoVec {
            base: addr as usize,
            len: local[0].len(),
        }];
        let mut local = local;
        match nix::sys::uio::process_vm_readv(self.pid, &mut local, &remote) {
            Ok(n) if n == remote[0].len => true,
            _ => self.mem.read_exact_at(buf, addr).is_ok(),
        }
    }
}

/// A thread's name as the kernel keeps it (`/proc/PID/task/TID/comm`: 15 bytes at most).
pub(crate) fn thread_name(pid: Pid, tid: Pid) -> Option<String> {
    let raw = std::fs::read(format!("/proc/{pid}/task/{tid}/comm")).ok()?;
    let text = String::from_utf8_lossy(&raw);
    Some(text.strip_suffix('\n').unwrap_or(&text).to_string())
}

/// Collects the next stop of tracee `pid` (its first stop after a fork or attach), trying again
/// when a signal of carve's interrupts the wait (see `ending.rs`).
pub(crate) fn collect_stop(pid: Pid) {
    use nix::sys::wait::WaitPidFlag;
    while let Err(nix::errno::Errno::EINTR) =
        waitpid(pid, Some(WaitPidFlag::__WALL | WaitPidFlag::__WNOTHREAD))
    {}
}

/// Resumes a stopped tracee (`PTRACE_CONT`), delivering `sig`; a tracee already gone (killed
/// meanwhile: `ESRCH`) is no error, its exit is collected by the next wait.
pub(crate) fn resume(tid: Pid, sig: Option<nix::sys::signal::Signal>) -> Result<(), RecordError> {
    match ptrace::cont(tid, sig) {
        Ok(()) | Err(nix::errno::Errno::ESRCH) => Ok(()),
        Err(source) => Err(RecordError::Ptrace {
            op: "CONT",
            pid: tid.as_raw(),
            source,
        }),
    }
}

/// General-purpose registers of a stopped thread.
pub(crate) fn get_regs(tid: Pid) -> Result<libc::user_regs_struct, RecordError> {
    ptrace::getregs(tid).map_err(|source| RecordError::Ptrace {
        op: "GETREGS",
        pid: tid.as_raw(),
        source,
    })
}

pub(crate) fn set_regs(tid: Pid, regs: libc::user_regs_struct) -> Result<(), RecordError> {
    ptrace::setregs(tid, regs).map_err(|source| RecordError::Ptrace {
        op: "SETREGS",
        pid: tid.as_raw(),
        source,
    })
}

/// Low 64 bits of xmm0 and xmm1 (float return values).
pub(crate) fn get_xmm01(tid: Pid) -> Result<(u64, u64), RecordError> {
    let mut fp = std::mem::MaybeUninit::<libc::user_fpregs_struct>::zeroed();
    // SAFETY: PTRACE_GETFPREGS writes a user_fpregs_struct to the pointer we pass.
    let rc = unsafe {
        libc::ptrace(
            libc::PTRACE_GETFPREGS,
            tid.as_raw(),
            std::ptr::null_mut::<libc::c_void>(),
            fp.as_mut_ptr(),
        )
    };
    if rc < 0 {
        return Err(RecordError::Ptrace {
            op: "GETFPREGS",
            pid: tid.as_raw(),
            source: nix::Error::last(),
        });
    }
    // SAFETY: the kernel filled the struct.
    let fp = unsafe { fp.assume_init() };
    let x = &fp.xmm_space;
    let lo = |i: usize| (x[i] as u64) | ((x[i + 1] as u64) << 32);
    Ok((lo(0), lo(4)))
}

/// Sets the low 64 bits of xmm0 and/or xmm1 (a forced float return value).
pub(crate) fn set_xmm01(tid: Pid, xmm0: Option<u64>, xmm1: Option<u64>) -> Result<(), RecordError> {
    let mut fp = std::mem::MaybeUninit::<libc::user_fpregs_struct>::zeroed();
    let fail = |op| RecordError::Ptrace {
        op,
        pid: tid.as_raw(),
        source: nix::Error::last(),
    };
    // SAFETY: PTRACE_GETFPREGS writes a user_fpregs_struct to the pointer we pass.
    let rc = unsafe {
        libc::ptrace(
            libc::PTRACE_GETFPREGS,
            tid.as_raw(),
            std::ptr::null_mut::<libc::c_void>(),
            fp.as_mut_ptr(),
        )
    };
    if rc < 0 {
        return Err(fail("GETFPREGS"));
    }
    // SAFETY: the kernel filled the struct.
    let mut fp = unsafe { fp.assume_init() };
    for (value, at) in [(xmm0, 0), (xmm1, 4)] {
        if let Some(v) = value {
            fp.xmm_space[at] = v as u32;
            fp.xmm_space[at + 1] = (v >> 32) as u32;
        }
    }
    // SAFETY: PTRACE_SETFPREGS reads a user_fpregs_struct from the pointer we pass.
    let rc = unsafe {
        libc::ptrace(
            libc::PTRACE_SETFPREGS,
            tid.as_raw(),
            std::ptr::null_mut::<libc::c_void>(),
            &fp as *const libc::user_fpregs_struct,
        )
    };
    if rc < 0 {
        return Err(fail("SETFPREGS"));
    }
    Ok(())
}

/// Pins the calling thread and the (single-threaded, not yet running) `tracee` to the CPU the
/// caller runs on, and returns the affinity the caller had. Sharing a CPU, each ptrace stop
/// costs a same-CPU wake-up (a few µs) instead of a cross-CPU one (~20 µs on small VMs).
pub(crate) fn pin_to_current_cpu(tracee: Pid) -> Option<nix::sched::CpuSet> {
    use nix::sched::{sched_getaffinity, sched_getcpu, sched_setaffinity, CpuSet};
    let me = Pid::from_raw(0);
    let original = sched_getaffinity(me).ok()?;
    let cpu = sched_getcpu().ok()?;
    let mut one = CpuSet::new();
    one.set(cpu).ok()?;
    sched_setaffinity(me, &one).ok()?;
    if sched_setaffinity(tracee, &one).is_err() {
        let _ = sched_setaffinity(me, &original);
        return None;
    }
    Some(original)
}

/// Gives `tid` (0 for the calling thread) the affinity `mask` back.
pub(crate) fn unpin(tid: Pid, mask: &nix::sched::CpuSet) {
    let _ = nix::sched::sched_setaffinity(tid, mask);
}
