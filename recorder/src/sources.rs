//! What a unit test cannot control: the std (and `rand`/`getrandom`) functions that read the
//! clock, randomness, the environment, the file system, the network, other processes or stdin,
//! found by name among the executable's symbols. The tracer puts a breakpoint on each one the
//! program links and charges every hit to the recorded call it happened in, so the generator
//! can tell a call whose result depends on the world from one it can replay.
//!
//! Only what is linked into the executable is seen: Rust's std is, libc is not, so a C program
//! calling `time()` directly goes unnoticed.
//!
//! The read-only file-system functions std's generic ones call with a `&Path`
//! ([`PATH_READS`]) get a breakpoint too: there the tracer reads the path and has
//! `snapshot.rs` look at what is at it, so a test can build the same files (see
//! [`carve_storage::FileRead`]). Where the path is at their first instruction is read from
//! their code, not assumed (see [`path_registers`]).

use crate::addr::FileAddr;

/// (kind, function path): a symbol whose demangled path is the function, or a function nested
/// in it (`std::fs::read_to_string::inner`), is such a source.
const SOURCES: &[(&str, &str)] = &[
    ("clock", "std::time::SystemTime::now"),
    ("clock", "std::time::Instant::now"),
    ("random", "rand::rng"),
    ("random", "rand::thread_rng"),
    ("random", "rand::random"),
    ("random", "rand::rngs::thread::rng"),
    ("random", "rand::rngs::thread::thread_rng"),
    ("random", "getrandom::getrandom"),
    ("random", "getrandom::fill"),
    ("random", "getrandom::u32"),
    ("random", "getrandom::u64"),
    ("env", "std::env::var"),
    ("env", "std::env::var_os"),
    ("env", "std::env::vars"),
    ("env", "std::env::vars_os"),
    ("env", "std::env::args"),
    ("env", "std::env::args_os"),
    ("env", "std::env::current_dir"),
    ("env", "std::env::home_dir"),
    ("env", "std::env::temp_dir"),
    ("fs", "std::fs::File::open"),
    ("fs", "std::fs::File::create"),
    ("fs", "std::fs::OpenOptions::open"),
    ("fs", "std::fs::read"),
    ("fs", "std::fs::read_to_string"),
    ("fs", "std::fs::read_dir"),
    ("fs", "std::fs::metadata"),
    ("fs", "std::fs::symlink_metadata"),
    ("fs", "std::fs::canonicalize"),
    ("fs", "std::fs::write"),
    ("fs", "std::fs::remove_file"),
    ("fs", "std::fs::create_dir"),
    ("fs", "std::fs::create_dir_all"),
    ("fs", "std::fs::rename"),
    ("fs", "std::fs::copy"),
    ("fs", "std::path::Path::exists"),
    ("fs", "std::path::Path::try_exists"),
    ("fs", "std::path::Path::is_file"),
    ("fs", "std::path::Path::is_dir"),
    ("fs", "std::path::Path::metadata"),
    ("fs", "std::path::Path::canonicalize"),
    ("fs", "std::path::Path::read_dir"),
    ("net", "std::net::tcp::TcpStream::connect"),
    ("net", "std::net::tcp::TcpStream::connect_timeout"),
    ("net", "std::net::tcp::TcpListener::bind"),
    ("net", "std::net::udp::UdpSocket::bind"),
    ("net", "std::net::TcpStream::connect"),
    ("net", "std::net::TcpListener::bind"),
    ("net", "std::net::UdpSocket::bind"),
    (
        "net",
        "std::net::socket_addr::ToSocketAddrs::to_socket_addrs",
    ),
    ("process", "std::process::Command::spawn"),
    ("process", "std::process::Command::output"),
    ("process", "std::process::Command::status"),
    ("process", "std::process::id"),
    ("stdin", "std::io::stdio::stdin"),
    ("stdin", "std::io::stdin"),
];

