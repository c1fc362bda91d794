//! The ptrace event loop: int3 breakpoints after each selected function's prologue, return
//! breakpoints at return addresses (shared, reference-counted), per-thread shadow stacks keyed by
//! the frame's CFA, and the events they produce for a [`TraceSink`].

use std::collections::VecDeque;
use std::sync::Arc;

// The tracer looks these maps up several times per traced call (threads, thread pointers,
// breakpoints): foldhash instead of SipHash, whose hashing was a twentieth of the thread.
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};

use carve_storage::{
    Arg, CallEnd, CallId, CallStart, FunctionId, LineId, Outcome, ProcessExit, RunEnd, TraceEvent,
    TraceSink, Value,
};
use nix::sys::ptrace;
use nix::sys::signal::Signal;
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;

use crate::abi::{
    passed_indirectly, place_return, return_place, EntryRdi, ReturnPlace, ReturnRegs,
};
use crate::addr::{FileAddr, LoadBias, RuntimeAddr};
use crate::decode::{Decoder, Limits};
use crate::dwarf::FunctionDetail;
use crate::error::RecordError;
use crate::fmt_writes::{char_arg, Capture, Sink, WriteKind, WriteMethods};
use crate::location::{evaluate, frame_relative, Machine, Memory, Place};
use crate::panic_message::panic_message;
use crate::process::{get_regs, get_xmm01, set_regs, set_xmm01, thread_name, ProcessMemory};
use crate::stepping::{alu, gpr, plan, set_gpr, taken, Emulated, Operand, StepPlan, Target};
use crate::types::{TypeId, TypeKind, TypeTable};
use crate::unwind::CfaRule;

mod vfork;

const INT3: u8 = 0xCC;

/// Follow threads, see forks (and when a `vfork` child leaves the shared memory), exec and each
/// thread's exit (to tell a thread ending itself from one the process's end takes down), and
/// take the program down if carve dies.
const TRACE_OPTIONS: ptrace::Options = ptrace::Options::PTRACE_O_TRACECLONE
    .union(ptrace::Options::PTRACE_O_TRACEEXIT)
    .union(ptrace::Options::PTRACE_O_TRACEFORK)
    .union(ptrace::Options::PTRACE_O_TRACEVFORK)
    .union(ptrace::Options::PTRACE_O_TRACEVFORKDONE)
    .union(ptrace::Options::PTRACE_O_TRACEEXEC)
    .union(ptrace::Options::PTRACE_O_EXITKILL);

/// A selected function, ready to trace.
#[derive(Clone)]
pub(crate) struct Traced {
    pub id: FunctionId,
    pub detail: FunctionDetail,
    pub cfa: Option<CfaRule>,
    /// Stop recording this function after this many calls (the breakpoint is removed).
    pub max_calls: Option<u64>,
    pub calls: u64,
    /// The return value may come back in xmm registers (so they must be read).
    pub float_return: bool,
    /// Selected by the filters themselves (not only as a callee within `--depth`).
    pub matched: bool,
    /// A closure the program passes to a selected function, not selected itself: its calls are
    /// recorded only inside a recorded call (nested under it, at its level).
    pub passed_closure: bool,
    /// The type this function constructs when it is constructor-like (`a::B` for `a::B::new`).
    pub constructs: Option<String>,
    /// Skip the body and return the value with these bytes instead (an acting breakpoint; see
    /// [`Tracer::force_return`]), with the function's path for errors.
    pub forced_return: Option<(String, Vec<u8>)>,
    /// Its `&mut core::fmt::Formatter` parameter (index) and the offset of the formatter's
    /// `buf`: what the call writes through it is captured (see `fmt_writes.rs`).
    pub formatter: Option<(usize, u64)>,
    /// Captured in process with this plan (`--capture inprocess`), not with breakpoints.
    pub in_process: Option<Arc<crate::capture::Plan>>,
}

/// What a breakpoint address is for (one address may serve several purposes).
#[derive(Debug, Default, Clone)]
struct Breakpoint {
    original: u8,
    /// Index into `Tracer::functions` when this is a function's entry breakpoint.
    entry: Option<usize>,
    /// Number of live frames returning here.
    returns: u32,
    /// A return breakpoint stays in memory after its last frame returned (the same call site
    /// usually calls again), until it is hit with no frame returning there.
    retained: bool,
    /// The panic machinery (`rust_panic`).
    panic: bool,
    /// Where a panic's message arrives, at the panic machinery's entry.
    panic_message: Option<MessageAt>,
    /// A function reading what a test cannot control (`clock: std::time::SystemTime::now`).
    source: Option<Arc<str>>,
    /// A file-system read by path (`sources::PATH_READS`): what is at the path is stored.
    path_read: Option<crate::sources::PathRead>,
    /// `--coverage`: the first address of a line-table row of this line, not reached yet.
    line: Option<LineId>,
    inserted: bool,
    /// How to get past it, worked out at its first hit.
    plan: Option<StepPlan>,
    /// The first instruction of a `core::fmt::Write` method (see `fmt_writes.rs`). The entry
    /// stays when no call captures through it any more (the int3 is lifted then), so that a
    /// thread already trapping on it is rewound rather than sent a SIGTRAP.
    write: Option<WriteKind>,
    /// Open formatting calls capturing writes through it: the int3 is in while this is > 0.
    writes: u32,
}

impl Breakpoint {
    fn wanted(&self) -> bool {
        self.entry.is_some()
            || self.returns > 0
            || self.panic
            || self.panic_message.is_some()
            || self.source.is_some()
            || self.path_read.is_some()
            || self.line.is_some()
            || self.retained
            || self.writes > 0
    }

    /// The entry may go once it is not wanted: a write hook's entry stays (see `write`).
    fn removable(&self) -> bool {
        self.write.is_none()
    }
}

/// `--coverage`: the one-shot line breakpoints of a process.
#[derive(Debug, Clone, Default)]
pub(crate) struct LineBreaks {
    /// The sites (run-time addresses) of each line not reached yet.
    sites: HashMap<LineId, Vec<u64>>,
    /// Sites taken out since their line was reached: a thread that trapped on one at the same
    /// moment as the thread that took it out gets its instruction back.
    removed: HashMap<u64, LineId>,
    /// Every site and its line, as first placed (to re-arm them).
    all: Vec<(u64, LineId)>,
    /// Re-arm every line when a thread starts, so each thread reports the lines it reaches
    /// itself (per-test attribution of libtest binaries run with `--test-threads=1`).
    per_thread: bool,
}

#[derive(Clone)]
pub(crate) struct Frame {
    /// `None` for a call that is traced only to know what is nested in it (`--depth`).
    call: Option<CallId>,
    /// How many levels out from a call of a `--filter`ed function this call is (0: it is one).
    level: Option<u32>,
    function: usize,
    cfa: u64,
    return_addr: u64,
    /// A panic started while this frame was live: if it never returns, it panicked.
    panic_seen: bool,
    /// The message of the first panic seen while this frame was live.
    panic_message: Option<String>,
    /// Sources (see `sources.rs`) reached while this was the innermost recorded frame.
    touches: Vec<Arc<str>>,
    /// `self` and `&mut` arguments, re-read on return.
    effects: Vec<Effect>,
    /// Where the caller asked for the return value (the hidden pointer passed in rdi), when the
    /// function returns through one and the pointer was still known at the entry breakpoint.
    hidden_return: Option<u64>,
    /// What the call wrote so far through its `&mut Formatter` to a sink that is not a `String`.
    capture: Option<Capture>,
    /// Entered through the in-process path: no return breakpoint counts this frame.
    in_process: bool,
    /// The innermost recorded call at or below this frame (this one's, when it has one): the
    /// parent of a call entered above it. Set by [`Thread::push`], so no call's cost
    /// depends on how deep the stack is.
    innermost: Option<CallId>,
    /// How many frames at or below this one have a recorded call: the depth of a call
    /// entered above it. Set by [`Thread::push`].
    recorded: u32,
}

/// A parameter whose pointee a call may change and a test may check afterwards, as the
/// call's end reads it again.
#[derive(Clone)]
struct Effect {
    name: String,
    ty: TypeId,
    at: EffectAt,
}

#[derive(Clone)]
enum EffectAt {
    /// `self` by reference or a `&mut T`: the pointee (of type `ty`) at this address.
    Pointee(u64),
    /// A `&mut [T]` (of type `ty`): its pointer and length as the call got them; the elements
    /// they span are read again.
    Slice(Vec<u8>),
}

impl Frame {
    /// `self` and the `&mut` arguments as they are now, read again at the call's end.
    fn effects_after(&self, decoder: &Decoder) -> Vec<Arg> {
        self.effects
            .iter()
            .map(|e| Arg {
                name: e.name.clone(),
                value: match &e.at {
                    EffectAt::Pointee(addr) => decoder.at(e.ty, *addr),
                    EffectAt::Slice(fat) => decoder.bytes(e.ty, fat),
                },
            })
            .collect()
    }
}

/// The arguments of a call of the function `f` stopped at its break address (`file_pc`, a
/// file address) with CFA `cfa`: each parameter's DWARF location evaluated against `machine`
/// and its value decoded by `decoder`. The ptrace path runs it over the stopped thread, the
/// in-process path over a record's registers and copied regions.
pub(crate) fn decode_args(
    decoder: &Decoder<'_>,
    f: &FunctionDetail,
    machine: &dyn Machine,
    file_pc: u64,
    cfa: u64,
) -> Vec<Arg> {
    let types = decoder.types;
    let frame_base = frame_base(f, machine, cfa);
    f.params
        .iter()
        .map(|p| {
            // The type's name only for a value not decoded (a decoded one names its type).
            let ty_name = || p.ty.map(|t| types.name(t).to_string()).unwrap_or_default();
            let value = match (p.ty, p.location.at(file_pc)) {
                (None, _) => Value::Unavailable {
                    ty: ty_name(),
                    reason: "no type in DWARF".into(),
                },
                (Some(_), None) => Value::Unavailable {
                    ty: ty_name(),
                    reason: "optimized out (no location at the breakpoint)".into(),
                },
                (Some(ty), Some(expr)) => {
                    match evaluate(expr, f.encoding, machine, frame_base, Some(cfa)) {
                        // rustc passes such a value by pointer, never in the incoming
                        // stack-argument area: a location there names the pointer's slot
                        // (optimised builds), not the value.
                        Place::Address(a)
                            if f.rust_abi
                                && a >= cfa
                                && frame_relative(expr, f.encoding)
                                && passed_indirectly(types, ty) == Some(true) =>
                        {
                            Value::Unavailable {
                                ty: ty_name(),
                                reason: "passed by reference from the stack; DWARF locates \
                                         the pointer, not the value"
                                    .into(),
                            }
                        }
                        Place::Address(a) => decoder.at(ty, a),
                        Place::Register(r) => {
                            let v = machine.register(r).unwrap_or(0);
                            decoder.bytes(ty, &v.to_le_bytes())
                        }
                        Place::Bytes(b) => decoder.bytes(ty, &b),
                        Place::Unavailable(reason) => Value::Unavailable {
                            ty: ty_name(),
                            reason,
                        },
                    }
                }
            };
            Arg {
                name: p.name.clone(),
                value: name_function_item(f, value),
            }
        })
        .collect()
}

/// A function item `f`'s code names (see `FunctionDetail::fn_items`), else `value` as read.
fn name_function_item(f: &FunctionDetail, value: Value) -> Value {
    match value {
        Value::Unavailable { ty, reason } if reason == crate::decode::FUNCTION_ITEM => {
            match f.fn_items.iter().find(|(sig, _)| *sig == ty) {
                Some((_, path)) => Value::Function {
                    ty,
                    path: path.clone(),
                },
                None => Value::Unavailable { ty, reason },
            }
        }
        value => value,
    }
}

/// The frame base of `f`'s frame whose CFA is `cfa`, when DWARF gives one.
fn frame_base(f: &FunctionDetail, machine: &dyn Machine, cfa: u64) -> Option<u64> {
    f.frame_base.as_ref().and_then(
        |fb| match evaluate(fb, f.encoding, machine, None, Some(cfa)) {
            Place::Register(r) => machine.register(r),
            Place::Address(a) => Some(a),
            _ => None,
        },
    )
}

/// The `size` bytes of parameter `index` of `f` itself (not what it points to) at the break
/// address, when DWARF places them in memory or in register pieces: a `&mut [T]`'s pointer
/// and length.
fn param_bytes(
    mem: &dyn Memory,
    f: &FunctionDetail,
    machine: &dyn Machine,
    (file_pc, cfa): (u64, u64),
    index: usize,
    size: usize,
) -> Option<Vec<u8>> {
    let expr = f.params.get(index)?.location.at(file_pc)?;
    match evaluate(
        expr,
        f.encoding,
        machine,
        frame_base(f, machine, cfa),
        Some(cfa),
    ) {
        Place::Address(a) => {
            let mut bytes = vec![0u8; size];
            mem.read(a, &mut bytes).then_some(bytes)
        }
        Place::Bytes(b) if b.len() >= size => Some(b[..size].to_vec()),
        _ => None,
    }
}

/// The value a call of a function returning `ty` returned, from the return registers `rr`
/// and, for a value returned in memory, `decoder`'s memory; with the address it is at then.
pub(crate) fn decode_return(
    decoder: &Decoder<'_>,
    ty: TypeId,
    rr: &ReturnRegs,
    rust_abi: bool,
) -> (Value, Option<u64>) {
    match return_place(decoder.types, ty, rr, rust_abi) {
        ReturnPlace::Bytes(b) => (decoder.bytes(ty, &b), None),
        ReturnPlace::Memory(addr) => (decoder.at(ty, addr), Some(addr)),
        ReturnPlace::Unknown(reason) => (unknown_return(decoder.types, ty, reason), None),
    }
}

/// A return value whose place the ABI does not tell for sure.
fn unknown_return(types: &TypeTable, ty: TypeId, reason: String) -> Value {
    Value::Unavailable {
        ty: types.name(ty).to_string(),
        reason,
    }
}

#[derive(Debug, Clone, Copy)]
enum Step {
    /// The breakpoint is lifted and the thread steps the original instruction in place.
    InPlace { addr: u64 },
    /// The thread steps a copy of the instruction (of length `len`) in the scratch slot.
    Displaced { addr: u64, len: u64 },
}

impl Thread {
    /// Pushes `frame`, with what it says about the frames below it.
    fn push(&mut self, mut frame: Frame) {
        let below = self.stack.last();
        frame.innermost = frame.call.or(below.and_then(|f| f.innermost));
        frame.recorded = below.map_or(0, |f| f.recorded) + u32::from(frame.call.is_some());
        self.stack.push(frame);
    }

    /// The innermost recorded call (the parent of a call entered now).
    fn innermost_call(&self) -> Option<CallId> {
        self.stack.last().and_then(|f| f.innermost)
    }

    /// How many recorded calls are open (the depth of a call entered now).
    fn recorded_depth(&self) -> u32 {
        self.stack.last().map_or(0, |f| f.recorded)
    }
}

