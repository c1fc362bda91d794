//! The harness's coverage runtime: the callbacks LLVM's SanitizerCoverage calls, in a package
//! of their own beside the harness (`rt/`), built optimised while the harness and the crate
//! stay unoptimised. They run on every edge and every integer comparison the crate makes, so
//! their cost is most of what a call costs: unoptimised, the comparison callback alone took
//! 62% of the instructions of a char diff in `similar` (callgrind), every `wrapping_mul` or
//! index in it a call of its own (and those instrumented too). Their names begin with
//! `__sanitizer_`, which the pass leaves alone. A call that can tell nothing new is patched
//! out where it is made (x86-64): a guard's after its first run, a comparison's outside the
//! crate's own code (`--crate-code`) at once; similar's harness ran 1.3 to 1.6 times as many
//! calls a second.

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

// A guard reports only the first time its edge runs, so on x86-64 its call is then patched out
// (`__sanitizer_carve_patch`): a trampoline adds the call's return address.
#[cfg(not(target_arch = "x86_64"))]
#[no_mangle]
pub unsafe extern "C" fn __sanitizer_cov_trace_pc_guard(guard: *mut u32) {
    __sanitizer_carve_guard(guard, 0);
}

#[no_mangle]
pub unsafe extern "C" fn __sanitizer_carve_guard(guard: *mut u32, pc: usize) {
    let g = *guard;
    if g != 0 {
        *guard = 0;
        if COV_LEN < COV_CAP {
            COV_NEW[COV_LEN] = g;
            COV_LEN += 1;
        }
    }
    __sanitizer_carve_patch(pc);
}

// Patching a call out: the callbacks' calls are `call rel32` (five bytes) into the trampolines
// below; once one can tell nothing new, its first two bytes become `jmp +3`, written in one
// store (a two-byte store within a cache line is atomic), so the code around it runs at full
// speed (a guard's call is 8% of a diff's time in `similar`, a comparison's outside the crate
// most of the 45% comparisons took). Its page is made writable the first time (`mprotect`);
// where that is refused, nothing is patched. Only on x86-64, and only once the executable's
// base is known.
static mut PATCH_OFF: bool = false;
const PAGES: usize = 1 << 16;
static mut WRITABLE: [u64; PAGES / 64] = [0; PAGES / 64];

extern "C" {
    fn mprotect(addr: *mut u8, len: usize, prot: i32) -> i32;
}

#[cfg(target_arch = "x86_64")]
extern "C" {
    static __sanitizer_carve_trampolines_start: u8;
    static __sanitizer_carve_trampolines_end: u8;
}

#[cfg(target_arch = "x86_64")]
#[no_mangle]
pub unsafe extern "C" fn __sanitizer_carve_patch(ret: usize) {
    if PATCH_OFF || CMP_BASE == 0 || ret < CMP_BASE + 5 {
        return;
    }
    let at = ret - 5;
    if at % 64 == 63 || *(at as *const u8) != 0xE8 {
        return;
    }
    let rel = (at as *const i32).byte_add(1).read_unaligned() as isize;
    let target = (ret as isize + rel) as usize;
    let start = &__sanitizer_carve_trampolines_start as *const u8 as usize;
    let end = &__sanitizer_carve_trampolines_end as *const u8 as usize;
    if target < start || target >= end {
        return;
    }
    let page = (at - CMP_BASE) >> 12;
    if page >= PAGES {
        return;
    }
    if WRITABLE[page / 64] & (1u64 << (page % 64)) == 0 {
        if mprotect((at & !4095) as *mut u8, 4096, 7) != 0 {
            PATCH_OFF = true;
            return;
        }
        WRITABLE[page / 64] |= 1u64 << (page % 64);
    }
    std::arch::asm!("mov word ptr [{at}], {jmp:x}", at = in(reg) at, jmp = in(reg) 0x03EBu16,
                    options(nostack, preserves_flags));
}

#[cfg(not(target_arch = "x86_64"))]
#[no_mangle]
pub unsafe extern "C" fn __sanitizer_carve_patch(_ret: usize) {}

// The crate's own code (`set_crate_code`): sorted [start, end) offsets, flat. A comparison
// elsewhere (the standard library's generic code built here, the harness's dispatch) tells
// nothing carve keeps (`compares.rs` places only the crate's lines): its call is patched
// out the first time it runs. Until it is set, every comparison counts.
static mut CODE: (*const u64, usize) = (std::ptr::null(), 0);

