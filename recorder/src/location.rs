//! Evaluates DWARF location expressions by asking a [`Machine`] for registers and memory, the
//! way gimli's `Evaluation` asks its caller: no I/O here, so it is pure and testable.

use gimli::Reader as _;

use crate::dwarf::Expr;

/// Reads the traced process's memory.
pub trait Memory {
    /// Fills `buf` from `addr`; false when any byte is unreadable.
    fn read(&self, addr: u64, buf: &mut [u8]) -> bool;
}

/// A stopped thread: its registers (by DWARF number) and its process's memory.
pub trait Machine: Memory {
    fn register(&self, dwarf_reg: u16) -> Option<u64>;
}

/// Where a value lives once its location expression is evaluated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    Address(u64),
    /// The value is in a register (its low bytes).
    Register(u16),
    /// The value itself (DW_OP_stack_value, constants) or pieces assembled into bytes.
    Bytes(Vec<u8>),
    /// The value cannot be located; the reason says why (e.g. optimized out).
    Unavailable(String),
}

/// Evaluates `expr`; `frame_base` answers DW_OP_fbreg, `cfa` answers DW_OP_call_frame_cfa.
pub fn evaluate(
    expr: &Expr,
    encoding: gimli::Encoding,
    machine: &dyn Machine,
    frame_base: Option<u64>,
    cfa: Option<u64>,
) -> Place {
    single_operation(expr, encoding, machine, frame_base, cfa)
        .unwrap_or_else(|| evaluate_stepwise(expr, encoding, machine, frame_base, cfa))
}

/// The place of an expression of one operation among those nearly every parameter and frame
/// base of a debug build is (`DW_OP_fbreg`, `DW_OP_call_frame_cfa`, `DW_OP_bregN`,
/// `DW_OP_regN`), computed directly: the answer [`evaluate_stepwise`] gives, without setting
/// up a gimli evaluation per parameter per call. `None` for any other expression.
fn single_operation(
    expr: &Expr,
    encoding: gimli::Encoding,
    machine: &dyn Machine,
    frame_base: Option<u64>,
    cfa: Option<u64>,
) -> Option<Place> {
    let mut ops = expr.clone().operations(encoding);
    let op = ops.next().ok()??;
    if !matches!(ops.next(), Ok(None)) {
        return None;
    }
    // gimli adds offsets to a generic (address-sized) value, wrapping.
    let offset = |base: u64, offset: i64| {
        let sum = base.wrapping_add_signed(offset);
        match encoding.address_size {
            8 => sum,
            size => sum & ((1u64 << (8 * u32::from(size))) - 1),
        }
    };
    Some(match op {
        gimli::Operation::FrameOffset { offset: off } => match frame_base {
            Some(fb) => Place::Address(offset(fb, off)),
            None => Place::Unavailable("no frame base".into()),
        },
        gimli::Operation::CallFrameCFA => match cfa {
            Some(c) => Place::Address(c),
            None => Place::Unavailable("no CFA".into()),
        },
        gimli::Operation::RegisterOffset {
            register,
            offset: off,
            base_type,
        } if base_type.0 == 0 => match machine.register(register.0) {
            Some(v) => Place::Address(offset(v, off)),
            None => Place::Unavailable(format!("register {} unknown", register.0)),
        },
        gimli::Operation::Register { register } => Place::Register(register.0),
        _ => return None,
    })
}

