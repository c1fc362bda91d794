//! Which function a zero-sized function item names.
//!
//! A function item passed as `F: Fn..` (`Ord::cmp`, `PartialEq::eq`, `app::double`) has no
//! bytes, and DWARF types it by its signature alone (`fn(&u32, &u32) -> Ordering`, the name of
//! a pointer type): no recorded value says which function it is. But each generic instance is
//! compiled for its item: calling `F` goes through core's shim `<F as Fn<A>>::call` (`call_mut`,
//! `call_once`) instantiated for that item, whose code calls the function directly, while the
//! shim of a function *pointer* calls through a register. So the function is found by following
//! the direct calls of the traced instance to the shims of that signature: when every such
//! shim reached calls one and the same function, and none calls through a pointer, that
//! function is the item. Anything else (two functions of one signature, a pointer's shim, no
//! shim reached: the instance never calls its item) leaves the value not read.

use std::collections::{HashMap, HashSet, VecDeque};

use iced_x86::{Decoder, DecoderOptions, FlowControl, OpKind, Register};

use object::Object;

use super::{DebugInfo, FunctionEntry, ParamDetail};
use crate::types::TypeKind;

/// Functions (index into `DebugInfo::functions`) and ELF text symbols (demangled, without hash)
/// by start address, and the function each global-offset-table slot holds once loaded.
pub(super) type CodeIndex = (HashMap<u64, usize>, HashMap<u64, String>, HashMap<u64, u64>);

/// Functions whose code is read from one traced function at most, and how many calls deep.
const MAX_FUNCTIONS: usize = 20_000;
const MAX_DEPTH: u32 = 16;

/// The paths of core's call shims (`Fn::call` and its kin), demangled without hash.
const SHIMS: [&str; 3] = [
    "core::ops::function::Fn::call",
    "core::ops::function::FnMut::call_mut",
    "core::ops::function::FnOnce::call_once",
];

/// The code of a program, by function.
pub(crate) struct Code<'a> {
    pub functions: &'a [FunctionEntry],
    /// Index into `functions` of the function starting at each address.
    pub by_start: &'a HashMap<u64, usize>,
    /// ELF text symbols by address (demangled, without hash), for targets DWARF does not describe.
    pub symbols: &'a HashMap<u64, String>,
    /// `.text`'s file address and bytes.
    pub text: (u64, &'a [u8]),
    /// The function each slot of the global offset table holds once loaded (a position-
    /// independent program calls another crate's function through its slot: `call
    /// *slot(%rip)`), by the slot's file address.
    pub got: &'a HashMap<u64, u64>,
}

impl DebugInfo {
    /// The functions the function items among `params` of the generic instance `f` name (see
    /// `fn_items`): only signatures among the instance's generic arguments, a type parameter's
    /// (a plain `fn` pointer parameter is a pointer, read as one).
    pub(super) fn fn_items(
        &self,
        f: &FunctionEntry,
        params: &[ParamDetail],
    ) -> Vec<(String, String)> {
        let mut sigs: Vec<&str> = params
            .iter()
            .filter_map(|p| {
                let t = self.types.get(p.ty?)?;
                let TypeKind::Pointer { pointee: Some(to) } = t.kind else {
                    return None;
                };
                let to = self.types.get(to)?;
                (to.kind == TypeKind::Opaque && to.name == crate::types::SIGNATURE)
                    .then_some(t.name.as_str())
            })
            .filter(|sig| generic_args(&f.name).contains(sig))
            .collect();
        sigs.sort_unstable();
        sigs.dedup();
        if sigs.is_empty() {
            return Vec::new();
        }
        let (by_start, symbols, got) = self.starts.get_or_init(|| {
            let by_start = self
                .functions
                .iter()
                .enumerate()
                .map(|(i, f)| (f.low_pc.0, i))
                .collect();
            // The by-name table inverted: each symbol demangled once.
            let symbols = self
                .symbol_table()
                .iter()
                .map(|(name, addr)| (*addr, name.clone()))
                .collect();
            let mut got = HashMap::new();
            if let Ok(file) = object::File::parse(self.bytes.as_slice()) {
                // A position-independent program's slots are relocated relative to its load
                // address: the addend is the function's file address.
                for (slot, r) in file.dynamic_relocations().into_iter().flatten() {
                    let relative = matches!(
                        r.flags(),
                        object::RelocationFlags::Elf {
                            r_type: object::elf::R_X86_64_RELATIVE
                        }
                    );
                    if relative {
                        got.insert(slot, r.addend() as u64);
                    }
                }
            }
            (by_start, symbols, got)
        });
        let (text_at, range) = &self.text;
        let code = Code {
            functions: &self.functions,
            by_start,
            symbols,
            text: (
                *text_at,
                self.bytes.as_slice().get(range.clone()).unwrap_or_default(),
            ),
            got,
        };
        code.items_called(f, &sigs)
    }
}

/// What the shims of one signature call.
#[derive(Default)]
struct Called {
    targets: HashSet<String>,
    /// A shim calls through a pointer, or calls more than one function.
    unclear: bool,
}

