//! Where rustc's x86-64 calling convention leaves a function's return value, derived from the
//! return type's layout the way rustc derives it (the Rust ABI is unstable, so this follows what
//! rustc 1.95 does; see shared notes): rustc first gives the type a *backend representation*
//! (`Scalar`, `ScalarPair` or `Memory`), then returns values over 16 bytes through the hidden
//! return pointer, scalars in rax / xmm0 (rax:rdx for 128-bit integers), scalar pairs in
//! rax:rdx / xmm0:xmm1 / mixed, `Memory` values of up to 8 bytes packed into rax and other
//! `Memory` values through the hidden pointer. C functions follow the System V classification.
//!
//! The hidden pointer is the one the caller passed in rdi, as the tracer saw it at entry: an
//! optimised callee need not leave it in rax. When the layout does not tell for sure, the answer
//! is [`ReturnPlace::Unknown`], never a guess.

use crate::types::{BaseKind, TypeId, TypeKind, TypeTable};

/// The registers a return value can come back in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReturnRegs {
    pub rax: u64,
    pub rdx: u64,
    /// Low 64 bits of xmm0 and xmm1.
    pub xmm0: u64,
    pub xmm1: u64,
    /// The hidden return pointer the caller passed (rdi at entry), when the tracer knows it.
    pub hidden: Option<u64>,
}

/// How to get the bytes of a return value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReturnPlace {
    /// The value's bytes, assembled from registers.
    Bytes(Vec<u8>),
    /// The value is in memory at this address (the hidden return pointer).
    Memory(u64),
    /// Where the value is cannot be known for sure; the reason says why.
    Unknown(String),
}

/// One primitive of a scalar or scalar pair: its size, and whether it is a float (which goes to
/// an xmm register). Pointers are integers here: rustc lets them share a slot with integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Prim {
    size: u64,
    float: bool,
}

impl Prim {
    fn align(self) -> u64 {
        self.size
    }
}

/// rustc's backend representation of a type (`rustc_abi::BackendRepr`), as far as the return
/// convention needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Repr {
    /// Size 0.
    Zst,
    Scalar(Prim),
    /// Two primitives, at offset 0 and at `.2`.
    Pair(Prim, Prim, u64),
    Memory,
}

/// Where a value of type `ty` is returned, given the registers at the return address. `rust_abi`
/// is false for C functions (System V).
pub fn return_place(
    types: &TypeTable,
    ty: TypeId,
    regs: &ReturnRegs,
    rust_abi: bool,
) -> ReturnPlace {
    let Some(size) = types.get(ty).map(|t| t.size) else {
        return ReturnPlace::Unknown("unknown return type".into());
    };
    if !rust_abi {
        return c_return_place(types, ty, regs);
    }
    let Some(repr) = repr(types, ty, 0) else {
        return ReturnPlace::Unknown(format!(
            "the return convention of {} is not known from its layout",
            types.name(ty)
        ));
    };
    let hidden = || match regs.hidden {
        Some(addr) => ReturnPlace::Memory(addr),
        None => ReturnPlace::Unknown("the hidden return pointer was not seen at entry".into()),
    };
    if repr == Repr::Zst || size == 0 {
        return ReturnPlace::Bytes(Vec::new());
    }
    if size > 16 {
        return hidden();
    }
    let mut bytes = vec![0u8; size as usize];
    let mut put = |offset: u64, prim: Prim, value: u64| {
        let start = offset as usize;
        let n = (prim.size as usize)
            .min(8)
            .min(bytes.len().saturating_sub(start));
        bytes[start..start + n].copy_from_slice(&value.to_le_bytes()[..n]);
    };
    match repr {
        Repr::Scalar(p) if p.float => put(0, p, regs.xmm0),
        Repr::Scalar(p) if p.size == 16 => {
            let mut b = regs.rax.to_le_bytes().to_vec();
            b.extend_from_slice(&regs.rdx.to_le_bytes());
            return ReturnPlace::Bytes(b);
        }
        Repr::Scalar(p) => put(0, p, regs.rax),
        Repr::Pair(a, b, b_at) => {
            if a.size > 8 || b.size > 8 {
                return hidden();
            }
            let (va, vb) = match (a.float, b.float) {
                (true, true) => (regs.xmm0, regs.xmm1),
                (true, false) => (regs.xmm0, regs.rax),
                (false, true) => (regs.rax, regs.xmm0),
                (false, false) => (regs.rax, regs.rdx),
            };
            put(0, a, va);
            put(b_at, b, vb);
        }
        Repr::Memory if size <= 8 => {
            return ReturnPlace::Bytes(regs.rax.to_le_bytes()[..size as usize].to_vec());
        }
        Repr::Memory | Repr::Zst => return hidden(),
    }
    ReturnPlace::Bytes(bytes)
}

