//! Capture programs for the in-process path (issue 15, layer 2; docs/inprocess-capture.md):
//! per function, the list of copies a trampoline makes so that the value decoder, run later
//! over the copied regions ([`Captured`]), reads exactly what it would have read from the live
//! process. Pure: built from the DWARF locations and lowered types, no I/O.
//!
//! A copy is only ever made behind a pointer Rust guarantees valid (a reference, a `Box`, the
//! buffer of a `&str`/`&[T]`/`String`/`Vec` for its length), never behind a raw pointer: a bad
//! read inside the program would crash it. A function whose values would need more (trait
//! objects, maps, sequences of values holding pointers, enums holding pointers...) is refused
//! and keeps the ptrace path. Whatever the copies miss reads as unreadable, so the decoder
//! marks it not read: a capture is never a wrong value.

use std::cell::{Cell, RefCell};

use crate::abi::{passed_indirectly, EntryRdi, ReturnPlace, ReturnRegs};
use crate::decode::Limits;
use crate::dwarf::FunctionDetail;
use crate::location::{evaluate, frame_relative, Machine, Memory, Place};
use crate::types::{TypeId, TypeKind, TypeTable};

/// DWARF register numbers of rax, rdx, rbp and rsp.
const RAX: u16 = 0;
const RDX: u16 = 1;
const RBP: u16 = 6;
const RSP: u16 = 7;

/// Copies of one capture (entry, exit state, exit) at most: each takes a table slot on the
/// trampoline's stack.
pub(crate) const MAX_COPIES: usize = 48;
/// Bytes of the copied regions of one record at most (the ring's slack after its end).
pub(crate) const MAX_CAPTURE_BYTES: u64 = 64 * 1024;

/// An 8-byte word the trampoline reads: a register saved at the site, or a word of a region
/// copied earlier by the same program (read from the program's memory at that region's source).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Word {
    Reg(u16),
    In { region: usize, offset: u64 },
}

/// Where a copy starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Base {
    /// `rsp` at the site plus this offset (a frame slot).
    Rsp(i64),
    /// The pointer in this word plus `add`; nothing is copied when the pointer is null or the
    /// region holding it was not copied.
    Ptr { word: Word, add: u64 },
}

/// How many bytes a copy takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Len {
    Const(u64),
    /// `min(word, max) * scale` (a length field, bounded by the decoder's limit).
    Count {
        word: Word,
        max: u64,
        scale: u64,
    },
    /// `min(end - the copy's start, max)`, nothing when `end` is below the start: what a
    /// slice iterator or `Chars` has left between its two pointers.
    Span {
        end: Word,
        max: u64,
    },
}

/// One copy: a region of the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Copy {
    pub base: Base,
    pub len: Len,
}

impl Copy {
    fn max_len(&self) -> u64 {
        match self.len {
            Len::Const(n) => n,
            Len::Count { max, scale, .. } => max * scale,
            Len::Span { max, .. } => max,
        }
    }
}

/// The copies of one capture, in order (a copy's `Word::In` names an earlier one).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Program {
    pub copies: Vec<Copy>,
}

impl Program {
    /// Bytes the regions take in a record at most (each: address, length, bytes padded to 8).
    pub(crate) fn max_bytes(&self) -> u64 {
        self.copies
            .iter()
            .map(|c| 16 + c.max_len().div_ceil(8) * 8)
            .sum()
    }
}

/// What the tracer needs to capture one function in process: its programs, and the state
/// program of each exit site (by the site's file address).
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// The function's code, `[low, high)` file addresses.
    pub code: (crate::addr::FileAddr, crate::addr::FileAddr),
    /// `int3` bytes after the code that the patches may cover.
    pub padding: usize,
    pub entry: Program,
    pub exit: Program,
    pub states: std::collections::HashMap<u64, Program>,
}

/// The plan for a function whose code (at file address `low`) is `code`, followed by
/// `padding` bytes of `int3` (see [`crate::inprocess::sites`]), with break address `file_pc`
/// and CFA rule `entry_cfa` there; `cfa_at` gives the CFA rule at a file address. Refused (the
/// function keeps the ptrace path) when the site rule refuses it or the programs do not cover
/// its parameters and result.
#[allow(clippy::too_many_arguments)]
pub(crate) fn plan(
    types: &TypeTable,
    limits: Limits,
    detail: &FunctionDetail,
    code: &[u8],
    low: u64,
    padding: usize,
    entry_cfa: Option<crate::unwind::CfaRule>,
    cfa_at: &dyn Fn(u64) -> Option<crate::unwind::CfaRule>,
) -> Result<Plan, Refusal> {
    let file_pc = detail.breakpoint.0;
    let k = match entry_cfa {
        Some(r) if r.register == RSP => r.offset,
        // A frame-pointer prologue (C code): rsp's place below the CFA, counted through it.
        Some(r) if r.register == RBP => crate::inprocess::rsp_cfa_offset(
            code, low, file_pc, r.offset,
        )
        .ok_or("the CFA is rbp-based and the code before the break address hides rsp's place")?,
        _ => return Err("the CFA is not rsp-based at the break address"),
    };
    let sites = crate::inprocess::sites(code, low, file_pc, padding)?;
    let p = programs(
        types,
        limits,
        detail,
        file_pc,
        k,
        hidden_slot(detail, code, low),
    )?;
    let mut states = std::collections::HashMap::new();
    for exit in &sites.exits {
        let at = exit[0].ip();
        let state = if p.state_slots.is_empty() {
            Program::default()
        } else {
            let site = cfa_at(at)
                .filter(|r| r.register == RSP)
                .ok_or("the CFA is not rsp-based at an exit")?;
            // The state program runs before the displaced epilogue: a store there (the last
            // word of a result written through the hidden pointer, or through a `&mut`) would
            // come after the copy.
            if exit
                .iter()
                .any(|i| i.op_count() > 0 && i.op0_kind() == iced_x86::OpKind::Memory)
            {
                return Err("a store among the instructions an exit patch displaces");
            }
            state_at(types, limits, &p.state_slots, k - site.offset)?
        };
        states.insert(at, state);
    }
    Ok(Plan {
        code: (
            crate::addr::FileAddr(low),
            crate::addr::FileAddr(low + code.len() as u64),
        ),
        padding,
        entry: p.entry,
        exit: p.exit,
        states,
    })
}

/// The frame slot (an offset from `rsp` at the break address) holding the hidden return
/// pointer of a function returning its result in memory, from which the exit sites read it
/// back: the slot the straight-line code from the function's start (prologue and on, up to
/// the first branch or call) spills rdi's incoming value to, as code built without
/// optimization does. `None` when no slot holds it, or when any other store of the function
/// (`code`, at file address `low`) writes the slot: optimized code keeps the pointer in a
/// register and reuses slots.
pub(crate) fn hidden_slot(detail: &FunctionDetail, code: &[u8], low: u64) -> Option<i64> {
    use iced_x86::{Decoder, DecoderOptions, InstructionInfoFactory, Register};
    // The tracer decodes the result behind the pointer the entry had.
    detail.hidden_return?;
    let at = crate::abi::rdi_spill_after(code, low)?;
    let mut decoder = Decoder::with_ip(64, code, low, DecoderOptions::NONE);
    let mut info = InstructionInfoFactory::new();
    let mut writes = 0;
    while decoder.can_decode() {
        let i = decoder.decode();
        for mem in info.info(&i).used_memory() {
            let written = crate::abi::writes(mem.access());
            let d = mem.displacement() as i64;
            if written
                && mem.base() == Register::RSP
                && mem.index() == Register::None
                && d < at + 8
                && at < d + 8
            {
                writes += 1;
            }
        }
    }
    // The spill itself and nothing else.
    (writes == 1).then_some(at)
}

