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
    /// An instruction carve cannot move or emulate: lift the breakpoint and step in place.
    InPlace,
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
    fn a_stack_store_runs_out_of_line_unchanged() {
        // mov [rsp+0x74], edi
        let bytes = [0x89, 0x7c, 0x24, 0x74, 0x90, 0x90];
        assert_eq!(
            plan(&bytes, 0x1000, 0x9000),
            StepPlan::OutOfLine {
                code: vec![0x89, 0x7c, 0x24, 0x74],
                len: 4
            }
        );
    }

    #[test]
    fn a_rip_relative_lea_gets_its_displacement_patched_for_the_copy() {
        // lea rax, [rip+0x10] at 0x1000 -> refers to 0x1017
        let bytes = [0x48, 0x8d, 0x05, 0x10, 0x00, 0x00, 0x00];
        let StepPlan::OutOfLine { code, len } = plan(&bytes, 0x1000, 0x2000) else {
            panic!("not out of line");
        };
        assert_eq!(len, 7);
        let disp = i32::from_le_bytes(code[3..7].try_into().unwrap()) as i64;
        assert_eq!(0x2000 + 7 + disp, 0x1017);
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