/// Where a function must leave a return value so that its caller finds it: the registers to set
/// and the bytes to write at the hidden return pointer (rax then holds that pointer, as rustc's
/// callees leave it). The inverse of [`return_place`], for the Rust ABI only.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Placement {
    pub rax: Option<u64>,
    pub rdx: Option<u64>,
    /// Low 64 bits of xmm0 and xmm1.
    pub xmm0: Option<u64>,
    pub xmm1: Option<u64>,
    pub memory: Option<(u64, Vec<u8>)>,
}

/// How to return the value whose bytes (`ty`'s size) are `bytes` from a Rust function, given
/// the hidden return pointer seen at entry; an error saying why when the layout does not tell.
pub fn place_return(
    types: &TypeTable,
    ty: TypeId,
    bytes: &[u8],
    hidden: Option<u64>,
) -> Result<Placement, String> {
    let size = size_of(types, ty).ok_or("unknown return type")?;
    if bytes.len() as u64 != size {
        return Err(format!("{} bytes for a {size}-byte value", bytes.len()));
    }
    let repr = repr(types, ty, 0).ok_or_else(|| {
        format!(
            "the return convention of {} is not known from its layout",
            types.name(ty)
        )
    })?;
    let word = |at: u64, n: u64| -> u64 {
        let mut w = [0u8; 8];
        let at = at as usize;
        let n = (n as usize).min(8).min(bytes.len().saturating_sub(at));
        w[..n].copy_from_slice(&bytes[at..at + n]);
        u64::from_le_bytes(w)
    };
    let through_memory = || -> Result<Placement, String> {
        let addr = hidden.ok_or("the hidden return pointer was not seen at entry")?;
        Ok(Placement {
            rax: Some(addr),
            memory: Some((addr, bytes.to_vec())),
            ..Placement::default()
        })
    };
    if repr == Repr::Zst || size == 0 {
        return Ok(Placement::default());
    }
    if size > 16 {
        return through_memory();
    }
    let mut p = Placement::default();
    match repr {
        Repr::Scalar(s) if s.float => p.xmm0 = Some(word(0, s.size)),
        Repr::Scalar(s) if s.size == 16 => {
            p.rax = Some(word(0, 8));
            p.rdx = Some(word(8, 8));
        }
        Repr::Scalar(s) => p.rax = Some(word(0, s.size)),
        Repr::Pair(a, b, b_at) => {
            if a.size > 8 || b.size > 8 {
                return through_memory();
            }
            let (va, vb) = (word(0, a.size), word(b_at, b.size));
            match (a.float, b.float) {
                (true, true) => (p.xmm0, p.xmm1) = (Some(va), Some(vb)),
                (true, false) => (p.xmm0, p.rax) = (Some(va), Some(vb)),
                (false, true) => (p.rax, p.xmm0) = (Some(va), Some(vb)),
                (false, false) => (p.rax, p.rdx) = (Some(va), Some(vb)),
            }
        }
        Repr::Memory if size <= 8 => p.rax = Some(word(0, size)),
        Repr::Memory | Repr::Zst => return through_memory(),
    }
    Ok(p)
}

/// Alignment of `ty` as rustc lays it out (`None` when the layout does not say).
pub fn align_of(types: &TypeTable, ty: TypeId) -> Option<u64> {
    align(types, ty, 0)
}

/// Whether rustc passes an argument of type `ty` by reference (a pointer to the caller's
/// copy): `Memory` values over 8 bytes. `None` when the layout does not tell.
pub fn passed_indirectly(types: &TypeTable, ty: TypeId) -> Option<bool> {
    let size = types.get(ty)?.size;
    Some(repr(types, ty, 0)? == Repr::Memory && size > 8)
}