/// The programs of one function: at its break address, and at each exit site before the
/// epilogue (`state`, the receiver and `&mut` arguments after the call) and at the `ret`
/// (`exit`, the return value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Programs {
    pub entry: Program,
    /// Built for a given exit site with [`state_at`]: frame slots, as offsets from the entry's
    /// `rsp`.
    pub state_slots: Vec<StateRoot>,
    pub exit: Program,
}

/// A pointer argument whose target the exit reads again: its frame slot at the break address
/// (`rsp + slot`) and the pointee's type; for a `&mut [T]` (`slice`), the slice's own type,
/// whose pointer and length the slot holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StateRoot {
    pub slot: i64,
    pub pointee: TypeId,
    pub slice: bool,
}

/// Why a function keeps the ptrace path.
pub(crate) type Refusal = &'static str;

/// Symbolic `rsp` values the locations are evaluated with (twice, so that an address that
/// does not move with `rsp` is seen).
const RSP_A: u64 = 0x4000_0000_0000;
const RSP_B: u64 = 0x4100_0000_0000;
/// Values a symbolic memory read returns: `LOADED + k << 32` for the k-th read.
const LOADED: u64 = 0x6000_0000_0000;
/// Symbolic return registers.
const RET_RAX: u64 = 0xa5a5_0000_0000_0001;
const RET_RDX: u64 = 0xa5a5_0000_0000_0002;
const RET_HIDDEN: u64 = 0xa5a5_0000_0000_0003;

/// A machine whose only known register is `rsp`; memory near `rsp` reads as a distinct
/// symbolic value per read (remembered, with its offset), anything else gives up.
struct Symbolic {
    rsp: u64,
    reads: RefCell<Vec<i64>>,
    gave_up: Cell<bool>,
}

impl Memory for Symbolic {
    fn read(&self, addr: u64, buf: &mut [u8]) -> bool {
        let off = addr.wrapping_sub(self.rsp) as i64;
        if !(-(1 << 20)..(1 << 20)).contains(&off) || buf.len() > 8 {
            self.gave_up.set(true);
            return false;
        }
        let mut reads = self.reads.borrow_mut();
        let v = LOADED + ((reads.len() as u64) << 32);
        reads.push(off);
        let b = v.to_le_bytes();
        buf.copy_from_slice(&b[..buf.len()]);
        true
    }
}

impl Machine for Symbolic {
    fn register(&self, r: u16) -> Option<u64> {
        if r == RSP {
            Some(self.rsp)
        } else {
            self.gave_up.set(true);
            None
        }
    }
}

/// Where a parameter's value is at the break address, relative to `rsp`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Root {
    /// Not located (optimised out, needs an entry value...): the same on both paths.
    Nowhere,
    /// In a register (its low bytes).
    Register(u16),
    /// At `rsp + slot`.
    Slot(i64),
    /// At the pointer stored at `rsp + slot`, plus `add`.
    Behind { slot: i64, add: u64 },
    /// Bytes assembled from slots and registers (pieces): the slots read.
    Pieces(Vec<i64>),
}

fn locate(
    detail: &FunctionDetail,
    expr: &crate::dwarf::Expr,
    rsp: u64,
    cfa_offset: i64,
) -> Result<Root, Refusal> {
    let m = Symbolic {
        rsp,
        reads: RefCell::new(Vec::new()),
        gave_up: Cell::new(false),
    };
    let cfa = rsp.wrapping_add(cfa_offset as u64);
    let frame_base = detail.frame_base.as_ref().and_then(|fb| {
        match evaluate(fb, detail.encoding, &m, None, Some(cfa)) {
            Place::Register(r) => m.register(r),
            Place::Address(a) => Some(a),
            _ => None,
        }
    });
    let place = evaluate(expr, detail.encoding, &m, frame_base, Some(cfa));
    if m.gave_up.get() {
        return Err("a parameter's location needs registers other than rsp");
    }
    let reads = m.reads.into_inner();
    let near = |a: u64| {
        let off = a.wrapping_sub(rsp) as i64;
        (-(1 << 20)..(1 << 20)).contains(&off).then_some(off)
    };
    Ok(match place {
        Place::Unavailable(_) => Root::Nowhere,
        Place::Register(r) => Root::Register(r),
        Place::Bytes(_) => Root::Pieces(reads),
        Place::Address(a) => match near(a) {
            Some(off) => Root::Slot(off),
            None => {
                let k = (a.wrapping_sub(LOADED) >> 32) as usize;
                let add = a.wrapping_sub(LOADED + ((k as u64) << 32));
                match reads.get(k) {
                    Some(&slot) if a >= LOADED && add < (1 << 32) => Root::Behind { slot, add },
                    _ => return Err("a parameter's location is not relative to rsp"),
                }
            }
        },
    })
}

/// The roots of every parameter at the break address (`file_pc`), with `rsp`-based CFA at
/// `rsp + cfa_offset`; the same with two `rsp` values, else refused.
fn roots(
    detail: &FunctionDetail,
    file_pc: u64,
    cfa_offset: i64,
) -> Result<Vec<(Option<TypeId>, Root)>, Refusal> {
    detail
        .params
        .iter()
        .map(|p| {
            let root = match p.location.at(file_pc) {
                None => Root::Nowhere,
                Some(expr) => {
                    let a = locate(detail, expr, RSP_A, cfa_offset)?;
                    let b = locate(detail, expr, RSP_B, cfa_offset)?;
                    if a != b {
                        return Err("a parameter's location does not move with rsp");
                    }
                    a
                }
            };
            Ok((p.ty, root))
        })
        .collect()
}

