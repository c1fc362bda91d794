//! In-process capture, first layer (issue 15; design and status in docs/inprocess-capture.md):
//! a selected function's break address (after its prologue) and each of its `ret` sites are
//! patched with a `jmp` to a trampoline carve writes into the program. The trampoline saves the
//! registers it uses, writes a fixed-size record (function, thread pointer, stack pointer,
//! argument registers at entry; `rax`/`rdx` at exit) into a ring in the program's memory, runs
//! the instructions the `jmp` displaced (relocated by iced-x86's block encoder) and jumps back.
//! No ptrace stop per call: carve drains the ring with `process_vm_readv` from any of its
//! threads while the program runs.
//!
//! Nothing here changes the stack the unwinder walks: the trampolines are jumped to and jump
//! back, never called, so a panic unwinding through a patched function sees the same frames.
//! (A patched exit is skipped by unwinding; the calls it leaves open are closed by the tracer's
//! panic handling, as today.)
//!
//! What this layer does not do yet: decode values (records hold registers only), per-function
//! capture programs that copy what the decoder will read, wiring into `carve record`. See the
//! design document for the plan.

use iced_x86::code_asm::{ptr, qword_ptr, CodeAssembler, CodeLabel};
use iced_x86::code_asm::{r8, r9, rax, rcx, rdi, rdx, rsi, rsp};
use iced_x86::{Decoder, DecoderOptions, FlowControl, Instruction, Mnemonic};
use nix::unistd::Pid;

use crate::error::RecordError;
use crate::inject::{map_near, Region};
use crate::location::Memory;
use crate::process::ProcessMemory;

/// Bytes of one ring record.
pub(crate) const RECORD: u64 = 128;
/// Bytes of `jmp rel32`.
const JMP_LEN: usize = 5;
/// The ring's header (head, tail) takes the first page; records follow.
const HEADER: u64 = 4096;
/// The red zone below `rsp` that a leaf function may use without moving `rsp` (SysV x86-64).
const RED_ZONE: i32 = 128;

/// Record kinds (the low byte of a record's tag).
pub(crate) const ENTRY: u8 = 1;
pub(crate) const EXIT: u8 = 2;

/// One record read from the ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Record {
    pub function: u32,
    pub kind: u8,
    /// The thread pointer (`fs:0`): one per thread, stable for its life.
    pub thread: u64,
    /// `rsp` when the patched instruction was reached.
    pub rsp: u64,
    /// rdi, rsi, rdx, rcx, r8, r9 (entry records).
    pub args: [u64; 6],
    /// rax, rdx (exit records).
    pub ret: [u64; 2],
}

impl Record {
    /// Layout: commit word (reservation offset + 1, written last), tag (function << 8 |
    /// kind), thread pointer, rsp, six argument registers, rax, rdx.
    fn parse(b: &[u8]) -> Record {
        let word = |i: usize| u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap());
        let tag = word(1);
        Record {
            function: (tag >> 8) as u32,
            kind: tag as u8,
            thread: word(2),
            rsp: word(3),
            args: [word(4), word(5), word(6), word(7), word(8), word(9)],
            ret: [word(10), word(11)],
        }
    }
}

/// Where a function can be patched: its break address and its `ret` sites, each with the
/// instructions the 5-byte `jmp` displaces.
#[derive(Debug)]
pub(crate) struct Sites {
    pub entry: Vec<Instruction>,
    pub exits: Vec<Vec<Instruction>>,
}

/// Why a function keeps the ptrace path.
pub(crate) type Refusal = &'static str;

