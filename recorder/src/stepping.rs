//! How to get a thread past a breakpoint without ever taking the int3 out of memory (which would
//! let other threads run through it unseen): branches, calls and returns are emulated on the
//! registers; other instructions run as a copy in a scratch slot ("displaced stepping", as gdb
//! does), with rip-relative displacements patched for the copy's address.

use iced_x86::{
    ConditionCode, Decoder, DecoderOptions, FlowControl, Instruction, OpKind, Register,
};

/// What to do with the instruction under a breakpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StepPlan {
    /// Copy `code` to the scratch slot, single-step it there, continue at `addr + len`.
    OutOfLine {
        code: Vec<u8>,
        len: u64,
    },
    Jump {
        target: Target,
    },
    Call {
        target: Target,
        return_to: u64,
    },
    Branch {
        condition: ConditionCode,
        target: u64,
        next: u64,
    },
    Return {
        pop: u64,
    },
    /// A data move carve performs itself on the registers and memory, then continues at `next`
    /// (no single-step: the common case under a breakpoint in debug builds).
    Emulate {
        op: Emulated,
        next: u64,
    },
    /// An instruction carve cannot move or emulate: lift the breakpoint and step in place.
    InPlace,
}

/// A `mov` or `lea` that can be carried out without running it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Emulated {
    /// `dst = src`, `size` bytes (4 or 8; a 4-byte register write zero-extends, as the CPU does).
    Mov {
        dst: Operand,
        src: Operand,
        size: u8,
    },
    /// `dst = address of mem`.
    Lea { dst: Register, mem: MemRef },
    /// `movzx`/`movsx`/`movsxd`: `src_size` bytes (1, 2 or 4) of `src`, zero- or sign-extended
    /// into `dst_size` bytes (4 or 8) of register `dst`.
    Extend {
        dst: Register,
        src: Operand,
        src_size: u8,
        dst_size: u8,
        signed: bool,
    },
    /// `dst = dst OP src` (or `src OP src2` for three-operand `imul`), setting the flags the
    /// CPU defines; `cmp` and `test` only set flags.
    Alu {
        op: AluOp,
        dst: Operand,
        src: Operand,
        src2: Option<Operand>,
        size: u8,
    },
    /// `push r64`: rsp -= 8, then the register is stored at rsp (the first instruction of
    /// most functions, where the `core::fmt::Write` hooks sit).
    Push { src: Register },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AluOp {
    Add,
    Sub,
    Cmp,
    And,
    Or,
    Xor,
    Test,
    Imul,
}

impl AluOp {
    pub(crate) fn writes_back(self) -> bool {
        !matches!(self, AluOp::Cmp | AluOp::Test)
    }
}

const CF: u64 = 1 << 0;
const PF: u64 = 1 << 2;
const AF: u64 = 1 << 4;
const ZF: u64 = 1 << 6;
const SF: u64 = 1 << 7;
const OF: u64 = 1 << 11;

/// `a OP b` on `size` bytes: the result (zero-extended) and the new rflags.
/// `value`'s low `size` bytes, zero- or sign-extended to 64 bits (`movzx`, `movsx`).
pub(crate) fn extend(value: u64, size: u8, signed: bool) -> u64 {
    let bits = 8 * u32::from(size);
    let low = value & (u64::MAX >> (64 - bits));
    if signed && low >> (bits - 1) & 1 == 1 {
        low | (u64::MAX << bits)
    } else {
        low
    }
}

