//! When a recording ends: when the command carve ran ends, not when the last process it
//! started does. Processes the command leaves behind (an sccache server, anything that
//! double-forks and keeps running) are let go by their tracer threads (breakpoints taken out,
//! detached, their open calls stored as unfinished) instead of waited for.
//!
//! The thread driving the command's process calls [`Ending::finish`] once it has reaped it;
//! the other tracer threads check [`Ending::command_ended`] at every stop, and `finish` wakes
//! those blocked in `waitpid` with a signal of carve's own (a no-op handler installed without
//! `SA_RESTART`, so the wait returns `EINTR`).

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, Once};

use nix::unistd::Pid;

/// Shared by every tracer thread of one recording.
#[derive(Default)]
pub(crate) struct Ending {
    command_ended: AtomicBool,
    /// Tracer threads started and not finished (counted before they start, so none is missed).
    active: AtomicUsize,
    /// Their thread ids, to wake them.
    threads: Mutex<HashSet<i32>>,
}

/// A tracer thread about to start; [`Ticket::enter`] on that thread makes it a [`Member`].
pub(crate) struct Ticket<'e>(&'e Ending);

/// A running tracer thread, counted until dropped.
pub(crate) struct Member<'e> {
    ending: &'e Ending,
    tid: i32,
}

/// The signal that wakes a tracer thread; the handler does nothing.
fn wake_signal() -> libc::c_int {
    libc::SIGRTMIN() + 1
}

extern "C" fn woken(_: libc::c_int) {}

/// Installs the handler of [`wake_signal`] (once per process).
fn install_wake_handler() {
    static HANDLER: Once = Once::new();
    HANDLER.call_once(|| {
        // SAFETY: a handler that does nothing is async-signal-safe; no SA_RESTART, so a
        // blocked `waitpid` returns EINTR.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = woken as *const () as usize;
            libc::sigemptyset(&mut action.sa_mask);
            action.sa_flags = 0;
            libc::sigaction(wake_signal(), &action, std::ptr::null_mut());
        }
    });
}

impl Ending {
    pub(crate) fn new() -> Ending {
        install_wake_handler();
        Ending::default()
    }

    /// The command carve ran has ended: processes still traced are to be let go.
    pub(crate) fn command_ended(&self) -> bool {
        self.command_ended.load(Ordering::Relaxed)
    }

    /// Counts a tracer thread before it is spawned.
    pub(crate) fn ticket(&self) -> Ticket<'_> {
        self.active.fetch_add(1, Ordering::SeqCst);
        Ticket(self)
    }

    /// Says the command ended, and wakes every tracer thread until all have finished (each
    /// lets its processes go).
    pub(crate) fn finish(&self) {
        self.command_ended.store(true, Ordering::SeqCst);
        let me = nix::unistd::getpid().as_raw();
        while self.active.load(Ordering::SeqCst) > 0 {
            let tids: Vec<i32> = match self.threads.lock() {
                Ok(t) => t.iter().copied().collect(),
                Err(_) => Vec::new(),
            };
            for tid in tids {
                // SAFETY: tgkill with our own process id reaches only a thread of carve's, whose
                // handler for this signal does nothing.
                unsafe {
                    libc::syscall(libc::SYS_tgkill, me, tid, wake_signal());
                }
            }
            // A thread may check the flag just before blocking: wake again shortly.
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
}

impl<'e> Ticket<'e> {
    /// Registers the calling thread (the one the ticket was for) to be woken.
    pub(crate) fn enter(self) -> Member<'e> {
        let tid = nix::unistd::gettid().as_raw();
        if let Ok(mut t) = self.0.threads.lock() {
            t.insert(tid);
        }
        let ending = self.0;
        std::mem::forget(self);
        Member { ending, tid }
    }
}

impl Drop for Ticket<'_> {
    /// A ticket never entered (its thread did not start) is not waited for.
    fn drop(&mut self) {
        self.0.active.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Drop for Member<'_> {
    fn drop(&mut self) {
        if let Ok(mut t) = self.ending.threads.lock() {
            t.remove(&self.tid);
        }
        self.ending.active.fetch_sub(1, Ordering::SeqCst);
    }
}

/// How often a [`WakeTimer`] fires again after its first firing. Not the wait itself (down
/// to 25 µs): a signal every 25 µs, where handling one costs more than that (carve itself
/// under strace or a debugger, each signal a stop), left no time to run anything else, and
/// the wait's end was never reached.
pub(crate) const REPEAT: std::time::Duration = std::time::Duration::from_millis(1);

/// A periodic timer of the calling thread's that interrupts its blocked `waitpid` with
/// [`wake_signal`] (a POSIX timer delivering to one thread, `SIGEV_THREAD_ID`): the in-process
/// path's tracer waits for the next stop *or* the next look at the ring, whichever comes first.
/// (Sleeping between looks instead made every ptrace stop of the functions left to breakpoints
/// wait for the sleep's end: a real crate's recording with most functions on breakpoints took
/// 2.05 s instead of 0.45 s.)
pub(crate) struct WakeTimer(libc::timer_t);