/// Finds the patchable sites of the function whose code is `code` (at `low`), entered at
/// `entry_at` (its break address). Refuses when a displaced instruction is a branch target
/// inside the function (a jump would land in the middle of the `jmp`), when the function has
/// an indirect jump (a jump table's targets are unknown), when the code after `entry_at` ends
/// before 5 bytes (a `ret`, or the function's end after a `jmp`; the dead bytes after a `jmp`
/// that nothing targets may be covered), or when some `ret` cannot be patched (every exit
/// must be seen, else calls would stay open). Only the function's own branches are checked:
/// code elsewhere jumping into the middle of a function is not something compilers emit for
/// these (debug) builds.
pub(crate) fn sites(code: &[u8], low: u64, entry_at: u64) -> Result<Sites, Refusal> {
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
    let mut entry = Vec::new();
    let mut len = 0;
    for i in &all[index..] {
        if !entry.is_empty() && targets.contains(&i.ip()) {
            return Err("a branch targets the bytes the entry jump would replace");
        }
        if matches!(
            i.flow_control(),
            FlowControl::Return | FlowControl::Interrupt | FlowControl::Exception
        ) {
            return Err("the code after the break address ends within 5 bytes");
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
    for (r, ret) in all.iter().enumerate() {
        if ret.mnemonic() != Mnemonic::Ret {
            continue;
        }
        let mut len = ret.len();
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
            .any(|i| i.ip() < entry_at + 5 && i.ip() + i.len() as u64 > entry_at)
        {
            return Err("a ret overlaps the entry patch");
        }
        exits.push(displaced.to_vec());
    }
    if exits.is_empty() {
        return Err("no ret (the function ends in a tail jump or never returns)");
    }
    Ok(Sites { entry, exits })
}

/// The ring in the traced process: `head` (bytes reserved by writers, atomically) at offset 0,
/// `tail` (bytes consumed by carve) at offset 8, records from [`HEADER`].
pub(crate) struct Ring {
    pub region: Region,
    pub capacity: u64,
    tail: u64,
}

impl Ring {
    fn data(&self) -> u64 {
        self.region.start + HEADER
    }

    /// Appends to `out` the records written since the last drain, in ring order, and hands
    /// their room back to the writers. Stops at the first record still being written.
    pub(crate) fn drain(
        &mut self,
        mem: &ProcessMemory,
        out: &mut Vec<Record>,
    ) -> Result<usize, RecordError> {
        let mut head = [0u8; 8];
        if !mem.read(self.region.start, &mut head) {
            return Err(read_err(mem, self.region.start));
        }
        let head = u64::from_le_bytes(head);
        if head <= self.tail {
            return Ok(0);
        }
        let span = (head - self.tail).min(self.capacity);
        // First pass: which records are complete (commit word = its offset + 1, written last).
        let bytes = self.read_span(mem, self.tail, span)?;
        let complete = bytes
            .chunks_exact(RECORD as usize)
            .zip((self.tail..).step_by(RECORD as usize))
            .take_while(|(r, offset)| r[..8] == (offset + 1).to_le_bytes())
            .count() as u64;
        if complete == 0 {
            return Ok(0);
        }
        // Second pass, after the first: every field of those records is visible now, whatever
        // order the kernel's copy read the bytes in.
        let bytes = self.read_span(mem, self.tail, complete * RECORD)?;
        out.extend(bytes.chunks_exact(RECORD as usize).map(Record::parse));
        self.tail += complete * RECORD;
        mem.write(self.region.start + 8, &self.tail.to_le_bytes())?;
        Ok(complete as usize)
    }

    fn read_span(&self, mem: &ProcessMemory, from: u64, len: u64) -> Result<Vec<u8>, RecordError> {
        let mut buf = vec![0u8; len as usize];
        let off = from % self.capacity;
        let first = len.min(self.capacity - off) as usize;
        if !mem.read(self.data() + off, &mut buf[..first]) {
            return Err(read_err(mem, self.data() + off));
        }
        if first < buf.len() && !mem.read(self.data(), &mut buf[first..]) {
            return Err(read_err(mem, self.data()));
        }
        Ok(buf)
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
/// address, all at run-time addresses.
pub(crate) struct Target {
    pub function: u32,
    pub low: u64,
    pub high: u64,
    pub entry_at: u64,
}

/// What [`install`] did.
pub(crate) struct Installed {
    pub ring: Ring,
    /// Functions patched (entry and every exit).
    pub patched: Vec<u32>,
    /// Functions left to the ptrace path, with the reason.
    pub refused: Vec<(u32, Refusal)>,
}

/// Maps a ring of `capacity` bytes (a power of two, a multiple of [`RECORD`]) and the
/// trampolines of `targets` into the stopped process of `tid`, and patches the functions that
/// can be. `scratch` is lent to [`crate::inject::syscall`]. Every thread of the process must be
/// stopped (the patches are written while no thread can be inside the bytes they replace).
pub(crate) fn install(
    tid: Pid,
    mem: &ProcessMemory,
    scratch: u64,
    targets: &[Target],
    capacity: u64,
) -> Result<Installed, RecordError> {
    assert!(capacity.is_power_of_two() && capacity >= RECORD);
    let near = targets.iter().map(|t| t.low).min().unwrap_or(scratch);
    let ring_region = map_near(
        tid,
        mem,
        scratch,
        near,
        HEADER + capacity,
        libc::PROT_READ | libc::PROT_WRITE,
    )?;
    let ring = Ring {
        region: ring_region,
        capacity,
        tail: 0,
    };
    let mut plans = Vec::new();
    let mut refused = Vec::new();
    for t in targets {
        let mut code = vec![0u8; (t.high - t.low) as usize];
        if !mem.read(t.low, &mut code) {
            refused.push((t.function, "code not readable"));
            continue;
        }
        match sites(&code, t.low, t.entry_at) {
            Ok(s) => plans.push((t, s)),
            Err(why) => refused.push((t.function, why)),
        }
    }
    // Room for the code: generous per site; the real size is checked when assembling.
    let per_site = 256u64;
    let sites_n: u64 = plans.iter().map(|(_, s)| 1 + s.exits.len() as u64).sum();
    let code_region = map_near(
        tid,
        mem,
        scratch,
        near,
        (sites_n * per_site).max(4096),
        libc::PROT_READ | libc::PROT_EXEC,
    )?;
    let mut at = code_region.start;
    let mut patches = Vec::new();
    let mut patched = Vec::new();
    for (t, s) in &plans {
        let entry = trampoline(&ring, t.function, ENTRY, &s.entry, at)?;
        patches.push((s.entry[0].ip(), at, span_len(&s.entry)));
        mem.write(at, &entry)?;
        at += (entry.len() as u64).div_ceil(16) * 16;
        for exit in &s.exits {
            let code = trampoline(&ring, t.function, EXIT, exit, at)?;
            patches.push((exit[0].ip(), at, span_len(exit)));
            mem.write(at, &code)?;
            at += (code.len() as u64).div_ceil(16) * 16;
        }
        patched.push(t.function);
    }
    assert!(at <= code_region.start + code_region.len);
    for (site, tramp, len) in patches {
        mem.write(site, &jmp_patch(site, tramp, len))?;
    }
    Ok(Installed {
        ring,
        patched,
        refused,
    })
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
    out.resize(len.max(JMP_LEN), 0xcc);
    out
}

/// The trampoline for one site, assembled at `ip`. An entry: save, reserve a record (waiting
/// while the ring is full), fill it, commit it (tag last), restore, run the displaced
/// instructions and jump back after them. An exit: the displaced epilogue first (it may load
/// the return value), then the capture, then the `ret` the site ended with.
fn trampoline(
    ring: &Ring,
    function: u32,
    kind: u8,
    displaced: &[Instruction],
    ip: u64,
) -> Result<Vec<u8>, RecordError> {
    let asm_err = |e: iced_x86::IcedError| RecordError::Memory {
        op: "assemble a trampoline",
        pid: 0,
        addr: ip,
        source: std::io::Error::other(e.to_string()),
    };
    let hdr = ring.region.start;
    let tag = (u64::from(function) << 8) | u64::from(kind);
    let mut a = CodeAssembler::new(64).map_err(asm_err)?;
    let mut wait: CodeLabel = a.create_label();
    let mut ready: CodeLabel = a.create_label();
    (|| -> Result<(), iced_x86::IcedError> {
        if kind == EXIT {
            // The epilogue first (it may load the return value: `mov rax, [rbp-8]`), then the
            // capture, then the `ret` itself.
            for i in &displaced[..displaced.len() - 1] {
                a.add_instruction(*i)?;
            }
        }
        // Below the red zone; flags and the three scratch registers saved.
        a.lea(rsp, ptr(rsp - RED_ZONE))?;
        a.pushfq()?;
        a.push(rax)?;
        a.push(rcx)?;
        a.push(rdx)?;
        // Reserve: rax = head before our record.
        a.mov(rcx, hdr)?;
        a.mov(rax, RECORD)?;
        a.lock().xadd(qword_ptr(rcx), rax)?;
        // Wait while our record's room is not free yet: rax + RECORD > tail + capacity.
        a.set_label(&mut wait)?;
        a.mov(rdx, qword_ptr(rcx + 8))?;
        a.add(rdx, (ring.capacity - RECORD) as i32)?;
        a.cmp(rax, rdx)?;
        a.jbe(ready)?;
        a.pause()?;
        a.jmp(wait)?;
        a.set_label(&mut ready)?;
        // rcx = the record's address; rax keeps the reservation offset for the commit word.
        a.mov(rdx, rax)?;
        a.and(rdx, (ring.capacity - 1) as i32)?;
        a.lea(rcx, ptr(rcx + rdx + HEADER as i32))?;
        a.mov(rdx, tag)?;
        a.mov(qword_ptr(rcx + 8), rdx)?;
        a.mov(rdx, qword_ptr(0u64).fs())?;
        a.mov(qword_ptr(rcx + 16), rdx)?;
        a.lea(rdx, ptr(rsp + (RED_ZONE + 32)))?;
        a.mov(qword_ptr(rcx + 24), rdx)?;
        if kind == ENTRY {
            a.mov(qword_ptr(rcx + 32), rdi)?;
            a.mov(qword_ptr(rcx + 40), rsi)?;
            a.mov(rdx, qword_ptr(rsp))?; // the caller's rdx
            a.mov(qword_ptr(rcx + 48), rdx)?;
            a.mov(rdx, qword_ptr(rsp + 8))?; // rcx
            a.mov(qword_ptr(rcx + 56), rdx)?;
            a.mov(qword_ptr(rcx + 64), r8)?;
            a.mov(qword_ptr(rcx + 72), r9)?;
        } else {
            a.mov(rdx, qword_ptr(rsp + 16))?; // rax
            a.mov(qword_ptr(rcx + 80), rdx)?;
            a.mov(rdx, qword_ptr(rsp))?; // rdx
            a.mov(qword_ptr(rcx + 88), rdx)?;
        }
        // Commit last: x86 keeps stores in order, so a reader that sees the commit word sees
        // the fields. The word is the reservation offset + 1, so a record left from an earlier
        // lap of the ring never looks committed and nothing needs clearing.
        a.lea(rdx, ptr(rax + 1))?;
        a.mov(qword_ptr(rcx), rdx)?;
        a.pop(rdx)?;
        a.pop(rcx)?;
        a.pop(rax)?;
        a.popfq()?;
        a.lea(rsp, ptr(rsp + RED_ZONE))?;
        let last = displaced
            .last()
            .expect("a site displaces at least one instruction");
        if kind == ENTRY {
            for i in displaced {
                a.add_instruction(*i)?;
            }
            if last.flow_control() != FlowControl::UnconditionalBranch {
                a.jmp(last.next_ip())?;
            }
        } else {
            a.add_instruction(*last)?; // the ret
        }
        Ok(())
    })()
    .map_err(asm_err)?;
    a.assemble(ip).map_err(asm_err)
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
        let s = sites(&code, 0x1000, 0x1008).unwrap();
        assert_eq!(s.entry.len(), 2);
        assert_eq!(s.exits.len(), 1);
        assert_eq!(s.exits[0].last().unwrap().mnemonic(), Mnemonic::Ret);
        assert_eq!(span_len(&s.exits[0]), 6); // add rsp; pop rbp; ret
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
            sites(&code, 0x1000, 0x1000).unwrap_err(),
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
            sites(&code, 0x1000, 0x1000).unwrap_err(),
            "a branch targets the bytes before a ret"
        );
        let mut longer = code.to_vec();
        longer.splice(8..8, [0x48, 0x83, 0xc0, 0x01]); // add rax, 1 before the ret
        let s = sites(&longer, 0x1000, 0x1000).unwrap();
        assert_eq!(s.entry.len(), 1, "only the jmp is displaced");
        assert_eq!(jmp_patch(0x1000, 0x2000, span_len(&s.entry)).len(), 5);
        // Something jumps into the dead bytes: refused.
        let mut targeted = longer.clone();
        targeted.extend_from_slice(&[0xeb, 0xf4]); // jmp 0x1003 (from 0x100d)
        assert_eq!(
            sites(&targeted, 0x1000, 0x1000).unwrap_err(),
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
            sites(&code, 0x1000, 0x1000).unwrap_err(),
            "an indirect jump (jump table) could target the patched bytes"
        );
    }

    #[test]
    fn a_trampoline_relocates_what_it_displaces_and_jumps_back() {
        let ring = Ring {
            region: Region {
                start: 0x7000_0000,
                len: HEADER + 4096,
            },
            capacity: 4096,
            tail: 0,
        };
        // lea rax, [rip+0x100] at 0x40_0000 (7 bytes, rip-relative)
        let displaced = decode_all(&[0x48, 0x8d, 0x05, 0x00, 0x01, 0x00, 0x00], 0x40_0000);
        let code = trampoline(&ring, 7, ENTRY, &displaced, 0x50_0000).unwrap();
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
    /// The program's exit code.
    pub exit_code: i32,
    /// Times the ring was drained with at least one record.
    pub drains: usize,
    /// Times the drainer found nothing new (it then sleeps 200 µs).
    pub empty_polls: usize,
}

/// One record of [`ProbeRun`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeRecord {
    /// Index in the `functions` given to [`probe`].
    pub function: usize,
    /// True at entry, false at exit.
    pub entry: bool,
    pub thread: u64,
    pub args: [u64; 6],
    pub ret: [u64; 2],
}

/// Experimental, the first layer of the in-process path (issue 15): runs `program` with
/// `args`, patches the named functions (DWARF names or paths) in process, and collects their
/// records while the program runs, with no ptrace stop per call. Not used by `carve record`
/// yet; the test suite and `recorder/examples/inprocess_probe.rs` (a benchmark) use it.
pub fn probe(
    program: &std::path::Path,
    args: &[std::ffi::OsString],
    functions: &[&str],
    output: Option<&std::path::Path>,
    ring_bytes: u64,
) -> Result<ProbeRun, RecordError> {
    use nix::sys::ptrace;
    use nix::sys::wait::{waitpid, WaitStatus};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    let mut info = crate::dwarf::DebugInfo::load(program)?;
    let pid = crate::process::spawn(program, args, output)?;
    let kill = scopeguard_kill(pid);
    let bias = crate::process::load_bias(pid, program, info.first_load_vaddr, info.is_pie)?;
    let mem = ProcessMemory::open(pid)?;
    let mut targets = Vec::new();
    let mut refused = Vec::new();
    for (index, name) in functions.iter().enumerate() {
        let Some(f) = info
            .functions()
            .iter()
            .find(|f| f.name == *name || f.path == *name)
            .cloned()
        else {
            refused.push((name.to_string(), "no such function in the DWARF"));
            continue;
        };
        let d = info.detail(&f)?;
        targets.push(Target {
            function: index as u32,
            low: bias.relocate(f.low_pc).0,
            high: bias.relocate(f.high_pc).0,
            entry_at: bias.relocate(d.breakpoint).0,
        });
    }
    // At the exec stop the only thread is here, at the loader's first instruction.
    let scratch = crate::process::get_regs(pid)?.rip;
    let installed = install(pid, &mem, scratch, &targets, ring_bytes)?;
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
            move || -> Result<(Ring, Vec<Record>, usize, usize), RecordError> {
                let mut out = Vec::new();
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
                let records = out
                    .into_iter()
                    .map(|r| ProbeRecord {
                        function: r.function as usize,
                        entry: r.kind == ENTRY,
                        thread: r.thread,
                        args: r.args,
                        ret: r.ret,
                    })
                    .collect();
                return Ok(ProbeRun {
                    records,
                    patched,
                    refused,
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
        exit_code,
        drains: 0,
        empty_polls: 0,
    })
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
            Some(code) => sites(code, f.low_pc.0, d.breakpoint.0).err(),
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