impl Code<'_> {
    fn bytes(&self, low: u64, high: u64) -> Option<&[u8]> {
        let (at, text) = self.text;
        let from = low.checked_sub(at)? as usize;
        let to = high.checked_sub(at)? as usize;
        text.get(from..to)
    }

    /// The direct call and jump targets leaving `[low, high)` (calls through a slot of the
    /// global offset table are direct), and whether the code calls through a register or
    /// other memory.
    fn calls(&self, low: u64, high: u64) -> (Vec<u64>, bool) {
        let Some(code) = self.bytes(low, high) else {
            return (Vec::new(), true);
        };
        let mut targets = Vec::new();
        let mut indirect = false;
        let mut decoder = Decoder::with_ip(64, code, low, DecoderOptions::NONE);
        while decoder.can_decode() {
            let i = decoder.decode();
            match i.flow_control() {
                FlowControl::Call | FlowControl::UnconditionalBranch
                    if i.op0_kind() == OpKind::NearBranch64 =>
                {
                    let t = i.near_branch_target();
                    if !(low..high).contains(&t) {
                        targets.push(t);
                    }
                }
                FlowControl::IndirectCall | FlowControl::IndirectBranch
                    if i.op0_kind() == OpKind::Memory && i.memory_base() == Register::RIP =>
                {
                    match self.got.get(&i.ip_rel_memory_address()) {
                        Some(&t) => targets.push(t),
                        None => indirect = true,
                    }
                }
                FlowControl::IndirectCall => indirect = true,
                _ => {}
            }
        }
        (targets, indirect)
    }

    /// The name of the function starting at `addr`: DWARF's path, else the ELF symbol's.
    fn name_at(&self, addr: u64) -> Option<&str> {
        match self.by_start.get(&addr) {
            Some(&i) => Some(self.functions[i].path.as_str()),
            None => self.symbols.get(&addr).map(String::as_str),
        }
    }

    /// For each signature of `sigs` (`fn(&u32, &u32) -> core::cmp::Ordering`), the path of the
    /// one function the shims of that signature reached from `start` call, when there is one.
    pub(crate) fn items_called(
        &self,
        start: &FunctionEntry,
        sigs: &[&str],
    ) -> Vec<(String, String)> {
        let mut called: HashMap<&str, Called> = HashMap::new();
        let mut seen = HashSet::from([start.low_pc.0]);
        let mut queue = VecDeque::from([(start.low_pc.0, start.high_pc.0, 0u32)]);
        while let Some((low, high, depth)) = queue.pop_front() {
            for target in self.calls(low, high).0 {
                let Some(&index) = self.by_start.get(&target) else {
                    continue;
                };
                let f = &self.functions[index];
                if let Some(sig) = shim_of(f, sigs) {
                    let entry = called.entry(sig).or_default();
                    let (targets, indirect) = self.calls(f.low_pc.0, f.high_pc.0);
                    let names: HashSet<&str> = targets
                        .iter()
                        .filter_map(|&t| self.name_at(t))
                        .filter(|n| {
                            !n.starts_with("core::ptr::drop_in_place") && !n.starts_with("_Unwind")
                        })
                        .collect();
                    if indirect || names.len() != 1 {
                        entry.unclear = true;
                    }
                    entry.targets.extend(names.into_iter().map(str::to_string));
                    continue;
                }
                if depth < MAX_DEPTH && seen.len() < MAX_FUNCTIONS && seen.insert(target) {
                    queue.push_back((f.low_pc.0, f.high_pc.0, depth + 1));
                }
            }
        }
        sigs.iter()
            .filter_map(|sig| {
                let c = called.get(sig)?;
                let only = c.targets.iter().next().filter(|_| c.targets.len() == 1)?;
                (!c.unclear).then(|| (sig.to_string(), only.clone()))
            })
            .collect()
    }
}

/// The signature of `sigs` that `f` is core's call shim for, when it is one: the shim's
/// generic arguments name its `Self` type, the signature.
fn shim_of<'s>(f: &FunctionEntry, sigs: &[&'s str]) -> Option<&'s str> {
    if !SHIMS.contains(&f.path.as_str()) {
        return None;
    }
    let args = generic_args(&f.name);
    sigs.iter().copied().find(|sig| args.contains(sig))
}