/// Alignment of `ty` as rustc lays it out on x86-64 (`None` when the layout does not say).
fn align(types: &TypeTable, ty: TypeId, depth: u32) -> Option<u64> {
    if depth > 32 {
        return None;
    }
    let t = types.get(ty)?;
    let max_of = |tys: &mut dyn Iterator<Item = TypeId>| -> Option<u64> {
        let mut a = 1;
        for t in tys {
            a = a.max(align(types, t, depth + 1)?);
        }
        Some(a)
    };
    match &t.kind {
        TypeKind::Unit => Some(1),
        TypeKind::Base(_) | TypeKind::CEnum { .. } => Some(t.size.clamp(1, 16)),
        TypeKind::Pointer { .. } => Some(8),
        TypeKind::Struct { members, .. } | TypeKind::Union { members } => {
            max_of(&mut members.iter().map(|m| m.ty))
        }
        TypeKind::Array { elem, .. } => align(types, *elem, depth + 1),
        TypeKind::Enum { tag, variants } => {
            let mut all: Vec<TypeId> = tag.iter().map(|m| m.ty).collect();
            for v in variants {
                match &types.get(v.ty)?.kind {
                    TypeKind::Struct { members, .. } => all.extend(members.iter().map(|m| m.ty)),
                    _ => return None,
                }
            }
            max_of(&mut all.into_iter())
        }
        TypeKind::Opaque => None,
    }
}

fn size_of(types: &TypeTable, ty: TypeId) -> Option<u64> {
    types.get(ty).map(|t| t.size)
}

/// rustc's backend representation of `ty` (`layout_of_struct_or_enum` in `rustc_abi`), derived
/// from the DWARF layout; `None` when the layout has parts carve cannot judge.
fn repr(types: &TypeTable, ty: TypeId, depth: u32) -> Option<Repr> {
    if depth > 32 {
        return None;
    }
    let t = types.get(ty)?;
    if t.size == 0 {
        return match t.kind {
            TypeKind::Opaque => None,
            _ => Some(Repr::Zst),
        };
    }
    match &t.kind {
        TypeKind::Unit => Some(Repr::Zst),
        TypeKind::Base(kind) => Some(Repr::Scalar(Prim {
            size: t.size,
            float: *kind == BaseKind::Float,
        })),
        TypeKind::Pointer { .. } | TypeKind::CEnum { .. } => Some(Repr::Scalar(Prim {
            size: t.size,
            float: false,
        })),
        // Arrays are always `Memory`, even of one element.
        TypeKind::Array { .. } => Some(Repr::Memory),
        TypeKind::Union { .. } => Some(Repr::Memory),
        TypeKind::Opaque => None,
        TypeKind::Struct { members, .. } => {
            let fields: Vec<(u64, TypeId)> = members.iter().map(|m| (m.offset, m.ty)).collect();
            univariant(types, t.size, align(types, ty, depth)?, &fields, depth)
        }
        TypeKind::Enum { tag, variants } => {
            let enum_align = align(types, ty, depth)?;
            let variant_fields = |v: &crate::types::Variant| -> Option<Vec<(u64, TypeId)>> {
                match &types.get(v.ty)?.kind {
                    TypeKind::Struct { members, .. } => Some(
                        members
                            .iter()
                            .map(|m| (v.offset + m.offset, m.ty))
                            .collect(),
                    ),
                    _ => None,
                }
            };
            let Some(tag) = tag else {
                // One variant: laid out as a struct of its fields.
                return match variants.as_slice() {
                    [v] => univariant(types, t.size, enum_align, &variant_fields(v)?, depth),
                    _ => None,
                };
            };
            let non_zst = |fields: &[(u64, TypeId)]| -> Option<Vec<(u64, TypeId)>> {
                let mut out = Vec::new();
                for f in fields {
                    if size_of(types, f.1)? > 0 {
                        out.push(*f);
                    }
                }
                Some(out)
            };
            if let Some(dataful) = variants.iter().find(|v| v.discr.is_none()) {
                // Niche layout: the dataful variant's representation when every other variant
                // is zero-sized, else `Memory`.
                for v in variants.iter().filter(|v| v.discr.is_some()) {
                    if !non_zst(&variant_fields(v)?)?.is_empty() {
                        return Some(Repr::Memory);
                    }
                }
                return match univariant(
                    types,
                    t.size,
                    enum_align,
                    &variant_fields(dataful)?,
                    depth,
                )? {
                    r @ (Repr::Scalar(_) | Repr::Pair(..)) => Some(r),
                    _ => Some(Repr::Memory),
                };
            }
            // Tagged layout.
            let tag_size = size_of(types, tag.ty)?;
            if tag.offset != 0 || tag_size == 0 || tag_size > 16 {
                return None;
            }
            let tag_prim = Prim {
                size: tag_size,
                float: false,
            };
            if tag_size == t.size {
                return Some(Repr::Scalar(tag_prim));
            }
            // Every variant with at most one non-zero-sized field, a scalar, all at one offset
            // with the same kind of primitive: a (tag, scalar) pair if that is the layout.
            let mut common: Option<(Prim, u64)> = None;
            for v in variants {
                let fields = non_zst(&variant_fields(v)?)?;
                let (offset, field) = match fields.as_slice() {
                    [] => continue,
                    [one] => *one,
                    _ => return Some(Repr::Memory),
                };
                let Repr::Scalar(prim) = repr(types, field, depth + 1)? else {
                    return Some(Repr::Memory);
                };
                match common {
                    None => common = Some((prim, offset)),
                    Some((p, o)) if o == offset && p == prim => {}
                    _ => return Some(Repr::Memory),
                }
            }
            let Some((prim, offset)) = common else {
                return Some(Repr::Memory);
            };
            let pair_align = tag_prim.align().max(prim.align());
            let b_at = tag_size.next_multiple_of(prim.align());
            let pair_size = (b_at + prim.size).next_multiple_of(pair_align);
            if offset == b_at && t.size == pair_size && enum_align == pair_align {
                Some(Repr::Pair(tag_prim, prim, b_at))
            } else {
                Some(Repr::Memory)
            }
        }
    }
}