/// (what the read is called in a [`carve_storage::FileRead`], function path): std's
/// read-only file-system functions that take the path as a `&Path`, which every public one
/// (`fs::metadata`, `Path::is_dir`, `fs::read_dir`, `File::open`...) calls. `open` is also
/// what `File::create` calls: its snapshot is of what was there before the write, and the
/// write keeps its own source (`fs: std::fs::File::create`).
const PATH_READS: &[(&str, &str)] = &[
    ("metadata", "std::sys::fs::metadata"),
    ("symlink_metadata", "std::sys::fs::symlink_metadata"),
    ("read_dir", "std::sys::fs::read_dir"),
    ("canonicalize", "std::sys::fs::canonicalize"),
    ("read", "std::fs::read::inner"),
    ("read_to_string", "std::fs::read_to_string::inner"),
    ("open", "std::fs::OpenOptions::_open"),
];

/// A function of the program that reads what a test cannot control.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Source {
    pub addr: FileAddr,
    /// `clock: std::time::SystemTime::now`; `None` for a function that is only a
    /// [`PathRead`] (the public function above it carries the label).
    pub label: Option<String>,
    /// Where the function's `&Path` argument is, when it reads the file system by path.
    pub path: Option<PathRead>,
}

/// A file-system read by path: its name and the registers holding the `&Path` (pointer and
/// length) at the function's first instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PathRead {
    pub op: &'static str,
    pub ptr: ArgReg,
    pub len: ArgReg,
}

/// The System V integer argument registers, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ArgReg {
    Rdi,
    Rsi,
    Rdx,
    Rcx,
    R8,
    R9,
}

const ARG_REGS: [(ArgReg, iced_x86::Register); 6] = [
    (ArgReg::Rdi, iced_x86::Register::RDI),
    (ArgReg::Rsi, iced_x86::Register::RSI),
    (ArgReg::Rdx, iced_x86::Register::RDX),
    (ArgReg::Rcx, iced_x86::Register::RCX),
    (ArgReg::R8, iced_x86::Register::R8),
    (ArgReg::R9, iced_x86::Register::R9),
];

impl ArgReg {
    pub(crate) fn value(self, regs: &libc::user_regs_struct) -> u64 {
        match self {
            ArgReg::Rdi => regs.rdi,
            ArgReg::Rsi => regs.rsi,
            ArgReg::Rdx => regs.rdx,
            ArgReg::Rcx => regs.rcx,
            ArgReg::R8 => regs.r8,
            ArgReg::R9 => regs.r9,
        }
    }
}

/// The registers holding the `&Path` at the first instruction of one of std's path functions,
/// read from its code (`code`, at file address `ip`): each copies the path into a stack buffer
/// as a C string when it is shorter than 384 bytes (`run_path_with_cstr`), so it starts by
/// comparing the length with 383 (`cmp reg, 0x17f`) before anything writes that register. The
/// length is that argument register, the pointer the one before it (a hidden return pointer
/// or `&self` come first). `None` when the code does not look like that: no guess.
pub(crate) fn path_registers(code: &[u8], ip: u64) -> Option<(ArgReg, ArgReg)> {
    use iced_x86::{Decoder, DecoderOptions, InstructionInfoFactory, Mnemonic, OpKind};
    let mut decoder = Decoder::with_ip(64, code, ip, DecoderOptions::NONE);
    let mut info = InstructionInfoFactory::new();
    let mut written = Vec::new();
    for instruction in decoder.iter().take(32) {
        if instruction.is_invalid() {
            return None;
        }
        if instruction.mnemonic() == Mnemonic::Cmp
            && instruction.op0_kind() == OpKind::Register
            && matches!(
                instruction.op1_kind(),
                OpKind::Immediate32to64 | OpKind::Immediate8to64 | OpKind::Immediate32
            )
            && instruction.immediate(1) == 0x17f
        {
            let reg = instruction.op0_register();
            let at = ARG_REGS.iter().position(|(_, r)| *r == reg)?;
            if at == 0 || written.contains(&reg) {
                return None;
            }
            return Some((ARG_REGS[at - 1].0, ARG_REGS[at].0));
        }
        let flow = instruction.flow_control();
        if flow != iced_x86::FlowControl::Next {
            return None;
        }
        for used in info.info(&instruction).used_registers() {
            if crate::abi::writes(used.access()) {
                written.push(used.register().full_register());
            }
        }
    }
    None
}