/// Builds the programs of a function whose break address is `file_pc` (a file address) and
/// whose CFA there is `rsp + cfa_offset`.
pub(crate) fn programs(
    types: &TypeTable,
    limits: Limits,
    detail: &FunctionDetail,
    file_pc: u64,
    cfa_offset: i64,
    hidden_slot: Option<i64>,
) -> Result<Programs, Refusal> {
    let mut entry = Builder::new(types, limits);
    // The return address (at CFA - 8): the tracer keys a frame by it and its CFA.
    entry.copy(Base::Rsp(cfa_offset - 8), Len::Const(8));
    let mut state_slots = Vec::new();
    for (p, (_, root)) in detail
        .params
        .iter()
        .zip(roots(detail, file_pc, cfa_offset)?)
    {
        let Some(ty) = p.ty else { continue };
        let effect = effect_pointee(types, ty, &p.name);
        match root {
            // The tracer reads nothing for a value rustc passed by reference from the
            // incoming stack-argument area (DWARF locates the pointer there, not the value):
            // its bytes must not be taken for the value's (they would be followed as
            // pointers).
            Root::Slot(slot)
                if detail.rust_abi
                    && slot >= cfa_offset
                    && p.location
                        .at(file_pc)
                        .is_some_and(|e| frame_relative(e, detail.encoding))
                    && passed_indirectly(types, ty) == Some(true) => {}
            Root::Nowhere => {}
            Root::Register(r) => {
                let size = types.get(ty).map_or(0, |t| t.size);
                if size > 8 && !entry.reads_nothing(ty, 0) {
                    return Err("a parameter in a register is larger than the register");
                }
                entry.value(ty, Holder::Regs([Some(r), None]), 0, 0)?;
            }
            Root::Slot(slot) => {
                let r = entry.copy(Base::Rsp(slot), Len::Const(size_of(types, ty)?));
                entry.value(ty, Holder::Region(r), 0, 0)?;
                if let Some(pointee) = effect {
                    state_slots.push(StateRoot {
                        slot,
                        pointee,
                        slice: false,
                    });
                } else if is_mut_slice(types, ty) {
                    state_slots.push(StateRoot {
                        slot,
                        pointee: ty,
                        slice: true,
                    });
                }
                continue;
            }
            Root::Behind { slot, add } => {
                let p = entry.copy(Base::Rsp(slot), Len::Const(8));
                let word = Word::In {
                    region: p,
                    offset: 0,
                };
                let r = entry.copy(Base::Ptr { word, add }, Len::Const(size_of(types, ty)?));
                entry.value(ty, Holder::Region(r), 0, 0)?;
            }
            Root::Pieces(slots) => {
                if !entry.reads_nothing(ty, 0) {
                    return Err("a parameter in pieces holds pointers");
                }
                for slot in slots {
                    entry.copy(Base::Rsp(slot), Len::Const(8));
                }
            }
        }
        if effect.is_some() {
            // Read again at the exit, where only a frame slot is still there to read.
            return Err("a &mut or receiver argument not in a frame slot");
        }
    }
    if let Some(EntryRdi::Stack(at)) = detail.hidden_return {
        entry.copy(Base::Rsp(at), Len::Const(8));
    }
    let mut exit = Builder::new(types, limits);
    if let Some(ty) = detail.return_type {
        let rr = ReturnRegs {
            rax: RET_RAX,
            rdx: RET_RDX,
            xmm0: 0,
            xmm1: 0,
            hidden: Some(RET_HIDDEN),
        };
        match crate::abi::return_place(types, ty, &rr, detail.rust_abi) {
            ReturnPlace::Unknown(_) => {}
            ReturnPlace::Memory(_) => {
                // Copied behind the hidden return pointer the entry spilled to its frame slot,
                // read there at each exit site before the epilogue (a state root), as the
                // tracer decodes it behind the pointer the entry had. Not behind `rax` at the
                // `ret`: rustc's optimized code does not keep the pointer there (a `Vec`
                // returned with `rax` still holding its buffer's address; the capture then
                // followed the buffer's first words as the `Vec`'s pointer and crashed the
                // program). A pointer kept only in a register is not known at the exit.
                let Some(at) = hidden_slot else {
                    return Err(
                        "a result returned in memory whose hidden pointer is not in a frame slot",
                    );
                };
                size_of(types, ty)?;
                state_slots.push(StateRoot {
                    slot: at,
                    pointee: ty,
                    slice: false,
                });
            }
            ReturnPlace::Bytes(b) => {
                let reg_of = |i: usize| {
                    let w = b.get(i * 8..i * 8 + 8)?;
                    match u64::from_le_bytes(w.try_into().ok()?) {
                        RET_RAX => Some(RAX),
                        RET_RDX => Some(RDX),
                        _ => None,
                    }
                };
                exit.value(ty, Holder::Regs([reg_of(0), reg_of(1)]), 0, 0)?;
            }
        }
    }
    // The state program's shape: checked now, built per exit site.
    state_at(types, limits, &state_slots, 0)?;
    let entry = entry.finish()?;
    let exit = exit.finish()?;
    Ok(Programs {
        entry,
        state_slots,
        exit,
    })
}

/// The exit-state program at an exit site whose `rsp` is the break address's plus `shift`: a
/// slot at `rsp_entry + slot` is at `rsp_site + slot - shift` there.
pub(crate) fn state_at(
    types: &TypeTable,
    limits: Limits,
    roots: &[StateRoot],
    shift: i64,
) -> Result<Program, Refusal> {
    let mut b = Builder::new(types, limits);
    for s in roots {
        // Below the red zone, the slot is where the trampoline saves what it saves (an exit
        // patched after the epilogue freed the frame, see `inprocess::sites`).
        if s.slot - shift < -i64::from(crate::inprocess::RED_ZONE) {
            return Err("a slot the exit reads is below the stack pointer there");
        }
        if s.slice {
            // The slice's pointer and length, then the elements they span, as the tracer
            // decodes them from the pointer and length the call got.
            let fat = b.copy(
                Base::Rsp(s.slot - shift),
                Len::Const(size_of(types, s.pointee)?),
            );
            b.value(s.pointee, Holder::Region(fat), 0, 0)?;
            continue;
        }
        let p = b.copy(Base::Rsp(s.slot - shift), Len::Const(8));
        let r = b.copy(
            Base::Ptr {
                word: Word::In {
                    region: p,
                    offset: 0,
                },
                add: 0,
            },
            Len::Const(size_of(types, s.pointee)?),
        );
        // The tracer decodes an effect as the pointee itself (depth 0).
        b.value(s.pointee, Holder::Region(r), 0, 0)?;
    }
    b.finish()
}

/// The pointee of a parameter the tracer reads again at the exit (`effect_targets`): a `&mut`,
/// or the receiver by reference.
fn effect_pointee(types: &TypeTable, ty: TypeId, name: &str) -> Option<TypeId> {
    let t = types.get(ty)?;
    let TypeKind::Pointer { pointee: Some(p) } = t.kind else {
        return None;
    };
    ((t.name.starts_with("&mut ") || (name == "self" && t.name.starts_with('&')))
        && types.get(p)?.size > 0)
        .then_some(p)
}

/// Whether `ty` is a `&mut [T]` (a pointer and a length) whose elements a call may change,
/// read again at its end as a `&mut T` argument's pointee is.
pub(crate) fn is_mut_slice(types: &TypeTable, ty: TypeId) -> bool {
    types.get(ty).is_some_and(|t| {
        t.name.starts_with("&mut [")
            && t.name.ends_with(']')
            && matches!(&t.kind, TypeKind::Struct { members, .. } if members.len() == 2)
    })
}

/// Whether a function returning `ty` returns `&mut` to a scalar: the tracer holds such a
/// call's end until the thread's next stop, which the in-process path does not have.
pub(crate) fn returns_mut_scalar(types: &TypeTable, ty: TypeId) -> bool {
    types.get(ty).is_some_and(|t| {
        t.name.starts_with("&mut ")
            && matches!(t.kind, TypeKind::Pointer { pointee: Some(p) }
                if types.get(p).is_some_and(|p| matches!(p.kind, TypeKind::Base(_))))
    })
}

