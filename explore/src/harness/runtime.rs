//! The harness's coverage runtime: the callbacks LLVM's SanitizerCoverage calls, in a package
//! of their own beside the harness (`rt/`), built optimised while the harness and the crate
//! stay unoptimised. They run on every edge and every integer comparison the crate makes, so
//! their cost is most of what a call costs: unoptimised, the comparison callback alone took
//! 62% of the instructions of a char diff in `similar` (callgrind), every `wrapping_mul` or
//! index in it a call of its own (and those instrumented too). Their names begin with
//! `__sanitizer_`, which the pass leaves alone.

/// The runtime package's manifest.
pub const MANIFEST: &str = "[package]\nname = \"carve_explore_rt\"\nversion = \"0.0.0\"\n\
                            edition = \"2021\"\npublish = false\n";

/// What the harness manifest adds: the dependency and its optimised build (one codegen unit,
/// so that the linker takes every callback in one object).
pub const IN_HARNESS: &str = "carve_explore_rt = { path = \"rt\" }\n";
pub const PROFILE: &str = "[profile.release.package.carve_explore_rt]\nopt-level = 3\n\
                           debug-assertions = false\noverflow-checks = false\ncodegen-units = 1\n";

/// `rt/src/lib.rs`.
pub const LIB: &str = r#"#![allow(unknown_lints, static_mut_refs, clippy::all)]
// Edge coverage (trace-pc-guard with a PC table): each guard is numbered by its place in the
// table, reported once the first time it runs (then zeroed), and `pcs` gives the table.
// Plain loads and stores only: code the callbacks call would be instrumented too.
const COV_CAP: usize = 1 << 20;
static mut COV_NEW: [u32; COV_CAP] = [0; COV_CAP];
static mut COV_LEN: usize = 0;
static mut COV_PCS: (*const usize, *const usize) = (std::ptr::null(), std::ptr::null());

#[no_mangle]
pub unsafe extern "C" fn __sanitizer_cov_trace_pc_guard_init(start: *mut u32, stop: *mut u32) {
    let mut p = start;
    while p < stop {
        *p = (p.offset_from(start) + 1) as u32;
        p = p.add(1);
    }
}