/// The sources of [`find`] with std's path functions among `symbols` added (or marked, where
/// a labelled source is one: `std::fs::read::inner`), for those whose code shows where the
/// path is (`code`: the bytes at a file address).
pub(crate) fn with_path_reads<'s>(
    mut found: Vec<Source>,
    symbols: impl Iterator<Item = (&'s str, FileAddr)>,
    code: impl Fn(FileAddr) -> Option<&'s [u8]>,
) -> Vec<Source> {
    for (name, addr) in symbols {
        let path = normalize(name);
        let Some((op, _)) = PATH_READS.iter().find(|(_, f)| *f == path) else {
            continue;
        };
        let Some((ptr, len)) = code(addr).and_then(|bytes| path_registers(bytes, addr.0)) else {
            continue;
        };
        let read = PathRead { op, ptr, len };
        match found.iter_mut().find(|s| s.addr == addr) {
            Some(source) => source.path = Some(read),
            None => found.push(Source {
                addr,
                label: None,
                path: Some(read),
            }),
        }
    }
    found.sort_by_key(|s| s.addr.0);
    found.dedup_by_key(|s| s.addr.0);
    found
}

/// The sources among `symbols` (demangled names without hash, and their addresses), one per
/// address, in address order.
pub(crate) fn find<'s>(symbols: impl Iterator<Item = (&'s str, FileAddr)>) -> Vec<Source> {
    let mut found: Vec<Source> = symbols
        .filter_map(|(name, addr)| {
            let path = normalize(name);
            let (kind, function) = SOURCES.iter().find(|(_, f)| {
                path.strip_prefix(f)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
            })?;
            Some(Source {
                addr,
                label: Some(format!("{kind}: {function}")),
                path: None,
            })
        })
        .collect();
    found.sort_by(|a, b| (a.addr.0, &a.label).cmp(&(b.addr.0, &b.label)));
    found.dedup_by_key(|s| s.addr.0);
    found
}