pub(crate) fn alu(op: AluOp, a: u64, b: u64, size: u8, rflags: u64) -> (u64, u64) {
    let bits = size as u32 * 8;
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let sign = 1u64 << (bits - 1);
    let (a, b) = (a & mask, b & mask);
    let (result, cf, of, af) = match op {
        AluOp::Add => {
            let r = a.wrapping_add(b) & mask;
            (
                r,
                r < a,
                (!(a ^ b) & (a ^ r) & sign) != 0,
                ((a ^ b ^ r) & 0x10) != 0,
            )
        }
        AluOp::Sub | AluOp::Cmp => {
            let r = a.wrapping_sub(b) & mask;
            (
                r,
                a < b,
                ((a ^ b) & (a ^ r) & sign) != 0,
                ((a ^ b ^ r) & 0x10) != 0,
            )
        }
        AluOp::And | AluOp::Test => (a & b, false, false, false),
        AluOp::Or => (a | b, false, false, false),
        AluOp::Xor => (a ^ b, false, false, false),
        AluOp::Imul => {
            let sx = |v: u64| ((v << (64 - bits)) as i64 >> (64 - bits)) as i128;
            let full = sx(a) * sx(b);
            let r = (full as u64) & mask;
            let overflow = sx(r) != full;
            (r, overflow, overflow, false)
        }
    };
    let mut flags = rflags & !(CF | PF | AF | ZF | SF | OF);
    let set = |flags: &mut u64, bit: u64, on: bool| {
        if on {
            *flags |= bit;
        }
    };
    set(&mut flags, CF, cf);
    set(&mut flags, OF, of);
    set(&mut flags, AF, af);
    set(&mut flags, ZF, result == 0);
    set(&mut flags, SF, result & sign != 0);
    set(
        &mut flags,
        PF,
        (result as u8).count_ones().is_multiple_of(2),
    );
    (result, flags)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operand {
    /// A general-purpose register (its 64-bit name).
    Reg(Register),
    Mem(MemRef),
    Imm(u64),
}

/// `[base + index * scale + disp]`, or an absolute address (rip-relative, resolved).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MemRef {
    pub base: Option<Register>,
    pub index: Option<Register>,
    pub scale: u64,
    pub disp: u64,
}

impl MemRef {
    pub(crate) fn address(&self, regs: &libc::user_regs_struct) -> Option<u64> {
        let base = match self.base {
            Some(r) => gpr(regs, r)?,
            None => 0,
        };
        let index = match self.index {
            Some(r) => gpr(regs, r)?.wrapping_mul(self.scale),
            None => 0,
        };
        Some(base.wrapping_add(index).wrapping_add(self.disp))
    }
}

/// The `mov`/`lea` forms carve emulates; anything else gets a step.
fn emulation(instr: &Instruction) -> Option<Emulated> {
    use iced_x86::Code;
    if instr.segment_prefix() != Register::None || instr.has_lock_prefix() {
        return None;
    }
    let operand = |i: u32| -> Option<Operand> {
        match instr.op_kind(i) {
            OpKind::Register => {
                let r = instr.op_register(i);
                (r.is_gpr64() || r.is_gpr32()).then(|| Operand::Reg(r.full_register()))
            }
            OpKind::Memory => memref(instr).map(Operand::Mem),
            OpKind::Immediate32to64 => Some(Operand::Imm(instr.immediate32to64() as u64)),
            OpKind::Immediate32 => Some(Operand::Imm(instr.immediate32() as u64)),
            OpKind::Immediate64 => Some(Operand::Imm(instr.immediate64())),
            _ => None,
        }
    };
    if let Some(alu) = alu_emulation(instr, &operand) {
        return Some(alu);
    }
    if let Some(extend) = extend_emulation(instr) {
        return Some(extend);
    }
    let size = match instr.code() {
        Code::Mov_rm64_r64 | Code::Mov_r64_rm64 | Code::Mov_rm64_imm32 | Code::Mov_r64_imm64 => 8,
        Code::Mov_rm32_r32 | Code::Mov_r32_rm32 | Code::Mov_rm32_imm32 | Code::Mov_r32_imm32 => 4,
        Code::Push_r64 => {
            let src = instr.op0_register();
            return src.is_gpr64().then_some(Emulated::Push { src });
        }
        Code::Lea_r64_m => {
            let dst = instr.op0_register();
            return Some(Emulated::Lea {
                dst,
                mem: memref(instr)?,
            });
        }
        _ => return None,
    };
    Some(Emulated::Mov {
        dst: operand(0)?,
        src: operand(1)?,
        size,
    })
}

