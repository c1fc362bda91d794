//! In-process capture (issue 15; design and status in docs/inprocess-capture.md): a selected
//! function's break address (after its prologue) and each of its `ret` sites are patched with
//! a `jmp` to a trampoline carve writes into the program. The trampoline saves every register,
//! runs the function's capture program (`capture.rs`: frame slots and bounded copies behind
//! references) into a variable-length record in a ring in the program's memory, runs the
//! instructions the `jmp` displaced (relocated by iced-x86's block encoder) and jumps back.
//! No ptrace stop per call: the ring's pages are shared with carve (`inject::share`; a program
//! that cannot share them keeps a private ring read with `process_vm_readv`), carve drains it
//! while the program runs, and decodes each record with the same code as the ptrace path, over
//! the record's registers and copied regions.
//!
//! Nothing here changes the stack the unwinder walks: the trampolines are jumped to and jump
//! back, never called, so a panic unwinding through a patched function sees the same frames.
//! (A patched exit is skipped by unwinding; the calls it leaves open are closed by the tracer's
//! panic handling, as today.)
//!
//! `carve record` uses it for every function it can (`--capture auto`, the default, and
//! `inprocess`; the tracer installs it at the exec stop); the experimental `probe` API runs a
//! program this way without the rest of the recorder.

use std::sync::atomic::{AtomicU64, Ordering};

use iced_x86::code_asm::{dword_ptr, ptr, qword_ptr, AsmRegister64, CodeAssembler, CodeLabel};
use iced_x86::code_asm::{eax, edx, esi, xmm0, xmm1};
use iced_x86::code_asm::{
    r10, r11, r12, r13, r14, r15, r8, r9, rax, rbp, rbx, rcx, rdi, rdx, rsi, rsp,
};
use iced_x86::{Decoder, DecoderOptions, FlowControl, Instruction, Mnemonic};
use nix::unistd::Pid;

use crate::capture::{Base, Len, Program, Word};
use crate::error::RecordError;
use crate::inject::{map_near, Region};
use crate::location::Memory;
use crate::process::ProcessMemory;
use crate::types::TypeKind;
use carve_storage::Arg;

/// Bytes of a record's fixed part: commit word, tag, thread pointer, `rsp`, the record's
/// length, the 16 general registers in DWARF order, the low 8 bytes of xmm0 and xmm1, the
/// time stamp counter when the record was written. The copied regions follow, each as
/// address, length and bytes padded to 8.
pub(crate) const RECORD_HEAD: u64 = 24 * 8;
/// Bytes of `jmp rel32`.
pub(crate) const JMP_LEN: usize = 5;
/// `int3`: the byte compilers pad between functions with, and after a patch's `jmp`.
pub(crate) const INT3: u8 = 0xcc;
/// The ring's header (head, tail) takes the first page; records follow.
const HEADER: u64 = 4096;
/// The red zone below `rsp` that a leaf function may use without moving `rsp` (SysV x86-64).
pub(crate) const RED_ZONE: i32 = 128;
/// Room after the ring's end: a record starting near the end runs on into it instead of
/// wrapping, so each record is contiguous for the trampoline's copies and the drainer.
const SLACK: u64 = RECORD_HEAD + crate::capture::MAX_CAPTURE_BYTES;

/// Record kinds (the low byte of a record's tag).
pub(crate) const ENTRY: u8 = 1;
pub(crate) const EXIT: u8 = 2;
/// At an exit site before the epilogue: what the receiver and `&mut` arguments point to.
pub(crate) const STATE: u8 = 3;

/// One record read from the ring, borrowed from the [`Drained`] bytes it was read into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Record<'a> {
    pub function: u32,
    pub kind: u8,
    /// The thread pointer (`fs:0`): one per thread, stable for its life.
    pub thread: u64,
    /// `rsp` when the patched instruction was reached.
    pub rsp: u64,
    /// The general registers by DWARF number (rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8..r15).
    pub regs: [u64; 16],
    /// Low 8 bytes of xmm0, xmm1.
    pub xmm: [u64; 2],
    /// The time stamp counter (`rdtsc`) as the record was written.
    pub tsc: u64,
    /// The copied regions.
    pub memory: Regions<'a>,
}

impl Record<'_> {
    /// rdi, rsi, rdx, rcx, r8, r9.
    pub(crate) fn args(&self) -> [u64; 6] {
        let r = &self.regs;
        [r[5], r[4], r[1], r[2], r[8], r[9]]
    }

    /// Whether `b` (exactly one record's bytes) is a whole record: its regions add up.
    fn is_whole(b: &[u8]) -> bool {
        b.len() >= RECORD_HEAD as usize
            && Regions {
                raw: &b[RECORD_HEAD as usize..],
            }
            .check()
            .is_some()
    }

    /// Parses one record (`b` is exactly its bytes); `None` when its regions do not add up.
    fn parse(b: &[u8]) -> Option<Record<'_>> {
        let word = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap());
        let tag = word(8);
        let mut regs = [0u64; 16];
        for (r, v) in regs.iter_mut().enumerate() {
            *v = word(40 + 8 * r);
        }
        let memory = Regions {
            raw: &b[RECORD_HEAD as usize..],
        };
        memory.check()?;
        Some(Record {
            function: (tag >> 8) as u32,
            kind: tag as u8,
            thread: word(16),
            rsp: word(24),
            regs,
            xmm: [word(168), word(176)],
            tsc: word(184),
            memory,
        })
    }
}

/// A record's copied regions as the trampoline wrote them (address, length, the bytes padded
/// to 8), read in place: no copy, no allocation per record or region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Regions<'a> {
    raw: &'a [u8],
}

impl<'a> Regions<'a> {
    /// Each region's address and bytes, in order; stops at the first that does not fit.
    fn iter(self) -> impl Iterator<Item = (u64, &'a [u8])> {
        let raw = self.raw;
        let mut at = 0usize;
        std::iter::from_fn(move || {
            let head = raw.get(at..at.checked_add(16)?)?;
            let addr = u64::from_le_bytes(head[..8].try_into().unwrap());
            let len = usize::try_from(u64::from_le_bytes(head[8..].try_into().unwrap())).ok()?;
            let start = at + 16;
            let bytes = raw.get(start..start.checked_add(len)?)?;
            at = start + len.div_ceil(8) * 8;
            Some((addr, bytes))
        })
    }

    /// Whether the regions fill the record exactly as [`iter`](Self::iter) walks them.
    fn check(self) -> Option<()> {
        let mut at = 0usize;
        while at < self.raw.len() {
            if at + 16 > self.raw.len() {
                return None;
            }
            let len = usize::try_from(u64::from_le_bytes(
                self.raw[at + 8..at + 16].try_into().unwrap(),
            ))
            .ok()?;
            let start = at + 16;
            if start.checked_add(len)? > self.raw.len() {
                return None;
            }
            at = start + len.div_ceil(8) * 8;
        }
        Some(())
    }

    /// The regions copied out, to keep past the drain (an exit-state record).
    pub(crate) fn to_captured(self) -> crate::capture::Captured {
        crate::capture::Captured {
            regions: self
                .iter()
                .filter(|(_, bytes)| !bytes.is_empty())
                .map(|(addr, bytes)| (addr, bytes.to_vec()))
                .collect(),
        }
    }
}

impl crate::location::Memory for Regions<'_> {
    fn read(&self, addr: u64, buf: &mut [u8]) -> bool {
        if buf.is_empty() {
            return true; // nothing to read cannot be read wrong
        }
        let Some(end) = addr.checked_add(buf.len() as u64) else {
            return false;
        };
        self.iter().any(|(start, bytes)| {
            let ok = start <= addr
                && start
                    .checked_add(bytes.len() as u64)
                    .is_some_and(|region_end| end <= region_end);
            if ok {
                let from = (addr - start) as usize;
                buf.copy_from_slice(&bytes[from..from + buf.len()]);
            }
            ok
        })
    }
}

/// What [`Ring::take_thread`] took of a thread's records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Taken {
    /// The look stopped at a record another thread is still writing, before the ring's head:
    /// records of the thread may lie beyond it. A stopped thread's own records are all
    /// committed, so once that record is, a second look finds every one.
    pub(crate) hidden: bool,
}

/// What drains read: the records' bytes, one after the other, and where each record lies.
/// A caller that clears it before each drain reuses its memory; one that does not (the probe)
/// keeps every record.
#[derive(Debug, Default)]
pub(crate) struct Drained {
    bytes: Vec<u8>,
    records: Vec<std::ops::Range<usize>>,
}

impl Drained {
    pub(crate) fn clear(&mut self) {
        self.bytes.clear();
        self.records.clear();
    }

    /// The records, in ring order.
    pub(crate) fn records(&self) -> impl Iterator<Item = Record<'_>> {
        self.records
            .iter()
            .filter_map(|r| Record::parse(&self.bytes[r.clone()]))
    }
}

/// Where a function can be patched: its break address and its `ret` sites, each with the
/// instructions the 5-byte `jmp` displaces (fewer than 5 bytes of them when the patch runs on
/// into the `int3` padding after the function's last `ret`).
#[derive(Debug)]
pub(crate) struct Sites {
    pub entry: Vec<Instruction>,
    pub exits: Vec<Vec<Instruction>>,
    /// The exit whose `ret` the entry patch covers (a function whose code after the break
    /// address ends within 5 bytes, padding included): its site is not patched, the entry
    /// trampoline runs the displaced instructions and goes on to that exit's trampoline.
    pub entry_exit: Option<usize>,
}

/// Why a function keeps the ptrace path.
pub(crate) type Refusal = &'static str;