/// A struct (or one variant) of `size` and `align` with `fields` (offset, type): the
/// representation of its only non-zero-sized field when that fills it, a pair of its two
/// non-zero-sized scalar fields when they sit where a pair would put them, else `Memory`.
fn univariant(
    types: &TypeTable,
    size: u64,
    align_of: u64,
    fields: &[(u64, TypeId)],
    depth: u32,
) -> Option<Repr> {
    if size == 0 {
        return Some(Repr::Zst);
    }
    let mut non_zst = Vec::new();
    for &(offset, ty) in fields {
        if size_of(types, ty)? > 0 {
            non_zst.push((offset, ty));
        }
    }
    match non_zst.as_slice() {
        [(offset, ty)] => {
            let field_size = size_of(types, *ty)?;
            let field_align = align(types, *ty, depth + 1)?;
            if *offset == 0 && field_size == size && field_align == align_of {
                if let r @ (Repr::Scalar(_) | Repr::Pair(..)) = repr(types, *ty, depth + 1)? {
                    return Some(r);
                }
            }
            Some(Repr::Memory)
        }
        [x, y] => {
            let (first, second) = if x.0 <= y.0 { (x, y) } else { (y, x) };
            let (Repr::Scalar(a), Repr::Scalar(b)) = (
                repr(types, first.1, depth + 1)?,
                repr(types, second.1, depth + 1)?,
            ) else {
                return Some(Repr::Memory);
            };
            let pair_align = a.align().max(b.align());
            let b_at = a.size.next_multiple_of(b.align());
            let pair_size = (b_at + b.size).next_multiple_of(pair_align);
            if first.0 == 0 && second.0 == b_at && size == pair_size && align_of == pair_align {
                Some(Repr::Pair(a, b, b_at))
            } else {
                Some(Repr::Memory)
            }
        }
        _ => Some(Repr::Memory),
    }
}

/// Where the value rdi had at a function's first instruction is at the entry breakpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryRdi {
    /// In this register (DWARF number).
    Register(u16),
    /// In the 8 bytes at rsp + this offset (a debug build's prologue spills it).
    Stack(i64),
}