/// `movzx`/`movsx` from a byte or word, `movsxd` from a dword, into a 32- or 64-bit register:
/// the loads optimized code starts functions with (`movzx edx, byte [rsi]`). High-byte
/// registers (`ah`...) are left to the CPU.
fn extend_emulation(instr: &Instruction) -> Option<Emulated> {
    use iced_x86::Mnemonic;
    let signed = match instr.mnemonic() {
        Mnemonic::Movzx => false,
        Mnemonic::Movsx | Mnemonic::Movsxd => true,
        _ => return None,
    };
    let dst = instr.op0_register();
    let dst_size: u8 = match (dst.is_gpr64(), dst.is_gpr32()) {
        (true, _) => 8,
        (_, true) => 4,
        _ => return None,
    };
    let (src, src_size) = match instr.op1_kind() {
        OpKind::Register => {
            let r = instr.op1_register();
            if matches!(r, Register::AH | Register::BH | Register::CH | Register::DH) {
                return None;
            }
            (Operand::Reg(r.full_register()), r.size())
        }
        OpKind::Memory => (Operand::Mem(memref(instr)?), instr.memory_size().size()),
        _ => return None,
    };
    if !matches!(src_size, 1 | 2 | 4) || src_size >= usize::from(dst_size) {
        return None;
    }
    Some(Emulated::Extend {
        dst: dst.full_register(),
        src,
        src_size: src_size as u8,
        dst_size,
        signed,
    })
}

/// Two-operand `add`/`sub`/`cmp`/`and`/`or`/`xor`/`test` and two- or three-operand `imul` on
/// 32- or 64-bit operands.
fn alu_emulation(
    instr: &Instruction,
    operand: &dyn Fn(u32) -> Option<Operand>,
) -> Option<Emulated> {
    use iced_x86::Mnemonic;
    let op = match instr.mnemonic() {
        Mnemonic::Add => AluOp::Add,
        Mnemonic::Sub => AluOp::Sub,
        Mnemonic::Cmp => AluOp::Cmp,
        Mnemonic::And => AluOp::And,
        Mnemonic::Or => AluOp::Or,
        Mnemonic::Xor => AluOp::Xor,
        Mnemonic::Test => AluOp::Test,
        Mnemonic::Imul if instr.op_count() >= 2 => AluOp::Imul,
        _ => return None,
    };
    let size = match instr.op0_kind() {
        OpKind::Register => instr.op0_register().size(),
        OpKind::Memory => instr.memory_size().size(),
        _ => return None,
    };
    if size != 4 && size != 8 {
        return None;
    }
    let imm = |i: u32| -> Option<Operand> {
        match instr.op_kind(i) {
            OpKind::Immediate8to32
            | OpKind::Immediate8to64
            | OpKind::Immediate32to64
            | OpKind::Immediate32
            | OpKind::Immediate8 => Some(Operand::Imm(instr.immediate(i))),
            _ => operand(i),
        }
    };
    let (dst, src, src2) = if op == AluOp::Imul && instr.op_count() == 3 {
        (operand(0)?, operand(1)?, Some(imm(2)?))
    } else if instr.op_count() == 2 {
        (operand(0)?, imm(1)?, None)
    } else {
        return None;
    };
    Some(Emulated::Alu {
        op,
        dst,
        src,
        src2,
        size: size as u8,
    })
}

fn memref(instr: &Instruction) -> Option<MemRef> {
    if instr.is_ip_rel_memory_operand() {
        return Some(MemRef {
            base: None,
            index: None,
            scale: 0,
            disp: instr.ip_rel_memory_address(),
        });
    }
    let reg = |r: Register| -> Option<Option<Register>> {
        match r {
            Register::None => Some(None),
            r if r.is_gpr64() => Some(Some(r)),
            _ => None, // 32-bit addressing, segment or vector index: not emulated
        }
    };
    Some(MemRef {
        base: reg(instr.memory_base())?,
        index: reg(instr.memory_index())?,
        scale: instr.memory_index_scale() as u64,
        disp: instr.memory_displacement64(),
    })
}