/// Finds the patchable sites of the function whose code is `code` (at `low`), entered at
/// `entry_at` (its break address), followed by `padding` bytes of `int3` that are no other
/// function's code ([`crate::dwarf::DebugInfo::padding_after`]). Refuses when a displaced
/// instruction is a branch target inside the function (a jump would land in the middle of the
/// `jmp`), when the function has an indirect jump (a jump table's targets are unknown), when
/// the code after `entry_at` ends before 5 bytes (a `ret`, or the function's end after a
/// `jmp`; the dead bytes after a `jmp` that nothing targets may be covered), or when some
/// `ret` cannot be patched (every exit must be seen, else calls would stay open). Only the
/// function's own branches are checked: code elsewhere jumping into the middle of a function
/// is not something compilers emit for these (debug) builds.
///
/// The padding lets the last `ret` be patched where the bytes before it cannot be displaced
/// (a call or a branch just before it, a jump to it): its patch starts at the `ret` itself and
/// runs on into the padding, which nothing executes. And it lets the entry patch cover a
/// short function whose last `ret` comes within 5 bytes of the break address (a getter):
/// the entry trampoline then goes on to that `ret`'s exit trampoline ([`Sites::entry_exit`]).
pub(crate) fn sites(
    code: &[u8],
    low: u64,
    entry_at: u64,
    padding: usize,
) -> Result<Sites, Refusal> {
    let mut decoder = Decoder::with_ip(64, code, low, DecoderOptions::NONE);
    let mut all = Vec::new();
    while decoder.can_decode() {
        let i = decoder.decode();
        if i.is_invalid() {
            return Err("undecodable instruction");
        }
        all.push(i);
    }
    let targets: std::collections::HashSet<u64> = all
        .iter()
        .filter(|i| {
            matches!(
                i.flow_control(),
                FlowControl::UnconditionalBranch
                    | FlowControl::ConditionalBranch
                    | FlowControl::Call
            ) && matches!(
                i.op0_kind(),
                iced_x86::OpKind::NearBranch16
                    | iced_x86::OpKind::NearBranch32
                    | iced_x86::OpKind::NearBranch64
            )
        })
        .map(|i| i.near_branch_target())
        .collect();
    let index = all
        .iter()
        .position(|i| i.ip() == entry_at)
        .ok_or("the break address is not an instruction boundary")?;
    // A jump table's targets are not known: any byte after an indirect jump could be one.
    if all
        .iter()
        .any(|i| i.flow_control() == FlowControl::IndirectBranch)
    {
        return Err("an indirect jump (jump table) could target the patched bytes");
    }
    let end = low + code.len() as u64;
    // Bytes a patch ending with the instruction `i` may take beyond it.
    let room_after = |i: &Instruction| if i.next_ip() == end { padding } else { 0 };
    let mut entry = Vec::new();
    let mut entry_exit = None;
    let mut len = 0;
    for (k, i) in all.iter().enumerate().skip(index) {
        if k > index && targets.contains(&i.ip()) {
            return Err("a branch targets the bytes the entry jump would replace");
        }
        if i.mnemonic() == Mnemonic::Ret && len + i.len() + room_after(i) >= JMP_LEN {
            // The patch covers this `ret` and runs on into the padding after it.
            entry_exit = Some(k);
            len = JMP_LEN;
            break;
        }
        if matches!(
            i.flow_control(),
            FlowControl::Return | FlowControl::Interrupt | FlowControl::Exception
        ) {
            return Err("the code after the break address ends within 5 bytes");
        }
        if matches!(
            i.flow_control(),
            FlowControl::Call | FlowControl::IndirectCall
        ) {
            // Called from the trampoline, its return address would point into code the
            // unwinder knows nothing about: a panic raised in the callee could not unwind. A
            // call that ends the patched bytes ([`relocatable_call`]: direct, or through a GOT
            // slot or a register) is run as a jump with the original return address pushed
            // ([`call_last`]): the callee returns to the function, just after the patch, and
            // unwinds through it. Any other call is refused.
            if !(relocatable_call(i) && len + i.len() >= JMP_LEN) {
                return Err("a call within 5 bytes of the break address");
            }
        }
        entry.push(*i);
        len += i.len();
        if i.flow_control() == FlowControl::UnconditionalBranch && len < JMP_LEN {
            // The bytes after a `jmp` run only when something branches to them: when nothing
            // does, the patch may cover them.
            let patch_end = entry_at + JMP_LEN as u64;
            if patch_end > end {
                return Err("the code after the break address ends within 5 bytes");
            }
            if targets.iter().any(|&t| t >= i.next_ip() && t < patch_end) {
                return Err("a branch targets the bytes the entry jump would replace");
            }
            len = JMP_LEN;
        }
        if len >= JMP_LEN {
            break;
        }
    }
    if len < JMP_LEN {
        return Err("fewer than 5 bytes after the break address");
    }
    if targets.contains(&entry_at) {
        return Err("the break address is a branch target (a loop head)");
    }
    let mut exits = Vec::new();
    let mut covered = None;
    for (r, ret) in all.iter().enumerate() {
        if ret.mnemonic() != Mnemonic::Ret {
            continue;
        }
        if entry_exit == Some(r) {
            covered = Some(exits.len());
            exits.push(vec![*ret]);
            continue;
        }
        // The epilogue before the `ret` displaced with it (the state program runs before it,
        // while the frame is there), else the `ret` alone or with fewer instructions before it,
        // its patch running on into the padding.
        let site =
            exit_site(&all, r, 0, &targets, entry_at).or_else(|why| match room_after(ret) {
                0 => Err(why),
                room => exit_site(&all, r, room, &targets, entry_at),
            })?;
        exits.push(site);
    }
    if exits.is_empty() {
        return Err("no ret (the function ends in a tail jump or never returns)");
    }
    Ok(Sites {
        entry,
        exits,
        entry_exit: covered,
    })
}

/// The instructions an exit patch displaces to capture the `ret` `all[r]`, when `room` bytes
/// after the `ret` may be covered too: the `ret` and the instructions before it, back to 5
/// bytes, none a branch, none but the first a branch target, none in the entry patch.
fn exit_site(
    all: &[Instruction],
    r: usize,
    room: usize,
    targets: &std::collections::HashSet<u64>,
    entry_at: u64,
) -> Result<Vec<Instruction>, Refusal> {
    let mut len = all[r].len() + room;
    let mut first = r;
    while len < JMP_LEN {
        if first == 0 {
            return Err("a ret too close to the function's start");
        }
        first -= 1;
        let i = &all[first];
        if i.flow_control() != FlowControl::Next {
            return Err("a ret preceded by a branch within 5 bytes");
        }
        len += i.len();
    }
    let displaced = &all[first..=r];
    if displaced[1..].iter().any(|i| targets.contains(&i.ip())) {
        return Err("a branch targets the bytes before a ret");
    }
    if displaced
        .iter()
        .any(|i| i.ip() < entry_at + JMP_LEN as u64 && i.ip() + i.len() as u64 > entry_at)
    {
        return Err("a ret overlaps the entry patch");
    }
    Ok(displaced.to_vec())
}

/// The CFA at `at` as `rsp + offset`, for a function whose `.eh_frame` rule there is
/// `rbp + rbp_offset` (a frame-pointer prologue, as C compilers and `-C force-frame-pointers`
/// emit: `push rbp; mov rbp, rsp; sub rsp, N`). Found by running the code from the function's
/// start (`low`, where the CFA is `rsp + 8`) to `at`, which must be straight-line, and counting
/// how far below the CFA `rsp` and `rbp` are: pushes, `mov rbp, rsp`, and `sub`/`add rsp` with
/// an immediate move them; any other instruction that writes either register, any branch,
/// call or return, an `at` that is not an instruction boundary, or an `rbp` whose place
/// disagrees with the rule gives `None` (the function keeps the ptrace path).
pub(crate) fn rsp_cfa_offset(code: &[u8], low: u64, at: u64, rbp_offset: i64) -> Option<i64> {
    use iced_x86::{InstructionInfoFactory, OpAccess, OpKind, Register};
    let moves = |r: Register| matches!(r.full_register(), Register::RSP | Register::RBP);
    let mut decoder = Decoder::with_ip(64, code, low, DecoderOptions::NONE);
    let mut factory = InstructionInfoFactory::new();
    // How far below the CFA each register is.
    let mut rsp_below: i64 = 8;
    let mut rbp_below: Option<i64> = None;
    loop {
        if decoder.ip() == at {
            return (rbp_below == Some(rbp_offset)).then_some(rsp_below);
        }
        if decoder.ip() > at || !decoder.can_decode() {
            return None;
        }
        let i = decoder.decode();
        if i.is_invalid() || i.flow_control() != FlowControl::Next {
            return None;
        }
        let reg = |n: u32| (i.op_kind(n) == OpKind::Register).then(|| i.op_register(n));
        let imm = || match i.op_kind(1) {
            OpKind::Immediate8to64 | OpKind::Immediate32to64 | OpKind::Immediate8to32 => {
                Some(i.immediate(1) as i64)
            }
            _ => None,
        };
        match (i.mnemonic(), i.op_count()) {
            (Mnemonic::Push, 1) if reg(0).is_none_or(|r| r.size() == 8) => {
                rsp_below = rsp_below.checked_sub(i.stack_pointer_increment() as i64)?;
                continue;
            }
            (Mnemonic::Mov, 2)
                if reg(0) == Some(Register::RBP) && reg(1) == Some(Register::RSP) =>
            {
                rbp_below = Some(rsp_below);
                continue;
            }
            (Mnemonic::Sub, 2) if reg(0) == Some(Register::RSP) => {
                rsp_below = rsp_below.checked_add(imm()?)?;
                continue;
            }
            (Mnemonic::Add, 2) if reg(0) == Some(Register::RSP) => {
                rsp_below = rsp_below.checked_sub(imm()?)?;
                continue;
            }
            _ => {}
        }
        // Anything else must leave both registers alone (a store to a frame slot, `endbr64`).
        if i.stack_pointer_increment() != 0 {
            return None;
        }
        let writes = factory.info(&i).used_registers().iter().any(|u| {
            moves(u.register())
                && !matches!(
                    u.access(),
                    OpAccess::Read | OpAccess::CondRead | OpAccess::None
                )
        });
        if writes {
            return None;
        }
    }
}

/// The ring in the traced process: `head` (bytes reserved by writers, atomically) at offset 0,
/// `tail` (bytes consumed by carve) at offset 8, records from [`HEADER`]. A record starts at
/// its reservation offset modulo `capacity` and is contiguous (it may run into [`SLACK`]).
pub(crate) struct Ring {
    pub region: Region,
    pub capacity: u64,
    tail: u64,
    /// The ring's pages mapped into carve too ([`crate::inject::share`]), read in place; else
    /// (the program could not make them shared) read with `process_vm_readv`.
    shared: Option<Shared>,
    /// Offsets of records taken ahead of their turn ([`Ring::take_thread`]): [`Ring::drain`]
    /// skips them when it comes to them.
    early: std::collections::BTreeSet<u64>,
}

/// The most bytes of records one drain takes (at least the largest record): the program may
/// have filled the whole ring meanwhile, and records read and decoded in one piece of that
/// size went through the cache shared by the CPUs, not through the drainer's own.
const DRAIN_BYTES: u64 = if SLACK > 64 << 10 { SLACK } else { 64 << 10 };
/// The most bytes of records one drain asks the CPU to fetch ahead ([`Shared::prefetch`]).
const PREFETCH_BYTES: u64 = DRAIN_BYTES;

/// The ring's pages as carve maps them ([`crate::inject::share`]).
struct Shared(memmap2::MmapRaw);

impl Shared {
    /// The 8-aligned word at `at`, as the program last stored it: an acquire load, so the
    /// record a commit word commits is seen whole after it.
    fn word(&self, at: u64) -> u64 {
        assert!(at.is_multiple_of(8) && at + 8 <= self.0.len() as u64);
        // SAFETY: in the mapping (checked) and 8-aligned (the mapping is page-aligned), and
        // only ever accessed as whole words by carve; the program's stores to it are plain
        // `mov`s of whole words, atomic on x86-64.
        let word = unsafe { &*(self.0.as_ptr().add(at as usize) as *const AtomicU64) };
        word.load(Ordering::Acquire)
    }

    fn set_word(&self, at: u64, value: u64) {
        assert!(at.is_multiple_of(8) && at + 8 <= self.0.len() as u64);
        // SAFETY: as in `word`.
        let word = unsafe { &*(self.0.as_ptr().add(at as usize) as *const AtomicU64) };
        word.store(value, Ordering::Release);
    }

    /// Asks the CPU to bring the `len` bytes from `at` into its cache (at most
    /// [`PREFETCH_BYTES`]) while carve goes on: the program's CPU wrote them, and reading them
    /// one record after another (each record's length says where the next starts) waited for
    /// each line in turn.
    fn prefetch(&self, at: u64, len: u64) {
        let end = (at + len.min(PREFETCH_BYTES)).min(self.0.len() as u64);
        let mut line = at & !63;
        while line < end {
            // SAFETY: a prefetch of an address in the mapping; it reads nothing into Rust.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T1 }>(
                    self.0.as_ptr().add(line as usize) as *const i8,
                );
            }
            line += 64;
        }
    }

    /// Appends `len` bytes from `at` to `out`: committed records, which no writer touches
    /// until carve moves the tail past them.
    fn copy(&self, at: u64, len: usize, out: &mut Vec<u8>) {
        assert!(at + len as u64 <= self.0.len() as u64);
        out.reserve(len);
        // SAFETY: the source is in the mapping (checked), the destination is `out`'s spare
        // capacity (reserved), and nothing writes the source meanwhile (see above).
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.0.as_ptr().add(at as usize),
                out.as_mut_ptr().add(out.len()),
                len,
            );
            out.set_len(out.len() + len);
        }
    }
}

impl Ring {
    fn data(&self) -> u64 {
        self.region.start + HEADER
    }

    /// Bytes consumed by carve so far (records drained or skipped).
    pub(crate) fn tail(&self) -> u64 {
        self.tail
    }

    /// Bytes reserved by the program's writers so far (committed or still being written);
    /// `None` when the ring cannot be read (the process's memory is gone and it was not
    /// shared).
    pub(crate) fn head(&self, mem: &ProcessMemory) -> Option<u64> {
        match &self.shared {
            Some(shared) => Some(shared.word(0)),
            None => {
                let mut head = [0u8; 8];
                mem.read(self.region.start, &mut head)
                    .then(|| u64::from_le_bytes(head))
            }
        }
    }