fn size_of(types: &TypeTable, ty: TypeId) -> Result<u64, Refusal> {
    let size = types.get(ty).ok_or("a type missing from the table")?.size;
    if size > MAX_CAPTURE_BYTES {
        return Err("a value too large to copy");
    }
    Ok(size)
}

/// Where a value's bytes are while its program is built.
#[derive(Debug, Clone, Copy)]
enum Holder {
    /// In a copied region.
    Region(usize),
    /// In registers: word i of the value in this register (`None`: not a whole register).
    Regs([Option<u16>; 2]),
}

struct Builder<'a> {
    types: &'a TypeTable,
    limits: Limits,
    copies: Vec<Copy>,
}

impl<'a> Builder<'a> {
    fn new(types: &'a TypeTable, limits: Limits) -> Self {
        Builder {
            types,
            limits,
            copies: Vec::new(),
        }
    }

    fn finish(self) -> Result<Program, Refusal> {
        let p = Program {
            copies: self.copies,
        };
        if p.copies.len() > MAX_COPIES {
            return Err("too many regions to copy");
        }
        if p.max_bytes() > MAX_CAPTURE_BYTES {
            return Err("too many bytes to copy");
        }
        Ok(p)
    }

    fn copy(&mut self, base: Base, len: Len) -> usize {
        self.copies.push(Copy { base, len });
        self.copies.len() - 1
    }

    fn word(&self, h: Holder, offset: u64) -> Result<Word, Refusal> {
        match h {
            Holder::Region(region) => Ok(Word::In { region, offset }),
            Holder::Regs(regs) if offset.is_multiple_of(8) => regs
                .get((offset / 8) as usize)
                .copied()
                .flatten()
                .map(Word::Reg)
                .ok_or("a pointer not in a whole register"),
            Holder::Regs(_) => Err("a pointer not in a whole register"),
        }
    }

    /// Copies what the decoder reads behind the value of type `ty` held at `offset` of `h`,
    /// decoded at `depth` (mirrors `Decoder::bytes_depth`).
    fn value(&mut self, ty: TypeId, h: Holder, offset: u64, depth: u32) -> Result<(), Refusal> {
        if self.reads_nothing(ty, depth) {
            return Ok(());
        }
        // Borrowed from the table, not from `self`: the arms below copy as they go.
        let types = self.types;
        let t = types.get(ty).ok_or("a type missing from the table")?;
        let name = t.name.as_str();
        let member = |field: &str| types.member(ty, field).map(|m| m.offset);
        match &t.kind {
            TypeKind::Pointer { pointee } => {
                let p = pointee.ok_or("a pointer to an unknown type")?;
                if name.ends_with(" *") {
                    return Err("a C pointer");
                }
                // `reads_nothing` is false: a followable reference below the depth limit.
                let size = size_of(self.types, p)?;
                let word = self.word(h, offset)?;
                let r = self.copy(Base::Ptr { word, add: 0 }, Len::Const(size));
                self.value(p, Holder::Region(r), 0, depth + 1)
            }
            TypeKind::Struct { members, params } => {
                if is_text_slice(name) {
                    let (ptr, len) = (
                        member("data_ptr").ok_or("a str without data_ptr")?,
                        member("length").ok_or("a str without length")?,
                    );
                    self.text(h, offset + ptr, offset + len)
                } else if name == "alloc::string::String" {
                    let vec = self.types.member(ty, "vec").ok_or("a String without vec")?;
                    let (ptr, len) = self.vec_offsets(vec.ty)?;
                    self.text(h, offset + vec.offset + ptr, offset + vec.offset + len)
                } else if name.starts_with("alloc::vec::Vec<") {
                    let elem = *params.first().ok_or("a Vec without its element type")?;
                    let (ptr, len) = self.vec_offsets(ty)?;
                    self.seq(elem, h, offset + ptr, offset + len, depth)
                } else if is_slice(name) {
                    let ptr = self
                        .types
                        .member(ty, "data_ptr")
                        .ok_or("a slice without data_ptr")?;
                    let len = member("length").ok_or("a slice without length")?;
                    let elem = match self.types.get(ptr.ty).map(|t| &t.kind) {
                        Some(TypeKind::Pointer { pointee: Some(e) }) => *e,
                        _ => return Err("a slice of an unknown type"),
                    };
                    self.seq(elem, h, offset + ptr.offset, offset + len, depth)
                } else if is_slice_iter(name) {
                    // The decoder reads what it has left, between two raw pointers.
                    let elem = *params.first().ok_or("a slice iterator without its type")?;
                    let (ptr, end) = crate::decode::rest_members(name)
                        .ok_or("a slice iterator of unknown layout")?;
                    let (ptr, end) = (
                        member(ptr).ok_or("a slice iterator without its start")?,
                        member(end).ok_or("a slice iterator without its end")?,
                    );
                    self.rest(elem, h, offset + ptr, offset + end, depth)
                } else if name == "core::str::iter::Chars" {
                    // The text it has left, between the two pointers of its byte iterator.
                    let iter = self
                        .types
                        .member(ty, "iter")
                        .ok_or("a Chars without iter")?;
                    let at = |field| {
                        self.types
                            .member(iter.ty, field)
                            .map(|m| offset + iter.offset + m.offset)
                            .ok_or("a Chars without its byte iterator's pointers")
                    };
                    let (ptr, end) = (self.word(h, at("ptr")?)?, self.word(h, at("end_or_len")?)?);
                    let max = self.limits.max_string as u64;
                    self.copy(Base::Ptr { word: ptr, add: 0 }, Len::Span { end, max });
                    Ok(())
                } else if special(name) {
                    Err("a standard library type the capture does not copy (maps, Rc, trait objects...)")
                } else {
                    for m in members {
                        self.value(m.ty, h, offset + m.offset, depth)?;
                    }
                    Ok(())
                }
            }
            TypeKind::Enum { tag, variants } => {
                self.enum_value(tag.as_ref(), variants, h, offset, depth)
            }
            TypeKind::Union { .. } => Err("a union holding references"),
            TypeKind::Array { .. } => Err("an array holding references"),
            _ => Ok(()),
        }
    }