/// Writes a 64-bit general-purpose register.
pub(crate) fn set_gpr(regs: &mut libc::user_regs_struct, r: Register, v: u64) -> bool {
    let slot = match r {
        Register::RAX => &mut regs.rax,
        Register::RBX => &mut regs.rbx,
        Register::RCX => &mut regs.rcx,
        Register::RDX => &mut regs.rdx,
        Register::RSI => &mut regs.rsi,
        Register::RDI => &mut regs.rdi,
        Register::RBP => &mut regs.rbp,
        Register::RSP => &mut regs.rsp,
        Register::R8 => &mut regs.r8,
        Register::R9 => &mut regs.r9,
        Register::R10 => &mut regs.r10,
        Register::R11 => &mut regs.r11,
        Register::R12 => &mut regs.r12,
        Register::R13 => &mut regs.r13,
        Register::R14 => &mut regs.r14,
        Register::R15 => &mut regs.r15,
        _ => return false,
    };
    *slot = v;
    true
}

/// Where an emulated branch goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    Direct(u64),
    Register(Register),
    /// The 8-byte pointer stored at this address (`jmp [rip+x]`).
    Indirect(u64),
}

/// Plans the step over the instruction whose original bytes are `bytes`, found at `addr`,
/// whose copy would run at `scratch`.
pub(crate) fn plan(bytes: &[u8], addr: u64, scratch: u64) -> StepPlan {
    let mut decoder = Decoder::with_ip(64, bytes, addr, DecoderOptions::NONE);
    let mut instr = Instruction::default();
    decoder.decode_out(&mut instr);
    if instr.is_invalid() {
        return StepPlan::InPlace;
    }
    let len = instr.len() as u64;
    let next = addr + len;
    let target = || branch_target(&instr);
    if instr.flow_control() == FlowControl::Next {
        if let Some(op) = emulation(&instr) {
            return StepPlan::Emulate { op, next };
        }
    }
    match instr.flow_control() {
        FlowControl::Next => {
            let mut code = bytes[..len as usize].to_vec();
            if instr.is_ip_rel_memory_operand() {
                let offsets = decoder.get_constant_offsets(&instr);
                if !offsets.has_displacement() || offsets.displacement_size() != 4 {
                    return StepPlan::InPlace;
                }
                let wanted = instr.ip_rel_memory_address() as i128 - (scratch + len) as i128;
                let Ok(disp) = i32::try_from(wanted) else {
                    return StepPlan::InPlace;
                };
                let at = offsets.displacement_offset();
                code[at..at + 4].copy_from_slice(&disp.to_le_bytes());
            }
            StepPlan::OutOfLine { code, len }
        }
        FlowControl::UnconditionalBranch | FlowControl::IndirectBranch => match target() {
            Some(target) => StepPlan::Jump { target },
            None => StepPlan::InPlace,
        },
        FlowControl::Call | FlowControl::IndirectCall => match target() {
            Some(target) => StepPlan::Call {
                target,
                return_to: next,
            },
            None => StepPlan::InPlace,
        },
        FlowControl::ConditionalBranch
            if instr.condition_code() != ConditionCode::None
                && instr.op0_kind() == OpKind::NearBranch64 =>
        {
            StepPlan::Branch {
                condition: instr.condition_code(),
                target: instr.near_branch_target(),
                next,
            }
        }
        FlowControl::Return if instr.code() == iced_x86::Code::Retnq => StepPlan::Return { pop: 0 },
        FlowControl::Return if instr.code() == iced_x86::Code::Retnq_imm16 => StepPlan::Return {
            pop: instr.immediate16() as u64,
        },
        _ => StepPlan::InPlace,
    }
}