    /// Appends to `out` the records written since the last drain, in ring order, and hands
    /// their room back to the writers. Stops at the first record still being written.
    pub(crate) fn drain(
        &mut self,
        mem: &ProcessMemory,
        out: &mut Drained,
    ) -> Result<usize, RecordError> {
        let head = self
            .head(mem)
            .ok_or_else(|| read_err(mem, self.region.start))?;
        let mut drained = 0;
        let mut taken = 0u64;
        while head > self.tail && taken < DRAIN_BYTES {
            let p = self.tail % self.capacity;
            let avail = (head - self.tail)
                .min(self.capacity + SLACK - p)
                .min(DRAIN_BYTES);
            // This round's bytes go after the records already in `out`.
            let base = out.bytes.len();
            let data = self.data();
            let bad = |at: usize| bad_record(mem, data + p + at as u64);
            // Which records are complete (commit word = its offset + 1, written last). A
            // record starts before the ring's end; the next one after such a record starts
            // again at the ring's beginning (the next round of this loop).
            let (at, off) = match &self.shared {
                Some(shared) => {
                    shared.prefetch(HEADER + p, avail);
                    let complete = self
                        .complete(avail as usize, p, |i| shared.word(HEADER + p + i as u64))
                        .map_err(bad)?;
                    shared.copy(HEADER + p, complete.0, &mut out.bytes);
                    complete
                }
                None => {
                    // Read twice: the second read, after the first saw the commit words, sees
                    // every field of those records, whatever order the kernel's copy read the
                    // bytes in.
                    self.read_at(mem, p, avail, &mut out.bytes, base)?;
                    let bytes = &out.bytes[base..];
                    let word = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap());
                    let complete = self.complete(avail as usize, p, word);
                    out.bytes.truncate(base);
                    let complete = complete.map_err(bad)?;
                    self.read_at(mem, p, complete.0 as u64, &mut out.bytes, base)?;
                    complete
                }
            };
            if at == 0 {
                break;
            }
            let first = out.records.len();
            let mut i = 0usize;
            while i < at {
                let start = base + i;
                let len = u64::from_le_bytes(out.bytes[start + 32..start + 40].try_into().unwrap())
                    as usize;
                if !Record::is_whole(&out.bytes[start..start + len]) {
                    out.bytes.truncate(base);
                    out.records.truncate(first);
                    return Err(bad(i));
                }
                // Taken ahead of its turn for its thread's stop: recorded already.
                if !self.early.remove(&(self.tail + i as u64)) {
                    out.records.push(start..start + len);
                }
                drained += 1;
                i += len;
            }
            taken += off - self.tail;
            self.tail = off;
            self.set_tail(mem, off)?;
        }
        Ok(drained)
    }

    /// Appends to `out` the committed records of the thread whose thread pointer is
    /// `pointer` that were not drained yet, in ring order, and notes them so [`Ring::drain`]
    /// skips them later: a stopped thread's own records, recorded before its stop is handled
    /// without waiting for every other thread's records before them (a full ring holds tens of
    /// milliseconds of them). Looks from the tail up to the first record still being written
    /// (whatever lies beyond it cannot be found: [`Taken::hidden`]). `None` when the ring is
    /// not shared with carve (the caller drains in order instead).
    pub(crate) fn take_thread(&mut self, pointer: u64, out: &mut Drained) -> Option<Taken> {
        let shared = self.shared.as_ref()?;
        let head = shared.word(0);
        let mut off = self.tail;
        while off < head {
            let p = off % self.capacity;
            let at = HEADER + p;
            if shared.word(at) != off + 1 {
                break;
            }
            let len = shared.word(at + 32);
            if !(RECORD_HEAD..=SLACK).contains(&len) || !len.is_multiple_of(8) {
                break;
            }
            if shared.word(at + 16) == pointer && !self.early.contains(&off) {
                let start = out.bytes.len();
                shared.copy(at, len as usize, &mut out.bytes);
                if !Record::is_whole(&out.bytes[start..]) {
                    out.bytes.truncate(start);
                    break;
                }
                out.records.push(start..start + len as usize);
                self.early.insert(off);
            }
            off += len;
        }
        Some(Taken { hidden: off < head })
    }

    fn set_tail(&self, mem: &ProcessMemory, tail: u64) -> Result<(), RecordError> {
        match &self.shared {
            Some(shared) => {
                shared.set_word(8, tail);
                Ok(())
            }
            None => mem.write(self.region.start + 8, &tail.to_le_bytes()),
        }
    }

    /// No more draining: writers are never held back again (the tail is put far ahead of
    /// any head), so a process carve lets go never waits for the ring.
    pub(crate) fn release(self, mem: &ProcessMemory) {
        let _ = self.set_tail(mem, 1u64 << 62);
    }

    /// How many of the `len` bytes at ring offset `p` (their words read by `word`, offsets from
    /// `p`) are complete records, and the tail after them; `Err` with the offset of a record
    /// whose length is wrong.
    fn complete(
        &self,
        len: usize,
        p: u64,
        word: impl Fn(usize) -> u64,
    ) -> Result<(usize, u64), usize> {
        let (mut at, mut off) = (0usize, self.tail);
        while at + RECORD_HEAD as usize <= len && p + (at as u64) < self.capacity {
            if word(at) != off + 1 {
                break;
            }
            let record = word(at + 32);
            if !(RECORD_HEAD..=SLACK).contains(&record) || !record.is_multiple_of(8) {
                return Err(at);
            }
            if at + record as usize > len {
                break;
            }
            at += record as usize;
            off += record;
        }
        Ok((at, off))
    }

    /// Reads `len` bytes of the ring at `p` into `buf` from `at` on (its length becomes
    /// `at + len`).
    fn read_at(
        &self,
        mem: &ProcessMemory,
        p: u64,
        len: u64,
        buf: &mut Vec<u8>,
        at: usize,
    ) -> Result<(), RecordError> {
        buf.resize(at + len as usize, 0);
        if !mem.read(self.data() + p, &mut buf[at..]) {
            buf.truncate(at);
            return Err(read_err(mem, self.data() + p));
        }
        Ok(())
    }
}

fn bad_record(mem: &ProcessMemory, addr: u64) -> RecordError {
    RecordError::Memory {
        op: "read the capture ring (a record's length is wrong: the program wrote over it)",
        pid: mem.pid().as_raw(),
        addr,
        source: std::io::Error::other("bad record"),
    }
}

fn read_err(mem: &ProcessMemory, addr: u64) -> RecordError {
    RecordError::Memory {
        op: "read the capture ring",
        pid: mem.pid().as_raw(),
        addr,
        source: std::io::Error::other("unreadable"),
    }
}

/// A function to capture in process: its id (carried by its records), its code and its break
/// address, all at run-time addresses, and its capture programs (empty: registers only).
pub(crate) struct Target {
    pub function: u32,
    pub low: u64,
    pub high: u64,
    /// How many `int3` bytes of padding the file has after `high` (see [`sites`]).
    pub padding: usize,
    pub entry_at: u64,
    pub entry: Program,
    pub exit: Program,
    /// `--max-calls-per-function`: capture at most this many calls (see [`Limits`]).
    pub limit: Option<u64>,
}

/// Bytes of a limited function's words in the limits region (a cache line each, so two
/// functions' counters never share one).
const LIMIT_STRIDE: u64 = 64;
/// In a limited function's words: the captures left (counted down by the entry trampoline,
/// never below 0; 0 skips the capture), then whether exits are captured (the tracer writes 0
/// once every captured call has ended: the exit trampolines then skip the capture).
const LEFT: u64 = 0;
const EXITS_ON: u64 = 8;

/// Where the words of each function with a `--max-calls-per-function` limit are.
#[derive(Debug, Default)]
pub(crate) struct Limits {
    /// Per limited patched function: its id and the address of its words.
    pub words: Vec<(u32, u64)>,
}

impl Limits {
    /// Of the function whose words are at `at`: the word that turns its exit captures on
    /// (non-zero) or off.
    pub(crate) fn exits_on(at: u64) -> u64 {
        at + EXITS_ON
    }

    /// Of the function whose words are at `at`: the count of captures it has left.
    pub(crate) fn left(at: u64) -> u64 {
        at + LEFT
    }
}

/// The exit-state program of `function` at an exit site (its first displaced instruction's
/// run-time address); empty when the function has no receiver or `&mut` argument.
pub(crate) type StateProgram<'a> = &'a dyn Fn(u32, u64) -> Result<Program, Refusal>;

/// What [`install`] did.
pub(crate) struct Installed {
    pub ring: Ring,
    /// Functions patched (entry and every exit).
    pub patched: Vec<u32>,
    /// Functions left to the ptrace path, with the reason.
    pub refused: Vec<(u32, Refusal)>,
    /// Each patched site and the bytes the patch replaced (a forked child gets them back).
    pub originals: Vec<(u64, Vec<u8>)>,
    /// The counters of the patched functions with a limit.
    pub limits: Limits,
}

/// Whether the ring is shared with carve ([`crate::inject::share`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sharing {
    /// Shared when the program can make it so (else private).
    Shared,
    /// Private to the program: carve reads it with `process_vm_readv`.
    Private,
}

/// Maps a ring of `capacity` bytes (a power of two, at least four of the largest records),
/// shared with carve as `sharing` says and the program allows, and the trampolines of `targets` into the stopped process of `tid`, and patches the
/// functions that can be. `scratch` is lent to [`crate::inject::syscall`]. Every thread of the
/// process must be stopped (the patches are written while no thread can be inside the bytes
/// they replace).
pub(crate) fn install(
    tid: Pid,
    mem: &ProcessMemory,
    scratch: u64,
    targets: &[Target],
    state: StateProgram<'_>,
    capacity: u64,
    sharing: Sharing,
) -> Result<Installed, RecordError> {
    assert!(capacity.is_power_of_two() && capacity >= 4 * SLACK);
    let near = targets.iter().map(|t| t.low).min().unwrap_or(scratch);
    // Next to the program's code, out of the way of both the heap's growth (`map_near` keeps
    // clear of it: row 45 of issue 32) and the kernel's area for mappings (a ring there would
    // move every later mapping, thread stacks included, and the program would see other
    // addresses than natively).
    let ring_region = map_near(
        tid,
        mem,
        scratch,
        near,
        HEADER + capacity + SLACK,
        libc::PROT_READ | libc::PROT_WRITE,
    )?;
    // Shared with carve when the program can make it so; else it stays private to the
    // program and carve reads it with system calls (slower, same records).
    let shared = match sharing {
        Sharing::Shared => crate::inject::share(tid, mem, scratch, ring_region)
            .ok()
            .map(Shared),
        Sharing::Private => None,
    };
    let ring = Ring {
        region: ring_region,
        capacity,
        tail: 0,
        shared,
        early: Default::default(),
    };
    let mut plans = Vec::new();
    let mut refused = Vec::new();
    'targets: for t in targets {
        let mut code = vec![0u8; (t.high - t.low) as usize + t.padding];
        if !mem.read(t.low, &mut code) {
            refused.push((t.function, "code not readable"));
            continue;
        }
        // The padding the file has after the function, as the live process has it.
        let padding = code[code.len() - t.padding..]
            .iter()
            .take_while(|&&b| b == INT3)
            .count();
        code.truncate(code.len() - t.padding);
        match sites(&code, t.low, t.entry_at, padding) {
            Ok(s) => {
                let mut states = Vec::new();
                for exit in &s.exits {
                    match state(t.function, exit[0].ip()) {
                        Ok(p) => states.push(p),
                        Err(why) => {
                            refused.push((t.function, why));
                            continue 'targets;
                        }
                    }
                }
                plans.push((t, s, states))
            }
            Err(why) => refused.push((t.function, why)),
        }
    }
    // Room for the code: an upper bound per capture and per copy, and per site for the gate
    // of a limited function (with the displaced instructions a second time at an exit).
    let bound = |p: &Program| 1024 + 160 * p.copies.len() as u64;
    let gate = |t: &Target, sites: usize| match t.limit {
        Some(_) => 256 * sites as u64,
        None => 0,
    };
    let room: u64 = plans
        .iter()
        .map(|(t, s, states)| {
            bound(&t.entry)
                + s.exits.len() as u64 * bound(&t.exit)
                + states.iter().map(bound).sum::<u64>()
                + gate(t, 1 + s.exits.len())
        })
        .sum();
    let limits = limit_words(tid, mem, scratch, near, &plans)?;
    let words_of = |function: u32| {
        limits
            .words
            .iter()
            .find(|(f, _)| *f == function)
            .map(|(_, at)| *at)
    };
    let code_region = map_near(
        tid,
        mem,
        scratch,
        near,
        room.max(4096),
        libc::PROT_READ | libc::PROT_EXEC,
    )?;
    let mut at = code_region.start;
    let mut patches = Vec::new();
    let mut patched = Vec::new();
    for (t, s, states) in &plans {
        let words = words_of(t.function);
        // The exits first: an entry patch that covers a `ret` goes on to its trampoline.
        let mut then = None;
        for (k, (exit, state)) in s.exits.iter().zip(states).enumerate() {
            let site = Site::Exit(state, &t.exit);
            let code = trampoline(&ring, t.function, site, words, exit, at)?;
            if s.entry_exit == Some(k) {
                then = Some(at);
            } else {
                patches.push((exit[0].ip(), at, span_len(exit)));
            }
            mem.write(at, &code)?;
            at += (code.len() as u64).div_ceil(16) * 16;
        }
        let entry = trampoline(
            &ring,
            t.function,
            Site::Entry(&t.entry, then),
            words,
            &s.entry,
            at,
        )?;
        patches.push((t.entry_at, at, span_len(&s.entry)));
        mem.write(at, &entry)?;
        at += (entry.len() as u64).div_ceil(16) * 16;
        patched.push(t.function);
    }
    assert!(at <= code_region.start + code_region.len);
    let mut originals = Vec::new();
    for (site, tramp, len) in patches {
        let patch = jmp_patch(site, tramp, len);
        let mut original = vec![0u8; patch.len()];
        if !mem.read(site, &mut original) {
            return Err(read_err(mem, site));
        }
        mem.write(site, &patch)?;
        originals.push((site, original));
    }
    Ok(Installed {
        ring,
        patched,
        refused,
        originals,
        limits,
    })
}