/// Where the value rdi had at the start of `code` still is at its end: where the hidden return
/// pointer is at the entry breakpoint, `code` being the prologue from the function's first
/// instruction (at `ip`) to the breakpoint. Register copies and spills to rsp-based slots are
/// followed; `None` when the prologue branches, cannot be decoded, or overwrites every copy.
pub fn entry_rdi_at(code: &[u8], ip: u64) -> Option<EntryRdi> {
    use iced_x86::Register;
    let (holders, slots) = rdi_places(code, ip, false)?;
    let dwarf = |r: Register| -> Option<u16> {
        Some(match r {
            Register::RAX => 0,
            Register::RDX => 1,
            Register::RCX => 2,
            Register::RBX => 3,
            Register::RSI => 4,
            Register::RDI => 5,
            Register::RBP => 6,
            Register::R8 => 8,
            Register::R9 => 9,
            Register::R10 => 10,
            Register::R11 => 11,
            Register::R12 => 12,
            Register::R13 => 13,
            Register::R14 => 14,
            Register::R15 => 15,
            _ => return None,
        })
    };
    holders
        .into_iter()
        .find_map(dwarf)
        .map(EntryRdi::Register)
        .or_else(|| slots.first().map(|at| EntryRdi::Stack(*at)))
}

/// The rsp-based slot that the straight-line code of `code` (from `ip`, up to its first
/// branch or call) spills rdi's value at `ip` to, still holding it there with rsp unchanged
/// since: for a function's code, where its prologue or the code right after it spills the
/// hidden return pointer, as code built without optimization does. The in-process capture
/// reads the pointer back from that slot at each exit. `None` when no such slot is left.
pub fn rdi_spill_after(code: &[u8], ip: u64) -> Option<i64> {
    let (_, slots) = rdi_places(code, ip, true)?;
    slots.first().copied()
}

/// The registers and rsp-based slots holding rdi's value from `ip` to the end of `code`, or,
/// with `until_branch`, to the first instruction that is not straight-line (else such an
/// instruction gives `None`).
fn rdi_places(
    code: &[u8],
    ip: u64,
    until_branch: bool,
) -> Option<(Vec<iced_x86::Register>, Vec<i64>)> {
    use iced_x86::{
        Decoder, DecoderOptions, FlowControl, InstructionInfoFactory, Mnemonic, OpKind, Register,
    };
    let mut holders = vec![Register::RDI];
    let mut slots: Vec<i64> = Vec::new();
    let mut decoder = Decoder::with_ip(64, code, ip, DecoderOptions::NONE);
    let mut info = InstructionInfoFactory::new();
    while decoder.can_decode() {
        let instr = decoder.decode();
        if instr.is_invalid() || instr.flow_control() != FlowControl::Next {
            if until_branch {
                break;
            }
            return None;
        }
        let is_mov = instr.mnemonic() == Mnemonic::Mov && instr.op_count() == 2;
        let copy = (is_mov
            && instr.op0_kind() == OpKind::Register
            && instr.op1_kind() == OpKind::Register
            && instr.op0_register().size() == 8
            && holders.contains(&instr.op1_register()))
        .then(|| instr.op0_register());
        let spill = (is_mov
            && instr.op0_kind() == OpKind::Memory
            && instr.memory_base() == Register::RSP
            && instr.memory_index() == Register::None
            && instr.op1_kind() == OpKind::Register
            && instr.op1_register().size() == 8
            && holders.contains(&instr.op1_register()))
        .then(|| instr.memory_displacement64() as i64);
        let used = info.info(&instr);
        for mem in used.used_memory() {
            let written = writes(mem.access());
            if !written {
                continue;
            }
            if mem.base() == Register::RSP && mem.index() == Register::None {
                let at = mem.displacement() as i64;
                slots.retain(|s| at + 8 <= *s || *s + 8 <= at);
            } else {
                slots.clear(); // a store through another pointer might hit the frame
            }
        }
        for reg in used.used_registers() {
            let written = writes(reg.access());
            if written {
                let full = reg.register().full_register();
                holders.retain(|r| *r != full);
                if full == Register::RSP {
                    slots.clear(); // offsets would move; debug prologues spill after this
                }
            }
        }
        if let Some(to) = copy {
            holders.push(to);
        }
        if let Some(at) = spill {
            slots.push(at);
        }
        if until_branch && holders.is_empty() && slots.is_empty() {
            break;
        }
    }
    Some((holders, slots))
}