    /// An enum's copies. A program cannot branch on the tag, so it copies for one variant, and
    /// only where that is right whatever the tag says: the one variant of an enum without a
    /// tag, or the dataful variant of a niche layout whose niche is the one pointer its copies
    /// follow from the value itself (`Option<&T>`, `Option<&str>`, `Option<Box<T>>`): every
    /// other variant reads nothing and holds 0 there, and a null pointer is not followed.
    /// Anything else (`Option<String>`, whose niche is the capacity; two variants holding
    /// references) is refused.
    fn enum_value(
        &mut self,
        tag: Option<&crate::types::Member>,
        variants: &'a [crate::types::Variant],
        h: Holder,
        offset: u64,
        depth: u32,
    ) -> Result<(), Refusal> {
        const REFUSED: Refusal = "an enum holding references";
        let mut dataful = variants
            .iter()
            .enumerate()
            .filter(|(_, v)| !self.reads_nothing(v.ty, depth));
        let Some((chosen, variant)) = dataful.next() else {
            return Ok(());
        };
        if dataful.next().is_some() {
            return Err(REFUSED);
        }
        let niche = match tag {
            None if variants.len() == 1 => None,
            Some(tag)
                if variant.discr.is_none()
                    && self.types.get(tag.ty).is_some_and(|t| t.size == 8)
                    && variants
                        .iter()
                        .enumerate()
                        .all(|(k, v)| k == chosen || v.discr == Some(0)) =>
            {
                Some(self.word(h, offset + tag.offset)?)
            }
            _ => return Err(REFUSED),
        };
        let types = self.types;
        let Some(crate::types::TypeKind::Struct { members, .. }) =
            types.get(variant.ty).map(|t| &t.kind)
        else {
            return Ok(()); // the decoder shows no fields
        };
        let before = self.copies.len();
        for m in members {
            self.value(m.ty, h, offset + variant.offset + m.offset, depth)?;
        }
        let Some(niche) = niche else {
            return Ok(());
        };
        // Words of the value itself (not of regions copied since) that a copy follows.
        let in_value = |w: Word| match (h, w) {
            (Holder::Region(r), Word::In { region, .. }) => region == r,
            (Holder::Regs(regs), Word::Reg(reg)) => regs.contains(&Some(reg)),
            _ => false,
        };
        let followed_elsewhere = self.copies[before..]
            .iter()
            .any(|c| matches!(c.base, Base::Ptr { word, .. } if in_value(word) && word != niche));
        if followed_elsewhere {
            return Err(REFUSED);
        }
        Ok(())
    }

    /// `utf8(ptr, len)`: `min(len, max_string)` bytes.
    fn text(&mut self, h: Holder, ptr: u64, len: u64) -> Result<(), Refusal> {
        let (ptr, len) = (self.word(h, ptr)?, self.word(h, len)?);
        self.copy(
            Base::Ptr { word: ptr, add: 0 },
            Len::Count {
                word: len,
                max: self.limits.max_string as u64,
                scale: 1,
            },
        );
        Ok(())
    }

    /// `seq(elem, ptr, len, depth)`: nothing at the depth limit, else `min(len, max_elems)`
    /// elements, decoded at `depth + 1`; only elements that read nothing further.
    fn seq(
        &mut self,
        elem: TypeId,
        h: Holder,
        ptr: u64,
        len: u64,
        depth: u32,
    ) -> Result<(), Refusal> {
        let Some(size) = self.seq_elem_size(elem, depth)? else {
            return Ok(());
        };
        let (ptr, len) = (self.word(h, ptr)?, self.word(h, len)?);
        self.copy(
            Base::Ptr { word: ptr, add: 0 },
            Len::Count {
                word: len,
                max: self.limits.max_elems as u64,
                scale: size,
            },
        );
        Ok(())
    }

    /// `seq(elem, start, (end - start) / size_of(elem), depth)` for a slice iterator whose
    /// pointers are at `ptr` and `end` of `h`: the elements it has left, as [`Builder::seq`]
    /// copies them (none of an element type without size: its `end_or_len` is a count).
    fn rest(
        &mut self,
        elem: TypeId,
        h: Holder,
        ptr: u64,
        end: u64,
        depth: u32,
    ) -> Result<(), Refusal> {
        let Some(size) = self.seq_elem_size(elem, depth)? else {
            return Ok(());
        };
        let (ptr, end) = (self.word(h, ptr)?, self.word(h, end)?);
        let max = size * self.limits.max_elems as u64;
        self.copy(Base::Ptr { word: ptr, add: 0 }, Len::Span { end, max });
        Ok(())
    }

    /// The size of a sequence's elements when the decoder reads them (`None`: it reads
    /// none: at the depth limit, or elements without size); refused when an element holds
    /// something to follow or the elements the decoder may read are too many bytes.
    fn seq_elem_size(&self, elem: TypeId, depth: u32) -> Result<Option<u64>, Refusal> {
        if depth >= self.limits.max_depth {
            return Ok(None);
        }
        let size = self.types.get(elem).map_or(0, |t| t.size);
        if size == 0 {
            return Ok(None);
        }
        if !self.reads_nothing(elem, depth + 1) {
            return Err("a sequence of values holding references");
        }
        if size.saturating_mul(self.limits.max_elems as u64) > MAX_CAPTURE_BYTES {
            return Err("a sequence too large to copy");
        }
        Ok(Some(size))
    }

    /// Offsets of a `Vec`'s data pointer and length, found as the decoder's `vec_parts` finds
    /// them (it is run over bytes whose every word is its own offset).
    fn vec_offsets(&self, vec_ty: TypeId) -> Result<(u64, u64), Refusal> {
        let size = self.types.get(vec_ty).map_or(0, |t| t.size);
        let bytes: Vec<u8> = (0..size.div_ceil(8))
            .flat_map(|i| (0x7e57_0000_0000_0000u64 + i * 8).to_le_bytes())
            .collect();
        let never = Captured::default();
        let d = crate::decode::Decoder {
            types: self.types,
            mem: &never,
            limits: self.limits,
        };
        let (ptr, len) = d
            .vec_parts(vec_ty, &bytes)
            .ok_or("a Vec of unknown layout")?;
        let off = |v: u64| {
            v.checked_sub(0x7e57_0000_0000_0000)
                .filter(|o| o % 8 == 0 && *o < size)
                .ok_or("a Vec of unknown layout")
        };
        Ok((off(ptr)?, off(len)?))
    }

    /// Whether the decoder reads no memory for a value of `ty` at `depth`.
    fn reads_nothing(&self, ty: TypeId, depth: u32) -> bool {
        self.reads_nothing_nested(ty, depth, 0)
    }

    fn reads_nothing_nested(&self, ty: TypeId, depth: u32, nesting: u32) -> bool {
        if nesting > 32 {
            return false;
        }
        let Some(t) = self.types.get(ty) else {
            return true; // decoded as unavailable
        };
        let name = t.name.as_str();
        let each = |tys: &mut dyn Iterator<Item = TypeId>| {
            let mut all = true;
            for m in tys {
                all = all && self.reads_nothing_nested(m, depth, nesting + 1);
            }
            all
        };
        match &t.kind {
            TypeKind::Pointer { pointee } => {
                let followable = name.starts_with('&')
                    || name.starts_with("alloc::boxed::Box<")
                    || name.starts_with("Box<")
                    || (!name.starts_with('*') && name.ends_with(" *"));
                !followable
                    || depth >= self.limits.max_depth
                    || pointee.is_none_or(|p| self.types.get(p).is_none_or(|p| p.size == 0))
            }
            TypeKind::Struct { members, .. } => {
                !special(name) && each(&mut members.iter().map(|m| m.ty))
            }
            TypeKind::Union { members } => each(&mut members.iter().map(|m| m.ty)),
            TypeKind::Enum { tag, variants } => each(
                &mut tag
                    .iter()
                    .map(|m| m.ty)
                    .chain(variants.iter().map(|v| v.ty)),
            ),
            TypeKind::Array { elem, .. } => self.reads_nothing_nested(*elem, depth, nesting + 1),
            _ => true,
        }
    }
}