/// Maps the words of the functions of `plans` that have a limit (none: no mapping) and sets
/// them: `limit` captures left, exits captured unless the limit is 0.
fn limit_words(
    tid: Pid,
    mem: &ProcessMemory,
    scratch: u64,
    near: u64,
    plans: &[(&Target, Sites, Vec<Program>)],
) -> Result<Limits, RecordError> {
    let limited: Vec<(u32, u64)> = plans
        .iter()
        .filter_map(|(t, _, _)| Some((t.function, t.limit?)))
        .collect();
    if limited.is_empty() {
        return Ok(Limits::default());
    }
    let len = (limited.len() as u64 * LIMIT_STRIDE).div_ceil(4096) * 4096;
    let region = map_near(
        tid,
        mem,
        scratch,
        near,
        len,
        libc::PROT_READ | libc::PROT_WRITE,
    )?;
    let mut words = Vec::with_capacity(limited.len());
    for (k, (function, limit)) in limited.into_iter().enumerate() {
        let at = region.start + k as u64 * LIMIT_STRIDE;
        let mut init = [0u8; 16];
        init[..8].copy_from_slice(&limit.to_le_bytes());
        init[8..].copy_from_slice(&u64::from(limit > 0).to_le_bytes());
        mem.write(at, &init)?;
        words.push((function, at));
    }
    Ok(Limits { words })
}

fn span_len(instrs: &[Instruction]) -> usize {
    instrs.iter().map(|i| i.len()).sum()
}

/// `jmp rel32` from `site` to `to`, padded with `int3` to `len` bytes (the padding is never
/// reached: no branch targets it, checked by [`sites`]).
fn jmp_patch(site: u64, to: u64, len: usize) -> Vec<u8> {
    let rel = to.wrapping_sub(site + JMP_LEN as u64) as i64;
    assert!(
        i32::try_from(rel).is_ok(),
        "trampoline out of jmp rel32 reach"
    );
    let mut out = vec![0xe9];
    out.extend_from_slice(&(rel as i32).to_le_bytes());
    out.resize(len.max(JMP_LEN), INT3);
    out
}

/// What a trampoline captures.
#[derive(Clone, Copy)]
enum Site<'a> {
    /// At the break address; then back to the function after the displaced instructions, or,
    /// when the entry patch covers a `ret` ([`Sites::entry_exit`]), on to that exit's
    /// trampoline at this address.
    Entry(&'a Program, Option<u64>),
    /// At an exit site: the state program before the displaced epilogue (frame still there),
    /// the exit program after it, right before the `ret`.
    Exit(&'a Program, &'a Program),
}

/// The trampoline for one site, assembled at `ip`. An entry: the capture, then the displaced
/// instructions and a jump back after them. An exit: the state capture (when its program
/// copies anything), the displaced epilogue (it may load the return value), the exit capture,
/// then the `ret` the site ended with.
///
/// A function with a limit (`words`, see [`Limits`]) passes a gate first. At the entry: no
/// captures left, straight to the displaced instructions; else one is taken atomically
/// (`lock cmpxchg`, so threads entering at once take exactly the limit between them) and the
/// capture runs. At an exit: exits off, straight to the displaced epilogue and `ret`. Once the
/// limit is reached a call costs a load and a `jrcxz` at each site: no flag is touched, no
/// store, no record.
fn trampoline(
    ring: &Ring,
    function: u32,
    site: Site<'_>,
    words: Option<u64>,
    displaced: &[Instruction],
    ip: u64,
) -> Result<Vec<u8>, RecordError> {
    let asm_err = |e: iced_x86::IcedError| RecordError::Memory {
        op: "assemble a trampoline",
        pid: 0,
        addr: ip,
        source: std::io::Error::other(e.to_string()),
    };
    let mut a = CodeAssembler::new(64).map_err(asm_err)?;
    let tag = |kind: u8| (u64::from(function) << 8) | u64::from(kind);
    (|| -> Result<(), iced_x86::IcedError> {
        let run_displaced = |a: &mut CodeAssembler| -> Result<(), iced_x86::IcedError> {
            let then = match site {
                Site::Entry(_, then) => then,
                Site::Exit(..) => None,
            };
            let last = displaced.last();
            if last.is_some_and(relocatable_call) {
                return call_last(a, displaced);
            }
            for i in displaced {
                a.add_instruction(*i)?;
            }
            match (then, last) {
                (Some(exit), _) => a.jmp(exit)?,
                (None, Some(l)) if l.flow_control() == FlowControl::UnconditionalBranch => {}
                (None, Some(l)) => a.jmp(l.next_ip())?,
                // Only an entry patch that covers a `ret` at the break address displaces
                // nothing, and it goes on to that exit.
                (None, None) => unreachable!("a site displaces an instruction or goes on"),
            }
            Ok(())
        };
        match site {
            Site::Entry(program, _) => match words {
                None => {
                    capture(&mut a, ring, tag(ENTRY), program)?;
                    run_displaced(&mut a)?;
                }
                Some(at) => {
                    let mut take = a.create_label();
                    let mut run = a.create_label();
                    entry_gate(&mut a, Limits::left(at), take)?;
                    a.set_label(&mut run)?;
                    run_displaced(&mut a)?;
                    a.set_label(&mut take)?;
                    capture(&mut a, ring, tag(ENTRY), program)?;
                    a.jmp(run)?;
                }
            },
            Site::Exit(state, exit) => {
                let last = displaced.last().expect("an exit site displaces its ret");
                if let Some(at) = words {
                    exit_gate(&mut a, Limits::exits_on(at), displaced)?;
                }
                if !state.copies.is_empty() {
                    capture(&mut a, ring, tag(STATE), state)?;
                }
                for i in &displaced[..displaced.len() - 1] {
                    a.add_instruction(*i)?;
                }
                capture(&mut a, ring, tag(EXIT), exit)?;
                a.add_instruction(*last)?; // the ret
            }
        }
        Ok(())
    })()
    .map_err(asm_err)?;
    a.assemble(ip).map_err(asm_err)
}

/// A call an entry patch may displace (see [`sites`]): a direct near call (`call rel32`), or
/// an indirect one through a register or a memory operand that does not involve `rsp` (`call
/// [rip + GOT slot]`, as code built as position-independent calls other crates' functions;
/// `call rax`), since [`call_last`] moves `rsp` before it jumps.
fn relocatable_call(i: &Instruction) -> bool {
    use iced_x86::{OpKind, Register};
    let not_rsp = |r: Register| r.full_register() != Register::RSP;
    match (i.flow_control(), i.op0_kind()) {
        (FlowControl::Call, OpKind::NearBranch64) => true,
        (FlowControl::IndirectCall, OpKind::Register) => {
            i.code() == iced_x86::Code::Call_rm64 && not_rsp(i.op0_register())
        }
        (FlowControl::IndirectCall, OpKind::Memory) => {
            i.code() == iced_x86::Code::Call_rm64
                && not_rsp(i.memory_base())
                && not_rsp(i.memory_index())
        }
        _ => false,
    }
}

/// Runs displaced entry instructions whose last is a [`relocatable_call`]: the others
/// relocated, then the call as a jump to its target (the same operand: a register, a memory
/// slot such as a GOT entry, or the direct target) with the call's own return address pushed
/// (the address after it in the function, where the patched bytes end), so that the callee
/// returns into the function and a panic in it unwinds through the function's frame as
/// without the patch. The push touches no register and no flag (`lea`, two 32-bit stores).
fn call_last(a: &mut CodeAssembler, displaced: &[Instruction]) -> Result<(), iced_x86::IcedError> {
    let (call, before) = displaced.split_last().expect("a displaced call");
    for i in before {
        a.add_instruction(*i)?;
    }
    let back = call.next_ip();
    a.lea(rsp, ptr(rsp - 8))?;
    a.mov(dword_ptr(rsp), back as u32)?;
    a.mov(dword_ptr(rsp + 4), (back >> 32) as u32)?;
    if call.flow_control() == FlowControl::Call {
        return a.jmp(call.near_branch_target());
    }
    // `jmp r/m64` takes the operand of `call r/m64` as it is (a rip-relative one is
    // re-encoded for the trampoline's address).
    let mut jmp = *call;
    jmp.set_code(iced_x86::Code::Jmp_rm64);
    a.add_instruction(jmp)
}

/// A limited function's entry gate (see [`trampoline`]): falls through to what follows
/// (the displaced instructions) when `left` (the captures left) is 0 or was taken to 0 by
/// other threads first, jumps to `take` with one capture taken. Flags and registers are
/// as they were at either way out; the stack used is below the red zone.
fn entry_gate(
    a: &mut CodeAssembler,
    left: u64,
    take: CodeLabel,
) -> Result<(), iced_x86::IcedError> {
    let mut skip = a.create_label();
    let mut none_left = a.create_label();
    let mut retry = a.create_label();
    a.lea(rsp, ptr(rsp - RED_ZONE))?;
    a.push(rcx)?;
    a.mov(rcx, left)?;
    a.mov(rcx, qword_ptr(rcx))?;
    // `jrcxz` reads no flag: once the count is 0, the flags need no saving.
    a.jrcxz(skip)?;
    a.push(rax)?;
    a.push(rdx)?;
    a.pushfq()?;
    a.mov(rdx, left)?;
    a.mov(rax, qword_ptr(rdx))?;
    a.set_label(&mut retry)?;
    a.test(rax, rax)?;
    a.jz(none_left)?;
    a.lea(rcx, ptr(rax - 1))?;
    // Takes one if nobody changed the count since it was read (else rax = the new count).
    a.lock().cmpxchg(qword_ptr(rdx), rcx)?;
    a.jne(retry)?;
    a.popfq()?;
    a.pop(rdx)?;
    a.pop(rax)?;
    a.pop(rcx)?;
    a.lea(rsp, ptr(rsp + RED_ZONE))?;
    a.jmp(take)?;
    a.set_label(&mut none_left)?;
    a.popfq()?;
    a.pop(rdx)?;
    a.pop(rax)?;
    a.set_label(&mut skip)?;
    a.pop(rcx)?;
    a.lea(rsp, ptr(rsp + RED_ZONE))
}