#[derive(Default)]
struct Thread {
    stack: Vec<Frame>,
    /// Single-stepping past the breakpoint at this address.
    stepping: Option<Step>,
    /// A signal that arrived during the step, delivered once the step is done.
    pending_signal: Option<Signal>,
    /// Not yet seen its first stop (new threads start with SIGSTOP).
    fresh: bool,
    /// Its exit stop showed it ended itself (`exit(2)`, as `pthread_exit` does): its open
    /// calls were unwound. Otherwise the process's end (`exit_group`, a fatal signal) took it
    /// down, and its open calls are unfinished; so too when no exit stop came (the kernel
    /// skips it for a thread with SIGKILL pending, as every other thread at `exit_group`).
    ended_itself: bool,
    /// The end of an outermost call that returned `&mut` to a scalar, held until this thread's
    /// next stop: see [`HeldEnd`].
    held: Option<HeldEnd>,
    /// Not a thread of the process but a `vfork` child sharing its memory (see `vfork.rs`):
    /// its traps are stepped over, nothing of it is recorded.
    vfork_child: bool,
}

/// A call returned `&mut T` (T a scalar) to code that is not recorded, which may write through
/// it (`*map.entry(k).or_insert(0) += 1`): its end is held until the thread's next stop, and
/// the value behind the reference then is recorded as the `*result` effect — exactly what the
/// memory held at that moment, not a claim about when the caller wrote it.
struct HeldEnd {
    end: CallEnd,
    pointee: TypeId,
    addr: u64,
}

/// The recording of one process.
pub(crate) struct Tracer<'a> {
    pid: Pid,
    mem: ProcessMemory,
    bias: LoadBias,
    types: &'a TypeTable,
    functions: Vec<Traced>,
    breakpoints: HashMap<u64, Breakpoint>,
    threads: HashMap<Pid, Thread>,
    next_call: u64,
    limits: Limits,
    sink: &'a mut dyn TraceSink,
    calls_recorded: u64,
    /// Executable bytes no longer used after start-up (the ELF entry point), where displaced
    /// instructions run; one thread at a time.
    scratch: u64,
    scratch_owner: Option<Pid>,
    /// Breakpoint whose instruction copy is in the scratch slot now.
    scratch_holds: Option<u64>,
    /// Threads stopped at a breakpoint, waiting for the scratch slot.
    waiting: VecDeque<(Pid, u64)>,
    /// Registers to resume a thread with instead of stepping on (a forced return).
    forced: HashMap<Pid, libc::user_regs_struct>,
    /// `--depth`: calls up to this many levels out from a filtered call are recorded too.
    depth: u32,
    objects: crate::objects::Objects,
    /// The affinity carve had before it pinned itself and the tracee to one CPU; given back to
    /// everyone when the tracee starts a second thread, so its threads run in parallel.
    pinned_from: Option<nix::sched::CpuSet>,
    /// `--follow-forks`: takes a forked child (and returns true) to record it elsewhere.
    follow: Option<&'a mut (dyn FnMut(Forked) -> bool + 'a)>,
    /// `--coverage`: line breakpoints (empty without it).
    lines: LineBreaks,
    /// An `exec` ends this tracer's run with the process stopped at the exec event, for the
    /// caller to trace the new program (instead of detaching it).
    follow_exec: bool,
    /// The process called `exec` (see `follow_exec`).
    execed: bool,
    /// With `follow`: a forked child keeps this program's breakpoints and is recorded as a run
    /// of its own (`--follow-forks`); otherwise it is followed untraced, for what it execs.
    record_forks: bool,
    /// When this run started: call times are nanoseconds since then (monotonic).
    clock: std::time::Instant,
    /// Full names of the tests a libtest thread may be named after (see [`Tracer::name_thread`]).
    test_names: &'a [String],
    /// Forked children whose first stop was reported before their parent's fork event (and is
    /// already collected): [`Tracer::follow_child`] must not wait for it again.
    early_children: HashSet<Pid>,
    /// Threads whose name was sent.
    named: HashSet<Pid>,
    /// Says when the command carve ran has ended: this process is then let go (see
    /// [`Tracer::let_all_go`]) instead of followed to its end.
    ending: Option<&'a crate::ending::Ending>,
    /// Letting go: no breakpoint goes (back) in.
    letting_go: bool,
    /// The program's `core::fmt::Write` methods (none: no text is captured).
    write_methods: Option<&'a WriteMethods>,
    /// The in-process path's ring, when functions are captured in process.
    ring: Option<crate::inprocess::Ring>,
    /// Looks at the ring that found it empty since the last that found records.
    empty_polls: u32,
    /// Ends the wait for a stop when the ring is to be looked at again (see `run`).
    wake_timer: Option<crate::ending::WakeTimer>,
    /// Puts the in-process records' counter values on the run's clock, when it can.
    tsc: Option<TscClock>,
    /// The sites patched for the in-process path and the bytes they replaced.
    patched: Vec<(u64, Vec<u8>)>,
    /// Thread pointers (`fs_base`) of the threads seen, for the records' threads.
    thread_pointers: HashMap<u64, Pid>,
    /// Per thread, the regions of the last exit-state record (before the epilogue), for the
    /// exit record that follows it.
    exit_states: HashMap<Pid, crate::capture::Captured>,
    /// What the last drain read, kept (cleared) for the next one: its memory is reused and
    /// the records are read in place.
    drained: crate::inprocess::Drained,
    /// Stops not served yet, and since when: their thread's records may lie behind a record
    /// another thread is still writing (see [`Tracer::serve`]). A stop served before its own
    /// thread's records closed an in-process call that had returned as `unwound`, and every
    /// later call of that thread was stored as a root.
    deferred: std::collections::VecDeque<(WaitStatus, std::time::Instant)>,
    /// The in-process functions with a `--max-calls-per-function` limit, by index.
    limited: HashMap<usize, Limited>,
    /// Threads waiting for their `vfork` child, with their thread pointer: the in-process
    /// records with it are the child's meanwhile (see `vfork.rs`).
    vforking: HashMap<Pid, u64>,
    /// The program's own SIGTRAP action, kept working under carve's traps.
    sigtrap: crate::sigtrap::Guard,
    /// Breakpoints taken out for good (an entry at its function's last call under
    /// `--max-calls-per-function`, a return site no frame returns to): a thread that trapped
    /// on one at the same moment gets its instruction back instead of a SIGTRAP.
    removed: HashSet<u64>,
}

/// An in-process function with a `--max-calls-per-function` limit: its trampolines count its
/// captures down in the program (see `inprocess::Limits`); carve turns its exit captures off
/// once every captured call has ended.
struct Limited {
    /// The address of its words in the program.
    words: u64,
    /// Its limit.
    max: u64,
    /// Entry records drained so far (at most `max`: the trampoline captures no more).
    entries: u64,
    /// Its exit captures are off.
    exits_off: bool,
}

/// The registers of a stopped thread plus its process's memory, for DWARF evaluation.
struct Stopped<'a> {
    regs: &'a libc::user_regs_struct,
    mem: &'a dyn Memory,
}

impl Memory for Stopped<'_> {
    fn read(&self, addr: u64, buf: &mut [u8]) -> bool {
        self.mem.read(addr, buf)
    }
}

impl Machine for Stopped<'_> {
    fn register(&self, r: u16) -> Option<u64> {
        dwarf_register(self.regs, r)
    }
}

/// The longest a stop waits for its thread's records hidden behind a record another thread is
/// still writing: such a record is committed within microseconds unless its writer was killed.
const DEFER_LIMIT: std::time::Duration = std::time::Duration::from_millis(100);

/// Bytes of the in-process ring (4 MiB: a few hundred thousand calls between two drains).
const RING_BYTES: u64 = 4 << 20;
/// The drainer's first sleep after a drain that found records, in µs; each further empty
/// look doubles it, [`EMPTY_POLL_DOUBLINGS`] times at most (25 µs to 200 µs).
const EMPTY_POLL_MIN_US: u64 = 25;
const EMPTY_POLL_DOUBLINGS: u32 = 3;
/// The drainer's sleep while carve and the program are pinned to one CPU (a run where some
/// functions keep ptrace stops): each look at the ring takes that CPU from the program, and
/// the ring is drained before every stop anyway, so it looks seldom. A ring fills in no less
/// than ~10 ms of a program doing nothing but traced calls.
const PINNED_POLL_US: u64 = 1000;

/// A record's registers as a stopped thread's at the break address `rip`.
fn captured_regs(r: &crate::inprocess::Record<'_>, rip: u64) -> libc::user_regs_struct {
    // SAFETY: user_regs_struct is plain integers; all zeros is a valid value.
    let mut regs: libc::user_regs_struct = unsafe { std::mem::zeroed() };
    let g = &r.regs;
    (regs.rax, regs.rdx, regs.rcx, regs.rbx) = (g[0], g[1], g[2], g[3]);
    (regs.rsi, regs.rdi, regs.rbp, regs.rsp) = (g[4], g[5], g[6], g[7]);
    (regs.r8, regs.r9, regs.r10, regs.r11) = (g[8], g[9], g[10], g[11]);
    (regs.r12, regs.r13, regs.r14, regs.r15) = (g[12], g[13], g[14], g[15]);
    regs.rip = rip;
    regs.fs_base = r.thread;
    regs
}

fn dwarf_register(r: &libc::user_regs_struct, n: u16) -> Option<u64> {
    Some(match n {
        0 => r.rax,
        1 => r.rdx,
        2 => r.rcx,
        3 => r.rbx,
        4 => r.rsi,
        5 => r.rdi,
        6 => r.rbp,
        7 => r.rsp,
        8 => r.r8,
        9 => r.r9,
        10 => r.r10,
        11 => r.r11,
        12 => r.r12,
        13 => r.r13,
        14 => r.r14,
        15 => r.r15,
        16 => r.rip,
        _ => return None,
    })
}

/// How a panic entry point receives the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MessageAt {
    /// `core::panicking::panic_fmt(fmt: Arguments)`: the two words of `Arguments` in rdi, rsi.
    FmtArguments,
    /// `std::panicking::begin_panic::<&str>(msg)` (`panic_any("...")`, edition-2015 `panic!`):
    /// the `&str` in rdi (pointer), rsi (length).
    Str,
}

/// A forked child to record as a run of its own (`--follow-forks`): stopped, with our
/// breakpoints in its (copied) memory, and the forking thread's frames, which it inherited.
pub(crate) struct Forked {
    pub pid: Pid,
    breakpoints: HashMap<u64, Breakpoint>,
    frames: Vec<Frame>,
    lines: LineBreaks,
    /// It keeps the parent's breakpoints and is recorded as a run of its own; otherwise it
    /// runs untraced until it calls `exec`.
    pub recorded: bool,
    /// It is stopped at its `exec` event already (a `vfork` child carve served until then):
    /// the program to load is the new one.
    pub execed: bool,
}

/// Where the panic machinery is, when the program has it (file addresses).
#[derive(Clone)]
pub(crate) struct PanicHooks {
    /// `rust_panic`: a panic is about to unwind.
    pub unwinding: Option<FileAddr>,
    /// `core::panicking::panic_fmt`: its argument holds the message.
    pub message: Option<FileAddr>,
    /// `std::panicking::begin_panic::<&str>`: its argument is the message.
    pub message_str: Option<FileAddr>,
}

/// The time stamp counter.
fn rdtsc() -> u64 {
    // SAFETY: `rdtsc` reads a counter; it has no other effect.
    unsafe { std::arch::x86_64::_rdtsc() }
}

/// Puts the time stamp counter values of in-process records (taken by the trampolines) on the
/// run's clock (`Tracer::now_ns`): pairs of (counter, run time) read back to back
/// ([`TscClock::pair`]), the first when the ring was installed, the latest at each drain; a
/// record's time lies on the line through them. Only where the kernel keeps its own clock on
/// the counter (clocksource `tsc`: a constant rate, the same on every CPU); elsewhere
/// in-process calls get no time (NULL), never a wrong one. A record is never older than the
/// first pair, so its error is a few times that of reading one pair, however long the run.
#[derive(Debug, Clone, Copy)]
struct TscClock {
    first: (u64, u64),
    last: (u64, u64),
}

impl TscClock {
    const SOURCE: &'static str = "/sys/devices/system/clocksource/clocksource0/current_clocksource";

    /// Pairs read for one anchor: the one read fastest is kept.
    const PAIR_TRIES: usize = 5;

    /// How far apart the two pairs read at the start are: a rate good to a few parts in 10^5
    /// (a pair's error is tens of nanoseconds), refined by every later anchor.
    const CALIBRATION: std::time::Duration = std::time::Duration::from_millis(2);

    fn start(clock: &std::time::Instant) -> Option<TscClock> {
        let source = std::fs::read_to_string(Self::SOURCE).ok()?;
        if source.trim() != "tsc" {
            return None;
        }
        // Two pairs apart before the first record is read: a program's first calls (`main`'s
        // entry, drained right after the install) had no rate yet and got no start time, or
        // one extrapolated from pairs microseconds apart.
        let first = Self::pair(clock)?;
        std::thread::sleep(Self::CALIBRATION);
        let last = Self::pair(clock)?;
        Some(TscClock { first, last })
    }

    fn anchor(&mut self, clock: &std::time::Instant) {
        if let Some(now) = Self::pair(clock) {
            self.last = now;
        }
    }

    /// (counter, run time) read back to back: of [`Self::PAIR_TRIES`] reads, the one whose
    /// counter moved least while the clock was read, at the counter's midpoint. (A thread
    /// preempted between the two reads gave a pair off by milliseconds, and calls timed
    /// before the one they follow.)
    fn pair(clock: &std::time::Instant) -> Option<(u64, u64)> {
        let mut best: Option<(u64, u64, u64)> = None;
        for _ in 0..Self::PAIR_TRIES {
            let before = rdtsc();
            let ns = u64::try_from(clock.elapsed().as_nanos()).ok()?;
            let window = rdtsc().wrapping_sub(before);
            if best.is_none_or(|(w, _, _)| window < w) {
                best = Some((window, before + window / 2, ns));
            }
        }
        best.map(|(_, tsc, ns)| (tsc, ns))
    }

    /// `tsc` on the run's clock; `None` before two pairs apart were read.
    fn ns(&self, tsc: u64) -> Option<u64> {
        let ((t0, n0), (t1, n1)) = (self.first, self.last);
        if t1 <= t0 || n1 <= n0 {
            return None;
        }
        let per_tick = (n1 - n0) as f64 / (t1 - t0) as f64;
        let ns = n1 as f64 + (i128::from(tsc) - i128::from(t1)) as f64 * per_tick;
        (ns >= 0.0).then_some(ns.round() as u64)
    }
}

fn labels(touches: &[Arc<str>]) -> Vec<String> {
    touches.iter().map(|t| t.to_string()).collect()
}

/// How the run went, for the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordSummary {
    /// How the program ended (the last program a process that called `exec` ran).
    pub exit: ProcessExit,
    /// Calls recorded, in every run.
    pub calls: u64,
}

/// How one tracer's run ended.
pub(crate) struct TracerEnd {
    pub summary: RecordSummary,
    /// The process called `exec` and waits, stopped at the exec event, to be traced on.
    pub execed: bool,
    /// The CPU pinning still to undo when the process starts a thread.
    pub pinned_from: Option<nix::sched::CpuSet>,
}