fn branch_target(instr: &Instruction) -> Option<Target> {
    match instr.op0_kind() {
        OpKind::NearBranch64 => Some(Target::Direct(instr.near_branch_target())),
        OpKind::Register if instr.op0_register().is_gpr64() => {
            Some(Target::Register(instr.op0_register()))
        }
        OpKind::Memory if instr.is_ip_rel_memory_operand() => {
            Some(Target::Indirect(instr.ip_rel_memory_address()))
        }
        _ => None,
    }
}

/// Whether a conditional branch is taken, from rflags.
pub(crate) fn taken(condition: ConditionCode, rflags: u64) -> bool {
    let flag = |bit: u32| rflags & (1 << bit) != 0;
    let (cf, pf, zf, sf, of) = (flag(0), flag(2), flag(6), flag(7), flag(11));
    match condition {
        ConditionCode::o => of,
        ConditionCode::no => !of,
        ConditionCode::b => cf,
        ConditionCode::ae => !cf,
        ConditionCode::e => zf,
        ConditionCode::ne => !zf,
        ConditionCode::be => cf || zf,
        ConditionCode::a => !cf && !zf,
        ConditionCode::s => sf,
        ConditionCode::ns => !sf,
        ConditionCode::p => pf,
        ConditionCode::np => !pf,
        ConditionCode::l => sf != of,
        ConditionCode::ge => sf == of,
        ConditionCode::le => zf || sf != of,
        ConditionCode::g => !zf && sf == of,
        ConditionCode::None => false,
    }
}