/// Evaluates `expr` with gimli, answering each of its questions from `machine`.
fn evaluate_stepwise(
    expr: &Expr,
    encoding: gimli::Encoding,
    machine: &dyn Machine,
    frame_base: Option<u64>,
    cfa: Option<u64>,
) -> Place {
    let mut eval = expr.clone().evaluation(encoding);
    let mut result = eval.evaluate();
    for _ in 0..256 {
        let step = match result {
            Ok(gimli::EvaluationResult::Complete) => break,
            Ok(gimli::EvaluationResult::RequiresRegister { register, .. }) => {
                match machine.register(register.0) {
                    Some(v) => eval.resume_with_register(gimli::Value::Generic(v)),
                    None => return Place::Unavailable(format!("register {} unknown", register.0)),
                }
            }
            Ok(gimli::EvaluationResult::RequiresMemory { address, size, .. }) => {
                let mut buf = [0u8; 8];
                let n = (size as usize).min(8);
                if !machine.read(address, &mut buf[..n]) {
                    return Place::Unavailable(format!("memory at {address:#x} unreadable"));
                }
                eval.resume_with_memory(gimli::Value::Generic(u64::from_le_bytes(buf)))
            }
            Ok(gimli::EvaluationResult::RequiresFrameBase) => match frame_base {
                Some(fb) => eval.resume_with_frame_base(fb),
                None => return Place::Unavailable("no frame base".into()),
            },
            Ok(gimli::EvaluationResult::RequiresCallFrameCfa) => match cfa {
                Some(c) => eval.resume_with_call_frame_cfa(c),
                None => return Place::Unavailable("no CFA".into()),
            },
            Ok(gimli::EvaluationResult::RequiresRelocatedAddress(a)) => {
                eval.resume_with_relocated_address(a)
            }
            Ok(gimli::EvaluationResult::RequiresEntryValue(_)) => {
                return Place::Unavailable("needs the value at function entry".into())
            }
            Ok(other) => {
                return Place::Unavailable(format!("unsupported DWARF operation ({other:?})"))
            }
            Err(e) => return Place::Unavailable(format!("bad location expression: {e}")),
        };
        result = step;
    }
    if !matches!(result, Ok(gimli::EvaluationResult::Complete)) {
        return Place::Unavailable("location expression did not complete".into());
    }
    let pieces = eval.result();
    if pieces.len() == 1 && pieces[0].size_in_bits.is_none() {
        return place_of(&pieces[0].location);
    }
    // Several pieces: assemble the bytes.
    let mut bytes = Vec::new();
    for piece in &pieces {
        let size = piece
            .size_in_bits
            .map(|b| b.div_ceil(8) as usize)
            .unwrap_or(8);
        let mut buf = vec![0u8; size];
        match place_of(&piece.location) {
            Place::Address(a) => {
                if !machine.read(a, &mut buf) {
                    return Place::Unavailable(format!("memory at {a:#x} unreadable"));
                }
            }
            Place::Register(r) => match machine.register(r) {
                Some(v) => {
                    let le = v.to_le_bytes();
                    let n = size.min(8);
                    buf[..n].copy_from_slice(&le[..n]);
                }
                None => return Place::Unavailable(format!("register {r} unknown")),
            },
            Place::Bytes(b) => {
                let n = size.min(b.len());
                buf[..n].copy_from_slice(&b[..n]);
            }
            Place::Unavailable(r) => return Place::Unavailable(r),
        }
        bytes.extend_from_slice(&buf);
    }
    Place::Bytes(bytes)
}

fn place_of(location: &gimli::Location<crate::dwarf::Reader>) -> Place {
    match location {
        gimli::Location::Address { address } => Place::Address(*address),
        gimli::Location::Register { register } => Place::Register(register.0),
        gimli::Location::Value { value } => {
            let v = match value {
                gimli::Value::Generic(v) | gimli::Value::U64(v) => *v,
                gimli::Value::I64(v) => *v as u64,
                gimli::Value::U32(v) => *v as u64,
                gimli::Value::I32(v) => *v as i64 as u64,
                gimli::Value::F64(f) => f.to_bits(),
                gimli::Value::F32(f) => f.to_bits() as u64,
                other => return Place::Unavailable(format!("unsupported value {other:?}")),
            };
            Place::Bytes(v.to_le_bytes().to_vec())
        }
        gimli::Location::Bytes { value } => {
            Place::Bytes(value.to_slice().map(|s| s.to_vec()).unwrap_or_default())
        }
        gimli::Location::Empty => Place::Unavailable("optimized out".into()),
        other => Place::Unavailable(format!("unsupported location {other:?}")),
    }
}

/// Whether `expr` is only an offset from the frame base, the stack pointer or the CFA (one
/// operation, no dereference): a place in the frame itself, or, at or above the CFA, in the
/// incoming stack-argument area.
pub fn frame_relative(expr: &Expr, encoding: gimli::Encoding) -> bool {
    let mut ops = expr.clone().operations(encoding);
    let first = match ops.next() {
        Ok(Some(op)) => op,
        _ => return false,
    };
    let simple = match first {
        gimli::Operation::FrameOffset { .. } | gimli::Operation::CallFrameCFA => true,
        gimli::Operation::RegisterOffset { register, .. } => register.0 == 7,
        _ => false,
    };
    simple && matches!(ops.next(), Ok(None))
}

#[cfg(test)]
#[path = "location_tests.rs"]
mod tests;