/// A limited function's exit gate (see [`trampoline`]): when `exits_on` is 0, runs the
/// displaced epilogue and its `ret` at once; else falls through to what follows (the
/// captures). Flags and registers are as they were either way.
fn exit_gate(
    a: &mut CodeAssembler,
    exits_on: u64,
    displaced: &[Instruction],
) -> Result<(), iced_x86::IcedError> {
    let mut off = a.create_label();
    let mut on = a.create_label();
    a.lea(rsp, ptr(rsp - RED_ZONE))?;
    a.push(rcx)?;
    a.mov(rcx, exits_on)?;
    a.mov(rcx, qword_ptr(rcx))?;
    a.jrcxz(off)?;
    a.pop(rcx)?;
    a.lea(rsp, ptr(rsp + RED_ZONE))?;
    a.jmp(on)?;
    a.set_label(&mut off)?;
    a.pop(rcx)?;
    a.lea(rsp, ptr(rsp + RED_ZONE))?;
    for i in displaced {
        // A second copy of each displaced instruction: the block encoder takes one
        // instruction per address, and no branch targets these (an exit site's displaced
        // instructions are straight-line up to the `ret`).
        let mut copy = *i;
        copy.set_ip(0);
        a.add_instruction(copy)?;
    }
    a.set_label(&mut on)?;
    Ok(())
}

/// How long a trampoline that finds the ring full sleeps before it looks again (ns).
const FULL_WAIT_NS: i32 = 50_000;

/// Saved general registers on the trampoline's stack, by DWARF number: the slot (in words
/// above the copy table) of each push; `rsp` is computed.
const PUSHED: [AsmRegister64; 15] = [
    rax, rcx, rdx, rbx, rsi, rdi, rbp, r8, r9, r10, r11, r12, r13, r14, r15,
];
const DWARF_ORDER: [Option<AsmRegister64>; 16] = [
    Some(rax),
    Some(rdx),
    Some(rcx),
    Some(rbx),
    Some(rsi),
    Some(rdi),
    Some(rbp),
    None,
    Some(r8),
    Some(r9),
    Some(r10),
    Some(r11),
    Some(r12),
    Some(r13),
    Some(r14),
    Some(r15),
];