/// The value of a 64-bit general-purpose register.
pub(crate) fn gpr(regs: &libc::user_regs_struct, r: Register) -> Option<u64> {
    Some(match r {
        Register::RAX => regs.rax,
        Register::RBX => regs.rbx,
        Register::RCX => regs.rcx,
        Register::RDX => regs.rdx,
        Register::RSI => regs.rsi,
        Register::RDI => regs.rdi,
        Register::RBP => regs.rbp,
        Register::RSP => regs.rsp,
        Register::R8 => regs.r8,
        Register::R9 => regs.r9,
        Register::R10 => regs.r10,
        Register::R11 => regs.r11,
        Register::R12 => regs.r12,
        Register::R13 => regs.r13,
        Register::R14 => regs.r14,
        Register::R15 => regs.r15,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emulated_arithmetic_sets_the_flags_the_cpu_sets() {
        use std::arch::asm;
        let native = |op: AluOp, a: u64, b: u64| -> (u64, u64) {
            let (mut r, flags): (u64, u64);
            r = a;
            // SAFETY: register-only arithmetic and pushfq/pop on our own stack.
            unsafe {
                match op {
                    AluOp::Add => {
                        asm!("add {r}, {b}", "pushfq", "pop {f}", r = inout(reg) r, b = in(reg) b, f = out(reg) flags)
                    }
                    AluOp::Sub => {
                        asm!("sub {r}, {b}", "pushfq", "pop {f}", r = inout(reg) r, b = in(reg) b, f = out(reg) flags)
                    }
                    AluOp::And => {
                        asm!("and {r}, {b}", "pushfq", "pop {f}", r = inout(reg) r, b = in(reg) b, f = out(reg) flags)
                    }
                    AluOp::Xor => {
                        asm!("xor {r}, {b}", "pushfq", "pop {f}", r = inout(reg) r, b = in(reg) b, f = out(reg) flags)
                    }
                    AluOp::Imul => {
                        asm!("imul {r}, {b}", "pushfq", "pop {f}", r = inout(reg) r, b = in(reg) b, f = out(reg) flags)
                    }
                    _ => unreachable!(),
                }
            }
            (r, flags)
        };
        let defined = |op: AluOp| match op {
            // imul leaves SF, ZF, AF and PF undefined; and/xor leave AF undefined.
            AluOp::Imul => CF | OF,
            AluOp::And | AluOp::Xor => CF | PF | ZF | SF | OF,
            _ => CF | PF | AF | ZF | SF | OF,
        };
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            // Mix in edge values: 0, -1, sign bits.
            match seed % 8 {
                0 => 0,
                1 => u64::MAX,
                2 => 1 << 63,
                3 => (1 << 63) - 1,
                _ => seed,
            }
        };
        for _ in 0..5000 {
            let (a, b) = (next(), next());
            for op in [AluOp::Add, AluOp::Sub, AluOp::And, AluOp::Xor, AluOp::Imul] {
                let (want_r, want_f) = native(op, a, b);
                let (got_r, got_f) = alu(op, a, b, 8, 0x202);
                assert_eq!(got_r, want_r, "{op:?} {a:#x} {b:#x}");
                let m = defined(op);
                assert_eq!(got_f & m, want_f & m, "{op:?} {a:#x} {b:#x} flags");
            }
        }
    }

    #[test]
    fn a_three_operand_imul_is_emulated() {
        // imul rax, rax, 0x1f
        let bytes = [0x48, 0x6b, 0xc0, 0x1f, 0x90];
        assert!(matches!(
            plan(&bytes, 0x1000, 0x9000),
            StepPlan::Emulate {
                op: Emulated::Alu {
                    op: AluOp::Imul,
                    size: 8,
                    ..
                },
                next: 0x1004
            }
        ));
    }

    #[test]
    fn a_stack_store_is_emulated() {
        // mov [rsp+0x74], edi
        let bytes = [0x89, 0x7c, 0x24, 0x74, 0x90, 0x90];
        let stack_slot = MemRef {
            base: Some(Register::RSP),
            index: None,
            scale: 1,
            disp: 0x74,
        };
        assert_eq!(
            plan(&bytes, 0x1000, 0x9000),
            StepPlan::Emulate {
                op: Emulated::Mov {
                    dst: Operand::Mem(stack_slot),
                    src: Operand::Reg(Register::RDI),
                    size: 4,
                },
                next: 0x1004,
            }
        );
    }

    #[test]
    fn a_shift_runs_out_of_line_unchanged() {
        // shl rax, 3
        let bytes = [0x48, 0xc1, 0xe0, 0x03, 0x90];
        assert_eq!(
            plan(&bytes, 0x1000, 0x9000),
            StepPlan::OutOfLine {
                code: vec![0x48, 0xc1, 0xe0, 0x03],
                len: 4
            }
        );
    }

    #[test]
    fn a_rip_relative_lea_is_emulated_with_its_absolute_address() {
        // lea rsi, [rip-0xbcd1] at 0x14ea0 (7 bytes) -> 0x91d6
        let bytes = [0x48, 0x8d, 0x35, 0x2f, 0x43, 0xff, 0xff];
        let StepPlan::Emulate {
            op: Emulated::Lea { dst, mem },
            next,
        } = plan(&bytes, 0x14ea0, 0x9000)
        else {
            panic!("not emulated");
        };
        assert_eq!((dst, next), (Register::RSI, 0x14ea7));
        assert_eq!(mem.disp, 0x91d6);
    }

    #[test]
    fn a_rip_relative_byte_compare_gets_its_displacement_patched_for_the_copy() {
        // cmp byte [rip+0x10], 0 at 0x1000 (7 bytes) -> refers to 0x1017
        let bytes = [0x80, 0x3d, 0x10, 0x00, 0x00, 0x00, 0x00];
        let StepPlan::OutOfLine { code, len } = plan(&bytes, 0x1000, 0x2000) else {
            panic!("not out of line");
        };
        assert_eq!(len, 7);
        let disp = i32::from_le_bytes(code[2..6].try_into().unwrap()) as i64;
        assert_eq!(0x2000 + 7 + disp, 0x1017);
    }

    #[test]
    fn a_register_push_is_emulated() {
        // push rbp; push r15 (REX.B)
        let StepPlan::Emulate { op, next } = plan(&[0x55, 0x48], 0x1000, 0x9000) else {
            panic!("push rbp not emulated");
        };
        assert_eq!((op, next), (Emulated::Push { src: Register::RBP }, 0x1001));
        let StepPlan::Emulate { op, next } = plan(&[0x41, 0x57], 0x1000, 0x9000) else {
            panic!("push r15 not emulated");
        };
        assert_eq!((op, next), (Emulated::Push { src: Register::R15 }, 0x1002));
    }

    #[test]
    fn extension_matches_the_cpu_s() {
        assert_eq!(extend(0xffff_ff80, 1, false), 0x80);
        assert_eq!(extend(0x80, 1, true), 0xffff_ffff_ffff_ff80);
        assert_eq!(extend(0x7f, 1, true), 0x7f);
        assert_eq!(extend(0x1234_8000, 2, true), 0xffff_ffff_ffff_8000);
        assert_eq!(extend(0xdead_8000_0000, 4, true), 0xffff_ffff_8000_0000);
        assert_eq!(extend(0xdead_8000_0000, 4, false), 0x8000_0000);
        // A 32-bit destination keeps the low half (the store zero-extends it).
        assert_eq!(extend(0x80, 1, true) & 0xffff_ffff, 0xffff_ff80);
    }

    #[test]
    fn zero_and_sign_extending_loads_are_emulated() {
        // movzx edx, byte [rsi]
        let StepPlan::Emulate { op, next } = plan(&[0x0f, 0xb6, 0x16, 0x90], 0x1000, 0x9000) else {
            panic!("movzx not emulated");
        };
        assert_eq!(next, 0x1003);
        assert!(matches!(
            op,
            Emulated::Extend {
                dst: Register::RDX,
                src: Operand::Mem(_),
                src_size: 1,
                dst_size: 4,
                signed: false
            }
        ));
        // movsxd rax, dword [rdi+8]
        let StepPlan::Emulate { op, .. } = plan(&[0x48, 0x63, 0x47, 0x08], 0x1000, 0x9000) else {
            panic!("movsxd not emulated");
        };
        assert!(matches!(
            op,
            Emulated::Extend {
                dst: Register::RAX,
                src_size: 4,
                dst_size: 8,
                signed: true,
                ..
            }
        ));
        // movsx eax, cx (a register source)
        assert!(matches!(
            plan(&[0x0f, 0xbf, 0xc1], 0x1000, 0x9000),
            StepPlan::Emulate {
                op: Emulated::Extend {
                    src: Operand::Reg(Register::RCX),
                    src_size: 2,
                    signed: true,
                    ..
                },
                ..
            }
        ));
        // movzx eax, ah: the high byte is left to the CPU.
        assert!(!matches!(
            plan(&[0x0f, 0xb6, 0xc4], 0x1000, 0x9000),
            StepPlan::Emulate { .. }
        ));
    }

    #[test]
    fn a_direct_call_is_emulated() {
        // call rel32 +0x100 at 0x1000 (5 bytes) -> 0x1105
        let bytes = [0xe8, 0x00, 0x01, 0x00, 0x00];
        assert_eq!(
            plan(&bytes, 0x1000, 0x9000),
            StepPlan::Call {
                target: Target::Direct(0x1105),
                return_to: 0x1005
            }
        );
    }

    #[test]
    fn a_conditional_jump_follows_the_flags() {
        // jg +0x0b at 0x1000 (2 bytes)
        let bytes = [0x7f, 0x0b];
        let StepPlan::Branch {
            condition,
            target,
            next,
        } = plan(&bytes, 0x1000, 0x9000)
        else {
            panic!("not a branch");
        };
        assert_eq!((target, next), (0x100d, 0x1002));
        assert!(taken(condition, 0)); // ZF=0, SF=OF
        assert!(!taken(condition, 1 << 6)); // ZF=1
    }

    #[test]
    fn garbage_is_stepped_in_place_rather_than_guessed() {
        assert_eq!(plan(&[0x0f, 0xff], 0x1000, 0x9000), StepPlan::InPlace);
    }
}