/// Whether a value of type `ty` may be returned in xmm registers (it has a float part).
pub fn uses_float_registers(types: &TypeTable, ty: TypeId) -> bool {
    let mut leaves = Vec::new();
    leaves_of(types, ty, 0, &mut leaves, 0);
    leaves.iter().any(|l| l.float)
}

/// A primitive leaf of a type's layout: offset, size, and whether it is a float.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Leaf {
    offset: u64,
    size: u64,
    float: bool,
}

/// The System V classification, for C functions: up to 16 bytes in rax/rdx/xmm0/xmm1 by the
/// class of each eightbyte, larger values through the hidden pointer (which the callee also
/// leaves in rax).
fn c_return_place(types: &TypeTable, ty: TypeId, regs: &ReturnRegs) -> ReturnPlace {
    let size = types.get(ty).map(|t| t.size).unwrap_or(0);
    let hidden = ReturnPlace::Memory(regs.hidden.unwrap_or(regs.rax));
    if size == 0 {
        return ReturnPlace::Bytes(Vec::new());
    }
    if size > 16 {
        return hidden;
    }
    let mut leaves = Vec::new();
    if !leaves_of(types, ty, 0, &mut leaves, 0) {
        return ReturnPlace::Unknown(format!(
            "the return convention of {} is not known from its layout",
            types.name(ty)
        ));
    }
    // Each eightbyte is SSE when every leaf in it is a float, else INTEGER; integers take rax
    // then rdx, floats xmm0 then xmm1.
    let mut bytes = vec![0u8; size as usize];
    let (mut ints, mut sses) = (
        [regs.rax, regs.rdx].into_iter(),
        [regs.xmm0, regs.xmm1].into_iter(),
    );
    for (i, chunk) in bytes.chunks_mut(8).enumerate() {
        let lo = i as u64 * 8;
        let in_chunk = leaves
            .iter()
            .filter(|l| l.offset < lo + 8 && l.offset + l.size > lo);
        let sse = leaves
            .iter()
            .any(|l| l.offset < lo + 8 && l.offset + l.size > lo)
            && in_chunk.clone().all(|l| l.float);
        let value = if sse { sses.next() } else { ints.next() };
        let Some(value) = value else {
            return ReturnPlace::Unknown("more eightbytes than return registers".into());
        };
        let n = chunk.len();
        chunk.copy_from_slice(&value.to_le_bytes()[..n]);
    }
    ReturnPlace::Bytes(bytes)
}

/// Collects the primitive leaves of `ty`; false when the layout has something that keeps it
/// from being a scalar or scalar pair (unions, opaque parts, too deep).
fn leaves_of(types: &TypeTable, ty: TypeId, base: u64, out: &mut Vec<Leaf>, depth: u32) -> bool {
    if depth > 16 {
        return false;
    }
    let Some(t) = types.get(ty) else { return false };
    match &t.kind {
        TypeKind::Unit => true,
        TypeKind::Base(kind) => {
            out.push(Leaf {
                offset: base,
                size: t.size,
                float: *kind == BaseKind::Float,
            });
            true
        }
        TypeKind::Pointer { .. } | TypeKind::CEnum { .. } => {
            out.push(Leaf {
                offset: base,
                size: t.size,
                float: false,
            });
            true
        }
        TypeKind::Struct { members, .. } => members
            .iter()
            .all(|m| leaves_of(types, m.ty, base + m.offset, out, depth + 1)),
        TypeKind::Enum { tag, variants } => {
            if let Some(tag) = tag {
                if !leaves_of(types, tag.ty, base + tag.offset, out, depth + 1) {
                    return false;
                }
            }
            variants
                .iter()
                .all(|v| leaves_of(types, v.ty, base + v.offset, out, depth + 1))
        }
        TypeKind::Array { elem, count } => {
            let elem_size = types.get(*elem).map(|t| t.size).unwrap_or(0);
            (0..count.unwrap_or(0))
                .all(|i| leaves_of(types, *elem, base + i * elem_size, out, depth + 1))
        }
        TypeKind::Union { .. } | TypeKind::Opaque => false,
    }
}

