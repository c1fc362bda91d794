//! Whether the crate can only compute: when neither its code nor the code of any crate it
//! depends on names a way to touch the world (files, sockets, processes, the environment, the
//! clock, threads, standard input, foreign code), a public function the run never called can
//! do nothing a test cannot undo, and is explored too (Randoop and JET call a class's whole
//! API; carve, by default, only what the run showed safe). The check reads the source, not
//! what a call does: a name in code no call reaches still counts, and a crate that names one
//! anywhere is explored as the run reached it, as before.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// Module and item names through which code touches the world, wherever they appear in a
/// path or a `use`: `std::fs::read`, `use std::{env, process}`, `Instant::now()`.
const TOUCHING_NAMES: &[&str] = &[
    "fs",
    "File",
    "OpenOptions",
    "process",
    "Command",
    "env",
    // Sockets, not addresses: `std::net::Ipv4Addr` only computes.
    "TcpStream",
    "TcpListener",
    "UdpSocket",
    "ToSocketAddrs",
    "UnixStream",
    "UnixListener",
    "UnixDatagram",
    "thread",
    "SystemTime",
    "Instant",
    "stdin",
    "Stdin",
    "libc",
    "nix",
    "rustix",
    "winapi",
    "windows_sys",
];

/// Methods that touch the world whatever their receiver's type (`addr.to_socket_addrs()`).
const TOUCHING_METHODS: &[&str] = &["to_socket_addrs", "read_dir", "read_to_string"];

/// Macros that leave Rust: inline assembly.
const TOUCHING_MACROS: &[&str] = &["asm", "global_asm", "naked_asm"];

/// `Ok` when neither the crate `api` reads nor its dependencies name a way to touch the
/// world; else the first way, as `file: what`.
pub fn only_computes(api: &carve_generator::CrateApi, cargo: &Path) -> Result<(), String> {
    if let Some(why) = first_touch(api.files.iter().map(PathBuf::as_path)) {
        return Err(why);
    }
    let deps = dependency_files(cargo, &api.dir)?;
    match first_touch(deps.iter().map(PathBuf::as_path)) {
        Some(why) => Err(why),
        None => Ok(()),
    }
}

/// The first way `files` name to touch the world, as `file: what` (`src/lib.rs: std::fs`);
/// `None` when they name none. A file that does not read or parse is a way: what it does is
/// unknown.
pub fn first_touch<'f>(files: impl IntoIterator<Item = &'f Path>) -> Option<String> {
    for file in files {
        let Ok(text) = std::fs::read_to_string(file) else {
            return Some(format!("{}: not read", file.display()));
        };
        let Ok(parsed) = syn::parse_file(&text) else {
            return Some(format!("{}: not parsed", file.display()));
        };
        let mut v = Touches::default();
        v.visit_file(&parsed);
        if let Some(what) = v.first {
            return Some(format!("{}: {what}", file.display()));
        }
    }
    None
}