impl WakeTimer {
    /// A timer for the calling thread; `None` when the system has none to give.
    pub(crate) fn for_this_thread() -> Option<WakeTimer> {
        install_wake_handler();
        // SAFETY: a zeroed sigevent is valid; timer_create fills `timer` on success.
        unsafe {
            let mut event: libc::sigevent = std::mem::zeroed();
            event.sigev_notify = libc::SIGEV_THREAD_ID;
            event.sigev_signo = wake_signal();
            event.sigev_notify_thread_id = nix::unistd::gettid().as_raw();
            let mut timer: libc::timer_t = std::mem::zeroed();
            (libc::timer_create(libc::CLOCK_MONOTONIC, &mut event, &mut timer) == 0)
                .then_some(WakeTimer(timer))
        }
    }

    /// Fires `after` from now, then every [`REPEAT`] until disarmed: a firing that lands
    /// before the wait it was meant to cut short (carve preempted between arming and waiting)
    /// is followed by another, so no wait outlasts `after` + [`REPEAT`].
    pub(crate) fn every(&self, after: std::time::Duration) {
        self.set(after, REPEAT);
    }

    pub(crate) fn disarm(&self) {
        self.set(std::time::Duration::ZERO, std::time::Duration::ZERO);
    }

    /// First in `after` (zero: never), then every `period` (zero: once).
    fn set(&self, after: std::time::Duration, period: std::time::Duration) {
        let spec = |d: std::time::Duration| libc::timespec {
            tv_sec: d.as_secs() as libc::time_t,
            tv_nsec: d.subsec_nanos() as libc::c_long,
        };
        let spec = libc::itimerspec {
            it_interval: spec(period),
            it_value: spec(after),
        };
        // SAFETY: a timer of ours and a valid itimerspec.
        unsafe {
            libc::timer_settime(self.0, 0, &spec, std::ptr::null_mut());
        }
    }
}

impl Drop for WakeTimer {
    fn drop(&mut self) {
        // SAFETY: a timer of ours, deleted once.
        unsafe {
            libc::timer_delete(self.0);
        }
    }
}

/// Stops thread `tid` of process `pid` with a SIGSTOP of its own (`tgkill`), for its tracer
/// to collect and detach it at that stop.
/// While letting go: the next stop or exit among this tracer thread's tracees
/// (`__WALL | __WNOTHREAD`: a process another carve thread follows is not ours), waiting through
/// interruptions; `None` once none is left. `pid` names the process in an error.
pub(crate) fn next_status(
    pid: Pid,
) -> Result<Option<nix::sys::wait::WaitStatus>, crate::error::RecordError> {
    use nix::sys::wait::{waitpid, WaitPidFlag};
    loop {
        return match waitpid(None, Some(WaitPidFlag::__WALL | WaitPidFlag::__WNOTHREAD)) {
            Ok(s) => Ok(Some(s)),
            Err(nix::errno::Errno::ECHILD) => Ok(None),
            Err(nix::errno::Errno::EINTR) => continue,
            Err(source) => Err(crate::error::RecordError::Ptrace {
                op: "waitpid",
                pid: pid.as_raw(),
                source,
            }),
        };
    }
}

pub(crate) fn ask_to_stop(pid: Pid, tid: Pid) {
    // SAFETY: plain system call on ids of a tracee.
    unsafe {
        libc::syscall(libc::SYS_tgkill, pid.as_raw(), tid.as_raw(), libc::SIGSTOP);
    }
}

/// The reason stored as the exit of a run whose process outlived the command carve ran.
pub(crate) const OUTLIVED: &str = "outlived the command carve ran, so carve let it go \
(breakpoints taken out, detached) and stored its open calls as unfinished";

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Row 31's lost wake-up: the timer fires while carve is still on its way to the blocking
    /// wait (here: asleep on purpose). The wait that follows must still be cut short, by a
    /// later firing; a one-shot timer left it blocked until something else happened (here
    /// the watchdog's byte, after two seconds).
    #[test]
    fn a_wait_begun_after_the_timer_fired_is_still_cut_short() {
        let mut fds = [0; 2];
        // SAFETY: a pipe of ours.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let (read_end, write_end) = (fds[0], fds[1]);
        let watchdog = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(2));
            // SAFETY: the pipe's write end, one byte.
            unsafe { libc::write(write_end, b"x".as_ptr().cast(), 1) };
        });
        let timer = WakeTimer::for_this_thread().expect("a timer");
        timer.every(Duration::from_millis(1));
        // The first firing lands during this sleep, before the wait (std retries the sleep).
        std::thread::sleep(Duration::from_millis(20));
        let mut byte = [0u8];
        // SAFETY: a read into a buffer of ours from the pipe's read end.
        let got = unsafe { libc::read(read_end, byte.as_mut_ptr().cast(), 1) };
        let errno = std::io::Error::last_os_error().raw_os_error();
        timer.disarm();
        watchdog.join().unwrap();
        // SAFETY: closing our own descriptors.
        unsafe {
            libc::close(read_end);
            libc::close(write_end);
        }
        assert_eq!(
            (got, errno),
            (-1, Some(libc::EINTR)),
            "the wait ended by the watchdog's byte, not by the timer"
        );
    }
}