/// `<std::time::SystemTime>::now` (v0) → `std::time::SystemTime::now`;
/// `std::env::var::<&str>` → `std::env::var`; `<std::net::SocketAddr as
/// std::net::socket_addr::ToSocketAddrs>::to_socket_addrs` → the trait's path and the method.
fn normalize(name: &str) -> String {
    let mut path = name.to_string();
    if let Some(inner) = path.strip_prefix('<') {
        if let Some(close) = carve_storage::closing_angle(inner) {
            let (qualified, rest) = (&inner[..close], &inner[close + 1..]);
            let owner = qualified
                .rsplit_once(" as ")
                .map_or(qualified, |(_, tr)| tr)
                .to_string();
            path = format!("{owner}{rest}");
        }
    }
    // Generic arguments, wherever they are (`::<&str>`, `Vec<u8>`), are not part of the path.
    let mut out = String::with_capacity(path.len());
    let mut depth = 0usize;
    for c in path.chars() {
        match c {
            '<' => depth += 1,
            '>' => depth = depth.saturating_sub(1),
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out.replace("::::", "::").trim_end_matches("::").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(names: &[(&str, u64)]) -> Vec<String> {
        find(names.iter().map(|(n, a)| (*n, FileAddr(*a))))
            .into_iter()
            .filter_map(|s| s.label)
            .collect()
    }

    #[test]
    fn std_sources_are_found_in_either_mangling_and_through_generics() {
        assert_eq!(
            labels(&[
                ("<std::time::SystemTime>::now", 0x10),
                ("std::env::var::<&str>", 0x20),
                ("std::fs::read_to_string::inner", 0x30),
                (
                    "<std::net::SocketAddr as std::net::socket_addr::ToSocketAddrs>::to_socket_addrs",
                    0x40
                ),
            ]),
            [
                "clock: std::time::SystemTime::now",
                "env: std::env::var",
                "fs: std::fs::read_to_string",
                "net: std::net::socket_addr::ToSocketAddrs::to_socket_addrs",
            ]
        );
    }

    #[test]
    fn look_alikes_are_not_sources() {
        assert!(labels(&[
            ("std::env::variable_name", 0x10),
            ("my::std::time::SystemTime::now", 0x20),
            ("core::time::Duration::as_secs", 0x30),
            ("std::fs::File::metadata", 0x40),
        ])
        .is_empty());
    }

    #[test]
    fn one_address_gives_one_source() {
        assert_eq!(
            labels(&[
                ("std::env::var_os", 0x10),
                ("std::env::var_os::<&str>", 0x10)
            ])
            .len(),
            1
        );
    }

    /// The first instructions of `std::sys::fs::read_dir` and `<std::fs::OpenOptions>::_open`
    /// as rustc 1.95's std has them (objdump of a debug build).
    const READ_DIR: &[u8] = &[
        0x55, // push rbp
        0x48, 0x89, 0xe5, // mov rbp, rsp
        0x41, 0x57, // push r15
        0x49, 0x89, 0xd6, // mov r14, rdx
        0x49, 0x89, 0xf7, // mov r15, rsi
        0x48, 0x89, 0xfb, // mov rbx, rdi
        0x48, 0x81, 0xfa, 0x7f, 0x01, 0x00, 0x00, // cmp rdx, 0x17f
        0x0f, 0x87, 0x00, 0x01, 0x00, 0x00, // ja
    ];
    const OPEN: &[u8] = &[
        0x55, // push rbp
        0x48, 0x89, 0xe5, // mov rbp, rsp
        0x49, 0x89, 0xcf, // mov r15, rcx
        0x48, 0x89, 0xfb, // mov rbx, rdi
        0x48, 0x89, 0x75, 0xc8, // mov [rbp-0x38], rsi
        0x48, 0x81, 0xf9, 0x7f, 0x01, 0x00, 0x00, // cmp rcx, 0x17f
        0x77, 0x7a, // ja
    ];

    #[test]
    fn the_path_registers_are_read_from_the_length_check_std_starts_with() {
        assert_eq!(
            path_registers(READ_DIR, 0x1000),
            Some((ArgReg::Rsi, ArgReg::Rdx))
        );
        assert_eq!(
            path_registers(OPEN, 0x1000),
            Some((ArgReg::Rdx, ArgReg::Rcx))
        );
    }

    #[test]
    fn no_path_registers_are_guessed_when_the_check_is_not_there_first() {
        // The length register overwritten before the check: not the argument any more.
        let mut clobbered = READ_DIR.to_vec();
        clobbered.splice(1..1, [0x48, 0x31, 0xd2]); // xor rdx, rdx
        assert_eq!(path_registers(&clobbered, 0x1000), None);
        // Another bound, or none at all.
        let mut other = READ_DIR.to_vec();
        other[18] = 0x80;
        assert_eq!(path_registers(&other, 0x1000), None);
        assert_eq!(path_registers(&[0xc3], 0x1000), None);
    }

    #[test]
    fn path_functions_join_the_labelled_source_at_their_address_or_come_alone() {
        let symbols = [
            ("std::fs::read_to_string::inner", FileAddr(0x30)),
            ("std::sys::fs::read_dir", FileAddr(0x50)),
            ("std::sys::fs::metadata", FileAddr(0x70)),
        ];
        let labelled = find(symbols.iter().copied());
        let all = with_path_reads(labelled, symbols.iter().copied(), |addr| {
            // metadata's code does not show where its path is: left out.
            (addr.0 != 0x70).then_some(READ_DIR)
        });
        let shown: Vec<_> = all
            .iter()
            .map(|s| (s.addr.0, s.label.as_deref(), s.path.map(|p| p.op)))
            .collect();
        assert_eq!(
            shown,
            [
                (
                    0x30,
                    Some("fs: std::fs::read_to_string"),
                    Some("read_to_string")
                ),
                (0x50, None, Some("read_dir")),
            ]
        );
    }
}
