//! Finds the canonical frame address (CFA) rule at an address from `.eh_frame`, so the tracer
//! knows where a frame's return address is without a breakpoint on the function's first byte.

use gimli::UnwindSection;

use crate::dwarf::DebugInfo;

/// CFA = value of DWARF register `register` + `offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CfaRule {
    pub register: u16,
    pub offset: i64,
}

impl CfaRule {
    pub fn cfa(&self, register_value: u64) -> u64 {
        register_value.wrapping_add(self.offset as u64)
    }
}

/// The CFA rule in effect at file address `pc`, when `.eh_frame` has a simple one.
pub fn cfa_rule(info: &DebugInfo, pc: u64) -> Option<CfaRule> {
    let mut ctx = Box::new(gimli::UnwindContext::new());
    let table = info.eh_frame_hdr.as_ref().and_then(|h| h.table());
    let row = match table {
        Some(table) => table
            .unwind_info_for_address(
                &info.eh_frame,
                &info.eh_bases,
                &mut ctx,
                pc,
                gimli::EhFrame::cie_from_offset,
            )
            .ok()?,
        None => info
            .eh_frame
            .unwind_info_for_address(
                &info.eh_bases,
                &mut ctx,
                pc,
                gimli::EhFrame::cie_from_offset,
            )
            .ok()?,
    };
    match row.cfa() {
        gimli::CfaRule::RegisterAndOffset { register, offset } => Some(CfaRule {
            register: register.0,
            offset: *offset,
        }),
        gimli::CfaRule::Expression(_) => None,
    }
}