/// The Rust files of the packages the library in `crate_dir` depends on to run (normal
/// dependencies, recursively, as `cargo metadata` resolves them with default features; not
/// build scripts, proc macros or dev-dependencies): every `.rs` file below each one's library
/// root's directory.
pub fn dependency_files(cargo: &Path, crate_dir: &Path) -> Result<Vec<PathBuf>, String> {
    use cargo_metadata::{DependencyKind, MetadataCommand};
    let meta = MetadataCommand::new()
        .cargo_path(cargo)
        .manifest_path(crate_dir.join("Cargo.toml"))
        .exec()
        .map_err(|e| format!("cargo metadata: {e}"))?;
    let resolve = meta
        .resolve
        .as_ref()
        .ok_or("cargo metadata resolved nothing")?;
    let root = (resolve.root.clone())
        .or_else(|| meta.workspace_members.first().cloned())
        .ok_or("cargo metadata named no package")?;
    let nodes: BTreeMap<_, _> = resolve.nodes.iter().map(|n| (&n.id, n)).collect();
    let packages: BTreeMap<_, _> = meta.packages.iter().map(|p| (&p.id, p)).collect();
    let mut todo = vec![&root];
    let mut seen = BTreeSet::from([&root]);
    let mut files = Vec::new();
    while let Some(id) = todo.pop() {
        let Some(node) = nodes.get(id) else {
            continue;
        };
        for dep in &node.deps {
            let runs = (dep.dep_kinds.iter()).any(|k| k.kind == DependencyKind::Normal);
            if runs && seen.insert(&dep.pkg) {
                todo.push(&dep.pkg);
            }
        }
        // The crate's own files are the API's, read by the caller.
        let Some(package) = packages.get(id).filter(|_| *id != root) else {
            continue;
        };
        let lib = (package.targets.iter()).find(|t| t.is_lib() || t.is_rlib());
        if let Some(lib) = lib.filter(|t| !t.is_proc_macro()) {
            if let Some(dir) = lib.src_path.parent() {
                rust_files(dir.as_std_path(), &mut files);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// Every `.rs` file below `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The first touching name among `tokens` (a macro's input, groups within groups).
fn touching_token(tokens: proc_macro2::TokenStream) -> Option<String> {
    tokens.into_iter().find_map(|t| match t {
        proc_macro2::TokenTree::Ident(i) => {
            let n = i.to_string();
            TOUCHING_NAMES.contains(&n.as_str()).then_some(n)
        }
        proc_macro2::TokenTree::Group(g) => touching_token(g.stream()),
        _ => None,
    })
}

/// The first touching name a file's code holds (its tests' code left out).
#[derive(Default)]
struct Touches {
    first: Option<String>,
}

impl Touches {
    fn note(&mut self, what: impl FnOnce() -> String) {
        if self.first.is_none() {
            self.first = Some(what());
        }
    }

    /// A name a `use` takes (`use std::{env, io}`, `use std::time::Instant as Now`).
    fn used(&mut self, ident: &syn::Ident) {
        let n = ident.to_string();
        if TOUCHING_NAMES.contains(&n.as_str()) {
            self.note(|| format!("a `use` of `{n}`"));
        }
    }
}

/// Whether `attrs` hold `#[cfg(test)]` or `#[cfg(all(test, …))]`: code only tests build.
fn test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && a.parse_args::<syn::Meta>().is_ok_and(|m| needs_test(&m))
    })
}

fn needs_test(m: &syn::Meta) -> bool {
    match m {
        syn::Meta::Path(p) => p.is_ident("test"),
        syn::Meta::List(l) if l.path.is_ident("all") => l
            .parse_args_with(
                syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated,
            )
            .is_ok_and(|all| all.iter().any(needs_test)),
        _ => false,
    }
}

impl<'ast> Visit<'ast> for Touches {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs = match item {
            syn::Item::Mod(m) => &m.attrs,
            syn::Item::Fn(f) => &f.attrs,
            syn::Item::Impl(i) => &i.attrs,
            _ => return syn::visit::visit_item(self, item),
        };
        if !test_only(attrs) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let names: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        if let Some(n) = names.iter().find(|n| TOUCHING_NAMES.contains(&n.as_str())) {
            self.note(|| format!("`{}` names `{n}`", names.join("::")));
        }
        syn::visit::visit_path(self, p);
    }

    fn visit_use_name(&mut self, u: &'ast syn::UseName) {
        self.used(&u.ident);
    }

    fn visit_use_path(&mut self, u: &'ast syn::UsePath) {
        self.used(&u.ident);
        syn::visit::visit_use_path(self, u);
    }

    fn visit_use_rename(&mut self, u: &'ast syn::UseRename) {
        self.used(&u.ident);
    }

    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        let n = m.method.to_string();
        if TOUCHING_METHODS.contains(&n.as_str()) {
            self.note(|| format!("a call of `{n}`"));
        }
        syn::visit::visit_expr_method_call(self, m);
    }

    fn visit_item_foreign_mod(&mut self, _: &'ast syn::ItemForeignMod) {
        self.note(|| "an `extern` block (foreign code)".to_string());
    }

    /// A macro's name is no path code runs (`env!` reads at build time), but what it is given
    /// may be code (`println!("{:?}", std::fs::read(p))`): its tokens are read as names.
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        if let Some(last) = m.path.segments.last() {
            let n = last.ident.to_string();
            if TOUCHING_MACROS.contains(&n.as_str()) {
                self.note(|| format!("`{n}!`"));
            }
        }
        if let Some(n) = touching_token(m.tokens.clone()) {
            let name = m.path.segments.last().map(|s| s.ident.to_string());
            self.note(|| format!("`{}!` is given `{n}`", name.unwrap_or_default()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(src: &str) -> Option<String> {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("lib.rs");
        std::fs::write(&file, src).unwrap();
        first_touch([file.as_path()]).map(|w| w.rsplit(": ").next().unwrap().to_string())
    }

    #[test]
    fn code_that_only_computes_touches_nothing_its_tests_aside() {
        let pure = r#"
            use std::collections::HashMap;
            use std::fmt::{self, Write};
            use std::net::{Ipv4Addr, Ipv6Addr};
            const V: &str = env!("CARGO_PKG_VERSION");
            pub fn f(n: u32) -> String { let mut s = String::new(); write!(s, "{n}").unwrap(); s }
            pub fn g(m: &HashMap<u8, u8>) -> usize { m.len() }
            #[cfg(test)]
            mod tests { #[test] fn t() { std::fs::read("x").unwrap(); } }
            #[cfg(all(test, unix))]
            mod more { fn t() { let _ = std::env::var("X"); } }
        "#;
        assert_eq!(touch(pure), None);
    }

    #[test]
    fn files_processes_the_environment_the_clock_sockets_and_foreign_code_touch_the_world() {
        let cases = [
            (
                "pub fn f() { let _ = std::fs::read(\"x\"); }",
                "`std::fs::read` names `fs`",
            ),
            ("use std::{env, io};", "a `use` of `env`"),
            ("use std::time::Instant as Now;", "a `use` of `Instant`"),
            (
                "pub fn f() { std::process::exit(1) }",
                "`std::process::exit` names `process`",
            ),
            (
                "pub fn f(a: &str) { let _ = a.to_socket_addrs(); }",
                "a call of `to_socket_addrs`",
            ),
            (
                "pub fn f() { let _ = std::net::TcpStream::connect(\"h:1\"); }",
                "`std::net::TcpStream::connect` names `TcpStream`",
            ),
            (
                "extern \"C\" { fn abs(x: i32) -> i32; }",
                "an `extern` block (foreign code)",
            ),
            (
                "pub fn f() { unsafe { core::arch::asm!(\"nop\") } }",
                "`asm!`",
            ),
            (
                "pub fn f() { println!(\"{:?}\", std::fs::read(\"x\")); }",
                "`println!` is given `fs`",
            ),
        ];
        for (src, what) in cases {
            assert_eq!(touch(src).as_deref(), Some(what), "{src}");
        }
    }

    #[test]
    fn a_file_that_does_not_parse_may_touch_anything() {
        assert_eq!(touch("pub fn (").as_deref(), Some("not parsed"));
    }
}