/// The top-level generic arguments of a DWARF name (`call<fn(u32) -> u32, (u32)>` gives
/// `fn(u32) -> u32` and `(u32)`); a signature's `->` is no closing bracket.
pub(crate) fn generic_args(name: &str) -> Vec<&str> {
    let Some(open) = name.find('<') else {
        return Vec::new();
    };
    let bytes = name.as_bytes();
    let mut args = Vec::new();
    let mut depth = 0i32;
    let mut from = open + 1;
    for (i, &b) in bytes.iter().enumerate().skip(open + 1) {
        match b {
            b'<' | b'(' | b'[' => depth += 1,
            b'>' if i > 0 && bytes[i - 1] == b'-' => {}
            b'>' | b')' | b']' if depth > 0 => depth -= 1,
            b'>' => {
                args.push(name[from..i].trim());
                break;
            }
            b',' if depth == 0 => {
                args.push(name[from..i].trim());
                from = i + 1;
            }
            _ => {}
        }
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A function of `code` at `low` (each function has 0x100 bytes).
    fn function(path: &str, name: &str, low: u64) -> FunctionEntry {
        FunctionEntry {
            path: path.into(),
            name: name.into(),
            linkage_name: None,
            language: carve_storage::Language::Rust,
            decl_file: None,
            decl_line: None,
            low_pc: crate::addr::FileAddr(low),
            high_pc: crate::addr::FileAddr(low + 0x100),
            own_code: true,
            unit: 0,
            die: gimli::UnitOffset(0),
            scope: None,
        }
    }

    /// `.text` at 0x1000 holding one function per 0x100 bytes, each a list of instructions:
    /// `Some(target)` a direct call, `None` a call through `rax`; then `ret`.
    fn text(functions: &[&[Option<u64>]]) -> Vec<u8> {
        let mut text = vec![0xccu8; functions.len() * 0x100];
        for (i, calls) in functions.iter().enumerate() {
            let mut at = i * 0x100;
            for call in *calls {
                match call {
                    Some(target) => {
                        let next = 0x1000 + at as u64 + 5;
                        text[at] = 0xe8;
                        let rel = (*target as i64 - next as i64) as i32;
                        text[at + 1..at + 5].copy_from_slice(&rel.to_le_bytes());
                        at += 5;
                    }
                    None => {
                        text[at..at + 2].copy_from_slice(&[0xff, 0xd0]);
                        at += 2;
                    }
                }
            }
            text[at] = 0xc3;
        }
        text
    }

    const SIG: &str = "fn(u32) -> u32";

    /// `run` calls `helper`, which calls the shims `shims` (each a list of calls).
    fn named(shims: &[&[Option<u64>]]) -> Vec<(String, String)> {
        let mut functions = vec![
            function("app::run", "run<fn(u32) -> u32>", 0x1000),
            function("app::helper", "helper<fn(u32) -> u32>", 0x1100),
            function("app::double", "double", 0x1200),
            function("app::triple", "triple", 0x1300),
        ];
        let helper: Vec<Option<u64>> = (0..shims.len())
            .map(|i| Some(0x1400 + 0x100 * i as u64))
            .collect();
        let mut code: Vec<&[Option<u64>]> = vec![&[Some(0x1100)], &helper, &[], &[]];
        for (i, shim) in shims.iter().enumerate() {
            let low = 0x1400 + 0x100 * i as u64;
            functions.push(function(
                "core::ops::function::Fn::call",
                "call<fn(u32) -> u32, (u32)>",
                low,
            ));
            code.push(shim);
        }
        let by_start = functions
            .iter()
            .enumerate()
            .map(|(i, f)| (f.low_pc.0, i))
            .collect();
        let symbols = HashMap::new();
        let bytes = text(&code);
        let got = HashMap::new();
        let code = Code {
            functions: &functions,
            by_start: &by_start,
            symbols: &symbols,
            text: (0x1000, &bytes),
            got: &got,
        };
        code.items_called(&functions[0], &[SIG])
    }

    #[test]
    fn the_one_function_the_shims_reached_call_is_the_item() {
        let double = vec![(SIG.to_string(), "app::double".to_string())];
        assert_eq!(named(&[&[Some(0x1200)]]), double);
        // Two shims of one item (`Fn::call` and `FnMut::call_mut`) call the same function.
        assert_eq!(named(&[&[Some(0x1200)], &[Some(0x1200)]]), double);
    }

    #[test]
    fn two_functions_or_a_pointer_s_shim_leave_the_item_unnamed() {
        assert!(named(&[&[Some(0x1200)], &[Some(0x1300)]]).is_empty());
        assert!(named(&[&[Some(0x1200)], &[None]]).is_empty());
        assert!(named(&[&[None]]).is_empty());
        assert!(
            named(&[]).is_empty(),
            "no shim reached: the item is never called"
        );
    }

    #[test]
    fn a_signature_s_arrow_is_no_closing_bracket() {
        assert_eq!(
            generic_args("call<fn(u32) -> u32, (u32)>"),
            vec!["fn(u32) -> u32", "(u32)"]
        );
        assert_eq!(
            generic_args("call_mut<fn(&u32, &u32) -> core::cmp::Ordering, (&u32, &u32)>"),
            vec!["fn(&u32, &u32) -> core::cmp::Ordering", "(&u32, &u32)"]
        );
        assert_eq!(
            generic_args(
                "k_largest_by<alloc::vec::IntoIter<u32>, fn(&u32, &u32) -> core::cmp::Ordering>"
            ),
            vec![
                "alloc::vec::IntoIter<u32>",
                "fn(&u32, &u32) -> core::cmp::Ordering"
            ]
        );
        assert!(generic_args("double").is_empty());
    }
}