/// Whether an operand access writes it (possibly: conditional writes count).
pub(crate) fn writes(access: iced_x86::OpAccess) -> bool {
    use iced_x86::OpAccess;
    matches!(
        access,
        OpAccess::Write | OpAccess::CondWrite | OpAccess::ReadWrite | OpAccess::ReadCondWrite
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Member, Type, Variant};

    fn base(t: &mut TypeTable, name: &str, size: u64, kind: BaseKind) -> TypeId {
        t.push(Type {
            name: name.into(),
            size,
            kind: TypeKind::Base(kind),
        })
    }

    fn regs() -> ReturnRegs {
        ReturnRegs {
            rax: 0x1111,
            rdx: 0x2222,
            xmm0: 0x3333,
            xmm1: 0x4444,
            hidden: Some(0x5555),
        }
    }

    #[test]
    fn an_integer_comes_back_in_rax_and_a_float_in_xmm0() {
        let mut t = TypeTable::default();
        let i = base(&mut t, "i64", 8, BaseKind::Signed);
        let f = base(&mut t, "f64", 8, BaseKind::Float);
        assert_eq!(
            return_place(&t, i, &regs(), true),
            ReturnPlace::Bytes(0x1111u64.to_le_bytes().to_vec())
        );
        assert_eq!(
            return_place(&t, f, &regs(), true),
            ReturnPlace::Bytes(0x3333u64.to_le_bytes().to_vec())
        );
    }

    #[test]
    fn an_option_u32_is_a_scalar_pair_in_eax_and_edx() {
        let mut t = TypeTable::default();
        let u32_ty = base(&mut t, "u32", 4, BaseKind::Unsigned);
        let none = t.push(Type {
            name: "None".into(),
            size: 8,
            kind: TypeKind::Struct {
                members: vec![],
                params: vec![],
            },
        });
        let some = t.push(Type {
            name: "Some".into(),
            size: 8,
            kind: TypeKind::Struct {
                members: vec![Member {
                    name: "__0".into(),
                    offset: 4,
                    ty: u32_ty,
                }],
                params: vec![],
            },
        });
        let opt = t.push(Type {
            name: "core::option::Option<u32>".into(),
            size: 8,
            kind: TypeKind::Enum {
                tag: Some(Member {
                    name: "<tag>".into(),
                    offset: 0,
                    ty: u32_ty,
                }),
                variants: vec![
                    Variant {
                        discr: Some(0),
                        name: "None".into(),
                        offset: 0,
                        ty: none,
                    },
                    Variant {
                        discr: Some(1),
                        name: "Some".into(),
                        offset: 0,
                        ty: some,
                    },
                ],
            },
        });
        let mut expected = 0x1111u32.to_le_bytes().to_vec();
        expected.extend_from_slice(&0x2222u32.to_le_bytes());
        assert_eq!(
            return_place(&t, opt, &regs(), true),
            ReturnPlace::Bytes(expected)
        );
    }

    #[test]
    fn values_over_sixteen_bytes_come_back_through_the_hidden_pointer_seen_at_entry() {
        let mut t = TypeTable::default();
        let u64_ty = base(&mut t, "u64", 8, BaseKind::Unsigned);
        let big = t.push(Type {
            name: "alloc::string::String".into(),
            size: 24,
            kind: TypeKind::Struct {
                members: (0..3)
                    .map(|i| Member {
                        name: format!("f{i}"),
                        offset: i * 8,
                        ty: u64_ty,
                    })
                    .collect(),
                params: vec![],
            },
        });
        assert_eq!(
            return_place(&t, big, &regs(), true),
            ReturnPlace::Memory(0x5555)
        );
        // Not rax: an optimised callee need not leave the pointer there.
        let unseen = ReturnRegs {
            hidden: None,
            ..regs()
        };
        assert!(matches!(
            return_place(&t, big, &unseen, true),
            ReturnPlace::Unknown(_)
        ));
    }

    #[test]
    fn a_pair_of_floats_comes_back_in_xmm0_and_xmm1() {
        let mut t = TypeTable::default();
        let f = base(&mut t, "f64", 8, BaseKind::Float);
        let pair = t.push(Type {
            name: "(f64, f64)".into(),
            size: 16,
            kind: TypeKind::Struct {
                members: vec![
                    Member {
                        name: "__0".into(),
                        offset: 0,
                        ty: f,
                    },
                    Member {
                        name: "__1".into(),
                        offset: 8,
                        ty: f,
                    },
                ],
                params: vec![],
            },
        });
        let mut expected = 0x3333u64.to_le_bytes().to_vec();
        expected.extend_from_slice(&0x4444u64.to_le_bytes());
        assert_eq!(
            return_place(&t, pair, &regs(), true),
            ReturnPlace::Bytes(expected)
        );
    }

    #[test]
    fn the_hidden_pointer_is_followed_through_the_prologue() {
        // push rbx; sub rsp, 0x10; mov rbx, rdi
        let kept = [0x53, 0x48, 0x83, 0xec, 0x10, 0x48, 0x89, 0xfb];
        assert_eq!(entry_rdi_at(&kept, 0x1000), Some(EntryRdi::Register(5)));
        // ... then mov edi, 3: only rbx still holds it.
        let mut moved = kept.to_vec();
        moved.extend_from_slice(&[0xbf, 0x03, 0x00, 0x00, 0x00]);
        assert_eq!(entry_rdi_at(&moved, 0x1000), Some(EntryRdi::Register(3)));
        // sub rsp, 0x68; mov [rsp+8], rdi; lea rdi, [rsp+0x1f]: the spill slot keeps it.
        let spilled = [
            0x48, 0x83, 0xec, 0x68, 0x48, 0x89, 0x7c, 0x24, 0x08, 0x48, 0x8d, 0x7c, 0x24, 0x1f,
        ];
        assert_eq!(entry_rdi_at(&spilled, 0x1000), Some(EntryRdi::Stack(8)));
        // xor edi, edi alone loses it; a call in the prologue is not followed.
        assert_eq!(entry_rdi_at(&[0x31, 0xff], 0x1000), None);
        assert_eq!(entry_rdi_at(&[0xe8, 0, 0, 0, 0], 0x1000), None);
        assert_eq!(entry_rdi_at(&[], 0x1000), Some(EntryRdi::Register(5)));
    }

    #[test]
    fn the_hidden_pointer_s_spill_slot_is_found_up_to_the_first_call() {
        // A debug build's start: sub rsp, 0xc8; mov [rsp], rdi; mov [rsp+8], rdi;
        // mov edi, 1; call ...: the first slot, though rdi is gone at the call.
        let debug = [
            0x48, 0x81, 0xec, 0xc8, 0x00, 0x00, 0x00, 0x48, 0x89, 0x3c, 0x24, 0x48, 0x89, 0x7c,
            0x24, 0x08, 0xbf, 0x01, 0x00, 0x00, 0x00, 0xe8, 0, 0, 0, 0, 0x48, 0x89, 0x04, 0x24,
        ];
        assert_eq!(rdi_spill_after(&debug, 0x1000), Some(0));
        // An optimized start keeps it in rbx (push rbx; sub rsp, 0x10; mov rbx, rdi): no slot.
        let kept = [
            0x53, 0x48, 0x83, 0xec, 0x10, 0x48, 0x89, 0xfb, 0xe8, 0, 0, 0, 0,
        ];
        assert_eq!(rdi_spill_after(&kept, 0x1000), None);
        // A spill overwritten before the call (mov [rsp], rdi; mov qword [rsp], 0): none left.
        let overwritten = [
            0x48, 0x89, 0x3c, 0x24, 0x48, 0xc7, 0x04, 0x24, 0, 0, 0, 0, 0xe8, 0, 0, 0, 0,
        ];
        assert_eq!(rdi_spill_after(&overwritten, 0x1000), None);
        // rsp moved after the spill (mov [rsp], rdi; sub rsp, 8): the offset no longer holds.
        let moved = [0x48, 0x89, 0x3c, 0x24, 0x48, 0x83, 0xec, 0x08];
        assert_eq!(rdi_spill_after(&moved, 0x1000), None);
    }
}