/// One capture: save everything, run `program`'s copies in two passes (where and how much,
/// into a table on the stack; then, with the record reserved, the bytes), commit, restore.
/// Nothing but the record changes: flags and every register are put back, and the stack used
/// is below the red zone.
fn capture(
    a: &mut CodeAssembler,
    ring: &Ring,
    tag: u64,
    program: &Program,
) -> Result<(), iced_x86::IcedError> {
    let n = program.copies.len() as i32;
    let table = (16 * n + 15) / 16 * 16;
    // Where the saved register `r` (DWARF) is, and the site's rsp, relative to rsp.
    let saved = |reg: AsmRegister64| -> i32 {
        let k = PUSHED.iter().position(|p| *p == reg).unwrap() as i32;
        table + 8 * (14 - k)
    };
    let site_rsp = table + 8 * 16 + RED_ZONE;
    let load_reg = |a: &mut CodeAssembler, dst: AsmRegister64, r: u16| match DWARF_ORDER
        .get(r as usize)
        .copied()
        .flatten()
    {
        Some(reg) => a.mov(dst, qword_ptr(rsp + saved(reg))),
        None => a.lea(dst, ptr(rsp + site_rsp)),
    };
    // Loads a word into `dst`; jumps to `skip` when it is in a region that was not copied.
    let load_word = |a: &mut CodeAssembler,
                     dst: AsmRegister64,
                     w: Word,
                     skip: CodeLabel|
     -> Result<(), iced_x86::IcedError> {
        match w {
            Word::Reg(r) => load_reg(a, dst, r),
            Word::In { region, offset } => {
                let slot = 16 * region as i32;
                a.mov(dst, qword_ptr(rsp + slot + 8))?;
                a.test(dst, dst)?;
                a.jz(skip)?;
                a.mov(dst, qword_ptr(rsp + slot))?;
                a.mov(dst, qword_ptr(dst + offset as i32))
            }
        }
    };
    a.lea(rsp, ptr(rsp - RED_ZONE))?;
    a.pushfq()?;
    for r in PUSHED {
        a.push(r)?;
    }
    if table > 0 {
        a.sub(rsp, table)?;
    }
    a.cld()?;
    // First pass: each copy's source and length into the table; r8 = the record's length.
    a.mov(r8, RECORD_HEAD)?;
    for (i, c) in program.copies.iter().enumerate() {
        let mut skip = a.create_label();
        let mut store = a.create_label();
        match c.base {
            Base::Rsp(off) => a.lea(rax, ptr(rsp + (site_rsp + off as i32)))?,
            Base::Ptr { word, add } => {
                load_word(a, rax, word, skip)?;
                a.test(rax, rax)?;
                a.jz(skip)?;
                if add != 0 {
                    a.mov(rdx, add)?;
                    a.add(rax, rdx)?;
                }
            }
        }
        match c.len {
            Len::Const(len) => a.mov(rdx, len)?,
            Len::Count { word, max, scale } => {
                let mut within = a.create_label();
                load_word(a, rdx, word, skip)?;
                a.mov(r9, max)?;
                a.cmp(rdx, r9)?;
                a.jbe(within)?;
                a.mov(rdx, r9)?;
                a.set_label(&mut within)?;
                a.mov(r9, scale)?;
                a.imul_2(rdx, r9)?;
            }
            Len::Span { end, max } => {
                // rax holds the start: a span is measured from a pointer, never a frame slot.
                debug_assert!(matches!(c.base, Base::Ptr { .. }));
                let mut within = a.create_label();
                load_word(a, rdx, end, skip)?;
                a.sub(rdx, rax)?;
                a.jb(skip)?;
                a.mov(r9, max)?;
                a.cmp(rdx, r9)?;
                a.jbe(within)?;
                a.mov(rdx, r9)?;
                a.set_label(&mut within)?;
            }
        }
        a.jmp(store)?;
        a.set_label(&mut skip)?;
        a.xor(eax, eax)?;
        a.xor(edx, edx)?;
        a.set_label(&mut store)?;
        a.mov(qword_ptr(rsp + 16 * i as i32), rax)?;
        a.mov(qword_ptr(rsp + (16 * i as i32 + 8)), rdx)?;
        a.lea(rdx, ptr(rdx + 23))?;
        a.and(rdx, -8)?;
        a.add(r8, rdx)?;
    }
    // Reserve: rax = head before our record; wait while its room is not free yet (rax + r8 >
    // tail + capacity).
    let mut wait = a.create_label();
    let mut ready = a.create_label();
    a.mov(rcx, ring.region.start)?;
    a.mov(rax, r8)?;
    a.lock().xadd(qword_ptr(rcx), rax)?;
    a.set_label(&mut wait)?;
    a.mov(rdx, qword_ptr(rcx + 8))?;
    a.mov(r9, ring.capacity)?;
    a.add(rdx, r9)?;
    a.sub(rdx, r8)?;
    a.cmp(rax, rdx)?;
    a.jbe(ready)?;
    // Full: the drainer is behind (it waits for the store). Sleep instead of spinning, so
    // the wait leaves the CPU to carve's threads (on a loaded or a pinned CPU, spinning
    // only delayed the drain it waits for): nanosleep(&{0, FULL_WAIT_NS}, NULL). The
    // syscall clobbers rax, rcx and r11 (all restored at the end); rbx keeps the
    // reservation meanwhile.
    a.mov(rbx, rax)?;
    a.sub(rsp, 16)?;
    a.mov(qword_ptr(rsp), 0)?;
    a.mov(qword_ptr(rsp + 8), FULL_WAIT_NS)?;
    a.mov(rdi, rsp)?;
    a.xor(esi, esi)?;
    a.mov(eax, libc::SYS_nanosleep as u32)?;
    a.syscall()?;
    a.add(rsp, 16)?;
    a.mov(rax, rbx)?;
    a.mov(rcx, ring.region.start)?;
    a.jmp(wait)?;
    a.set_label(&mut ready)?;
    // r9 = the record's address; r10 keeps the reservation offset for the commit word.
    a.mov(r10, rax)?;
    a.mov(r9, ring.capacity - 1)?;
    a.and(r9, rax)?;
    a.lea(r9, ptr(rcx + r9 + HEADER as i32))?;
    a.mov(rdx, tag)?;
    a.mov(qword_ptr(r9 + 8), rdx)?;
    a.mov(rdx, qword_ptr(0u64).fs())?;
    a.mov(qword_ptr(r9 + 16), rdx)?;
    a.lea(rdx, ptr(rsp + site_rsp))?;
    a.mov(qword_ptr(r9 + 24), rdx)?;
    a.mov(qword_ptr(r9 + 32), r8)?;
    for r in 0..16u16 {
        load_reg(a, rdx, r)?;
        a.mov(qword_ptr(r9 + (40 + 8 * r as i32)), rdx)?;
    }
    a.movq(rdx, xmm0)?;
    a.mov(qword_ptr(r9 + 168), rdx)?;
    a.movq(rdx, xmm1)?;
    a.mov(qword_ptr(r9 + 176), rdx)?;
    // When: the time stamp counter, which carve puts on the run's clock (`tracer::TscClock`).
    a.rdtsc()?;
    a.shl(rdx, 32)?;
    a.or(rax, rdx)?;
    a.mov(qword_ptr(r9 + 184), rax)?;
    // Second pass: each region as address, length, bytes, padded to 8.
    a.lea(rdi, ptr(r9 + RECORD_HEAD as i32))?;
    for i in 0..n {
        a.mov(rsi, qword_ptr(rsp + 16 * i))?;
        a.mov(rcx, qword_ptr(rsp + (16 * i + 8)))?;
        a.mov(qword_ptr(rdi), rsi)?;
        a.mov(qword_ptr(rdi + 8), rcx)?;
        a.add(rdi, 16)?;
        a.rep().movsb()?;
        a.add(rdi, 7)?;
        a.and(rdi, -8)?;
    }
    // Commit last: x86 keeps stores in order, so a reader that sees the commit word sees the
    // fields. The word is the reservation offset + 1, so a record left from an earlier lap of
    // the ring never looks committed and nothing needs clearing.
    a.lea(rdx, ptr(r10 + 1))?;
    a.mov(qword_ptr(r9), rdx)?;
    if table > 0 {
        a.add(rsp, table)?;
    }
    for r in PUSHED.iter().rev() {
        a.pop(*r)?;
    }
    a.popfq()?;
    a.lea(rsp, ptr(rsp + RED_ZONE))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(code: &[u8], ip: u64) -> Vec<Instruction> {
        let mut d = Decoder::with_ip(64, code, ip, DecoderOptions::NONE);
        let mut out = Vec::new();
        while d.can_decode() {
            out.push(d.decode());
        }
        out
    }

    #[test]
    fn a_function_with_one_epilogue_has_an_entry_and_an_exit_site() {
        // push rbp; mov rbp,rsp; sub rsp,0x10 | mov [rbp-8],rdi; mov rax,[rbp-8]; add rsp,0x10; pop rbp; ret
        let code = [
            0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x10, // prologue
            0x48, 0x89, 0x7d, 0xf8, // mov [rbp-8], rdi   (break address: 0x1008)
            0x48, 0x8b, 0x45, 0xf8, // mov rax, [rbp-8]
            0x48, 0x83, 0xc4, 0x10, // add rsp, 0x10
            0x5d, // pop rbp
            0xc3, // ret
        ];
        let s = sites(&code, 0x1000, 0x1008, 0).unwrap();
        assert_eq!(s.entry.len(), 2);
        assert_eq!(s.exits.len(), 1);
        assert_eq!(s.exits[0].last().unwrap().mnemonic(), Mnemonic::Ret);
        assert_eq!(span_len(&s.exits[0]), 6); // add rsp; pop rbp; ret
    }

    /// `average(const int *xs, int n)` of fixtures/c_basic at `-O0`, up to its break address.
    const FRAME_POINTER_PROLOGUE: [u8; 23] = [
        0x55, // push rbp                      0x1000
        0x48, 0x89, 0xe5, // mov rbp, rsp      0x1001
        0x48, 0x83, 0xec, 0x20, // sub rsp, 0x20       0x1004
        0x48, 0x89, 0x7d, 0xe8, // mov [rbp-0x18], rdi 0x1008
        0x89, 0x75, 0xe4, // mov [rbp-0x1c], esi       0x100c
        0x48, 0xc7, 0x45, 0xf8, 0, 0, 0, 0, // mov qword [rbp-8], 0  0x100f (break address)
    ];

    #[test]
    fn rsp_s_place_below_the_cfa_is_counted_through_a_frame_pointer_prologue() {
        // .eh_frame: CFA = rbp + 16 there; rbp = rsp + 0x20.
        let code = FRAME_POINTER_PROLOGUE;
        assert_eq!(rsp_cfa_offset(&code, 0x1000, 0x100f, 16), Some(16 + 0x20));
        assert_eq!(
            rsp_cfa_offset(&code, 0x1000, 0x1017, 16),
            Some(16 + 0x20),
            "stores to frame slots move neither register"
        );
        // A leaf without `sub rsp` (`add(int, int)`), after `endbr64`: rsp = rbp, its slots
        // in the red zone below rsp.
        let leaf = [
            0xf3, 0x0f, 0x1e, 0xfa, // endbr64
            0x55, 0x48, 0x89, 0xe5, // push rbp; mov rbp, rsp
            0x89, 0x7d, 0xfc, // mov [rbp-4], edi                   0x1008 (break address)
        ];
        assert_eq!(rsp_cfa_offset(&leaf, 0x1000, 0x1008, 16), Some(16));
    }

    #[test]
    fn rsp_s_place_is_not_guessed_when_the_prologue_moves_it_in_another_way() {
        let code = FRAME_POINTER_PROLOGUE;
        assert_eq!(
            rsp_cfa_offset(&code, 0x1000, 0x100f, 24),
            None,
            "rbp where the rule does not put it"
        );
        assert_eq!(
            rsp_cfa_offset(&code, 0x1000, 0x1010, 16),
            None,
            "not an instruction boundary"
        );
        assert_eq!(
            rsp_cfa_offset(&code, 0x1000, 0x1004, 16),
            Some(16),
            "before `sub rsp`"
        );
        assert_eq!(
            rsp_cfa_offset(&code, 0x1000, 0x1001, 16),
            None,
            "before `mov rbp, rsp`: rbp is the caller's"
        );
        let aligned = [
            0x55, 0x48, 0x89, 0xe5, // push rbp; mov rbp, rsp
            0x48, 0x83, 0xe4, 0xf0, // and rsp, -16: rsp's place depends on its value
            0x90, // nop                                              0x1008
        ];
        assert_eq!(rsp_cfa_offset(&aligned, 0x1000, 0x1008, 16), None);
        let branches = [
            0x55, 0x48, 0x89, 0xe5, // push rbp; mov rbp, rsp
            0xeb, 0x00, // jmp 0x1006
            0x90, // nop                                              0x1006
        ];
        assert_eq!(rsp_cfa_offset(&branches, 0x1000, 0x1006, 16), None);
        let pops = [
            0x55, 0x48, 0x89, 0xe5, // push rbp; mov rbp, rsp
            0x5d, // pop rbp
            0x90, // nop                                              0x1005
        ];
        assert_eq!(rsp_cfa_offset(&pops, 0x1000, 0x1005, 16), None);
    }

    #[test]
    fn a_call_the_trampoline_cannot_run_as_a_jump_keeps_the_ptrace_path() {
        let refused = |call: &[u8]| {
            let mut code = call.to_vec();
            code.extend_from_slice(&[0x48, 0x83, 0xc4, 0x08, 0x5d, 0xc3]); // add rsp, 8; pop rbp; ret
            sites(&code, 0x1000, 0x1000, 0).unwrap_err()
        };
        // Not ending the entry bytes: the callee would return into the middle of the patch.
        assert_eq!(
            refused(&[0x90, 0xff, 0xd0]), // nop; call rax
            "a call within 5 bytes of the break address"
        );
        // Through `rsp`: its operand would be read 8 bytes off once the return address is
        // pushed.
        assert_eq!(
            refused(&[0x90, 0x90, 0xff, 0x54, 0x24, 0x08]), // nop; nop; call [rsp + 8]
            "a call within 5 bytes of the break address"
        );
    }

    #[test]
    fn a_call_through_a_got_slot_ending_the_entry_bytes_jumps_through_the_same_slot() {
        // Position-independent code calls another crate's function through its GOT slot.
        let code = [
            0x48, 0x89, 0x3c, 0x24, // mov [rsp], rdi         0x1000 (break address)
            0xff, 0x15, 0xf6, 0x0f, 0x00, 0x00, // call [rip + 0xff6] (slot 0x2000)  0x1004
            0x48, 0x83, 0xc4, 0x08, // add rsp, 8             0x100a
            0x5d, // pop rbp
            0xc3, // ret
        ];
        let jmp = jump_after_pushing(&entry_trampoline_of(&code, 0, None), 0x100a);
        assert_eq!(jmp.code(), iced_x86::Code::Jmp_rm64);
        assert_eq!(jmp.memory_base(), iced_x86::Register::RIP);
        assert_eq!(jmp.memory_displacement64(), 0x2000);
        // `call rax` in the same place jumps to rax.
        let by_register = [
            0x48, 0x89, 0x3c, 0x24, // mov [rsp], rdi         0x1000 (break address)
            0xff, 0xd0, // call rax                           0x1004
            0x48, 0x83, 0xc4, 0x08, // add rsp, 8             0x1006
            0x5d, // pop rbp
            0xc3, // ret
        ];
        let jmp = jump_after_pushing(&entry_trampoline_of(&by_register, 0, None), 0x1006);
        assert_eq!(jmp.code(), iced_x86::Code::Jmp_rm64);
        assert_eq!(jmp.op0_register(), iced_x86::Register::RAX);
    }

    /// The entry trampoline, decoded, of a function whose code is `code` at 0x1000, entered
    /// there, followed by `padding` bytes of `int3`, capturing nothing; `then` as in
    /// [`Site::Entry`].
    fn entry_trampoline_of(code: &[u8], padding: usize, then: Option<u64>) -> Vec<Instruction> {
        let s = sites(code, 0x1000, 0x1000, padding).unwrap();
        let empty = Program::default();
        let site = Site::Entry(&empty, then);
        let code = trampoline(&test_ring(), 7, site, None, &s.entry, 0x50_0000).unwrap();
        decode_all(&code, 0x50_0000)
    }

    /// The jump that ends `out`, a trampoline that calls nothing and pushes `back` before that
    /// jump, as two 32-bit halves after a `lea` that makes room.
    fn jump_after_pushing(out: &[Instruction], back: u64) -> Instruction {
        assert!(
            !out.iter().any(|i| i.mnemonic() == Mnemonic::Call),
            "no call from the trampoline"
        );
        let n = out.len();
        assert_eq!(out[n - 2].immediate32(), (back >> 32) as u32);
        assert_eq!(out[n - 3].immediate32(), back as u32);
        assert_eq!(out[n - 4].mnemonic(), Mnemonic::Lea);
        assert_eq!(out[n - 1].mnemonic(), Mnemonic::Jmp);
        out[n - 1]
    }

    #[test]
    fn the_last_ret_after_a_call_is_patched_at_the_ret_when_int3_padding_follows_it() {
        // `call f; pop rcx; ret`: the call cannot move into a trampoline, the `ret` alone can,
        // its patch running on into the padding after the function.
        let code = [
            0x48, 0x83, 0xec, 0x08, 0x90, // sub rsp, 8; nop  0x1000 (break address)
            0xe8, 0x10, 0x00, 0x00, 0x00, // call 0x101a      0x1005
            0x59, // pop rcx                                  0x100a
            0xc3, // ret                                      0x100b
        ];
        assert_eq!(
            sites(&code, 0x1000, 0x1000, 2).unwrap_err(),
            "a ret preceded by a branch within 5 bytes",
            "pop rcx, ret and 2 bytes of padding are not enough for a patch"
        );
        // 3 bytes: the patch starts at `pop rcx`, where the call returns to.
        let s = sites(&code, 0x1000, 0x1000, 3).unwrap();
        assert_eq!(s.exits[0].len(), 2);
        assert_eq!(s.exits[0][0].ip(), 0x100a);
        let s = sites(&code, 0x1000, 0x1000, 4).unwrap();
        assert_eq!(s.exits.len(), 1);
        assert_eq!(s.exits[0].len(), 1);
        assert_eq!(s.exits[0][0].ip(), 0x100b);
        assert_eq!(s.entry_exit, None);
        // The patch is a whole jmp, though the ret is one byte.
        assert_eq!(jmp_patch(0x100b, 0x2000, span_len(&s.exits[0])).len(), 5);
        // A jump to that ret lands on the patch's first byte: still patchable.
        let mut targeted = code.to_vec();
        targeted.splice(4..5, [0x74, 0x06]); // je 0x100c (the ret) instead of the nop
        let s = sites(&targeted, 0x1000, 0x1000, 4).unwrap();
        assert_eq!(s.exits[0][0].ip(), 0x100c);
    }

    #[test]
    fn a_getter_whose_ret_comes_within_5_bytes_is_covered_by_the_entry_patch() {
        let code = [
            0x48, 0x8b, 0x07, // mov rax, [rdi]               0x1000 (break address)
            0xc3, // ret                                      0x1003
        ];
        assert_eq!(
            sites(&code, 0x1000, 0x1000, 0).unwrap_err(),
            "the code after the break address ends within 5 bytes"
        );
        let s = sites(&code, 0x1000, 0x1000, 1).unwrap();
        assert_eq!(
            s.entry.len(),
            1,
            "the ret is not among the entry's instructions"
        );
        assert_eq!(s.exits.len(), 1);
        assert_eq!(s.exits[0][0].mnemonic(), Mnemonic::Ret);
        assert_eq!(s.entry_exit, Some(0));
        // The entry trampoline goes on to the exit's trampoline, not back into the patch.
        let out = entry_trampoline_of(&code, 1, Some(0x60_0000));
        let last = out.last().unwrap();
        assert_eq!(last.mnemonic(), Mnemonic::Jmp);
        assert_eq!(last.near_branch_target(), 0x60_0000);
        assert_eq!(out[out.len() - 2].mnemonic(), Mnemonic::Mov);
        // A function that is a lone `ret`: nothing displaced, straight on to its exit.
        let s = sites(&[0xc3], 0x1000, 0x1000, 4).unwrap();
        assert!(s.entry.is_empty());
        assert_eq!(s.entry_exit, Some(0));
        let out = entry_trampoline_of(&[0xc3], 4, Some(0x60_0000));
        assert_eq!(out.last().unwrap().near_branch_target(), 0x60_0000);
        // A branch to that ret from inside the entry's bytes: refused.
        let branchy = [
            0x85, 0xff, // test edi, edi                      0x1000 (break address)
            0x74, 0x00, // je 0x1004                          0x1002
            0xc3, // ret                                      0x1004
        ];
        assert_eq!(
            sites(&branchy, 0x1000, 0x1000, 4).unwrap_err(),
            "a branch targets the bytes the entry jump would replace"
        );
    }

    #[test]
    fn a_direct_call_ending_the_entry_bytes_runs_as_a_jump_with_its_own_return_address() {
        // `unimplemented!()`: the body starts with the call that panics.
        let code = [
            0xe8, 0x10, 0x00, 0x00, 0x00, // call 0x1015      0x1000 (break address)
            0x48, 0x83, 0xc4, 0x08, // add rsp, 8             0x1005
            0x5d, // pop rbp
            0xc3, // ret
        ];
        assert_eq!(sites(&code, 0x1000, 0x1000, 0).unwrap().entry.len(), 1);
        let jmp = jump_after_pushing(&entry_trampoline_of(&code, 0, None), 0x1005);
        assert_eq!(jmp.near_branch_target(), 0x1015);
    }

    #[test]
    fn a_loop_back_into_the_entry_bytes_keeps_the_ptrace_path() {
        // 0x1000: mov eax, 1 (5 bytes) ; 0x1005: dec edi ; 0x1007: jnz 0x1003?? -> target inside
        let code = [
            0x31, 0xc0, // xor eax, eax        0x1000 (break address)
            0x01, 0xf8, // add eax, edi        0x1002  <- loop head
            0xff, 0xcf, // dec edi             0x1004
            0x75, 0xfa, // jnz 0x1002          0x1006
            0xc3, // ret                       0x1008
        ];
        assert_eq!(
            sites(&code, 0x1000, 0x1000, 0).unwrap_err(),
            "a branch targets the bytes the entry jump would replace"
        );
    }

    #[test]
    fn dead_bytes_after_a_short_jmp_may_be_covered_unless_something_targets_them() {
        let code = [
            0xeb, 0x03, // jmp 0x1005        0x1000 (break address)
            0x90, 0x90, 0x90, // dead        0x1002
            0x48, 0x89, 0xf8, // mov rax, rdi  0x1005
            0xc3, // ret                     0x1008  (not a 5-byte site: preceded by a target)
        ];
        // The ret is too close to a branch target, so the function is refused — but for that
        // reason, not for the entry.
        assert_eq!(
            sites(&code, 0x1000, 0x1000, 0).unwrap_err(),
            "a branch targets the bytes before a ret"
        );
        let mut longer = code.to_vec();
        longer.splice(8..8, [0x48, 0x83, 0xc0, 0x01]); // add rax, 1 before the ret
        let s = sites(&longer, 0x1000, 0x1000, 0).unwrap();
        assert_eq!(s.entry.len(), 1, "only the jmp is displaced");
        assert_eq!(jmp_patch(0x1000, 0x2000, span_len(&s.entry)).len(), 5);
        // Something jumps into the dead bytes: refused.
        let mut targeted = longer.clone();
        targeted.extend_from_slice(&[0xeb, 0xf4]); // jmp 0x1003 (from 0x100d)
        assert_eq!(
            sites(&targeted, 0x1000, 0x1000, 0).unwrap_err(),
            "a branch targets the bytes the entry jump would replace"
        );
    }

    #[test]
    fn a_function_with_a_jump_table_keeps_the_ptrace_path() {
        let code = [
            0x48, 0x89, 0xf8, 0x48, 0x89, 0xf8, // mov rax, rdi (x2)
            0xff, 0xe0, // jmp rax
            0xc3,
        ];
        assert_eq!(
            sites(&code, 0x1000, 0x1000, 0).unwrap_err(),
            "an indirect jump (jump table) could target the patched bytes"
        );
    }

    #[test]
    fn a_trampoline_relocates_what_it_displaces_and_jumps_back() {
        let ring = test_ring();
        // lea rax, [rip+0x100] at 0x40_0000 (7 bytes, rip-relative)
        let displaced = decode_all(&[0x48, 0x8d, 0x05, 0x00, 0x01, 0x00, 0x00], 0x40_0000);
        let empty = Program::default();
        let code = trampoline(
            &ring,
            7,
            Site::Entry(&empty, None),
            None,
            &displaced,
            0x50_0000,
        )
        .unwrap();
        let out = decode_all(&code, 0x50_0000);
        let lea = out
            .iter()
            .find(|i| i.mnemonic() == Mnemonic::Lea && i.is_ip_rel_memory_operand())
            .expect("the displaced lea");
        assert_eq!(
            lea.ip_rel_memory_address(),
            0x40_0107,
            "same target after relocation"
        );
        let back = out.last().unwrap();
        assert_eq!(back.mnemonic(), Mnemonic::Jmp);
        assert_eq!(back.near_branch_target(), 0x40_0007);
        assert!(out
            .iter()
            .any(|i| i.has_lock_prefix() && i.mnemonic() == Mnemonic::Xadd));
        // fs:[0] read absolutely, not rip-relative.
        let fs = out
            .iter()
            .find(|i| i.segment_prefix() == iced_x86::Register::FS)
            .expect("the thread pointer load");
        assert!(!fs.is_ip_rel_memory_operand());
        assert_eq!(fs.memory_displacement64(), 0);
    }

    fn test_ring() -> Ring {
        Ring {
            region: Region {
                start: 0x7000_0000,
                len: HEADER + 4096,
            },
            capacity: 4096,
            tail: 0,
            shared: None,
            early: Default::default(),
        }
    }

    #[test]
    fn a_limited_entry_takes_a_capture_atomically_and_runs_the_displaced_code_either_way() {
        // lea rax, [rip+0x100] at 0x40_0000 (7 bytes, rip-relative)
        let displaced = decode_all(&[0x48, 0x8d, 0x05, 0x00, 0x01, 0x00, 0x00], 0x40_0000);
        let empty = Program::default();
        let words = 0x6000_0040;
        let site = Site::Entry(&empty, None);
        let code = trampoline(&test_ring(), 7, site, Some(words), &displaced, 0x50_0000).unwrap();
        let out = decode_all(&code, 0x50_0000);
        // The gate reads the count (absolute address) and takes one with `lock cmpxchg`.
        assert!(out.iter().any(|i| i.mnemonic() == Mnemonic::Mov
            && i.op_kind(1) == iced_x86::OpKind::Immediate64
            && i.immediate64() == words));
        assert!(out
            .iter()
            .any(|i| i.has_lock_prefix() && i.mnemonic() == Mnemonic::Cmpxchg));
        // No capture left: `jrcxz` straight to the displaced code, which appears once, is
        // relocated, and jumps back.
        let jrcxz = out
            .iter()
            .find(|i| i.mnemonic() == Mnemonic::Jrcxz)
            .expect("the gate's test of the count");
        let leas: Vec<&Instruction> = out
            .iter()
            .filter(|i| i.mnemonic() == Mnemonic::Lea && i.is_ip_rel_memory_operand())
            .collect();
        assert_eq!(leas.len(), 1);
        assert_eq!(leas[0].ip_rel_memory_address(), 0x40_0107);
        assert!(jrcxz.near_branch_target() < leas[0].ip());
        let after = out.iter().find(|i| i.ip() == leas[0].next_ip()).unwrap();
        assert_eq!(after.mnemonic(), Mnemonic::Jmp);
        assert_eq!(after.near_branch_target(), 0x40_0007);
        // The capture (its `lock xadd` on the ring's head) comes after, and jumps to the
        // displaced code when it is done.
        let xadd = out
            .iter()
            .find(|i| i.has_lock_prefix() && i.mnemonic() == Mnemonic::Xadd)
            .expect("the capture");
        assert!(xadd.ip() > leas[0].ip());
        let last = out.last().unwrap();
        assert_eq!(last.mnemonic(), Mnemonic::Jmp);
        assert_eq!(last.near_branch_target(), leas[0].ip());
    }

    #[test]
    fn a_limited_exit_runs_its_epilogue_at_once_when_exits_are_off() {
        // mov rax, [rip+0x100]; ret at 0x40_0000 (7 + 1 bytes)
        let displaced = decode_all(&[0x48, 0x8b, 0x05, 0x00, 0x01, 0x00, 0x00, 0xc3], 0x40_0000);
        let empty = Program::default();
        let words = 0x6000_0040;
        let site = Site::Exit(&empty, &empty);
        let code = trampoline(&test_ring(), 7, site, Some(words), &displaced, 0x50_0000).unwrap();
        let out = decode_all(&code, 0x50_0000);
        assert!(out.iter().any(|i| i.mnemonic() == Mnemonic::Mov
            && i.op_kind(1) == iced_x86::OpKind::Immediate64
            && i.immediate64() == words + EXITS_ON));
        let jrcxz = out
            .iter()
            .find(|i| i.mnemonic() == Mnemonic::Jrcxz)
            .expect("the gate's test of the exits word");
        // The epilogue twice, both relocated: at once (exits off), and after the capture.
        let loads: Vec<&Instruction> = out
            .iter()
            .filter(|i| i.mnemonic() == Mnemonic::Mov && i.is_ip_rel_memory_operand())
            .collect();
        assert_eq!(loads.len(), 2);
        assert!(loads.iter().all(|i| i.ip_rel_memory_address() == 0x40_0107));
        // Exits off: pop rcx, lea rsp (back above the red zone), then the epilogue.
        let off = out
            .iter()
            .position(|i| i.ip() == jrcxz.near_branch_target())
            .unwrap();
        assert_eq!(out[off].mnemonic(), Mnemonic::Pop);
        assert_eq!(out[off + 1].mnemonic(), Mnemonic::Lea);
        assert_eq!(out[off + 2].ip(), loads[0].ip());
        let rets: Vec<&Instruction> = out
            .iter()
            .filter(|i| i.mnemonic() == Mnemonic::Ret)
            .collect();
        assert_eq!(rets.len(), 2);
        assert_eq!(rets[0].ip(), loads[0].next_ip());
        // Exits on: the capture runs before the second copy.
        let xadd = out
            .iter()
            .find(|i| i.has_lock_prefix() && i.mnemonic() == Mnemonic::Xadd)
            .expect("the capture");
        assert!(rets[0].ip() < xadd.ip() && xadd.ip() < rets[1].ip());
    }
}

