//! What a unit test cannot control: the std (and `rand`/`getrandom`) functions that read the
//! clock, randomness, the environment, the file system, the network, other processes or stdin,
//! found by name among the executable's symbols. The tracer puts a breakpoint on each one the
//! program links and charges every hit to the recorded call it happened in, so the generator
//! can tell a call whose result depends on the world from one it can replay.
//!
//! Only what is linked into the executable is seen: Rust's std is, libc is not, so a C program
//! calling `time()` directly goes unnoticed.

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

/// A function of the program that reads what a test cannot control.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Source {
    pub addr: FileAddr,
    /// `clock: std::time::SystemTime::now`.
    pub label: String,
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
                label: format!("{kind}: {function}"),
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
            .map(|s| s.label)
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
}