#[no_mangle]
pub unsafe extern "C" fn __sanitizer_carve_in_code(site: u64) -> bool {
    let (p, n) = CODE;
    if p.is_null() {
        return true;
    }
    // The last range starting at or before `site`.
    let (mut lo, mut hi) = (0usize, n / 2);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if *p.add(2 * mid) <= site {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo > 0 && site < *p.add(2 * (lo - 1) + 1)
}

/// Tells the callbacks where the crate's own code is: [start, end) offsets in the executable,
/// sorted, flat.
pub fn set_crate_code(ranges: Vec<u64>) {
    let ranges: &'static [u64] = Vec::leak(ranges);
    unsafe { CODE = (ranges.as_ptr(), ranges.len()) };
}

#[no_mangle]
pub unsafe extern "C" fn __sanitizer_cov_pcs_init(beg: *const usize, end: *const usize) {
    COV_PCS = (beg, end);
}

// Comparison outcomes (trace-compares, x86-64): each integer comparison calls one of these
// with its two operands; a trampoline adds the call's return address, and
// `__sanitizer_carve_cmp` notes the site (its offset in the executable, less one: inside the
// call) and how the operands compared, as unsigned: 0 below, 1 equal, 2 above. An outcome is
// reported the first time it occurs in this process; switches are left to the edges. What was
// seen is kept by site: a byte per four bytes of code (two calls are at least five bytes apart,
// so each site has its own byte), a bit per outcome, so a loop's sites share a few cache lines
// and pages (a bitmap of hashes spread them over 2 MiB, and its misses were 44% of the
// callback's time in a diff of `similar`, perf). Past 64 MiB of code, a bitmap of hashes (a
// collision can hide an outcome, never invent one).
static mut CMP_BASE: usize = 0;
static mut CMP_BUSY: bool = false;
const CMP_SITES: usize = 1 << 24;
static mut CMP_BY_SITE: [u8; CMP_SITES] = [0; CMP_SITES];
const CMP_BITS: usize = 1 << 20;
static mut CMP_SEEN: [u64; CMP_BITS / 64] = [0; CMP_BITS / 64];
static mut CMP_NEW: [u64; 4096] = [0; 4096];
static mut CMP_LEN: usize = 0;

#[cfg(target_arch = "x86_64")]
std::arch::global_asm!(
    ".globl __sanitizer_carve_trampolines_start", "__sanitizer_carve_trampolines_start:",
    ".globl __sanitizer_cov_trace_pc_guard",
    "__sanitizer_cov_trace_pc_guard:",
    "mov rsi, [rsp]", "jmp {guard}",
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
    ".globl __sanitizer_carve_trampolines_end", "__sanitizer_carve_trampolines_end:",
    guard = sym __sanitizer_carve_guard,
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
    let site = pc - CMP_BASE - 1;
    if site >> 2 < CMP_SITES {
        // A site's byte: a bit per outcome met, and 0x80 when the site is not the crate's.
        let cell = &mut CMP_BY_SITE[site >> 2];
        if *cell == 0 && !__sanitizer_carve_in_code(site as u64) {
            *cell = 0x80;
        }
        if *cell & 0x80 != 0 {
            __sanitizer_carve_patch(pc);
            return;
        }
    }
    CMP_BUSY = true;
    if OPS_ON && OPS_LEN < OPS_CAP {
        OPS[OPS_LEN] = (site as u64, a, b);
        OPS_LEN += 1;
    }
    let rel: u64 = if a < b { 0 } else if a == b { 1 } else { 2 };
    let id = (site as u64) << 2 | rel;
    let first = if site >> 2 < CMP_SITES {
        let cell = &mut CMP_BY_SITE[site >> 2];
        let fresh = *cell & (1u8 << rel) == 0;
        if fresh {
            *cell |= 1u8 << rel;
        }
        fresh
    } else {
        let bit = (id.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) as usize % CMP_BITS;
        let word = &mut CMP_SEEN[bit / 64];
        let fresh = *word & (1u64 << (bit % 64)) == 0;
        if fresh {
            *word |= 1u64 << (bit % 64);
        }
        fresh
    };
    if first {
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