/// What [`probe`] saw: every record of the probed functions, in ring order, and the program's
/// end.
#[derive(Debug)]
pub struct ProbeRun {
    /// (function name, record): entries carry argument registers, exits `rax`/`rdx`.
    pub records: Vec<ProbeRecord>,
    /// Functions patched in process (entry and every exit).
    pub patched: Vec<String>,
    /// Functions left to the ptrace path, with the reason.
    pub refused: Vec<(String, &'static str)>,
    /// Patched functions whose values the capture programs do not cover (their records carry
    /// registers only), with the reason.
    pub uncovered: Vec<(String, &'static str)>,
    /// Whether carve read the ring in place, shared with the program ([`Sharing`]).
    pub ring_shared: bool,
    /// The program's exit code.
    pub exit_code: i32,
    /// Times the ring was drained with at least one record.
    pub drains: usize,
    /// Times the drainer found nothing new (it then sleeps 200 µs).
    pub empty_polls: usize,
}

/// One record of [`ProbeRun`].
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeRecord {
    /// Index in the `functions` given to [`probe`].
    pub function: usize,
    /// True at entry, false at exit (and at the state capture before an exit).
    pub entry: bool,
    pub thread: u64,
    pub args: [u64; 6],
    pub ret: [u64; 2],
    /// Decoded from the record's registers and copied regions exactly as the ptrace path
    /// decodes a stopped thread: the arguments at entry; at an exit, the returned value
    /// (named `return`) followed by the receiver and `&mut` arguments' targets after the call.
    pub values: Vec<Arg>,
}

/// Capture programs of one probed function and what decoding its records needs.
struct Probed {
    detail: crate::dwarf::FunctionDetail,
    /// CFA offset from rsp at the break address.
    cfa_offset: Option<i64>,
    state: Vec<crate::capture::StateRoot>,
    covered: bool,
}

/// Experimental, the in-process path without `carve record` (issue 15): runs `program` with
/// `args`, patches the named functions (DWARF names or paths) in process with their capture
/// programs (registers only for those the programs do not cover), collects their records
/// while the program runs, with no ptrace stop per call, and decodes them. The test suite and
/// `recorder/examples/inprocess_probe.rs` (a benchmark) use it.
pub fn probe(
    program: &std::path::Path,
    args: &[std::ffi::OsString],
    functions: &[&str],
    output: Option<&std::path::Path>,
    ring_bytes: u64,
) -> Result<ProbeRun, RecordError> {
    probe_with(
        program,
        args,
        functions,
        output,
        ring_bytes,
        Sharing::Shared,
    )
}

/// [`probe`], with the ring shared with carve or kept private to the program (read with
/// system calls, the way carve reads it when the program cannot share it).
pub fn probe_with(
    program: &std::path::Path,
    args: &[std::ffi::OsString],
    functions: &[&str],
    output: Option<&std::path::Path>,
    ring_bytes: u64,
    sharing: Sharing,
) -> Result<ProbeRun, RecordError> {
    use nix::sys::ptrace;
    use nix::sys::wait::{waitpid, WaitStatus};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    let limits = crate::decode::Limits::default();
    let mut info = crate::dwarf::DebugInfo::load(program)?;
    let pid = crate::process::spawn(program, args, output)?;
    let kill = scopeguard_kill(pid);
    let bias = crate::process::load_bias(pid, program, info.first_load_vaddr, info.is_pie)?;
    let mem = ProcessMemory::open(pid)?;
    let mut targets = Vec::new();
    let mut refused = Vec::new();
    let mut uncovered = Vec::new();
    let mut probed: Vec<Option<Probed>> = Vec::new();
    for (index, name) in functions.iter().enumerate() {
        let Some(f) = info
            .functions()
            .iter()
            .find(|f| f.name == *name || f.path == *name)
            .cloned()
        else {
            refused.push((name.to_string(), "no such function in the DWARF"));
            probed.push(None);
            continue;
        };
        let d = info.detail(&f)?;
        let rule = crate::unwind::cfa_rule(&info, d.breakpoint.0).filter(|r| r.register == 7);
        let programs = match rule {
            None => Err("the CFA is not rsp-based at the break address"),
            Some(r) => {
                let hidden = info
                    .code(f.low_pc, f.high_pc)
                    .and_then(|code| crate::capture::hidden_slot(&d, code, f.low_pc.0));
                crate::capture::programs(&info.types, limits, &d, d.breakpoint.0, r.offset, hidden)
            }
        };
        let (entry, exit, state, covered) = match programs {
            Ok(p) => (p.entry, p.exit, p.state_slots, true),
            Err(why) => {
                uncovered.push((name.to_string(), why));
                (Program::default(), Program::default(), Vec::new(), false)
            }
        };
        targets.push(Target {
            function: index as u32,
            low: bias.relocate(f.low_pc).0,
            high: bias.relocate(f.high_pc).0,
            padding: info.padding_after(f.high_pc, JMP_LEN - 1),
            entry_at: bias.relocate(d.breakpoint).0,
            entry,
            exit,
            limit: None,
        });
        probed.push(Some(Probed {
            detail: d,
            cfa_offset: rule.map(|r| r.offset),
            state,
            covered,
        }));
    }
    let state = |function: u32, site: u64| -> Result<Program, Refusal> {
        let Some(Some(p)) = probed.get(function as usize) else {
            return Ok(Program::default());
        };
        if p.state.is_empty() {
            return Ok(Program::default());
        }
        let file = bias.unrelocate(crate::addr::RuntimeAddr(site)).0;
        let at_site = crate::unwind::cfa_rule(&info, file)
            .filter(|r| r.register == 7)
            .ok_or("the CFA is not rsp-based at an exit")?;
        let shift = p.cfa_offset.ok_or("no CFA at the break address")? - at_site.offset;
        crate::capture::state_at(&info.types, limits, &p.state, shift)
    };
    // At the exec stop the only thread is here, at the loader's first instruction.
    let scratch = crate::process::get_regs(pid)?.rip;
    let installed = install(pid, &mem, scratch, &targets, &state, ring_bytes, sharing)?;
    let ring_shared = installed.ring.shared.is_some();
    for (f, why) in installed.refused {
        refused.push((functions[f as usize].to_string(), why));
    }
    let patched: Vec<String> = installed
        .patched
        .iter()
        .map(|&f| functions[f as usize].to_string())
        .collect();
    ptrace::setoptions(pid, ptrace::Options::PTRACE_O_TRACEEXIT).map_err(|source| {
        RecordError::Ptrace {
            op: "SETOPTIONS",
            pid: pid.as_raw(),
            source,
        }
    })?;
    // The ring is drained from another thread while the program runs; the exit stop (the
    // process's memory still there) drains the rest.
    let stop = Arc::new(AtomicBool::new(false));
    let drainer = {
        let stop = stop.clone();
        let mut ring = installed.ring;
        let mem = ProcessMemory::open(pid)?;
        std::thread::spawn(
            move || -> Result<(Ring, Drained, usize, usize), RecordError> {
                let mut out = Drained::default();
                let (mut drains, mut empty) = (0, 0);
                while !stop.load(Ordering::Acquire) {
                    if ring.drain(&mem, &mut out)? == 0 {
                        empty += 1;
                        std::thread::sleep(std::time::Duration::from_micros(200));
                    } else {
                        drains += 1;
                    }
                }
                Ok((ring, out, drains, empty))
            },
        )
    };
    crate::process::resume(pid, None)?;
    let wait_err = |source| RecordError::Ptrace {
        op: "waitpid",
        pid: pid.as_raw(),
        source,
    };
    let exit_code = loop {
        match waitpid(pid, None).map_err(wait_err)? {
            WaitStatus::PtraceEvent(_, _, ev) if ev == libc::PTRACE_EVENT_EXIT => {
                stop.store(true, Ordering::Release);
                let (mut ring, mut out, mut drains, empty_polls) =
                    drainer.join().expect("drainer panicked")?;
                while ring.drain(&mem, &mut out)? > 0 {
                    drains += 1;
                }
                crate::process::resume(pid, None)?;
                let code = match waitpid(pid, None).map_err(wait_err)? {
                    WaitStatus::Exited(_, code) => code,
                    WaitStatus::Signaled(_, sig, _) => 128 + sig as i32,
                    _ => -1,
                };
                std::mem::forget(kill);
                let records = decode_probed(&info.types, limits, &probed, &out);
                return Ok(ProbeRun {
                    records,
                    patched,
                    refused,
                    uncovered,
                    ring_shared,
                    exit_code: code,
                    drains,
                    empty_polls,
                });
            }
            WaitStatus::Stopped(_, sig) => crate::process::resume(pid, Some(sig))?,
            WaitStatus::Exited(_, code) => break code,
            WaitStatus::Signaled(_, sig, _) => break 128 + sig as i32,
            _ => crate::process::resume(pid, None)?,
        }
    };
    stop.store(true, Ordering::Release);
    std::mem::forget(kill);
    Ok(ProbeRun {
        records: Vec::new(),
        patched,
        refused,
        uncovered,
        ring_shared,
        exit_code,
        drains: 0,
        empty_polls: 0,
    })
}

/// Decodes the probe's records, pairing each exit with its thread's entry (the hidden return
/// pointer and the targets read again come from the entry, as on the ptrace path).
fn decode_probed(
    types: &crate::types::TypeTable,
    limits: crate::decode::Limits,
    probed: &[Option<Probed>],
    records: &Drained,
) -> Vec<ProbeRecord> {
    use crate::capture::CapturedMachine;
    use crate::decode::Decoder;
    /// Per thread, the open calls: the hidden return pointer and the targets read at the exit.
    type Open = (Option<u64>, Vec<(String, usize, u64)>);
    let mut stacks: std::collections::HashMap<u64, Vec<Open>> = Default::default();
    let mut states: std::collections::HashMap<u64, Vec<Arg>> = Default::default();
    // Per thread, the last state record's regions: a result returned in memory is copied there.
    let mut state_memory: std::collections::HashMap<u64, crate::capture::Captured> =
        Default::default();
    let mut out: Vec<ProbeRecord> = Vec::new();
    for r in records.records() {
        let p = probed.get(r.function as usize).and_then(|p| p.as_ref());
        let decoder = Decoder {
            types,
            mem: &r.memory,
            limits,
        };
        let mut values = Vec::new();
        match (r.kind, p) {
            (ENTRY, Some(p)) => {
                let machine = CapturedMachine {
                    regs: &r.regs,
                    mem: &r.memory,
                };
                let cfa = p.cfa_offset.map(|o| r.rsp.wrapping_add(o as u64));
                let mut effects = Vec::new();
                if let (Some(cfa), true) = (cfa, p.covered) {
                    let file_pc = p.detail.breakpoint.0;
                    values =
                        crate::tracer::decode_args(&decoder, &p.detail, &machine, file_pc, cfa);
                    for (param, arg) in p.detail.params.iter().zip(&values) {
                        let pointee = param.ty.and_then(|ty| {
                            let t = types.get(ty)?;
                            let TypeKind::Pointer { pointee: Some(pt) } = t.kind else {
                                return None;
                            };
                            ((t.name.starts_with("&mut ")
                                || (param.name == "self" && t.name.starts_with('&')))
                                && types.get(pt)?.size > 0)
                                .then_some(pt)
                        });
                        if let (Some(pt), carve_storage::Value::Ref { addr, .. }) =
                            (pointee, &arg.value)
                        {
                            effects.push((param.name.clone(), pt, *addr));
                        }
                    }
                }
                let hidden = match p.detail.hidden_return {
                    Some(crate::abi::EntryRdi::Register(reg)) => r.regs.get(reg as usize).copied(),
                    Some(crate::abi::EntryRdi::Stack(at)) => {
                        let mut w = [0u8; 8];
                        r.memory
                            .read(r.rsp.wrapping_add_signed(at), &mut w)
                            .then(|| u64::from_le_bytes(w))
                    }
                    None => None,
                };
                stacks.entry(r.thread).or_default().push((hidden, effects));
            }
            (STATE, _) => {
                // Folded into the exit record that follows it on this thread.
                state_memory.insert(r.thread, r.memory.to_captured());
                if let Some((_, effects)) = stacks.get(&r.thread).and_then(|s| s.last()) {
                    let after = effects
                        .iter()
                        .map(|(name, ty, addr)| Arg {
                            name: name.clone(),
                            value: decoder.at(*ty, *addr),
                        })
                        .collect();
                    states.insert(r.thread, after);
                }
                continue;
            }
            (EXIT, Some(p)) => {
                let (hidden, _) = stacks
                    .get_mut(&r.thread)
                    .and_then(|s| s.pop())
                    .unwrap_or((None, Vec::new()));
                if let (Some(ty), true) = (p.detail.return_type, p.covered) {
                    let rr = crate::abi::ReturnRegs {
                        rax: r.regs[0],
                        rdx: r.regs[1],
                        xmm0: r.xmm[0],
                        xmm1: r.xmm[1],
                        hidden,
                    };
                    let state = state_memory.remove(&r.thread).unwrap_or_default();
                    let both = crate::capture::EitherMemory(&r.memory, &state);
                    let decoder = Decoder {
                        types,
                        mem: &both,
                        limits,
                    };
                    let (value, _) =
                        crate::tracer::decode_return(&decoder, ty, &rr, p.detail.rust_abi);
                    values.push(Arg {
                        name: "return".into(),
                        value,
                    });
                }
                values.extend(states.remove(&r.thread).unwrap_or_default());
            }
            _ => {}
        }
        out.push(ProbeRecord {
            function: r.function as usize,
            entry: r.kind == ENTRY,
            thread: r.thread,
            args: r.args(),
            ret: [r.regs[0], r.regs[1]],
            values,
        });
    }
    out
}

/// Experimental (issue 15): for each function of `program` that `select` keeps, whether the
/// in-process path can patch it (`None`) or why it keeps the ptrace path — the same rule
/// [`probe`] applies, on the file's code, without running anything.
pub fn patchable(
    program: &std::path::Path,
    select: impl Fn(&crate::dwarf::FunctionEntry) -> bool,
) -> Result<Vec<(String, Option<&'static str>)>, RecordError> {
    let mut info = crate::dwarf::DebugInfo::load(program)?;
    let chosen: Vec<_> = info
        .functions()
        .iter()
        .filter(|f| select(f))
        .cloned()
        .collect();
    let mut out = Vec::new();
    for f in chosen {
        let d = info.detail(&f)?;
        let verdict = match info.code(f.low_pc, f.high_pc) {
            None => Some("code not in .text"),
            Some(code) => sites(
                code,
                f.low_pc.0,
                d.breakpoint.0,
                info.padding_after(f.high_pc, JMP_LEN - 1),
            )
            .err(),
        };
        out.push((f.path.clone(), verdict));
    }
    Ok(out)
}

/// Kills `pid` when dropped (an error half-way must not leave a stopped program behind).
fn scopeguard_kill(pid: Pid) -> impl Drop {
    struct Kill(Pid);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = nix::sys::signal::kill(self.0, nix::sys::signal::Signal::SIGKILL);
            let _ = nix::sys::wait::waitpid(self.0, None);
        }
    }
    Kill(pid)
}
