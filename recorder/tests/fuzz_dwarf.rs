//! Malformed debug info must give errors, never panics: real ELF files with bytes of their DWARF
//! sections (and elsewhere) flipped, or cut short, are loaded, indexed, and have every function's
//! types lowered.

use std::path::{Path, PathBuf};
use std::process::Command;

use carve_recorder::{Program, Selection};
use object::{Object, ObjectSection};
use proptest::prelude::*;

const RUST_SOURCE: &str = r#"
pub enum Shape { Circle { r: f64 }, Rect(u32, u32), Empty }
pub trait Area { fn area(&self) -> f64; }
impl Area for Shape {
    fn area(&self) -> f64 {
        match self { Shape::Circle { r } => r * r, Shape::Rect(a, b) => (*a * *b) as f64, Shape::Empty => 0.0 }
    }
}
pub struct Bag { pub items: Vec<String>, pub best: Option<Box<Shape>>, pub dynamic: Box<dyn Area> }
#[inline(never)]
pub fn describe(b: &Bag, s: &str, n: (u8, i64)) -> Result<String, u8> {
    if s.is_empty() { Err(n.0) } else { Ok(format!("{}{}", b.items.len(), b.dynamic.area())) }
}
fn main() {
    let b = Bag { items: vec!["a".into()], best: None, dynamic: Box::new(Shape::Empty) };
    println!("{:?}", describe(&b, "x", (1, 2)));
}
"#;

/// A Rust and a C program with debug info, built once per test process.
fn binaries() -> &'static [(PathBuf, Vec<u8>)] {
    static BUILT: std::sync::OnceLock<Vec<(PathBuf, Vec<u8>)>> = std::sync::OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("carve-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let rs = dir.join("shapes.rs");
        std::fs::write(&rs, RUST_SOURCE).unwrap();
        let rust_bin = dir.join("shapes");
        let ok = Command::new("rustc")
            .args(["-g", "--edition", "2021", "-o"])
            .arg(&rust_bin)
            .arg(&rs)
            .status()
            .unwrap()
            .success();
        assert!(ok, "rustc builds the fuzz program");
        let c = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/c_basic/c_basic.c");
        let c_bin = dir.join("c_basic");
        let ok = Command::new("cc")
            .args(["-g", "-O0", "-o"])
            .arg(&c_bin)
            .arg(c)
            .status()
            .unwrap()
            .success();
        assert!(ok, "cc builds c_basic");
        [rust_bin, c_bin]
            .into_iter()
            .map(|p| {
                let bytes = std::fs::read(&p).unwrap();
                (p, bytes)
            })
            .collect()
    })
}

/// File ranges of the sections the DWARF and unwind readers parse.
fn dwarf_ranges(bytes: &[u8]) -> Vec<(usize, usize)> {
    let file = object::File::parse(bytes).unwrap();
    [
        ".debug_info",
        ".debug_abbrev",
        ".debug_line",
        ".debug_str",
        ".debug_line_str",
        ".debug_loclists",
        ".debug_rnglists",
        ".eh_frame",
        ".eh_frame_hdr",
    ]
    .iter()
    .filter_map(|name| {
        let s = file.section_by_name(name)?;
        let (start, len) = s.file_range()?;
        (len > 0).then_some((start as usize, len as usize))
    })
    .collect()
}

/// Loads `bytes` as a program and lowers every function's signature; errors are fine.
fn load_everything(dir: &Path, bytes: &[u8]) {
    let path = dir.join("mutated");
    std::fs::write(&path, bytes).unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    if let Ok(mut program) = Program::load(&path) {
        let _ = program.select(&Selection::default());
        let functions = program.functions().to_vec();
        for f in functions.iter().take(400) {
            let _ = program.signature(f);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn flipped_dwarf_bytes_give_errors_not_panics(
        which in 0usize..2,
        flips in proptest::collection::vec((any::<u32>(), any::<u8>(), any::<bool>()), 1..24),
    ) {
        let (_, original) = &binaries()[which];
        let ranges = dwarf_ranges(original);
        let mut bytes = original.clone();
        for (pos, value, in_dwarf) in flips {
            let offset = if in_dwarf && !ranges.is_empty() {
                let (start, len) = ranges[pos as usize % ranges.len()];
                start + (pos as usize / ranges.len()) % len
            } else {
                pos as usize % bytes.len()
            };
            bytes[offset] = value;
        }
        let dir = tempfile::tempdir().unwrap();
        load_everything(dir.path(), &bytes);
    }

    #[test]
    fn truncated_files_give_errors_not_panics(which in 0usize..2, keep in 0.0f64..1.0) {
        let (_, original) = &binaries()[which];
        let cut = (original.len() as f64 * keep) as usize;
        let dir = tempfile::tempdir().unwrap();
        load_everything(dir.path(), &original[..cut]);
    }
}

#[test]
fn the_unmutated_rust_program_describes_its_function_signatures() {
    let (path, _) = &binaries()[0];
    let mut program = Program::load(path).unwrap();
    let f = program
        .functions()
        .iter()
        .find(|f| f.path == "shapes::describe")
        .cloned()
        .expect("describe is in the DWARF");
    let sig = program.signature(&f).unwrap();
    let types: Vec<&str> = sig.params.iter().map(|p| p.type_name.as_str()).collect();
    assert_eq!(types, ["&shapes::Bag", "&str", "(u8, i64)"]);
    assert_eq!(
        sig.return_type.as_deref(),
        Some("core::result::Result<alloc::string::String, u8>")
    );
}