/// `&str`, `&mut str`, `Box<str>`, and the borrowed OS texts (`&Path`, `&OsStr`): a data
/// pointer and a length in bytes.
fn is_text_slice(name: &str) -> bool {
    let boxed = name
        .strip_prefix("alloc::boxed::Box<")
        .or_else(|| name.strip_prefix("Box<"));
    name == "&str"
        || name == "&mut str"
        || boxed.is_some_and(|b| b.starts_with("str"))
        || (crate::decode::is_os_text(name) && name.starts_with('&'))
}

fn is_slice(name: &str) -> bool {
    let boxed = name
        .strip_prefix("alloc::boxed::Box<")
        .or_else(|| name.strip_prefix("Box<"));
    boxed.is_some_and(|b| b.starts_with('['))
        || ((name.starts_with("&[") || name.starts_with("&mut [")) && name.ends_with(']'))
}

/// `slice::Iter<T>`, `IterMut<T>` and `vec::IntoIter<T>`, which the decoder reads as the
/// elements still to come (`Decoder::slice_iter`), between two raw pointers.
fn is_slice_iter(name: &str) -> bool {
    crate::decode::rest_members(name).is_some()
}

/// Structs the decoder reads as what they mean (`known_struct`), which the capture must copy
/// for as the decoder reads them, not member by member.
fn special(name: &str) -> bool {
    name.contains("dyn ")
        || is_slice_iter(name)
        || name.starts_with("alloc::rc::Rc<")
        || name.starts_with("alloc::sync::Arc<")
        || name.starts_with("alloc::boxed::Box<")
        || name.starts_with("Box<")
        || name == "&str"
        || name == "&mut str"
        || crate::decode::is_os_text(name)
        || name == "core::str::iter::Chars"
        || name == "alloc::string::String"
        || name.starts_with("alloc::vec::Vec<")
        || name.starts_with("alloc::collections::")
        || name.starts_with("std::collections::")
        || is_slice(name)
}

/// Two records' regions read as one memory (an exit record and the state record before it):
/// a read is answered wholly by one of them or fails.
pub(crate) struct EitherMemory<'a>(pub &'a dyn Memory, pub &'a dyn Memory);

impl Memory for EitherMemory<'_> {
    fn read(&self, addr: u64, buf: &mut [u8]) -> bool {
        self.0.read(addr, buf) || self.1.read(addr, buf)
    }
}

/// The regions a record carries, read as memory: a read wholly inside one region is answered
/// from it, any other read fails (the decoder then marks the value not read).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Captured {
    pub regions: Vec<(u64, Vec<u8>)>,
}

impl Memory for Captured {
    fn read(&self, addr: u64, buf: &mut [u8]) -> bool {
        if buf.is_empty() {
            return true; // nothing to read cannot be read wrong
        }
        let Some(end) = addr.checked_add(buf.len() as u64) else {
            return false;
        };
        self.regions.iter().any(|(start, bytes)| {
            let ok = *start <= addr && end <= start + bytes.len() as u64;
            if ok {
                let from = (addr - start) as usize;
                buf.copy_from_slice(&bytes[from..from + buf.len()]);
            }
            ok
        })
    }
}

/// A captured site as a stopped thread: its registers (DWARF numbers 0..16) and its regions.
pub(crate) struct CapturedMachine<'a> {
    pub regs: &'a [u64; 16],
    pub mem: &'a dyn Memory,
}

impl Memory for CapturedMachine<'_> {
    fn read(&self, addr: u64, buf: &mut [u8]) -> bool {
        self.mem.read(addr, buf)
    }
}

