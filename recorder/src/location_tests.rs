//! The one-operation shortcut of [`evaluate`] against gimli's evaluation of the same bytes.

use std::sync::Arc;

use gimli::{constants as dw, EndianArcSlice, RunTimeEndian};

use super::*;

struct Regs([Option<u64>; 17]);

impl Memory for Regs {
    fn read(&self, addr: u64, buf: &mut [u8]) -> bool {
        // Memory holds its own address at every 8-byte word: a deref is checkable.
        let word = addr.to_le_bytes();
        let n = buf.len().min(8);
        buf[..n].copy_from_slice(&word[..n]);
        true
    }
}

impl Machine for Regs {
    fn register(&self, r: u16) -> Option<u64> {
        self.0.get(r as usize).copied().flatten()
    }
}

fn expr(bytes: &[u8]) -> Expr {
    gimli::Expression(EndianArcSlice::new(Arc::from(bytes), RunTimeEndian::Little))
}

const ENCODING: gimli::Encoding = gimli::Encoding {
    address_size: 8,
    format: gimli::Format::Dwarf32,
    version: 4,
};

fn sleb(v: i64) -> Vec<u8> {
    let mut out = Vec::new();
    let mut v = v;
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        let done = (v == 0 && byte & 0x40 == 0) || (v == -1 && byte & 0x40 != 0);
        out.push(if done { byte } else { byte | 0x80 });
        if done {
            return out;
        }
    }
}

fn op(code: gimli::DwOp, operand: &[u8]) -> Vec<u8> {
    let mut out = vec![code.0];
    out.extend_from_slice(operand);
    out
}

#[test]
fn one_operation_expressions_are_placed_as_gimli_places_them() {
    let mut regs = [Some(0u64); 17];
    for (i, r) in regs.iter_mut().enumerate() {
        *r = Some(0x7ffd_0000_1000 + 0x100 * i as u64);
    }
    regs[3] = None; // rbx unknown
    regs[6] = Some(u64::MAX - 4); // rbp near the top: offsets wrap
    let machine = Regs(regs);
    let mut simple = Vec::new();
    for off in [0, 8, -8, 56, 64, -200, 1 << 20, i64::MIN / 2] {
        simple.push(op(dw::DW_OP_fbreg, &sleb(off)));
        simple.push(op(dw::DW_OP_breg7, &sleb(off)));
        simple.push(op(dw::DW_OP_breg6, &sleb(off)));
        simple.push(op(dw::DW_OP_breg3, &sleb(off)));
        simple.push([vec![dw::DW_OP_bregx.0, 16], sleb(off)].concat());
    }
    simple.push(vec![dw::DW_OP_call_frame_cfa.0]);
    simple.push(vec![dw::DW_OP_reg0.0]);
    simple.push(vec![dw::DW_OP_reg7.0]);
    simple.push(vec![dw::DW_OP_regx.0, 17]);
    let others = [
        [op(dw::DW_OP_fbreg, &sleb(16)), vec![dw::DW_OP_deref.0]].concat(),
        [op(dw::DW_OP_breg7, &sleb(8)), vec![dw::DW_OP_stack_value.0]].concat(),
        vec![dw::DW_OP_lit5.0, dw::DW_OP_stack_value.0],
        vec![
            dw::DW_OP_reg0.0,
            dw::DW_OP_piece.0,
            8,
            dw::DW_OP_reg1.0,
            dw::DW_OP_piece.0,
            8,
        ],
        vec![],
    ];
    let contexts = [
        (Some(0x7ffd_0000_2000), Some(0x7ffd_0000_3000)),
        (None, None),
        (Some(u64::MAX - 16), Some(8)),
    ];
    for (frame_base, cfa) in contexts {
        for bytes in &simple {
            let e = expr(bytes);
            let shortcut = single_operation(&e, ENCODING, &machine, frame_base, cfa);
            let Some(shortcut) = shortcut else {
                panic!("{bytes:x?} is one operation the shortcut knows");
            };
            let stepwise = evaluate_stepwise(&e, ENCODING, &machine, frame_base, cfa);
            assert_eq!(
                shortcut, stepwise,
                "{bytes:x?} fb={frame_base:x?} cfa={cfa:x?}"
            );
            assert_eq!(evaluate(&e, ENCODING, &machine, frame_base, cfa), stepwise);
        }
        for bytes in &others {
            let e = expr(bytes);
            assert_eq!(
                single_operation(&e, ENCODING, &machine, frame_base, cfa),
                None,
                "{bytes:x?} is left to gimli"
            );
            assert_eq!(
                evaluate(&e, ENCODING, &machine, frame_base, cfa),
                evaluate_stepwise(&e, ENCODING, &machine, frame_base, cfa)
            );
        }
    }
}
