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

/// Bytes of one page of the traced process, as [`PageCache`] reads them.
const PAGE: u64 = 4096;

/// A page [`PageCache`] read: its address, and its bytes when it could be read whole.
type Page = (u64, Option<Box<[u8]>>);

/// The memory of a stopped process read a page at a time, each page once: decoding one
/// value makes many small reads of the same pages (a slice of `&str`s into one buffer, a
/// struct's fields one by one), each a system call, where this makes one per page. For the
/// reads of one decode only: a page is as it was when first read (other threads of the
/// program may run meanwhile, so that is a snapshot as good as any single read). A read of
/// more than [`PageCache::MAX_PAGES`] pages, or touching a page that cannot be read whole, is
/// made as asked, so the answer is always the one the memory itself gives.
pub(crate) struct PageCache<'m> {
    mem: &'m dyn Memory,
    /// Pages read so far (few per decode).
    pages: std::cell::RefCell<Vec<Page>>,
}

impl<'m> PageCache<'m> {
    const MAX_PAGES: u64 = 4;

    pub(crate) fn new(mem: &'m dyn Memory) -> Self {
        PageCache {
            mem,
            pages: Default::default(),
        }
    }
}

impl Memory for PageCache<'_> {
    fn read(&self, addr: u64, buf: &mut [u8]) -> bool {
        if buf.is_empty() {
            return true;
        }
        let Some(end) = addr.checked_add(buf.len() as u64) else {
            return false;
        };
        let (first, last) = (addr & !(PAGE - 1), (end - 1) & !(PAGE - 1));
        if (last - first) / PAGE >= Self::MAX_PAGES {
            return self.mem.read(addr, buf);
        }
        let mut pages = self.pages.borrow_mut();
        let mut page = first;
        loop {
            let at = match pages.iter().position(|(p, _)| *p == page) {
                Some(at) => at,
                None => {
                    let mut bytes = vec![0u8; PAGE as usize].into_boxed_slice();
                    let readable = self.mem.read(page, &mut bytes);
                    pages.push((page, readable.then_some(bytes)));
                    pages.len() - 1
                }
            };
            let Some(bytes) = &pages[at].1 else {
                drop(pages);
                return self.mem.read(addr, buf);
            };
            let from = addr.max(page);
            let to = end.min(page + PAGE);
            buf[(from - addr) as usize..(to - addr) as usize]
                .copy_from_slice(&bytes[(from - page) as usize..(to - page) as usize]);
            if page == last {
                return true;
            }
            page += PAGE;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A memory of three readable pages from 0x10000 (byte i of page p is p + i as u8), and
    /// an unreadable one after them, counting the reads asked of it.
    struct Pages {
        reads: std::cell::Cell<usize>,
    }

    impl Memory for Pages {
        fn read(&self, addr: u64, buf: &mut [u8]) -> bool {
            self.reads.set(self.reads.get() + 1);
            let end = addr + buf.len() as u64;
            if addr < 0x10000 || end > 0x13000 {
                return false;
            }
            for (k, b) in buf.iter_mut().enumerate() {
                let at = addr + k as u64;
                *b = ((at >> 12) as u8).wrapping_add(at as u8);
            }
            true
        }
    }

    #[test]
    fn a_page_cache_reads_each_page_once_and_answers_as_the_memory_does() {
        let mem = Pages {
            reads: Default::default(),
        };
        let cache = PageCache::new(&mem);
        let read = |addr: u64, len: usize| {
            let mut buf = vec![0u8; len];
            cache.read(addr, &mut buf).then_some(buf)
        };
        let direct = |addr: u64, len: usize| {
            let mut buf = vec![0u8; len];
            mem.read(addr, &mut buf).then_some(buf)
        };
        // Small reads within one page, then one across two pages: two reads of the memory.
        assert_eq!(read(0x10010, 8), direct(0x10010, 8));
        assert_eq!(read(0x10ff0, 8), direct(0x10ff0, 8));
        let before = mem.reads.get();
        assert_eq!(read(0x10ffc, 8), direct(0x10ffc, 8));
        assert_eq!(read(0x11100, 3), direct(0x11100, 3));
        assert_eq!(
            mem.reads.get() - before,
            3,
            "one page read, then the two direct reads"
        );
        // A read reaching the unreadable page fails, as the memory's own read does.
        assert_eq!(read(0x12ff8, 16), None);
        assert_eq!(read(0x12ff0, 16), direct(0x12ff0, 16));
        // Below the readable pages: none.
        assert_eq!(read(0xfff8, 4), None);
        assert_eq!(read(0x10000, 0), Some(vec![]));
    }
}