impl Machine for CapturedMachine<'_> {
    fn register(&self, r: u16) -> Option<u64> {
        self.regs.get(r as usize).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{BaseKind, Member, Type};

    fn ty(t: &mut TypeTable, name: &str, size: u64, kind: TypeKind) -> TypeId {
        t.push(Type {
            name: name.into(),
            size,
            kind,
        })
    }

    /// A pointer type (references, raw pointers, `Box`): 8 bytes, pointing at `pointee`.
    fn pointer(t: &mut TypeTable, name: &str, pointee: TypeId) -> TypeId {
        ty(
            t,
            name,
            8,
            TypeKind::Pointer {
                pointee: Some(pointee),
            },
        )
    }

    fn member(name: &str, offset: u64, ty: TypeId) -> Member {
        Member {
            name: name.into(),
            offset,
            ty,
        }
    }

    /// `&Named { label: &str, raw: *const u8, n: u64 }` and an enum holding a reference.
    fn table() -> (TypeTable, TypeId, TypeId) {
        let mut t = TypeTable::default();
        let u8_ty = ty(&mut t, "u8", 1, TypeKind::Base(BaseKind::Unsigned));
        let u64_ty = ty(&mut t, "u64", 8, TypeKind::Base(BaseKind::Unsigned));
        let raw = pointer(&mut t, "*const u8", u8_ty);
        let text = ty(
            &mut t,
            "&str",
            16,
            TypeKind::Struct {
                members: vec![member("data_ptr", 0, raw), member("length", 8, u64_ty)],
                params: vec![],
            },
        );
        let named = ty(
            &mut t,
            "m::Named",
            32,
            TypeKind::Struct {
                members: vec![
                    member("label", 0, text),
                    member("raw", 16, raw),
                    member("n", 24, u64_ty),
                ],
                params: vec![],
            },
        );
        let by_ref = pointer(&mut t, "&m::Named", named);
        let some = ty(
            &mut t,
            "Some",
            8,
            TypeKind::Struct {
                members: vec![member("__0", 0, by_ref)],
                params: vec![],
            },
        );
        let option = ty(
            &mut t,
            "core::option::Option<&m::Named>",
            8,
            TypeKind::Enum {
                tag: None,
                variants: vec![crate::types::Variant {
                    discr: None,
                    name: "Some".into(),
                    offset: 0,
                    ty: some,
                }],
            },
        );
        (t, by_ref, option)
    }

    #[test]
    fn an_exit_reads_frame_slots_in_the_red_zone_but_not_below_it() {
        // A `&mut` parameter spilled 16 bytes above rsp at the break address, where rsp is
        // CFA - 0x40. At an exit whose CFA is rsp + 0x40 (the frame still there) the slot is at
        // rsp + 16; at a `ret` patched after `add rsp, 0x38` (CFA rsp + 8), at rsp - 0x28, in
        // the red zone; after a 0xe8-byte frame is freed, below it: refused.
        let mut t = TypeTable::default();
        let u64_ty = ty(&mut t, "u64", 8, TypeKind::Base(BaseKind::Unsigned));
        let root = StateRoot {
            slot: 16,
            pointee: u64_ty,
            slice: false,
        };
        let at = |shift| state_at(&t, Limits::default(), std::slice::from_ref(&root), shift);
        let slot_read = |p: Program| match p.copies[0].base {
            Base::Rsp(at) => at,
            other => panic!("{other:?}"),
        };
        assert_eq!(slot_read(at(0).unwrap()), 16);
        assert_eq!(slot_read(at(0x40 - 8).unwrap()), 16 - 0x38);
        assert_eq!(
            at(0xf0 - 8).unwrap_err(),
            "a slot the exit reads is below the stack pointer there"
        );
    }

    #[test]
    fn an_exit_reads_a_mut_slice_s_pointer_and_length_then_the_elements_they_span() {
        let mut t = TypeTable::default();
        let u8_ty = ty(&mut t, "u8", 1, TypeKind::Base(BaseKind::Unsigned));
        let u64_ty = ty(&mut t, "usize", 8, TypeKind::Base(BaseKind::Unsigned));
        let raw = pointer(&mut t, "*mut u8", u8_ty);
        let members = vec![member("data_ptr", 0, raw), member("length", 8, u64_ty)];
        let slice = ty(
            &mut t,
            "&mut [u8]",
            16,
            TypeKind::Struct {
                members,
                params: vec![],
            },
        );
        assert!(is_mut_slice(&t, slice));
        let kind = t.get(slice).unwrap().kind.clone();
        let shared = ty(&mut t, "&[u8]", 16, kind);
        assert!(!is_mut_slice(&t, shared));
        let root = StateRoot {
            slot: 8,
            pointee: slice,
            slice: true,
        };
        let p = state_at(&t, Limits::default(), std::slice::from_ref(&root), 0).unwrap();
        // The slot's 16 bytes, then from the pointer in them, the length in them bytes.
        assert_eq!(p.copies.len(), 2, "{p:?}");
        assert!(matches!(p.copies[0].base, Base::Rsp(8)), "{p:?}");
        assert!(matches!(p.copies[0].len, Len::Const(16)), "{p:?}");
        assert!(
            matches!(
                p.copies[1].len,
                Len::Count {
                    word: Word::In { offset: 8, .. },
                    scale: 1,
                    ..
                }
            ),
            "{p:?}"
        );
    }

    #[test]
    fn a_reference_is_followed_and_a_str_inside_copied_for_its_length_but_a_raw_pointer_is_not() {
        let (t, by_ref, _) = table();
        let mut b = Builder::new(&t, Limits::default());
        let slot = b.copy(Base::Rsp(24), Len::Const(8));
        b.value(by_ref, Holder::Region(slot), 0, 0).unwrap();
        let p = b.finish().unwrap();
        let named = Word::In {
            region: 0,
            offset: 0,
        };
        let label = |offset| Word::In { region: 1, offset };
        assert_eq!(
            p.copies,
            vec![
                Copy {
                    base: Base::Rsp(24),
                    len: Len::Const(8)
                },
                Copy {
                    base: Base::Ptr {
                        word: named,
                        add: 0
                    },
                    len: Len::Const(32)
                },
                Copy {
                    base: Base::Ptr {
                        word: label(0),
                        add: 0
                    },
                    len: Len::Count {
                        word: label(8),
                        max: 4096,
                        scale: 1
                    }
                },
            ],
            "the struct, then its text; `raw` is left alone"
        );
        assert_eq!(p.max_bytes(), 16 + 8 + 16 + 32 + 16 + 4096);
    }

    #[test]
    fn at_the_depth_limit_nothing_is_followed() {
        let (t, by_ref, _) = table();
        let limits = Limits {
            max_depth: 0,
            ..Limits::default()
        };
        let mut b = Builder::new(&t, limits);
        b.value(by_ref, Holder::Regs([Some(5), None]), 0, 0)
            .unwrap();
        assert!(b.copies.is_empty(), "the decoder shows a Pointer there");
    }

    /// An enum `name` of `size` bytes with a tag at `tag` (8 bytes) and these variants:
    /// (discriminant, the variant's members).
    fn an_enum(
        t: &mut TypeTable,
        name: &str,
        size: u64,
        tag: Option<u64>,
        variants: Vec<(Option<u128>, Vec<Member>)>,
    ) -> TypeId {
        let u64_ty = ty(t, "u64", 8, TypeKind::Base(BaseKind::Unsigned));
        let variants = variants
            .into_iter()
            .enumerate()
            .map(|(k, (discr, members))| crate::types::Variant {
                discr,
                name: format!("V{k}"),
                offset: 0,
                ty: ty(
                    t,
                    &format!("V{k}"),
                    size,
                    TypeKind::Struct {
                        members,
                        params: vec![],
                    },
                ),
            })
            .collect();
        ty(
            t,
            name,
            size,
            TypeKind::Enum {
                tag: tag.map(|at| member("<<tag>>", at, u64_ty)),
                variants,
            },
        )
    }

    #[test]
    fn an_enum_is_copied_only_where_the_copies_are_right_whatever_its_tag_says() {
        let (mut t, by_ref, one_variant) = table();
        let u64_ty = ty(&mut t, "u64", 8, TypeKind::Base(BaseKind::Unsigned));
        let behind_rdi = |t: &TypeTable, e: TypeId| {
            let mut b = Builder::new(t, Limits::default());
            b.value(e, Holder::Regs([Some(5), Some(4)]), 0, 0)
                .map(|()| b.copies)
        };
        let followed = |copies: Vec<Copy>| {
            copies
                .into_iter()
                .map(|c| c.base)
                .take(1)
                .collect::<Vec<_>>()
        };
        let rdi = Base::Ptr {
            word: Word::Reg(5),
            add: 0,
        };
        // No tag, one variant: it is always the one.
        assert_eq!(followed(behind_rdi(&t, one_variant).unwrap()), [rdi]);
        // `Option<&Named>`: None is 0 where Some's reference is, and null is not followed.
        let niche = an_enum(
            &mut t,
            "core::option::Option<&m::Named>",
            8,
            Some(0),
            vec![(Some(0), vec![]), (None, vec![member("__0", 0, by_ref)])],
        );
        assert_eq!(followed(behind_rdi(&t, niche).unwrap()), [rdi]);
        // The niche elsewhere than the reference (`Option<String>` keeps it in the capacity):
        // in None, the reference's word is not known to be null.
        let elsewhere = an_enum(
            &mut t,
            "core::option::Option<(u64, &m::Named)>",
            16,
            Some(0),
            vec![
                (Some(0), vec![]),
                (
                    None,
                    vec![member("__0", 0, u64_ty), member("__1", 8, by_ref)],
                ),
            ],
        );
        assert_eq!(behind_rdi(&t, elsewhere), Err("an enum holding references"));
        // A niche value other than 0, or two variants holding references: refused.
        let not_null = an_enum(
            &mut t,
            "m::NotNull",
            8,
            Some(0),
            vec![(Some(1), vec![]), (None, vec![member("__0", 0, by_ref)])],
        );
        assert_eq!(behind_rdi(&t, not_null), Err("an enum holding references"));
        let two = an_enum(
            &mut t,
            "m::Two",
            16,
            Some(0),
            vec![
                (Some(0), vec![member("__0", 8, by_ref)]),
                (Some(1), vec![member("__0", 8, by_ref)]),
            ],
        );
        assert_eq!(behind_rdi(&t, two), Err("an enum holding references"));
        // Variants that read nothing need no copy, whatever the layout.
        let plain = an_enum(
            &mut t,
            "m::Plain",
            16,
            Some(0),
            vec![(Some(0), vec![member("__0", 8, u64_ty)]), (Some(1), vec![])],
        );
        assert_eq!(behind_rdi(&t, plain), Ok(vec![]));
    }

    /// A slice iterator's members are raw pointers, which the capture never follows, but the
    /// decoder reads the elements between them: the copy takes the bytes from `ptr` to
    /// `end_or_len`, bounded as a sequence's elements are.
    #[test]
    fn a_slice_iterator_copies_what_it_has_left_between_its_two_pointers() {
        let mut t = TypeTable::default();
        let u8_ty = ty(&mut t, "u8", 1, TypeKind::Base(BaseKind::Unsigned));
        let raw = pointer(&mut t, "*const u8", u8_ty);
        let non_null = ty(
            &mut t,
            "core::ptr::non_null::NonNull<u8>",
            8,
            TypeKind::Struct {
                members: vec![member("pointer", 0, raw)],
                params: vec![u8_ty],
            },
        );
        let iter = ty(
            &mut t,
            "core::slice::iter::Iter<u8>",
            16,
            TypeKind::Struct {
                members: vec![member("ptr", 0, non_null), member("end_or_len", 8, raw)],
                params: vec![u8_ty],
            },
        );
        let by_mut = pointer(&mut t, "&mut core::slice::iter::Iter<u8>", iter);
        let b = Builder::new(&t, Limits::default());
        assert!(!b.reads_nothing(iter, 0));
        let limits = Limits::default();
        let rest = |region| Copy {
            base: Base::Ptr {
                word: Word::In { region, offset: 0 },
                add: 0,
            },
            len: Len::Span {
                end: Word::In { region, offset: 8 },
                max: limits.max_elems as u64,
            },
        };
        let mut b = Builder::new(&t, limits);
        let slot = b.copy(Base::Rsp(8), Len::Const(16));
        b.value(iter, Holder::Region(slot), 0, 0).unwrap();
        assert_eq!(b.copies[1..], [rest(0)]);
        // Behind `&mut`: the iterator, then what it has left.
        let mut b = Builder::new(&t, limits);
        b.value(by_mut, Holder::Regs([Some(5), None]), 0, 0)
            .unwrap();
        assert_eq!(b.copies[1..], [rest(0)]);
        // At the depth limit the decoder shows no elements, and nothing is copied.
        let mut b = Builder::new(
            &t,
            Limits {
                max_depth: 0,
                ..limits
            },
        );
        b.value(iter, Holder::Regs([Some(5), Some(4)]), 0, 0)
            .unwrap();
        assert!(b.copies.is_empty());
    }

    /// `long scale(long x, int factor)` of fixtures/c_basic at `-O0`: a frame-pointer
    /// function whose CFA is `rbp + 16` at its break address and whose parameters are
    /// `DW_OP_fbreg` slots of a `DW_OP_call_frame_cfa` frame base.
    fn c_scale(t: &mut TypeTable) -> FunctionDetail {
        use crate::dwarf::{LocationDesc, ParamDetail};
        let expr = |b: &[u8]| {
            gimli::Expression(gimli::EndianArcSlice::new(
                std::sync::Arc::from(b),
                gimli::RunTimeEndian::Little,
            ))
        };
        let long = ty(t, "long int", 8, TypeKind::Base(BaseKind::Signed));
        let int = ty(t, "int", 4, TypeKind::Base(BaseKind::Signed));
        let param = |name: &str, ty, at: u8| ParamDetail {
            name: name.into(),
            ty: Some(ty),
            location: LocationDesc::Expr(expr(&[0x91, at])), // DW_OP_fbreg at
        };
        FunctionDetail {
            breakpoint: crate::addr::FileAddr(0x11f8),
            frame_base: Some(expr(&[0x9c])), // DW_OP_call_frame_cfa
            encoding: gimli::Encoding {
                address_size: 8,
                format: gimli::Format::Dwarf32,
                version: 5,
            },
            params: vec![param("x", long, 0x68), param("factor", int, 0x64)], // -24, -28
            return_type: Some(long),
            hidden_return: None,
            rust_abi: false,
            fn_items: Vec::new(),
        }
    }

    const C_SCALE: [u8; 23] = [
        0x55, // push rbp                           0x11ed
        0x48, 0x89, 0xe5, // mov rbp, rsp           0x11ee
        0x48, 0x89, 0x7d, 0xf8, // mov [rbp-8], rdi 0x11f1
        0x89, 0x75, 0xf4, // mov [rbp-0xc], esi     0x11f5
        0x8b, 0x45, 0xf4, // mov eax, [rbp-0xc]     0x11f8 (break address)
        0x48, 0x98, // cdqe
        0x48, 0x0f, 0xaf, 0x45, 0xf8, // imul rax, [rbp-8]
        0x5d, // pop rbp
        0xc3, // ret
    ];

    #[test]
    fn a_c_function_with_a_frame_pointer_copies_its_slots_found_below_rsp() {
        let mut t = TypeTable::default();
        let detail = c_scale(&mut t);
        let rbp_based = crate::unwind::CfaRule {
            register: RBP,
            offset: 16,
        };
        let no_state = |_| None;
        let p = plan(
            &t,
            Limits::default(),
            &detail,
            &C_SCALE,
            0x11ed,
            0,
            Some(rbp_based),
            &no_state,
        )
        .unwrap();
        let slot = |at, len| Copy {
            base: Base::Rsp(at),
            len: Len::Const(len),
        };
        // rsp = rbp = CFA - 16: the return address at rsp + 8, x at CFA - 24, factor at
        // CFA - 28 (in the red zone: the trampoline steps below it before it saves anything).
        assert_eq!(p.entry.copies, [slot(8, 8), slot(-8, 8), slot(-12, 4)]);
        assert!(p.exit.copies.is_empty(), "a long returns in rax");
        assert_eq!(p.states.len(), 1, "one ret");

        let mut moved = C_SCALE;
        moved[1..4].copy_from_slice(&[0x48, 0x89, 0xfd]); // mov rbp, rdi: rbp is not rsp's
        assert_eq!(
            plan(
                &t,
                Limits::default(),
                &detail,
                &moved,
                0x11ed,
                0,
                Some(rbp_based),
                &no_state
            )
            .unwrap_err(),
            "the CFA is rbp-based and the code before the break address hides rsp's place"
        );
    }

    #[test]
    fn captured_memory_answers_only_reads_wholly_inside_one_region() {
        let c = Captured {
            regions: vec![(0x1000, vec![1, 2, 3, 4]), (0x2000, vec![9; 8])],
        };
        let mut b = [0u8; 2];
        assert!(c.read(0x1002, &mut b));
        assert_eq!(b, [3, 4]);
        assert!(!c.read(0x1003, &mut b), "runs past the region's end");
        assert!(!c.read(0x0fff, &mut b), "starts before it");
        assert!(!c.read(0x1800, &mut b), "between regions");
        assert!(!c.read(u64::MAX, &mut b), "wraps around");
        let mut none = [0u8; 0];
        assert!(
            c.read(0x9000, &mut none),
            "a zero-sized value reads anywhere"
        );
    }
}