#[no_mangle]
pub unsafe extern "C" fn __sanitizer_cov_trace_pc_guard(guard: *mut u32) {
    let g = *guard;
    if g != 0 {
        *guard = 0;
        if COV_LEN < COV_CAP {
            COV_NEW[COV_LEN] = g;
            COV_LEN += 1;
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn __sanitizer_cov_pcs_init(beg: *const usize, end: *const usize) {
    COV_PCS = (beg, end);
}

// Comparison outcomes (trace-compares, x86-64): each integer comparison calls one of these
// with its two operands; a trampoline adds the call's return address, and
// `__sanitizer_carve_cmp` notes the site (its offset in the executable, less one: inside the
// call) and how the operands compared, as unsigned: 0 below, 1 equal, 2 above. An outcome is
// reported the first time it occurs in this process (a bitmap of hashes: a collision can hide
// an outcome, never invent one); switches are left to the edges.
static mut CMP_BASE: usize = 0;
static mut CMP_BUSY: bool = false;
const CMP_BITS: usize = 1 << 24;
static mut CMP_SEEN: [u64; CMP_BITS / 64] = [0; CMP_BITS / 64];
static mut CMP_NEW: [u64; 4096] = [0; 4096];
static mut CMP_LEN: usize = 0;

#[cfg(target_arch = "x86_64")]
std::arch::global_asm!(
    ".globl __sanitizer_cov_trace_cmp1", ".globl __sanitizer_cov_trace_const_cmp1",
    ".globl __sanitizer_cov_trace_cmp2", ".globl __sanitizer_cov_trace_const_cmp2",
    ".globl __sanitizer_cov_trace_cmp4", ".globl __sanitizer_cov_trace_const_cmp4",
    ".globl __sanitizer_cov_trace_cmp8", ".globl __sanitizer_cov_trace_const_cmp8",
    "__sanitizer_cov_trace_cmp1:", "__sanitizer_cov_trace_const_cmp1:",
    "movzx edi, dil", "movzx esi, sil", "mov rdx, [rsp]", "jmp {cmp}",
    "__sanitizer_cov_trace_cmp2:", "__sanitizer_cov_trace_const_cmp2:",
    "movzx edi, di", "movzx esi, si", "mov rdx, [rsp]", "jmp {cmp}",
    "__sanitizer_cov_trace_cmp4:", "__sanitizer_cov_trace_const_cmp4:",
    "mov edi, edi", "mov esi, esi", "mov rdx, [rsp]", "jmp {cmp}",
    "__sanitizer_cov_trace_cmp8:", "__sanitizer_cov_trace_const_cmp8:",
    "mov rdx, [rsp]", "jmp {cmp}",
    ".globl __sanitizer_cov_trace_switch",
    "__sanitizer_cov_trace_switch:",
    "mov rdx, [rsp]", "jmp {switch}",
    cmp = sym __sanitizer_carve_cmp,
    switch = sym __sanitizer_carve_switch,
);

// Operands (a sequence asked with `v`): while `OPS_ON`, each integer comparison's site and
// operands, and each switch's site, value and cases (a switch of at most 32), as met.
static mut OPS_ON: bool = false;
const OPS_CAP: usize = 1 << 10;
static mut OPS: [(u64, u64, u64); OPS_CAP] = [(0, 0, 0); OPS_CAP];
static mut OPS_LEN: usize = 0;


#[no_mangle]
pub unsafe extern "C" fn __sanitizer_carve_cmp(a: u64, b: u64, pc: usize) {
    if CMP_BUSY || CMP_BASE == 0 || pc <= CMP_BASE {
        return;
    }
    CMP_BUSY = true;
    if OPS_ON && OPS_LEN < OPS_CAP {
        OPS[OPS_LEN] = ((pc - CMP_BASE - 1) as u64, a, b);
        OPS_LEN += 1;
    }
    let rel: u64 = if a < b { 0 } else if a == b { 1 } else { 2 };
    let id = ((pc - CMP_BASE - 1) as u64) << 2 | rel;
    let bit = (id.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) as usize % CMP_BITS;
    let word = &mut CMP_SEEN[bit / 64];
    if *word & (1u64 << (bit % 64)) == 0 {
        *word |= 1u64 << (bit % 64);
        if CMP_LEN < CMP_NEW.len() {
            CMP_NEW[CMP_LEN] = id;
            CMP_LEN += 1;
        }
    }
    CMP_BUSY = false;
}

// `cases`: how many, their width in bits, then each case's value.
#[no_mangle]
pub unsafe extern "C" fn __sanitizer_carve_switch(val: u64, cases: *const u64, pc: usize) {
    if !OPS_ON || CMP_BUSY || CMP_BASE == 0 || pc <= CMP_BASE || *cases > 32 {
        return;
    }
    CMP_BUSY = true;
    let mut k = 0;
    while k < *cases as usize && OPS_LEN < OPS_CAP {
        OPS[OPS_LEN] = ((pc - CMP_BASE - 1) as u64, val, *cases.add(2 + k));
        OPS_LEN += 1;
        k += 1;
    }
    CMP_BUSY = false;
}

/// Starts noting operands (forgetting those noted before), or stops.
pub fn note_operands_from_now(on: bool) {
    unsafe {
        OPS_ON = on;
        if on {
            OPS_LEN = 0;
        }
    }
}

/// The operands noted since `note_operands_from_now(true)`: site, operand, operand (a
/// switch's value first), flat.
pub fn take_operands() -> Vec<u64> {
    unsafe {
        let mut out = Vec::with_capacity(3 * OPS_LEN);
        for &(site, a, b) in &OPS[..OPS_LEN] {
            out.extend([site, a, b]);
        }
        OPS_LEN = 0;
        out
    }
}

/// Comparison sites are offsets from `base`, where the executable is loaded (0: none noted).
pub fn set_base(base: usize) {
    unsafe { CMP_BASE = base };
}

/// The guards first run since the last take.
pub fn take_guards() -> Vec<u32> {
    unsafe {
        let new = COV_NEW[..COV_LEN].to_vec();
        COV_LEN = 0;
        new
    }
}

/// The comparison outcomes first met since the last take (site offset times four plus the
/// outcome).
pub fn take_compares() -> Vec<u64> {
    unsafe {
        let new = CMP_NEW[..CMP_LEN].to_vec();
        CMP_LEN = 0;
        new
    }
}

/// The PC table: a guard's address, then its flags, per guard.
pub fn pcs() -> (*const usize, *const usize) {
    unsafe { COV_PCS }
}
"#;