/// The full test name `name` (a thread name the kernel cut to 15 bytes) is the start of, when
/// exactly one of `tests` starts with it.
fn full_test_name(name: &str, tests: &[String]) -> Option<String> {
    if name.len() < 15 {
        return None; // not cut
    }
    // A cut may split a character: compare the whole characters before it.
    let prefix = name.trim_end_matches('\u{fffd}');
    let mut found = tests.iter().filter(|t| t.starts_with(prefix));
    match (found.next(), found.next()) {
        (Some(one), None) => Some(one.clone()),
        _ => None,
    }
}

impl<'a> Tracer<'a> {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        pid: Pid,
        bias: LoadBias,
        types: &'a TypeTable,
        functions: Vec<Traced>,
        panic: PanicHooks,
        sources: Vec<crate::sources::Source>,
        scratch: FileAddr,
        limits: Limits,
        sink: &'a mut dyn TraceSink,
    ) -> Result<Tracer<'a>, RecordError> {
        let mut tracer = Tracer::fresh(
            pid,
            bias,
            types,
            functions,
            HashMap::new(),
            scratch,
            limits,
            sink,
        )?;
        tracer.threads.insert(pid, Thread::default());
        tracer.install_in_process()?;
        for i in 0..tracer.functions.len() {
            if tracer.functions[i].in_process.is_some() {
                continue;
            }
            let addr = bias.relocate(tracer.functions[i].detail.breakpoint).0;
            tracer.breakpoints.entry(addr).or_default().entry = Some(i);
            tracer.insert(addr)?;
        }
        if let Some(p) = panic.unwinding {
            let addr = bias.relocate(p).0;
            tracer.breakpoints.entry(addr).or_default().panic = true;
            tracer.insert(addr)?;
        }
        let hooks = [
            (panic.message, MessageAt::FmtArguments),
            (panic.message_str, MessageAt::Str),
        ];
        for (at, kind) in hooks {
            if let Some(p) = at {
                let addr = bias.relocate(p).0;
                tracer.breakpoints.entry(addr).or_default().panic_message = Some(kind);
                tracer.insert(addr)?;
            }
        }
        for source in sources {
            let addr = bias.relocate(source.addr).0;
            let bp = tracer.breakpoints.entry(addr).or_default();
            bp.source = source.label.map(Into::into);
            bp.path_read = source.path;
            tracer.insert(addr)?;
        }
        ptrace::setoptions(pid, TRACE_OPTIONS).map_err(|source| RecordError::Ptrace {
            op: "SETOPTIONS",
            pid: pid.as_raw(),
            source,
        })?;
        Ok(tracer)
    }

    /// Patches the functions with an in-process plan (`--capture inprocess`) and maps the
    /// ring their records go to; a function the live code refuses keeps the ptrace path. The
    /// process is at its exec stop: one thread, not inside any function.
    fn install_in_process(&mut self) -> Result<(), RecordError> {
        let bias = self.bias;
        let mut targets = Vec::new();
        for (i, f) in self.functions.iter().enumerate() {
            let Some(plan) = &f.in_process else { continue };
            let (low, high) = plan.code;
            targets.push(crate::inprocess::Target {
                function: i as u32,
                low: bias.relocate(low).0,
                high: bias.relocate(high).0,
                padding: plan.padding,
                entry_at: bias.relocate(f.detail.breakpoint).0,
                entry: plan.entry.clone(),
                exit: plan.exit.clone(),
                limit: f.max_calls,
            });
        }
        if targets.is_empty() {
            return Ok(());
        }
        let functions = &self.functions;
        let state = |function: u32, site: u64| {
            let file = bias.unrelocate(RuntimeAddr(site)).0;
            functions[function as usize]
                .in_process
                .as_ref()
                .and_then(|p| p.states.get(&file).cloned())
                .ok_or("an exit site the plan did not see")
        };
        let scratch = get_regs(self.pid)?.rip;
        let installed = crate::inprocess::install(
            self.pid,
            &self.mem,
            scratch,
            &targets,
            &state,
            RING_BYTES,
            crate::inprocess::Sharing::Shared,
        )?;
        for (f, _) in installed.refused {
            self.functions[f as usize].in_process = None;
        }
        for (f, words) in installed.limits.words {
            let max = self.functions[f as usize].max_calls.unwrap_or(0);
            let limited = Limited {
                words,
                max,
                entries: 0,
                // A limit of 0 starts with exits off (install wrote it so).
                exits_off: max == 0,
            };
            self.limited.insert(f as usize, limited);
        }
        self.ring = Some(installed.ring);
        self.patched = installed.originals;
        self.tsc = TscClock::start(&self.clock);
        Ok(())
    }

    /// Reads one bounded piece of the records the program wrote since the last drain (at
    /// most `inprocess::DRAIN_BYTES`) and records their calls; returns how many it read. A
    /// piece at a time, so that a ring that never runs dry (threads calling in-process
    /// functions flat out) never keeps carve from serving the program's ptrace stops.
    fn drain_piece(&mut self) -> Result<usize, RecordError> {
        let mut drained = std::mem::take(&mut self.drained);
        // Before reading: the records drained were written before this, or just after.
        if let Some(tsc) = self.tsc.as_mut() {
            tsc.anchor(&self.clock);
        }
        drained.clear();
        let n = match self
            .ring
            .as_mut()
            .map(|ring| ring.drain(&self.mem, &mut drained))
        {
            Some(Ok(n)) => n,
            // An unreadable ring means the process's memory is gone (it is ending): the
            // records not drained yet are lost and their calls stay open (`unfinished`),
            // never wrong.
            Some(Err(_)) => {
                self.ring = None;
                0
            }
            None => 0,
        };
        let decoded = drained.records().try_for_each(|r| self.on_record(&r));
        self.drained = drained;
        decoded?;
        self.exits_done();
        Ok(n)
    }

    /// Drains what the program wrote before this moment: every record reserved so far that
    /// is committed, so a stopped thread's own records (all committed: it ran its trampolines
    /// to the end) are recorded before its stop is handled. Bounded by the ring's size, not
    /// by how fast the other threads write; stops at a record still being written (another
    /// thread's, which commits it when it runs on).
    fn drain_written(&mut self) -> Result<(), RecordError> {
        let Some(until) = self.ring.as_ref().and_then(|r| r.head(&self.mem)) else {
            return Ok(());
        };
        while self.ring.as_ref().is_some_and(|r| r.tail() < until) {
            if self.drain_piece()? == 0 {
                break;
            }
        }
        Ok(())
    }

    /// What handling `status` needs from the ring first (see [`RecordsFirst`]).
    fn records_first(&self, status: &WaitStatus) -> RecordsFirst {
        if status.pid().is_some_and(|tid| self.is_vfork_child(tid)) {
            // Its records are dropped whenever they are read.
            return RecordsFirst::Nothing;
        }
        match *status {
            WaitStatus::Stopped(tid, Signal::SIGTRAP) => RecordsFirst::Thread(tid),
            WaitStatus::PtraceEvent(_, _, libc::PTRACE_EVENT_CLONE) => RecordsFirst::Nothing,
            WaitStatus::PtraceEvent(_, _, libc::PTRACE_EVENT_EXEC) => RecordsFirst::All,
            WaitStatus::PtraceEvent(tid, _, _) => RecordsFirst::Thread(tid),
            WaitStatus::Exited(tid, _) | WaitStatus::Signaled(tid, _, _) if tid == self.pid => {
                RecordsFirst::All
            }
            _ => RecordsFirst::Nothing,
        }
    }

    /// Records the stopped thread `tid`'s own records before its stop is handled, ahead of
    /// the other threads' records still in the ring ([`crate::inprocess::Ring::take_thread`]):
    /// the stop waits for its thread's records only, never for a full ring's. Where the
    /// thread cannot be told in the records (its thread pointer unknown) or the ring is not
    /// shared with carve, drains in order instead ([`Tracer::drain_written`]).
    ///
    /// Returns whether every record of the thread is out of the ring: `false` when the look
    /// stopped at a record another thread is still writing, behind which more of this thread's
    /// records may lie ([`crate::inprocess::Taken::hidden`]).
    fn drain_thread(&mut self, tid: Pid) -> Result<bool, RecordError> {
        let known = self.thread_pointers.iter().find(|(_, t)| **t == tid);
        let pointer = match known {
            Some((pointer, _)) => Some(*pointer),
            None => get_regs(tid).ok().map(|r| r.fs_base).filter(|p| *p != 0),
        };
        let mut early = std::mem::take(&mut self.drained);
        early.clear();
        let taken = match (pointer, self.ring.as_mut()) {
            (Some(pointer), Some(ring)) => ring.take_thread(pointer, &mut early),
            _ => None,
        };
        let Some(taken) = taken else {
            self.drained = early;
            return self.drain_written().map(|()| true);
        };
        if let Some(pointer) = pointer {
            self.learn_thread_pointer(tid, pointer);
        }
        let decoded = early.records().try_for_each(|r| self.on_record(&r));
        self.drained = early;
        decoded?;
        self.exits_done();
        Ok(!taken.hidden)
    }

    /// Turns off the exit captures of each limited function whose captures are all taken and
    /// drained and none of whose captured calls is still open (ended, unwound or closed by a
    /// panic): every exit from now on is of a call that was not captured, which the tracer
    /// would drop anyway. Until then such exits reach [`Tracer::on_exit_record`] and match no
    /// frame.
    fn exits_done(&mut self) {
        let threads = &self.threads;
        for (&index, l) in self.limited.iter_mut() {
            if l.exits_off || l.entries < l.max {
                continue;
            }
            let open = threads
                .values()
                .any(|t| t.stack.iter().any(|f| f.function == index && f.in_process));
            if open {
                continue;
            }
            let at = crate::inprocess::Limits::exits_on(l.words);
            // Unwritable: the process is going; its exits stay captured, never wrong.
            if self.mem.write(at, &0u64.to_le_bytes()).is_ok() {
                l.exits_off = true;
            }
        }
    }

    /// The thread a record's thread pointer belongs to: known from its `fs_base` at one of
    /// its stops, else the only thread whose pointer is not known yet.
    fn thread_of(&mut self, pointer: u64) -> Option<Pid> {
        if let Some(tid) = self.thread_pointers.get(&pointer) {
            return Some(*tid);
        }
        let known: HashSet<Pid> = self.thread_pointers.values().copied().collect();
        let mut unknown = self.threads.keys().filter(|t| !known.contains(t));
        let only = *unknown.next()?;
        if unknown.next().is_some() {
            return None;
        }
        self.thread_pointers.insert(pointer, only);
        Some(only)
    }

    fn learn_thread_pointer(&mut self, tid: Pid, fs_base: u64) {
        if fs_base != 0 {
            self.thread_pointers.retain(|_, t| *t != tid);
            self.thread_pointers.insert(fs_base, tid);
        }
    }

    fn on_record(&mut self, r: &crate::inprocess::Record<'_>) -> Result<(), RecordError> {
        let index = r.function as usize;
        if index >= self.functions.len() {
            return Ok(());
        }
        if r.kind == crate::inprocess::ENTRY {
            // One of the function's captures, whether or not its call is recorded below.
            if let Some(l) = self.limited.get_mut(&index) {
                l.entries += 1;
            }
        }
        if self.written_by_vfork_child(r.thread) {
            return Ok(());
        }
        // A record whose thread cannot be told is dropped: its call is not recorded, rather
        // than recorded on the wrong thread.
        let Some(tid) = self.thread_of(r.thread) else {
            return Ok(());
        };
        match r.kind {
            crate::inprocess::ENTRY => {
                let regs = captured_regs(
                    r,
                    self.bias
                        .relocate(self.functions[index].detail.breakpoint)
                        .0,
                );
                let at_ns = self.record_ns(r);
                self.on_entry(tid, index, &regs, Some(&r.memory), at_ns)
            }
            crate::inprocess::STATE => {
                self.exit_states.insert(tid, r.memory.to_captured());
                Ok(())
            }
            crate::inprocess::EXIT => self.on_exit_record(tid, index, r),
            _ => Ok(()),
        }
    }

    /// When the program wrote record `r`, on the run's clock; `None` when the counter cannot
    /// be put on it (see [`TscClock`]).
    fn record_ns(&self, r: &crate::inprocess::Record<'_>) -> Option<u64> {
        self.tsc.and_then(|c| c.ns(r.tsc))
    }

    /// An exit record (at the `ret`, rsp = CFA - 8): the end of the thread's innermost call
    /// when it is this function's frame with that CFA.
    fn on_exit_record(
        &mut self,
        tid: Pid,
        index: usize,
        r: &crate::inprocess::Record<'_>,
    ) -> Result<(), RecordError> {
        let cfa = r.rsp.wrapping_add(8);
        let state = self.exit_states.remove(&tid).unwrap_or_default();
        self.pop_abandoned(tid, |frame_cfa| frame_cfa < cfa);
        let matches = self
            .threads
            .get(&tid)
            .and_then(|t| t.stack.last())
            .is_some_and(|f| f.cfa == cfa && f.function == index && f.in_process);
        if !matches {
            return Ok(());
        }
        let Some(frame) = self.threads.get_mut(&tid).and_then(|t| t.stack.pop()) else {
            return Ok(());
        };
        let Some(call) = frame.call else {
            return Ok(());
        };
        let regs = || ReturnRegs {
            rax: r.regs[0],
            rdx: r.regs[1],
            xmm0: r.xmm[0],
            xmm1: r.xmm[1],
            hidden: frame.hidden_return,
        };
        // A result returned in memory was copied by the state program (before the epilogue,
        // behind the hidden pointer's frame slot); one in registers by the exit program.
        let both = crate::capture::EitherMemory(&r.memory, &state);
        let ret = self.returned(call, index, Some(&both), regs);
        let decoder = self.decoder_over(&state);
        let after = frame.effects_after(&decoder);
        let end = CallEnd {
            call,
            outcome: Outcome::Returned,
            ret,
            after,
            touches: labels(&frame.touches),
            at_ns: self.record_ns(r),
        };
        self.sink.record(TraceEvent::CallEnded(end));
        Ok(())
    }

    /// Takes the in-process patches out of a forked child's (copied) memory: nobody drains
    /// its copy of the ring.
    fn unpatch_in(&self, mem: &ProcessMemory) {
        for (site, original) in &self.patched {
            let _ = mem.write(*site, original);
        }
    }

    fn insert(&mut self, addr: u64) -> Result<(), RecordError> {
        if self.letting_go {
            return Ok(());
        }
        let Some(bp) = self.breakpoints.get(&addr) else {
            return Ok(());
        };
        if bp.inserted {
            return Ok(());
        }
        let original = self.mem.read_byte(addr)?;
        self.mem.write(addr, &[INT3])?;
        if let Some(bp) = self.breakpoints.get_mut(&addr) {
            bp.original = original;
            bp.inserted = true;
        }
        Ok(())
    }

    /// Puts the original byte back (the breakpoint entry stays, marked not inserted).
    fn lift(&mut self, addr: u64) -> Result<(), RecordError> {
        if let Some(bp) = self.breakpoints.get_mut(&addr) {
            if bp.inserted {
                bp.inserted = false;
                let original = bp.original;
                self.mem.write(addr, &[original])?;
            }
        }
        Ok(())
    }

    /// A tracer for `pid` with nothing recorded yet; `breakpoints` are already in its memory.
    #[allow(clippy::too_many_arguments)]
    fn fresh(
        pid: Pid,
        bias: LoadBias,
        types: &'a TypeTable,
        functions: Vec<Traced>,
        breakpoints: HashMap<u64, Breakpoint>,
        scratch: FileAddr,
        limits: Limits,
        sink: &'a mut dyn TraceSink,
    ) -> Result<Tracer<'a>, RecordError> {
        Ok(Tracer {
            pid,
            mem: ProcessMemory::open(pid)?,
            bias,
            types,
            functions,
            breakpoints,
            threads: HashMap::new(),
            next_call: 1,
            limits,
            sink,
            calls_recorded: 0,
            scratch: bias.relocate(scratch).0,
            scratch_owner: None,
            scratch_holds: None,
            waiting: VecDeque::new(),
            forced: HashMap::new(),
            depth: 0,
            objects: crate::objects::Objects::default(),
            pinned_from: None,
            follow: None,
            lines: LineBreaks::default(),
            follow_exec: false,
            execed: false,
            record_forks: true,
            clock: std::time::Instant::now(),
            tsc: None,
            test_names: &[],
            named: HashSet::new(),
            early_children: HashSet::new(),
            ending: None,
            letting_go: false,
            write_methods: None,
            ring: None,
            wake_timer: None,
            empty_polls: 0,
            patched: Vec::new(),
            thread_pointers: HashMap::new(),
            drained: crate::inprocess::Drained::default(),
            deferred: std::collections::VecDeque::new(),
            limited: HashMap::new(),
            removed: HashSet::new(),
            sigtrap: crate::sigtrap::Guard::default(),
            vforking: HashMap::new(),
            exit_states: HashMap::new(),
        })
    }

    /// Nanoseconds since this run started.
    fn now_ns(&self) -> Option<u64> {
        u64::try_from(self.clock.elapsed().as_nanos()).ok()
    }

    /// Sends `tid`'s name the first time it matters (its first recorded call or line). libtest
    /// names each test's thread after the test, and the kernel keeps 15 bytes of it: a cut
    /// name that starts exactly one of the program's test paths is given in full.
    fn name_thread(&mut self, tid: Pid) {
        if !self.named.insert(tid) {
            return;
        }
        let Some(name) = thread_name(self.pid, tid) else {
            return;
        };
        let name = full_test_name(&name, self.test_names).unwrap_or(name);
        self.sink.record(TraceEvent::ThreadNamed {
            thread: tid.as_raw(),
            name,
        });
    }

    /// Ends the run at `exec` with the process stopped there, and, when `record_forks` is
    /// false, follows forked children untraced (for what they exec) instead of recording them.
    pub(crate) fn follow_exec(&mut self, record_forks: bool) {
        self.follow_exec = true;
        self.record_forks = record_forks;
    }

    /// The test names a libtest thread name may be the cut beginning of.
    pub(crate) fn set_test_names(&mut self, names: &'a [String]) {
        self.test_names = names;
    }

    /// The program's `core::fmt::Write` methods: formatting calls capture what they write.
    pub(crate) fn set_write_methods(&mut self, methods: &'a WriteMethods) {
        self.write_methods = (!methods.is_empty()).then_some(methods);
    }

    /// `--coverage`: a one-shot breakpoint on each site (a line-table row's first address),
    /// sharing the address with any breakpoint already there.
    pub(crate) fn break_on_lines(
        &mut self,
        sites: &[(FileAddr, LineId)],
        per_thread: bool,
    ) -> Result<(), RecordError> {
        self.lines.per_thread = per_thread;
        self.lines.all = sites
            .iter()
            .map(|(addr, line)| (self.bias.relocate(*addr).0, *line))
            .collect();
        self.arm_lines()
    }

    /// Puts a breakpoint on every site of each line not armed (all of them at the start;
    /// with `per_thread`, those reached so far again when a thread starts).
    fn arm_lines(&mut self) -> Result<(), RecordError> {
        let armed: HashSet<LineId> = self.lines.sites.keys().copied().collect();
        // A thread stepping the lifted instruction at one of these gets the int3 back when it
        // is done.
        let stepped: HashSet<u64> = self
            .threads
            .values()
            .filter_map(|t| match t.stepping {
                Some(Step::InPlace { addr }) => Some(addr),
                _ => None,
            })
            .collect();
        let all = std::mem::take(&mut self.lines.all);
        let mut to_insert = Vec::new();
        for (addr, line) in &all {
            if armed.contains(line) {
                continue;
            }
            self.lines.removed.remove(addr);
            self.breakpoints.entry(*addr).or_default().line = Some(*line);
            self.lines.sites.entry(*line).or_default().push(*addr);
            if !stepped.contains(addr) {
                to_insert.push(*addr);
            }
        }
        self.lines.all = all;
        self.insert_many(to_insert)
    }

    /// [`Tracer::insert`] for many addresses at once: one read and one write of the span they
    /// cover instead of two system calls each (a large program has tens of thousands of line
    /// sites). Only the tracer changes the program's code, and it does nothing else meanwhile,
    /// so the span written back holds exactly what was read plus the new int3 bytes.
    fn insert_many(&mut self, mut addrs: Vec<u64>) -> Result<(), RecordError> {
        if self.letting_go {
            return Ok(());
        }
        addrs.retain(|a| self.breakpoints.get(a).is_some_and(|b| !b.inserted));
        addrs.sort_unstable();
        addrs.dedup();
        let (Some(&first), Some(&last)) = (addrs.first(), addrs.last()) else {
            return Ok(());
        };
        let mut span = vec![0u8; (last - first + 1) as usize];
        if span.len() > 64 << 20 || !self.mem.read(first, &mut span) {
            for addr in addrs {
                self.insert(addr)?;
            }
            return Ok(());
        }
        for addr in &addrs {
            let at = (addr - first) as usize;
            if let Some(bp) = self.breakpoints.get_mut(addr) {
                bp.original = span[at];
                bp.inserted = true;
            }
            span[at] = INT3;
        }
        self.mem.write(first, &span)
    }

    /// `tid` reached `line`: reports it (with the thread's name the first time) and takes out
    /// the line's other sites. The site at `pc` is left to the caller: it is lifted when the
    /// thread steps past it, unless another breakpoint there still needs the int3.
    fn line_reached(&mut self, tid: Pid, pc: u64, line: LineId) -> Result<(), RecordError> {
        self.name_thread(tid);
        self.sink.record(TraceEvent::LineReached {
            line,
            thread: tid.as_raw(),
        });
        let Some(sites) = self.lines.sites.remove(&line) else {
            return Ok(());
        };
        for addr in sites {
            self.lines.removed.insert(addr, line);
            let Some(bp) = self.breakpoints.get_mut(&addr) else {
                continue;
            };
            bp.line = None;
            if addr != pc && !bp.wanted() {
                let removable = bp.removable();
                self.lift(addr)?;
                if removable {
                    self.breakpoints.remove(&addr);
                }
            }
        }
        Ok(())
    }

    /// Hands forked children to `follow` instead of releasing them untraced.
    pub(crate) fn follow_forks(&mut self, follow: &'a mut (dyn FnMut(Forked) -> bool + 'a)) {
        self.follow = Some(follow);
    }

    /// Records calls up to `depth` levels out from the calls of filtered functions.
    pub(crate) fn set_depth(&mut self, depth: u32) {
        self.depth = depth;
    }

    /// Lets this process go once `ending` says the command carve ran has ended (a process
    /// other than the command's own).
    pub(crate) fn end_with(&mut self, ending: &'a crate::ending::Ending) {
        self.ending = Some(ending);
    }

    /// Remembers that carve and the tracee were pinned to one CPU from `mask`, or unpins
    /// both at once when every function is captured in process: pinning makes ptrace stops
    /// cheaper, and such a run has almost none, while one CPU for the program, the drainer
    /// (and the writer it feeds) would make them take turns instead of running side by side.
    pub(crate) fn pinned_from(&mut self, mask: Option<nix::sched::CpuSet>) {
        match mask {
            Some(mask) if self.all_in_process() => {
                for t in self.threads.keys().chain([&Pid::from_raw(0)]) {
                    crate::process::unpin(*t, &mask);
                }
                self.pinned_from = None;
            }
            mask => self.pinned_from = mask,
        }
    }

    /// Every traced function is captured in process: no call of this run stops the program.
    fn all_in_process(&self) -> bool {
        self.ring.is_some() && self.functions.iter().all(|f| f.in_process.is_some())
    }

    /// Runs the process to the end (or, with `follow_exec`, to its `exec`), reporting every
    /// call to the sink.
    pub(crate) fn run(mut self) -> Result<TracerEnd, RecordError> {
        if self.ring.is_some() {
            self.wake_timer = crate::ending::WakeTimer::for_this_thread();
        }
        self.resume(self.pid, None)?;
        let exit = loop {
            if self.ending.is_some_and(|e| e.command_ended()) {
                break match self.let_all_go()? {
                    Some(exit) => exit,
                    None => ProcessExit::Lost {
                        reason: crate::ending::OUTLIVED.into(),
                    },
                };
            }
            if let Some(status) = self.deferred_ready()? {
                if let Some(exit) = self.handle_now(status)? {
                    break exit;
                }
                continue;
            }
            let status = match self.next_status()? {
                Next::Stop(s) => s,
                // Records were drained, or the wait was cut short to look at the ring.
                Next::Again => continue,
                Next::NoneLeft => {
                    break ProcessExit::Lost {
                        reason: "no traced process left".into(),
                    }
                }
            };
            if let Some(exit) = self.serve(status)? {
                break exit;
            }
        };
        self.finish_vfork_children();
        self.close_all(Outcome::Unfinished);
        self.sink.record(TraceEvent::RunEnded(RunEnd {
            exit: exit.clone(),
            ended_at_ms: now_ms(),
        }));
        Ok(TracerEnd {
            summary: RecordSummary {
                exit,
                calls: self.calls_recorded,
            },
            execed: self.execed,
            pinned_from: self.pinned_from,
        })
    }

    /// Serves one status: after the records it depends on (the memory is still there), or,
    /// when a stopped thread's records may be hidden behind a record another thread is still
    /// writing, later ([`Tracer::deferred`]). A new status of a thread whose stop waits is
    /// served after that stop, which then waits no longer.
    fn serve(&mut self, status: WaitStatus) -> Result<Option<ProcessExit>, RecordError> {
        if let Some(i) = self
            .deferred
            .iter()
            .position(|(s, _)| s.pid() == status.pid())
        {
            if let Some((earlier, _)) = self.deferred.remove(i) {
                if let Some(exit) = self.handle_now(earlier)? {
                    return Ok(Some(exit));
                }
            }
        }
        if self.ring.is_some() {
            let whole = match self.records_first(&status) {
                RecordsFirst::Nothing => true,
                RecordsFirst::Thread(tid) => self.drain_thread(tid)?,
                RecordsFirst::All => self.drain_written().map(|()| true)?,
            };
            if !whole {
                self.deferred.push_back((status, std::time::Instant::now()));
                return Ok(None);
            }
        }
        self.handle_now(status)
    }

    /// The first deferred stop whose thread's records are all out of the ring now, or that
    /// waited [`DEFER_LIMIT`] (the record hiding them may never be committed: a thread killed
    /// while writing it), with the records it could take.
    fn deferred_ready(&mut self) -> Result<Option<WaitStatus>, RecordError> {
        for i in 0..self.deferred.len() {
            let (status, since) = self.deferred[i];
            let whole = match status.pid() {
                Some(tid) => self.drain_thread(tid)?,
                None => true,
            };
            if whole || since.elapsed() >= DEFER_LIMIT {
                self.deferred.remove(i);
                return Ok(Some(status));
            }
        }
        Ok(None)
    }

    /// Handles `status`, its records already taken.
    fn handle_now(&mut self, status: WaitStatus) -> Result<Option<ProcessExit>, RecordError> {
        match self.handle(status) {
            Ok(exit) => Ok(exit),
            // A thread killed while carve served its stop (another thread called `exit`, a
            // fatal signal): its end is the next thing `waitpid` reports.
            Err(e) if e.tracee_gone() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The next stop or exit among this thread's tracees (`__WALL | __WNOTHREAD`: a child
    /// another carve thread follows is not ours); `None` when there is none yet but the
    /// in-process ring was looked at (records drained, or a wait cut short to look again).
    ///
    /// With the in-process path the program makes records without stopping, so carve waits
    /// for both: a pending stop is collected first (a stopped thread never waits behind the
    /// ring for more than one bounded piece of it), then one piece of the ring is drained;
    /// only when neither has anything does carve block for a stop, cut short by a periodic
    /// timer. The timer keeps firing until the wait ends, so a signal that lands between
    /// arming it and the blocking `waitpid` cannot leave carve waiting for a stop that never
    /// comes while the program waits for ring room (a one-shot timer could: issue 32, row 31).
    fn next_status(&mut self) -> Result<Next, RecordError> {
        let flags = WaitPidFlag::__WALL | WaitPidFlag::__WNOTHREAD;
        if self.ring.is_some() {
            match waitpid(None, Some(flags | WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::StillAlive) => {}
                other => return self.waited(other),
            }
            if self.drain_piece()? > 0 {
                self.empty_polls = 0;
                return Ok(Next::Again);
            }
        }
        // Nothing committed: wait for the next stop, but look at the ring again soon. Right
        // after records came, the program is most likely only off its CPU for a moment; the
        // longer the ring stays empty, the longer the wait (to 200 µs), so an idle program
        // costs little. (A fixed 200 µs left the writer without work while the program,
        // woken, refilled the ring.)
        let timer = self.ring.as_ref().and(self.wake_timer.as_ref());
        let wait = std::time::Duration::from_micros(match self.pinned_from {
            Some(_) => PINNED_POLL_US,
            None => EMPTY_POLL_MIN_US << self.empty_polls.min(EMPTY_POLL_DOUBLINGS),
        });
        if self.ring.is_some() && timer.is_none() {
            self.empty_polls = self.empty_polls.saturating_add(1);
            std::thread::sleep(wait);
            return Ok(Next::Again);
        }
        if let Some(timer) = timer {
            timer.every(wait);
        }
        let woken = waitpid(None, Some(flags));
        if let Some(timer) = timer {
            timer.disarm();
            self.empty_polls = self.empty_polls.saturating_add(1);
        }
        self.waited(woken)
    }

    /// What a `waitpid` gave, as the next step of [`Tracer::run`]; `EINTR` (the wake timer,
    /// or carve's wake signal) is a look at the ring or at the ending.
    fn waited(&mut self, waited: nix::Result<WaitStatus>) -> Result<Next, RecordError> {
        match waited {
            Ok(s) => Ok(Next::Stop(s)),
            Err(nix::errno::Errno::ECHILD) => Ok(Next::NoneLeft),
            Err(nix::errno::Errno::EINTR) => Ok(Next::Again),
            Err(source) => {
                self.close_all(Outcome::Unfinished);
                Err(RecordError::Ptrace {
                    op: "waitpid",
                    pid: self.pid.as_raw(),
                    source,
                })
            }
        }
    }

    /// The command carve ran has ended and this process outlives it: lets every thread of it
    /// go, unharmed. Every int3 of ours is taken out first (the original bytes back; a thread
    /// that trapped on one meanwhile is rewound to run the original instruction), then each
    /// running thread is stopped with a SIGSTOP of its own and detached at that very stop
    /// (with the signal suppressed), so no stop is left pending; a thread waiting for the
    /// scratch slot is already stopped at its breakpoint's address and goes at once. A
    /// displaced step not yet run is put back at its instruction; one that ran is finished.
    /// Children forked meanwhile get the original bytes back in their copy and go too. Open
    /// calls end `unfinished`. Returns the process's exit when it ended meanwhile.
    fn let_all_go(&mut self) -> Result<Option<ProcessExit>, RecordError> {
        if self.ring.is_some() {
            // What was written so far is recorded; then the ring stops holding writers back
            // (its tail far ahead): the patched functions run on, writing into a ring nobody
            // reads, and never wait for a drainer that is gone.
            let _ = self.drain_written();
            if let Some(ring) = self.ring.take() {
                ring.release(&self.mem);
            }
        }
        self.letting_go = true;
        let mut placed: HashMap<u64, u8> = self
            .breakpoints
            .iter()
            .filter(|(_, b)| b.inserted)
            .map(|(a, b)| (*a, b.original))
            .collect();
        for addr in placed.keys() {
            self.lift(*addr)?;
        }
        // Sites of lines taken out before, which a thread may still be trapping on.
        let taken_out: HashSet<u64> = self.lines.removed.keys().copied().collect();
        let waiting: Vec<Pid> = self.waiting.drain(..).map(|(tid, _)| tid).collect();
        for tid in waiting {
            self.release_thread(tid);
        }
        // Stopped with a SIGSTOP of ours, not yet collected: detached at that stop only.
        let mut asked: HashSet<Pid> = HashSet::new();
        for (tid, thread) in &self.threads {
            // A thread not seen yet stops with the SIGSTOP every new thread starts with.
            if thread.vfork_child {
                // A process of its own: the SIGSTOP goes to it.
                let _ = nix::sys::signal::kill(*tid, Signal::SIGSTOP);
                asked.insert(*tid);
            } else if !thread.fresh {
                crate::ending::ask_to_stop(self.pid, *tid);
                asked.insert(*tid);
            }
        }
        let mut exit = None;
        while let Some(status) = crate::ending::next_status(self.pid)? {
            match status {
                WaitStatus::Stopped(tid, sig) if !self.threads.contains_key(&tid) => {
                    if !self.is_our_thread(tid) {
                        // A forked child's first stop before its parent's fork event.
                        restore_bytes(tid, &placed);
                        self.early_children.insert(tid);
                    }
                    // A new thread's or child's first stop: its SIGSTOP is ptrace's.
                    let _ = ptrace::detach(tid, (sig != Signal::SIGSTOP).then_some(sig));
                }
                WaitStatus::Stopped(tid, sig) => {
                    let step = self.threads.get_mut(&tid).and_then(|t| t.stepping.take());
                    if sig == Signal::SIGTRAP {
                        if let Some(step) = step {
                            // The step ran: finish it (nothing goes back in).
                            self.end_step(tid, step, false)?;
                            let pending = self
                                .threads
                                .get_mut(&tid)
                                .and_then(|t| t.pending_signal.take());
                            self.resume(tid, pending)?;
                            continue;
                        }
                        let ours = get_regs(tid).ok().filter(|r| {
                            let pc = r.rip.wrapping_sub(1);
                            (placed.contains_key(&pc) || taken_out.contains(&pc)) && int3_trap(tid)
                        });
                        if let Some(mut regs) = ours {
                            // Trapped on an int3 taken out since: run what is there now.
                            regs.rip -= 1;
                            set_regs(tid, regs)?;
                            self.resume(tid, None)?;
                        } else {
                            self.resume(tid, Some(sig))?;
                        }
                        continue;
                    }
                    if let Some(Step::Displaced { addr, len }) = step {
                        // Stopped before the copy in the scratch slot ran: back to the original.
                        if self.scratch_owner == Some(tid) {
                            self.scratch_owner = None;
                        }
                        let mut regs = get_regs(tid)?;
                        if (self.scratch..self.scratch + len).contains(&regs.rip) {
                            regs.rip = addr;
                            set_regs(tid, regs)?;
                        }
                    }
                    let fresh = self.threads.get(&tid).is_some_and(|t| t.fresh);
                    if sig == Signal::SIGSTOP && (asked.remove(&tid) || fresh) {
                        self.release_thread(tid);
                    } else {
                        // Its own signal; the SIGSTOP asked for follows.
                        self.resume(tid, Some(sig))?;
                    }
                }
                WaitStatus::PtraceEvent(tid, _, event) => {
                    match event {
                        libc::PTRACE_EVENT_CLONE => {
                            if let Ok(new) = ptrace::getevent(tid) {
                                let new = Pid::from_raw(new as i32);
                                if !self.threads.contains_key(&new) {
                                    self.thread_started(new);
                                    if let Some(t) = self.threads.get_mut(&new) {
                                        t.fresh = true;
                                    }
                                }
                            }
                        }
                        libc::PTRACE_EVENT_FORK | libc::PTRACE_EVENT_VFORK => {
                            if let Ok(child) = ptrace::getevent(tid) {
                                let child = Pid::from_raw(child as i32);
                                if !self.early_children.remove(&child) {
                                    crate::process::collect_stop(child);
                                    if event == libc::PTRACE_EVENT_FORK {
                                        restore_bytes(child, &placed);
                                    }
                                    let _ = ptrace::detach(child, None);
                                }
                            }
                        }
                        libc::PTRACE_EVENT_EXEC => {
                            // A new program: none of our bytes is in it; the other threads
                            // are gone and the SIGSTOP asked for may have gone with them.
                            self.close_all(Outcome::Unfinished);
                            placed.clear();
                            self.breakpoints.clear();
                            self.threads.retain(|t, _| *t == tid);
                            self.waiting.clear();
                            self.scratch_owner = None;
                            asked.clear();
                            crate::ending::ask_to_stop(self.pid, tid);
                            asked.insert(tid);
                        }
                        _ => {}
                    }
                    self.resume(tid, None)?;
                }
                WaitStatus::Exited(tid, code) => {
                    asked.remove(&tid);
                    exit = exit.or(self.thread_gone(tid, ProcessExit::Exited { code }));
                }
                WaitStatus::Signaled(tid, sig, _) => {
                    asked.remove(&tid);
                    let how = ProcessExit::Signaled {
                        signal: sig as i32,
                        name: sig.as_str().to_string(),
                    };
                    exit = exit.or(self.thread_gone(tid, how));
                }
                _ => {}
            }
        }
        self.close_all(Outcome::Unfinished);
        Ok(exit)
    }

    /// Detaches a stopped thread (its breakpoints already out) and ends its open calls as
    /// unfinished: it runs on, but carve no longer sees them end.
    fn release_thread(&mut self, tid: Pid) {
        let Some(mut thread) = self.threads.remove(&tid) else {
            let _ = ptrace::detach(tid, None);
            return;
        };
        // A signal that came during a step is still the program's to see.
        let _ = ptrace::detach(tid, thread.pending_signal.take());
        if let Some(held) = thread.held.take() {
            self.emit_held(held, false);
        }
        self.close_frames(thread.stack, Outcome::Unfinished);
    }

    /// Handles one wait status; returns the process's exit when the traced process is gone.
    fn handle(&mut self, status: WaitStatus) -> Result<Option<ProcessExit>, RecordError> {
        if status.pid().is_some_and(|tid| self.is_vfork_child(tid)) {
            return self.vfork_child_status(status).map(|()| None);
        }
        match status {
            WaitStatus::Stopped(tid, sig) => {
                if !self.threads.contains_key(&tid) {
                    if !self.is_our_thread(tid) {
                        // A forked child's first stop, before its parent's fork event: it
                        // stays stopped for `follow_child`, which takes it when the event comes.
                        self.early_children.insert(tid);
                        return Ok(None);
                    }
                    // A new thread's first stop can arrive before its parent's clone event.
                    self.thread_started(tid);
                    if let Some(t) = self.threads.get_mut(&tid) {
                        t.fresh = true;
                    }
                }
                let fresh = self.threads.get(&tid).is_some_and(|t| t.fresh);
                if fresh && sig == Signal::SIGSTOP {
                    if let Some(t) = self.threads.get_mut(&tid) {
                        t.fresh = false;
                    }
                    if self.ring.is_some() {
                        if let Ok(r) = get_regs(tid) {
                            self.learn_thread_pointer(tid, r.fs_base);
                        }
                    }
                    self.resume(tid, None)?;
                } else if sig == Signal::SIGTRAP {
                    self.on_trap(tid)?;
                } else if let Some(t) = self.threads.get_mut(&tid).filter(|t| t.stepping.is_some())
                {
                    // Deliver it after the step, or it would run the handler with the breakpoint lifted.
                    if is_fault(sig) {
                        if let Some(step) = t.stepping.take() {
                            self.end_step(tid, step, true)?;
                        }
                        self.resume(tid, Some(sig))?;
                        self.next_waiting()?;
                    } else {
                        t.pending_signal = Some(sig);
                        self.single_step(tid)?;
                    }
                } else {
                    self.resume(tid, Some(sig))?;
                }
            }
            WaitStatus::PtraceEvent(tid, _, event) => {
                match event {
                    libc::PTRACE_EVENT_CLONE => {
                        if self.ring.is_some() {
                            if let Ok(r) = get_regs(tid) {
                                self.learn_thread_pointer(tid, r.fs_base);
                            }
                        }
                        if let Ok(new) = ptrace::getevent(tid) {
                            let new = Pid::from_raw(new as i32);
                            if let Some(mask) = self.pinned_from.take() {
                                // Multi-threaded now: let the program's threads spread out again.
                                for t in self.threads.keys().chain([&new, &Pid::from_raw(0)]) {
                                    crate::process::unpin(*t, &mask);
                                }
                            }
                            if !self.threads.contains_key(&new) {
                                self.thread_started(new);
                                if let Some(t) = self.threads.get_mut(&new) {
                                    t.fresh = true;
                                }
                            }
                            if self.lines.per_thread {
                                self.arm_lines()?;
                            }
                        }
                    }
                    libc::PTRACE_EVENT_FORK => {
                        if let Ok(child) = ptrace::getevent(tid) {
                            let child = Pid::from_raw(child as i32);
                            // The child must be in its first stop before it can be touched.
                            self.collect_first_stop(child);
                            if !self.follow_child(tid, child, true) {
                                self.release_child(child, true);
                            }
                        }
                    }
                    libc::PTRACE_EVENT_VFORK => {
                        if let Ok(child) = ptrace::getevent(tid) {
                            self.vfork_started(tid, Pid::from_raw(child as i32))?;
                        }
                    }
                    libc::PTRACE_EVENT_VFORK_DONE => self.vfork_done(tid),
                    libc::PTRACE_EVENT_EXIT => {
                        // `orig_rax` is the system call the thread was in: `exit` when it ended
                        // itself (pthread_exit), anything else when the process's end (another
                        // thread's `exit_group`, a fatal signal) interrupted it.
                        let ended_itself =
                            get_regs(tid).is_ok_and(|r| r.orig_rax == libc::SYS_exit as u64);
                        if let Some(t) = self.threads.get_mut(&tid) {
                            t.ended_itself = ended_itself;
                        }
                    }
                    libc::PTRACE_EVENT_EXEC => {
                        // A new program image: our breakpoints and DWARF no longer apply.
                        self.close_all(Outcome::Unfinished);
                        self.breakpoints.clear();
                        if self.follow_exec {
                            // Other threads are gone (the kernel reported their ends first).
                            self.threads.clear();
                            self.execed = true;
                            let program = std::fs::read_link(format!("/proc/{}/exe", self.pid))
                                .map(|p| p.display().to_string())
                                .unwrap_or_else(|_| "another program".into());
                            return Ok(Some(ProcessExit::Lost {
                                reason: format!(
                                    "the program called exec to run {program}, recorded on as a \
                                     run of its own when it selects anything"
                                ),
                            }));
                        }
                        let _ = ptrace::detach(tid, None);
                        self.threads.remove(&tid);
                        return Ok(Some(ProcessExit::Lost {
                            reason: "the program called exec; carve stopped tracing it".into(),
                        }));
                    }
                    _ => {}
                }
                self.resume(tid, None)?;
            }
            WaitStatus::Exited(tid, code) => {
                return Ok(self.thread_gone(tid, ProcessExit::Exited { code }));
            }
            WaitStatus::Signaled(tid, sig, _) => {
                return Ok(self.thread_gone(
                    tid,
                    ProcessExit::Signaled {
                        signal: sig as i32,
                        name: sig.as_str().to_string(),
                    },
                ));
            }
            _ => {}
        }
        Ok(None)
    }

    /// Whether `tid` is a thread of the traced process (and not a child process forked by it):
    /// the kernel lists a new thread under the process's `task` directory from its `clone` on.
    fn is_our_thread(&self, tid: Pid) -> bool {
        tid == self.pid
            || std::path::Path::new(&format!("/proc/{}/task/{}", self.pid, tid)).exists()
    }

    /// Collects a forked child's first stop, unless it was collected before its fork event.
    fn collect_first_stop(&mut self, child: Pid) {
        if !self.early_children.remove(&child) {
            crate::process::collect_stop(child);
        }
    }

    fn thread_started(&mut self, tid: Pid) {
        self.threads.insert(tid, Thread::default());
        self.sink.record(TraceEvent::ThreadStarted {
            thread: tid.as_raw(),
        });
    }

    /// A thread ended; when it is the process's main thread, the process did.
    fn thread_gone(&mut self, tid: Pid, how: ProcessExit) -> Option<ProcessExit> {
        let mut thread = self.threads.remove(&tid)?;
        if let Some(held) = thread.held.take() {
            self.emit_held(held, false);
        }
        self.waiting.retain(|(t, _)| *t != tid);
        if self.scratch_owner == Some(tid) {
            self.scratch_owner = None;
        }
        if !self.waiting.is_empty() && tid != self.pid {
            let _ = self.next_waiting();
        }
        let whole_process = tid == self.pid;
        let outcome = if whole_process || !thread.ended_itself {
            Outcome::Unfinished
        } else {
            Outcome::Unwound
        };
        self.close_frames(thread.stack, outcome);
        self.sink.record(TraceEvent::ThreadExited {
            thread: tid.as_raw(),
        });
        if whole_process {
            // Other threads die with the process; their open calls end unfinished. A `vfork`
            // child is a process of its own: it stays, to be served to its `exec` or exit.
            let rest: Vec<Pid> = self
                .threads
                .iter()
                .filter(|(_, t)| !t.vfork_child)
                .map(|(tid, _)| *tid)
                .collect();
            for t in rest {
                if let Some(mut th) = self.threads.remove(&t) {
                    if let Some(held) = th.held.take() {
                        self.emit_held(held, false);
                    }
                    self.close_frames(th.stack, Outcome::Unfinished);
                }
            }
            Some(how)
        } else {
            None
        }
    }

    /// `--follow-forks`: hands the stopped child, with our breakpoints still in its memory, to
    /// the caller's `follow`; false when there is no one to take it (it is released instead).
    fn follow_child(&mut self, parent: Pid, child: Pid, fork: bool) -> bool {
        if self.follow.is_none() {
            return false;
        }
        if !(fork && self.record_forks && !self.functions.is_empty()) {
            // Followed untraced, for the program it may exec: no int3 of ours stays in its
            // memory (a vfork child shares ours and runs no traced code before its exec).
            if fork {
                self.restore_in(child);
            }
            let forked = Forked {
                pid: child,
                breakpoints: HashMap::new(),
                frames: Vec::new(),
                lines: LineBreaks::default(),
                recorded: false,
                execed: false,
            };
            let Some(follow) = self.follow.as_mut() else {
                return false;
            };
            // `follow` lets it go (stopped) before another thread takes it over.
            return follow(forked);
        }
        // The child continues the forking thread's calls, which are the parent's to record.
        let frames = self
            .threads
            .get(&parent)
            .map(|t| {
                t.stack
                    .iter()
                    .map(|f| Frame {
                        in_process: false,
                        call: None,
                        level: None,
                        effects: Vec::new(),
                        capture: None,
                        innermost: None,
                        recorded: 0,
                        ..f.clone()
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut breakpoints = self.breakpoints.clone();
        if !self.patched.is_empty() {
            // Nobody drains the child's copy of the ring: its functions go back to the ptrace
            // path, with entry breakpoints of their own.
            if let Ok(child_mem) = ProcessMemory::open(child) {
                self.unpatch_in(&child_mem);
                for (i, f) in self.functions.iter().enumerate() {
                    if f.in_process.is_none() {
                        continue;
                    }
                    if let Some(l) = self.limited.get(&i) {
                        // As on the ptrace path, whose entry breakpoint is gone from the
                        // parent (and so from the child) once the limit is reached: the
                        // child's copy of the count says whether it was.
                        let mut left = [0u8; 8];
                        let at = crate::inprocess::Limits::left(l.words);
                        if !child_mem.read(at, &mut left) || u64::from_le_bytes(left) == 0 {
                            continue;
                        }
                    }
                    let addr = self.bias.relocate(f.detail.breakpoint).0;
                    let mut b = [0u8];
                    if child_mem.read(addr, &mut b) && child_mem.write(addr, &[0xcc]).is_ok() {
                        let bp = breakpoints.entry(addr).or_default();
                        bp.entry = Some(i);
                        bp.original = b[0];
                        bp.inserted = true;
                    }
                }
            }
        }
        let forked = Forked {
            pid: child,
            breakpoints,
            frames,
            lines: self.lines.clone(),
            recorded: true,
            execed: false,
        };
        let Some(follow) = self.follow.as_mut() else {
            return false;
        };
        // `follow` lets it go (stopped) before another thread takes it over.
        follow(forked)
    }

    /// Traces a child handed over by [`Tracer::follow_child`] as a process of its own (its
    /// parent's tracer let it go, this thread took it over: see [`crate::handover`]): takes on
    /// the breakpoints and frames it inherited.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn adopt(
        forked: Forked,
        bias: LoadBias,
        types: &'a TypeTable,
        functions: Vec<Traced>,
        scratch: FileAddr,
        limits: Limits,
        depth: u32,
        sink: &'a mut dyn TraceSink,
    ) -> Result<Tracer<'a>, RecordError> {
        let pid = forked.pid;
        let mut tracer = Tracer::fresh(
            pid,
            bias,
            types,
            functions,
            forked.breakpoints,
            scratch,
            limits,
            sink,
        )?;
        tracer.depth = depth;
        tracer.lines = forked.lines;
        tracer.threads.insert(
            pid,
            Thread {
                stack: forked.frames,
                ..Thread::default()
            },
        );
        ptrace::setoptions(pid, TRACE_OPTIONS).map_err(|source| RecordError::Ptrace {
            op: "SETOPTIONS",
            pid: pid.as_raw(),
            source,
        })?;
        Ok(tracer)
    }

    /// A forked child inherits our int3 bytes: take them out (fork) and let it go.
    fn release_child(&mut self, child: Pid, fork: bool) {
        if fork {
            self.restore_in(child);
        }
        // vfork children share our memory and exec (or exit) before running traced code.
        let _ = ptrace::detach(child, None);
    }

    /// Puts the original bytes under our int3s back in a forked child's (copied) memory. A
    /// step in progress at fork time left a lifted byte in the parent only; nothing to do.
    fn restore_in(&self, child: Pid) {
        if let Ok(child_mem) = ProcessMemory::open(child) {
            self.unpatch_in(&child_mem);
            for (addr, bp) in &self.breakpoints {
                if bp.inserted {
                    let _ = child_mem.write(*addr, &[bp.original]);
                }
            }
        }
    }

    /// After a trap of ours in `tid`: the program's own SIGTRAP handler, which the trap may
    /// have taken away, back in place (see `sigtrap.rs`). Needs the scratch slot; while
    /// another thread's displaced step holds it, the check waits for a later trap.
    fn keep_program_sigtrap(&mut self, tid: Pid) {
        if self.scratch_owner.is_none() {
            self.sigtrap.after_trap(tid, &self.mem, self.scratch);
        }
    }

    fn on_trap(&mut self, tid: Pid) -> Result<(), RecordError> {
        if let Some(step) = self.threads.get_mut(&tid).and_then(|t| t.stepping.take()) {
            self.end_step(tid, step, false)?;
            self.keep_program_sigtrap(tid);
            let pending = self
                .threads
                .get_mut(&tid)
                .and_then(|t| t.pending_signal.take());
            self.resume(tid, pending)?;
            return self.next_waiting();
        }
        // Whatever the caller wrote through a returned `&mut`, it wrote before this stop.
        self.release_held(tid, true);
        let mut regs = match get_regs(tid) {
            Ok(r) => r,
            // The thread vanished (killed meanwhile): its exit status follows.
            Err(_) => return Ok(()),
        };
        self.learn_thread_pointer(tid, regs.fs_base);
        let pc = regs.rip.wrapping_sub(1);
        let line = match self.breakpoints.get(&pc) {
            Some(bp) => bp.line,
            None => self
                .lines
                .removed
                .get(&pc)
                .copied()
                .filter(|_| int3_trap(tid)),
        };
        if let Some(line) = line {
            self.line_reached(tid, pc, line)?;
        }
        let Some(bp) = self.breakpoints.get(&pc) else {
            if line.is_some() || (self.removed.contains(&pc) && int3_trap(tid)) {
                // An int3 of a line another thread reached and took out meanwhile, or of a
                // breakpoint another thread's stop took out meanwhile.
                regs.rip = pc;
                set_regs(tid, regs)?;
                return self.resume(tid, None);
            }
            // Not ours: the program's own SIGTRAP, for its handler (whose action carve keeps).
            if self.scratch_owner.is_none() {
                self.sigtrap.learn(tid, &self.mem, self.scratch);
            }
            return self.resume(tid, Some(Signal::SIGTRAP));
        };
        let (entry, returns, panic, inserted) = (bp.entry, bp.returns, bp.panic, bp.inserted);
        let message_hook = bp.panic_message;
        let source = bp.source.clone();
        let path_read = bp.path_read;
        let write_hook = bp.writes > 0 && bp.write.is_some();
        if returns == 0 && bp.retained {
            // Reached with no frame returning here: this site is not worth a stop any more.
            if let Some(bp) = self.breakpoints.get_mut(&pc) {
                bp.retained = false;
            }
        }
        self.keep_program_sigtrap(tid);
        if !inserted {
            // Another thread removed it while this one was already trapping on it.
            regs.rip = pc;
            set_regs(tid, regs)?;
            return self.resume(tid, None);
        }
        regs.rip = pc;
        if write_hook {
            self.on_write(tid, pc, &regs);
        }
        if let Some(kind) = message_hook {
            let message = match kind {
                MessageAt::FmtArguments => panic_message(regs.rdi, regs.rsi, &self.mem),
                MessageAt::Str => {
                    let mut buf = vec![0u8; (regs.rsi as usize).min(4096)];
                    self.mem
                        .read(regs.rdi, &mut buf)
                        .then(|| String::from_utf8_lossy(&buf).into_owned())
                }
            };
            if let Some(t) = self.threads.get_mut(&tid) {
                for f in &mut t.stack {
                    f.panic_seen = true;
                    if f.panic_message.is_none() {
                        f.panic_message = message.clone();
                    }
                }
            }
        }
        if panic {
            if let Some(t) = self.threads.get_mut(&tid) {
                for f in &mut t.stack {
                    f.panic_seen = true;
                }
            }
        }
        if let Some(label) = source {
            // Charged to the innermost recorded call: the code the test would run for it.
            let frame = self
                .threads
                .get_mut(&tid)
                .and_then(|t| t.stack.iter_mut().rev().find(|f| f.call.is_some()));
            if let Some(f) = frame {
                if !f.touches.contains(&label) {
                    f.touches.push(label);
                }
            }
        }
        if let Some(read) = path_read {
            self.on_path_read(tid, read, &regs);
        }
        if returns > 0 {
            self.on_return(tid, pc, &regs)?;
        }
        if let Some(index) = entry {
            let at_ns = self.now_ns();
            self.on_entry(tid, index, &regs, None, at_ns)?;
        }
        if let Some(forced) = self.forced.remove(&tid) {
            set_regs(tid, forced)?;
            return self.resume(tid, None);
        }
        self.step_over(tid, pc, regs)
    }

    /// A file-system read by path at its first instruction: the path is read from the
    /// registers `read` names and what is there now is stored for the innermost recorded call
    /// (the one its source, if any, is charged to). A path that cannot be read is stored as
    /// such (`Found::NotRead`): the call then keeps reading the world.
    fn on_path_read(
        &mut self,
        tid: Pid,
        read: crate::sources::PathRead,
        regs: &libc::user_regs_struct,
    ) {
        /// Longer than Linux's `PATH_MAX`: not a path std would pass on.
        const PATH_MAX: u64 = 4096;
        let call = self.threads.get(&tid).and_then(Thread::innermost_call);
        let Some(call) = call else {
            return;
        };
        let (ptr, len) = (read.ptr.value(regs), read.len.value(regs));
        let mut bytes = vec![0u8; len.min(PATH_MAX) as usize];
        let (path, found) = if len > PATH_MAX || !self.mem.read(ptr, &mut bytes) {
            let reason = format!("the path ({len} bytes at {ptr:#x}) could not be read");
            (String::new(), carve_storage::Found::NotRead { reason })
        } else {
            let found = crate::snapshot::snapshot(read.op, &bytes);
            (String::from_utf8_lossy(&bytes).into_owned(), found)
        };
        self.sink
            .record(TraceEvent::FileRead(carve_storage::FileRead {
                call,
                op: read.op.to_string(),
                path,
                found,
            }));
    }

    /// Gets `tid` (stopped with rip at the breakpoint `addr`) past the instruction under it and
    /// resumes it, without taking the breakpoint out of memory where that can be avoided.
    fn step_over(
        &mut self,
        tid: Pid,
        addr: u64,
        mut regs: libc::user_regs_struct,
    ) -> Result<(), RecordError> {
        regs.rip = addr;
        if !self.breakpoints.get(&addr).is_some_and(|b| b.wanted()) {
            // No longer needed by anyone: restore the instruction for good.
            self.lift(addr)?;
            if self.breakpoints.get(&addr).is_none_or(|b| b.removable()) {
                self.breakpoints.remove(&addr);
                self.removed.insert(addr);
            }
            set_regs(tid, regs)?;
            return self.resume(tid, None);
        }
        match self.plan_for(addr)? {
            StepPlan::Jump { target } => match self.target(&regs, target) {
                Some(dest) => regs.rip = dest,
                None => return self.step_in_place(tid, addr, regs),
            },
            StepPlan::Call { target, return_to } => {
                let Some(dest) = self.target(&regs, target) else {
                    return self.step_in_place(tid, addr, regs);
                };
                regs.rsp -= 8;
                self.mem.write(regs.rsp, &return_to.to_le_bytes())?;
                regs.rip = dest;
            }
            StepPlan::Branch {
                condition,
                target,
                next,
            } => {
                regs.rip = if taken(condition, regs.eflags) {
                    target
                } else {
                    next
                };
            }
            StepPlan::Return { pop } => {
                let mut ra = [0u8; 8];
                if !self.mem.read(regs.rsp, &mut ra) {
                    return self.step_in_place(tid, addr, regs);
                }
                regs.rip = u64::from_le_bytes(ra);
                regs.rsp += 8 + pop;
            }
            StepPlan::OutOfLine { code, len } => {
                if self.scratch_owner.is_some() {
                    // One displaced step at a time: this thread waits, stopped, for its turn.
                    set_regs(tid, regs)?;
                    self.waiting.push_back((tid, addr));
                    return Ok(());
                }
                if self.scratch_holds != Some(addr) {
                    self.mem.write(self.scratch, &code)?;
                    self.scratch_holds = Some(addr);
                }
                self.scratch_owner = Some(tid);
                regs.rip = self.scratch;
                set_regs(tid, regs)?;
                if let Some(t) = self.threads.get_mut(&tid) {
                    t.stepping = Some(Step::Displaced { addr, len });
                }
                return self.single_step(tid);
            }
            StepPlan::Emulate { op, next } => {
                if self.emulate(&mut regs, op).is_none() {
                    return self.step_in_place(tid, addr, regs);
                }
                regs.rip = next;
            }
            StepPlan::InPlace => return self.step_in_place(tid, addr, regs),
        }
        set_regs(tid, regs)?;
        self.resume(tid, None)
    }

    /// Carries out a `mov` / `lea` on `regs` and the process's memory; `None` when an operand
    /// cannot be read or written (nothing is changed then).
    fn emulate(&self, regs: &mut libc::user_regs_struct, op: Emulated) -> Option<()> {
        match op {
            Emulated::Lea { dst, mem } => {
                let a = mem.address(regs)?;
                set_gpr(regs, dst, a).then_some(())
            }
            Emulated::Push { src } => {
                let value = gpr(regs, src)?;
                let top = regs.rsp.wrapping_sub(8);
                self.mem.write(top, &value.to_le_bytes()).ok()?;
                regs.rsp = top;
                Some(())
            }
            Emulated::Mov { dst, src, size } => {
                let value = self.operand(regs, src, size)?;
                self.store(regs, dst, value, size)
            }
            Emulated::Extend {
                dst,
                src,
                src_size,
                dst_size,
                signed,
            } => {
                let raw = self.operand(regs, src, src_size)?;
                let value = crate::stepping::extend(raw, src_size, signed);
                self.store(regs, Operand::Reg(dst), value, dst_size)
            }
            Emulated::Alu {
                op,
                dst,
                src,
                src2,
                size,
            } => {
                let (a, b) = match src2 {
                    Some(s2) => (
                        self.operand(regs, src, size)?,
                        self.operand(regs, s2, size)?,
                    ),
                    None => (
                        self.operand(regs, dst, size)?,
                        self.operand(regs, src, size)?,
                    ),
                };
                let (result, flags) = alu(op, a, b, size, regs.eflags);
                if op.writes_back() {
                    self.store(regs, dst, result, size)?;
                }
                regs.eflags = flags;
                Some(())
            }
        }
    }

    /// The value of an operand, `size` bytes, zero-extended.
    fn operand(&self, regs: &libc::user_regs_struct, op: Operand, size: u8) -> Option<u64> {
        let n = size as usize;
        let v = match op {
            Operand::Reg(r) if size < 4 => gpr(regs, r)? & ((1u64 << (8 * size)) - 1),
            Operand::Reg(r) => gpr(regs, r)?,
            Operand::Imm(v) => v,
            Operand::Mem(m) => {
                let mut b = [0u8; 8];
                if !self.mem.read(m.address(regs)?, &mut b[..n]) {
                    return None;
                }
                u64::from_le_bytes(b)
            }
        };
        Some(if size == 4 { v & 0xffff_ffff } else { v })
    }

    /// Writes `size` bytes of `value` to a register (a 4-byte write zero-extends) or memory.
    fn store(
        &self,
        regs: &mut libc::user_regs_struct,
        dst: Operand,
        value: u64,
        size: u8,
    ) -> Option<()> {
        let value = if size == 4 {
            value & 0xffff_ffff
        } else {
            value
        };
        match dst {
            Operand::Reg(r) => set_gpr(regs, r, value).then_some(()),
            Operand::Mem(m) => self
                .mem
                .write(m.address(regs)?, &value.to_le_bytes()[..size as usize])
                .ok(),
            Operand::Imm(_) => None,
        }
    }

    /// The classic step-over: lift, single-step, re-insert. Other threads can pass the lifted
    /// breakpoint unseen meanwhile, so it is only used for instructions that cannot be moved.
    fn step_in_place(
        &mut self,
        tid: Pid,
        addr: u64,
        mut regs: libc::user_regs_struct,
    ) -> Result<(), RecordError> {
        regs.rip = addr;
        set_regs(tid, regs)?;
        self.lift(addr)?;
        if let Some(t) = self.threads.get_mut(&tid) {
            t.stepping = Some(Step::InPlace { addr });
        }
        self.single_step(tid)
    }

    /// The step plan of the breakpoint at `addr`, decoding its original instruction once.
    fn plan_for(&mut self, addr: u64) -> Result<StepPlan, RecordError> {
        if let Some(p) = self.breakpoints.get(&addr).and_then(|b| b.plan.clone()) {
            return Ok(p);
        }
        let mut bytes = [0u8; 16];
        if !self.mem.read(addr, &mut bytes) {
            return Ok(StepPlan::InPlace);
        }
        // Our own int3 bytes hide the original instruction bytes.
        for (i, byte) in bytes.iter_mut().enumerate() {
            if let Some(bp) = self.breakpoints.get(&(addr + i as u64)) {
                if bp.inserted {
                    *byte = bp.original;
                }
            }
        }
        let p = plan(&bytes, addr, self.scratch);
        if let Some(bp) = self.breakpoints.get_mut(&addr) {
            bp.plan = Some(p.clone());
        }
        Ok(p)
    }

    fn target(&self, regs: &libc::user_regs_struct, target: Target) -> Option<u64> {
        match target {
            Target::Direct(a) => Some(a),
            Target::Register(r) => gpr(regs, r),
            Target::Indirect(at) => {
                let mut b = [0u8; 8];
                self.mem.read(at, &mut b).then(|| u64::from_le_bytes(b))
            }
        }
    }

    /// A step finished (or `faulted` inside the instruction): put things back in order.
    fn end_step(&mut self, tid: Pid, step: Step, faulted: bool) -> Result<(), RecordError> {
        match step {
            Step::InPlace { addr } => self.reinsert_if_wanted(addr),
            Step::Displaced { addr, len } => {
                if self.scratch_owner == Some(tid) {
                    self.scratch_owner = None;
                }
                let mut regs = get_regs(tid)?;
                if faulted {
                    // Report the fault at the real instruction, not in the scratch slot.
                    regs.rip = addr;
                    set_regs(tid, regs)
                } else if regs.rip == self.scratch + len {
                    regs.rip = addr + len;
                    set_regs(tid, regs)
                } else {
                    Ok(())
                }
            }
        }
    }

    /// Starts the displaced step of the next thread waiting for the scratch slot.
    fn next_waiting(&mut self) -> Result<(), RecordError> {
        while self.scratch_owner.is_none() {
            let Some((tid, addr)) = self.waiting.pop_front() else {
                return Ok(());
            };
            if !self.threads.contains_key(&tid) {
                continue;
            }
            let Ok(regs) = get_regs(tid) else {
                continue;
            };
            self.step_over(tid, addr, regs)?;
        }
        Ok(())
    }

    fn reinsert_if_wanted(&mut self, addr: u64) -> Result<(), RecordError> {
        match self.breakpoints.get(&addr) {
            Some(b) if b.wanted() => self.insert(addr),
            Some(b) if !b.removable() => Ok(()),
            _ => {
                self.breakpoints.remove(&addr);
                self.removed.insert(addr);
                Ok(())
            }
        }
    }

    /// A call starts: at its entry breakpoint (`captured` is `None`: the live process), or
    /// from an in-process entry record (`regs` from the record, its regions as memory).
    fn on_entry(
        &mut self,
        tid: Pid,
        index: usize,
        regs: &libc::user_regs_struct,
        captured: Option<&dyn Memory>,
        at_ns: Option<u64>,
    ) -> Result<(), RecordError> {
        let in_process = captured.is_some();
        let cfa = match self.functions[index].cfa {
            Some(rule) => dwarf_register(regs, rule.register).map(|v| rule.cfa(v)),
            None => None,
        };
        let Some(cfa) = cfa else {
            return Ok(()); // no way to find the return address: cannot follow this call
        };
        let mut ra = [0u8; 8];
        if !self.memory(captured).read(cfa.wrapping_sub(8), &mut ra) {
            return Ok(());
        }
        let return_addr = u64::from_le_bytes(ra);

        // The entry breakpoint sits after the prologue, where a loop that opens the function's
        // body (`while let Some(c) = self.peek()`) jumps back to. Reaching it again in a live
        // frame (same function, same CFA, same return address, no panic since) is that jump,
        // not a call: a new call cannot have this CFA while the frame still occupies it.
        let looped = self
            .threads
            .get(&tid)
            .and_then(|t| t.stack.last())
            .is_some_and(|f| {
                f.function == index && f.cfa == cfa && f.return_addr == return_addr && !f.panic_seen
            });
        if looped {
            return Ok(());
        }

        // Frames whose CFA is not above the new frame's are gone (unwound or longjmp'd over).
        self.pop_abandoned(tid, |frame_cfa| frame_cfa <= cfa);

        let parent = self.threads.get(&tid).and_then(|t| t.stack.last());
        let level = if self.functions[index].matched {
            Some(0)
        } else if self.functions[index].passed_closure {
            parent.and_then(|p| p.level)
        } else {
            parent
                .and_then(|p| p.level)
                .map(|l| l + 1)
                .filter(|l| *l <= self.depth)
        };
        if level.is_none() {
            // Too far from any filtered call to record, but what it calls must not look like
            // a direct callee of a recorded call: keep a silent frame for it.
            self.threads.entry(tid).or_default().push(Frame {
                call: None,
                level: None,
                function: index,
                cfa,
                return_addr,
                panic_seen: false,
                panic_message: None,
                touches: Vec::new(),
                effects: Vec::new(),
                hidden_return: None,
                capture: None,
                in_process,
                innermost: None,
                recorded: 0,
            });
            let bp = self.breakpoints.entry(return_addr).or_default();
            bp.returns += 1;
            bp.retained = true;
            return self.insert(return_addr);
        }

        let live = crate::process::PageCache::new(&self.mem);
        let mem = captured.unwrap_or(&live);
        let machine = Stopped { regs, mem };
        let file_pc = self.bias.unrelocate(RuntimeAddr(regs.rip)).0;
        let args = decode_args(
            &self.decoder_over(mem),
            &self.functions[index].detail,
            &machine,
            file_pc,
            cfa,
        );

        let effects = self.effect_targets(index, &args, |i, size| {
            param_bytes(
                mem,
                &self.functions[index].detail,
                &machine,
                (file_pc, cfa),
                i,
                size,
            )
        });
        let capture = self.capture_for(index, &args)?;
        let (objects, created) = self.objects.of_args(&args);
        for object in created {
            self.sink.record(TraceEvent::ObjectCreated(object));
        }
        let hidden_return = match self.functions[index].detail.hidden_return {
            Some(EntryRdi::Register(r)) => dwarf_register(regs, r),
            Some(EntryRdi::Stack(at)) => {
                let mut word = [0u8; 8];
                let slot = regs.rsp.wrapping_add_signed(at);
                self.memory(captured)
                    .read(slot, &mut word)
                    .then(|| u64::from_le_bytes(word))
            }
            None => None,
        };
        self.name_thread(tid);
        let call = CallId(self.next_call);
        self.next_call += 1;
        self.calls_recorded += 1;
        let thread = self.threads.entry(tid).or_default();
        let parent = thread.innermost_call();
        let depth = thread.recorded_depth();
        thread.push(Frame {
            call: Some(call),
            level,
            function: index,
            cfa,
            return_addr,
            panic_seen: false,
            panic_message: None,
            touches: Vec::new(),
            effects,
            hidden_return,
            capture,
            in_process,
            innermost: None,
            recorded: 0,
        });
        self.sink.record(TraceEvent::CallStarted(CallStart {
            call,
            parent,
            function: self.functions[index].id,
            thread: tid.as_raw(),
            depth,
            args,
            objects,
            at_ns,
        }));

        if in_process {
            self.functions[index].calls += 1;
            return Ok(());
        }
        if let Some((path, value)) = self.functions[index].forced_return.clone() {
            return self.force_return(tid, index, regs, (cfa, return_addr), (&path, &value));
        }
        let bp = self.breakpoints.entry(return_addr).or_default();
        bp.returns += 1;
        bp.retained = true;
        self.insert(return_addr)?;

        let f = &mut self.functions[index];
        f.calls += 1;
        if f.max_calls.is_some_and(|m| f.calls >= m) {
            // Enough calls of this one: let the rest run at native speed.
            let addr = self.bias.relocate(f.detail.breakpoint).0;
            if let Some(bp) = self.breakpoints.get_mut(&addr) {
                bp.entry = None;
            }
        }
        Ok(())
    }

    fn on_return(
        &mut self,
        tid: Pid,
        pc: u64,
        regs: &libc::user_regs_struct,
    ) -> Result<(), RecordError> {
        let rsp = regs.rsp;
        // After `ret`, rsp is the returning frame's CFA; frames below it were abandoned.
        self.pop_abandoned(tid, |frame_cfa| frame_cfa < rsp);
        let matches = self
            .threads
            .get(&tid)
            .and_then(|t| t.stack.last())
            .is_some_and(|f| f.cfa == rsp && f.return_addr == pc && !f.in_process);
        if !matches {
            return Ok(()); // this address was reached some other way
        }
        let Some(frame) = self.threads.get_mut(&tid).and_then(|t| t.stack.pop()) else {
            return Ok(());
        };
        if !frame.in_process {
            self.release_return(frame.return_addr);
        }
        let Some(call) = frame.call else {
            return Ok(()); // a silent frame (--depth): nothing to record
        };
        let float_return = self.functions[frame.function].float_return;
        let return_regs = || {
            let (xmm0, xmm1) = if float_return {
                get_xmm01(tid).unwrap_or((0, 0))
            } else {
                (0, 0)
            };
            ReturnRegs {
                rax: regs.rax,
                rdx: regs.rdx,
                xmm0,
                xmm1,
                hidden: frame.hidden_return,
            }
        };
        let ret = self.returned(call, frame.function, None, return_regs);
        let live = crate::process::PageCache::new(&self.mem);
        let decoder = self.decoder_over(&live);
        let mut after = frame.effects_after(&decoder);
        if let Some(capture) = &frame.capture {
            if !capture.lost {
                after.push(Arg {
                    name: carve_storage::WRITTEN_EFFECT.to_string(),
                    value: Value::Str {
                        ty: "&str".to_string(),
                        value: capture.text.clone(),
                        truncated: capture.truncated,
                    },
                });
            }
            self.release_capture(capture.sink.clone())?;
        }
        let end = CallEnd {
            call,
            outcome: Outcome::Returned,
            ret,
            after,
            touches: labels(&frame.touches),
            at_ns: self.now_ns(),
        };
        let outermost = self
            .threads
            .get(&tid)
            .is_some_and(|t| t.recorded_depth() == 0);
        let held = self.functions[frame.function]
            .detail
            .return_type
            .and_then(|ty| self.mut_scalar_pointee(ty, end.ret.as_ref()?))
            .filter(|_| outermost);
        match (held, self.threads.get_mut(&tid)) {
            (Some((pointee, addr)), Some(thread)) => {
                thread.held = Some(HeldEnd { end, pointee, addr });
            }
            _ => self.sink.record(TraceEvent::CallEnded(end)),
        }
        Ok(())
    }

    /// The pointee type and address of a returned `&mut` to a scalar.
    fn mut_scalar_pointee(&self, ty: TypeId, ret: &Value) -> Option<(TypeId, u64)> {
        let Value::Ref {
            ty: written,
            addr,
            target,
        } = ret
        else {
            return None;
        };
        let scalar = matches!(
            target.as_ref(),
            Value::Int { .. }
                | Value::Uint { .. }
                | Value::Float { .. }
                | Value::Bool { .. }
                | Value::Char { .. }
        );
        let TypeKind::Pointer {
            pointee: Some(pointee),
        } = self.types.get(ty)?.kind
        else {
            return None;
        };
        (scalar && written.starts_with("&mut ")).then_some((pointee, *addr))
    }

    /// Records the held end of `tid`'s last outermost call, if any: with the value behind the
    /// returned reference when `reread` (the thread is stopped and its memory is the program's),
    /// without it otherwise.
    fn release_held(&mut self, tid: Pid, reread: bool) {
        let Some(held) = self.threads.get_mut(&tid).and_then(|t| t.held.take()) else {
            return;
        };
        self.emit_held(held, reread);
    }

    fn emit_held(&mut self, held: HeldEnd, reread: bool) {
        let HeldEnd {
            mut end,
            pointee,
            addr,
        } = held;
        if reread {
            let value = self.decoder().at(pointee, addr);
            end.after.push(Arg {
                name: carve_storage::RESULT_EFFECT.to_string(),
                value,
            });
        }
        self.sink.record(TraceEvent::CallEnded(end));
    }

    /// Makes the call that just started return `value` at once, without running its body: the
    /// frame is popped as `ret` would (rsp = CFA, rip = return address, rbp restored when the
    /// frame uses it) and the value goes where the ABI returns integers (rax). The call is
    /// recorded as returning that value.
    /// Makes the call that just started return the value with bytes `value` at once, without
    /// running its body: the frame is popped as `ret` would (rsp = CFA, rip = return address,
    /// rbp restored when the frame uses it) and the value goes where the ABI returns it
    /// (registers, or the caller's memory at the hidden return pointer). The call is recorded
    /// as returning that value.
    fn force_return(
        &mut self,
        tid: Pid,
        index: usize,
        regs: &libc::user_regs_struct,
        (cfa, return_addr): (u64, u64),
        (path, value): (&str, &[u8]),
    ) -> Result<(), RecordError> {
        let Some(frame) = self.threads.get_mut(&tid).and_then(|t| t.stack.pop()) else {
            return Ok(());
        };
        let mut forced = *regs;
        forced.rsp = cfa;
        forced.rip = return_addr;
        if self.functions[index].cfa.is_some_and(|r| r.register == 6) {
            // An rbp-based frame: the caller's rbp was pushed just below the return address.
            let mut saved = [0u8; 8];
            if self.mem.read(cfa - 16, &mut saved) {
                forced.rbp = u64::from_le_bytes(saved);
            }
        }
        let ret = match self.functions[index].detail.return_type {
            None => None,
            Some(ty) => {
                let place =
                    place_return(self.types, ty, value, frame.hidden_return).map_err(|reason| {
                        RecordError::CannotForceValue {
                            function: path.to_string(),
                            value: "its extreme value".into(),
                            reason,
                        }
                    })?;
                if let Some(rax) = place.rax {
                    forced.rax = rax;
                }
                if let Some(rdx) = place.rdx {
                    forced.rdx = rdx;
                }
                if place.xmm0.is_some() || place.xmm1.is_some() {
                    set_xmm01(tid, place.xmm0, place.xmm1)?;
                }
                if let Some((addr, bytes)) = &place.memory {
                    self.mem.write(*addr, bytes)?;
                }
                Some(self.decoder().bytes(ty, value))
            }
        };
        if let Some(call) = frame.call {
            self.sink.record(TraceEvent::CallEnded(CallEnd {
                call,
                outcome: Outcome::Returned,
                ret,
                after: Vec::new(),
                touches: Vec::new(),
                at_ns: self.now_ns(),
            }));
        }
        // The post-prologue instruction never runs: no step over the breakpoint is needed.
        self.forced.insert(tid, forced);
        Ok(())
    }

    /// A formatting call's capture of what it writes (see `fmt_writes.rs`): with the write
    /// hooks of its formatter's sink placed. `None` when the function takes no `Formatter`, the
    /// sink is a `String` the decoder reads (back after the call too), or the vtable does not name
    /// `core::fmt::Write` methods the ELF symbols know (the text is then not recorded).
    fn capture_for(&mut self, index: usize, args: &[Arg]) -> Result<Option<Capture>, RecordError> {
        let (Some(methods), Some((param, buf_offset))) =
            (self.write_methods, self.functions[index].formatter)
        else {
            return Ok(None);
        };
        let Some(Value::Ref { addr, .. }) = args.get(param).map(|a| &a.value) else {
            return Ok(None);
        };
        let word = |at: u64| {
            let mut b = [0u8; 8];
            self.mem.read(at, &mut b).then(|| u64::from_le_bytes(b))
        };
        let buf = addr.wrapping_add(buf_offset);
        let (Some(data), Some(vtable)) = (word(buf), word(buf.wrapping_add(8))) else {
            return Ok(None);
        };
        let slot = vtable.wrapping_add(WriteMethods::write_str_slot());
        let (Some(write_str), Some(write_char)) = (word(slot), word(slot.wrapping_add(8))) else {
            return Ok(None);
        };
        let method = |at: u64| methods.get(self.bias.unrelocate(RuntimeAddr(at)));
        let (Some(s), Some(c)) = (method(write_str), method(write_char)) else {
            return Ok(None);
        };
        if s.kind != WriteKind::Str || c.kind != WriteKind::Char {
            return Ok(None);
        }
        if s.string && crate::fmt_writes::reads_string_buffer(&args[param].value) {
            // The `String` is read back after the call: what it gained is the text.
            return Ok(None);
        }
        let sink = Sink {
            data,
            write_str,
            write_char,
            write_char_code: (write_char, write_char.wrapping_add(c.size)),
        };
        for (at, kind) in [(write_str, WriteKind::Str), (write_char, WriteKind::Char)] {
            let bp = self.breakpoints.entry(at).or_default();
            bp.write = Some(kind);
            bp.writes += 1;
            self.insert(at)?;
        }
        Ok(Some(Capture::new(sink)))
    }

    /// A call capturing through `sink` ended: its write hooks are lifted once no open call
    /// uses them (the entries stay: see [`Breakpoint::write`]).
    fn release_capture(&mut self, sink: Sink) -> Result<(), RecordError> {
        for at in [sink.write_str, sink.write_char] {
            let Some(bp) = self.breakpoints.get_mut(&at) else {
                continue;
            };
            bp.writes = bp.writes.saturating_sub(1);
            if !bp.wanted() {
                let stepping_here = self
                    .threads
                    .values()
                    .any(|t| matches!(t.stepping, Some(Step::InPlace { addr }) if addr == at));
                if !stepping_here {
                    self.lift(at)?;
                }
            }
        }
        Ok(())
    }

    /// `tid` stopped at the first instruction of a `core::fmt::Write` method: what it writes
    /// goes to every open call of this thread capturing from that sink.
    fn on_write(&mut self, tid: Pid, pc: u64, regs: &libc::user_regs_struct) {
        let mut ra = [0u8; 8];
        let return_to = if self.mem.read(regs.rsp, &mut ra) {
            u64::from_le_bytes(ra)
        } else {
            0
        };
        let max = self.limits.max_string;
        let Some(thread) = self.threads.get_mut(&tid) else {
            return;
        };
        let mut written: Option<Option<String>> = None;
        for frame in thread.stack.iter_mut() {
            let Some(capture) = frame.capture.as_mut() else {
                continue;
            };
            let Some(kind) = capture.takes(pc, regs.rdi, return_to) else {
                continue;
            };
            let text = written.get_or_insert_with(|| match kind {
                WriteKind::Char => char_arg(regs.rsi).map(String::from),
                WriteKind::Str => {
                    // Read no more than the text could still keep (plus a char to cut at).
                    let len = (regs.rdx as usize).min(max + 4);
                    let mut bytes = vec![0u8; len];
                    if !self.mem.read(regs.rsi, &mut bytes) {
                        None
                    } else if len < regs.rdx as usize {
                        // Longer than any capture keeps (which `push` marks): the read stops
                        // inside the text, so it is cut at the last whole char.
                        let valid = match std::str::from_utf8(&bytes) {
                            Ok(s) => s.len(),
                            Err(e) => e.valid_up_to(),
                        };
                        bytes.truncate(valid);
                        String::from_utf8(bytes).ok()
                    } else {
                        String::from_utf8(bytes).ok()
                    }
                }
            });
            capture.push(text.as_deref(), max);
        }
    }

    /// The memory a stop reads: the live process's, or a record's copied regions.
    fn memory<'m>(&'m self, captured: Option<&'m dyn Memory>) -> &'m dyn Memory {
        match captured {
            Some(c) => c,
            None => &self.mem,
        }
    }

    /// The value `function` returned, as stored: decoded from the return registers `regs`
    /// gives (read only when the function returns a value) over `mem` (the regions an
    /// in-process record copied; `None`: the stopped process); the object it made, when the
    /// function constructs one, recorded first; `()` stored as no value.
    fn returned(
        &mut self,
        call: CallId,
        function: usize,
        mem: Option<&dyn Memory>,
        regs: impl FnOnce() -> ReturnRegs,
    ) -> Option<Value> {
        let detail = &self.functions[function].detail;
        let (ty, rust_abi) = (detail.return_type?, detail.rust_abi);
        let rr = regs();
        let (value, at) = match mem {
            Some(mem) => decode_return(&self.decoder_over(mem), ty, &rr, rust_abi),
            None => {
                let live = crate::process::PageCache::new(&self.mem);
                decode_return(&self.decoder_over(&live), ty, &rr, rust_abi)
            }
        };
        if let Some(type_path) = &self.functions[function].constructs {
            if let Some(object) = self.objects.constructed(call, type_path, &value, at) {
                self.sink.record(TraceEvent::ObjectCreated(object));
            }
        }
        (!matches!(value, Value::Unit)).then_some(value)
    }

    /// Reads values from `mem` with the recording's limits.
    fn decoder_over<'m>(&'m self, mem: &'m dyn Memory) -> Decoder<'m> {
        Decoder {
            types: self.types,
            mem,
            limits: self.limits,
        }
    }

    /// Reads values of the traced process with the recording's limits.
    fn decoder(&self) -> Decoder<'_> {
        Decoder {
            types: self.types,
            mem: &self.mem,
            limits: self.limits,
        }
    }

    /// The arguments whose pointee a call may change and a test may check afterwards: `self`
    /// taken by reference, `&mut` references, and `&mut [T]` slices, whose pointer and length
    /// `fat(index, size)` reads.
    fn effect_targets(
        &self,
        index: usize,
        args: &[Arg],
        fat: impl Fn(usize, usize) -> Option<Vec<u8>>,
    ) -> Vec<Effect> {
        let params = &self.functions[index].detail.params;
        params
            .iter()
            .zip(args)
            .enumerate()
            .filter_map(|(i, (p, a))| {
                let ty_id = p.ty?;
                let ty = self.types.get(ty_id)?;
                if crate::capture::is_mut_slice(self.types, ty_id) {
                    let at = EffectAt::Slice(fat(i, ty.size as usize)?);
                    return Some(Effect {
                        name: p.name.clone(),
                        ty: ty_id,
                        at,
                    });
                }
                let pointee = match ty.kind {
                    TypeKind::Pointer { pointee } => pointee?,
                    _ => return None,
                };
                let wanted =
                    ty.name.starts_with("&mut ") || (p.name == "self" && ty.name.starts_with('&'));
                let Value::Ref { addr, .. } = &a.value else {
                    return None;
                };
                (wanted && self.types.get(pointee)?.size > 0).then(|| Effect {
                    name: p.name.clone(),
                    ty: pointee,
                    at: EffectAt::Pointee(*addr),
                })
            })
            .collect()
    }

    fn release_return(&mut self, addr: u64) {
        if let Some(bp) = self.breakpoints.get_mut(&addr) {
            bp.returns = bp.returns.saturating_sub(1);
        }
    }

    fn pop_abandoned(&mut self, tid: Pid, gone: impl Fn(u64) -> bool) {
        let mut popped = Vec::new();
        if let Some(t) = self.threads.get_mut(&tid) {
            while t.stack.last().is_some_and(|f| gone(f.cfa)) {
                popped.extend(t.stack.pop());
            }
        }
        for frame in popped {
            if !frame.in_process {
                self.release_return(frame.return_addr);
            }
            self.end_abandoned(frame, Outcome::Unwound);
        }
    }

    fn end_abandoned(&mut self, frame: Frame, default: Outcome) {
        if let Some(capture) = &frame.capture {
            // A write hook left in costs stops, never a wrong text: an error here is ignored.
            let _ = self.release_capture(capture.sink.clone());
        }
        let Some(call) = frame.call else {
            return;
        };
        let outcome = if frame.panic_seen {
            Outcome::Panicked {
                message: frame.panic_message,
            }
        } else {
            default
        };
        self.sink.record(TraceEvent::CallEnded(CallEnd {
            call,
            outcome,
            ret: None,
            after: Vec::new(),
            touches: labels(&frame.touches),
            // Seen to be gone only now: when it ended is not known.
            at_ns: None,
        }));
    }

    fn close_frames(&mut self, mut stack: Vec<Frame>, outcome: Outcome) {
        while let Some(frame) = stack.pop() {
            self.end_abandoned(frame, outcome.clone());
        }
    }

    fn close_all(&mut self, outcome: Outcome) {
        let tids: Vec<Pid> = self.threads.keys().copied().collect();
        for tid in tids {
            self.release_held(tid, false);
            let stack = self
                .threads
                .get_mut(&tid)
                .map(|t| std::mem::take(&mut t.stack))
                .unwrap_or_default();
            self.close_frames(stack, outcome.clone());
        }
    }

    fn resume(&self, tid: Pid, sig: Option<Signal>) -> Result<(), RecordError> {
        crate::process::resume(tid, sig)
    }

    fn single_step(&self, tid: Pid) -> Result<(), RecordError> {
        match ptrace::step(tid, None) {
            Ok(()) | Err(nix::errno::Errno::ESRCH) => Ok(()),
            Err(source) => Err(RecordError::Ptrace {
                op: "SINGLESTEP",
                pid: tid.as_raw(),
                source,
            }),
        }
    }
}

/// Writes `bytes` (original bytes by address) into `pid`'s memory: a forked copy of a process
/// whose int3s were taken out after the fork.
fn restore_bytes(pid: Pid, bytes: &HashMap<u64, u8>) {
    if let Ok(mem) = ProcessMemory::open(pid) {
        for (addr, original) in bytes {
            let _ = mem.write(*addr, &[*original]);
        }
    }
}

/// The thread's SIGTRAP came from an int3 (the kernel's `SI_KERNEL`), not from `kill`.
fn int3_trap(tid: Pid) -> bool {
    ptrace::getsiginfo(tid).is_ok_and(|info| info.si_code == libc::SI_KERNEL)
}

/// Signals raised by the instruction itself: delivering them later would re-run the fault.
/// The next step of [`Tracer::run`]'s loop.
enum Next {
    /// A stop or exit to handle.
    Stop(WaitStatus),
    /// Nothing to handle yet: look again (records were drained, or a wait was cut short).
    Again,
    /// No traced process is left.
    NoneLeft,
}

/// What handling a stop needs from the in-process ring first.
enum RecordsFirst {
    /// Nothing: a clone, a signal, a group stop are served at once, however busy the ring.
    Nothing,
    /// The stopped thread's own records: a breakpoint (its frames nest with the in-process
    /// calls it made), its end (its open calls close), a fork (the child inherits its frames).
    Thread(Pid),
    /// Every record: an `exec` (the image goes), the process's end.
    All,
}

fn is_fault(sig: Signal) -> bool {
    matches!(
        sig,
        Signal::SIGSEGV | Signal::SIGBUS | Signal::SIGILL | Signal::SIGFPE
    )
}

pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tsc_clock_tests {
    use super::TscClock;

    #[test]
    fn a_counter_value_lies_on_the_line_through_the_first_and_the_latest_pairs() {
        let mut clock = TscClock {
            first: (1_000, 500),
            last: (1_000, 500),
        };
        assert_eq!(clock.ns(1_000), None, "no rate before two pairs apart");
        clock.last = (3_000, 1_500); // two ticks a nanosecond
        assert_eq!(clock.ns(1_000), Some(500));
        assert_eq!(clock.ns(2_000), Some(1_000));
        assert_eq!(clock.ns(3_000), Some(1_500));
        assert_eq!(
            clock.ns(3_400),
            Some(1_700),
            "written just after the latest pair"
        );
        clock.last = (5_000, 2_600); // the rate as measured over the whole run now
        assert_eq!(clock.ns(3_000), Some(1_550));
    }

    /// The first records are drained right after the install: the clock must convert them
    /// before any anchor (`main`'s entry got no start time in 1 run of 4 under load).
    #[test]
    fn a_clock_just_started_converts_at_once_where_the_counter_is_the_clocksource() {
        let run = std::time::Instant::now();
        let Some(clock) = TscClock::start(&run) else {
            // Not a `tsc` clocksource: in-process calls get no times there, by design.
            assert_ne!(
                std::fs::read_to_string(TscClock::SOURCE)
                    .unwrap_or_default()
                    .trim(),
                "tsc"
            );
            return;
        };
        let now = clock.ns(super::rdtsc()).expect("a rate from the start");
        let elapsed = run.elapsed().as_nanos() as u64;
        // Within 1 ms of the run's clock read just after.
        assert!(
            now <= elapsed + 1_000_000 && now + 1_000_000 >= elapsed,
            "{now} vs {elapsed}"
        );
    }
}
