//! Value-decoding conformance: a property test over random Rust type shapes.
//!
//! A seeded generator makes up type shapes (integers up to 128 bits, floats, `char`, `bool`,
//! `()`, `&str`, `String`, `Box<str>`, `Cow<str>`, slices, `Vec`, arrays, tuples, `Option`,
//! `Result`, `Box`, references, and structs and enums of these, nested) and values of them, and
//! writes programs of a few hundred `#[inline(never)]` functions taking and returning such
//! values. Each program prints every argument and return value with `{:?}` just around the call;
//! it is compiled with rustc both as debug and with `-C opt-level=3`, recorded by the real
//! `carve record` (its default capture: in process where it can, ptrace stops otherwise), and
//! every recorded value rendered the way `{:?}` renders it must equal what the program printed;
//! the program is recorded again with `--capture ptrace`, and the two traces must be the same
//! call for call. A part the recorder marked as not read exactly (`Unavailable`,
//! `Opaque`, an unfollowed `Pointer`, a `truncated` string or sequence) matches anything; every
//! other part must be exact.
//!
//! `CARVE_CONFORMANCE_SEED=N` replays a seed (printed by every run and on failure);
//! `CARVE_CONFORMANCE_PROGRAMS` and `CARVE_CONFORMANCE_FUNCTIONS` (per program) set the size.

mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use carve_storage::{Field, Value};
use common::*;

/// splitmix64: small, seedable, and the same on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

const INTS: &[&str] = &[
    "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize",
];

#[derive(Debug, Clone)]
enum Shape {
    Int(&'static str),
    F32,
    F64,
    Bool,
    Char,
    Unit,
    Str,
    String,
    BoxStr,
    CowStr,
    Slice(Box<Shape>),
    Vec(Box<Shape>),
    Array(Box<Shape>, usize),
    Tuple(Vec<Shape>),
    Option(Box<Shape>),
    Result(Box<Shape>, Box<Shape>),
    Boxed(Box<Shape>),
    Ref(Box<Shape>),
    /// A struct or enum of [`Defs`], by index.
    Def(usize),
}

#[derive(Debug, Clone)]
enum Fields {
    Unit,
    Tuple(Vec<Shape>),
    Named(Vec<(String, Shape)>),
}

#[derive(Debug, Clone)]
enum Def {
    Struct(String, Fields),
    Enum(String, Vec<(String, Fields)>),
}

/// The structs and enums of one program; a def only refers to defs before it.
struct Defs(Vec<Def>);

impl Shape {
    /// A random shape, nested at most `depth` levels.
    fn random(rng: &mut Rng, depth: u32, defs: usize) -> Shape {
        let leaf = depth == 0 || rng.one_in(3);
        if leaf {
            return match rng.below(14) {
                0..=3 => Shape::Int(rng.pick(INTS)),
                4 => Shape::F32,
                5 => Shape::F64,
                6 => Shape::Bool,
                7 => Shape::Char,
                8 if rng.one_in(3) => Shape::Unit,
                8 | 9 => Shape::Str,
                10 => Shape::String,
                11 => Shape::BoxStr,
                12 => Shape::CowStr,
                _ if defs > 0 => Shape::Def(rng.below(defs)),
                _ => Shape::Int(rng.pick(INTS)),
            };
        }
        let sub = |rng: &mut Rng| Box::new(Shape::random(rng, depth - 1, defs));
        match rng.below(11) {
            0 => Shape::Slice(sub(rng)),
            1 => Shape::Vec(sub(rng)),
            2 => Shape::Array(sub(rng), rng.below(4)),
            3 => {
                let n = 1 + rng.below(3);
                Shape::Tuple((0..n).map(|_| *sub(rng)).collect())
            }
            4 | 5 => Shape::Option(sub(rng)),
            6 | 7 => Shape::Result(sub(rng), sub(rng)),
            8 => Shape::Boxed(sub(rng)),
            9 => Shape::Ref(sub(rng)),
            _ if defs > 0 => Shape::Def(rng.below(defs)),
            _ => Shape::Option(sub(rng)),
        }
    }

    fn ty(&self, defs: &Defs) -> String {
        match self {
            Shape::Int(t) => t.to_string(),
            Shape::F32 => "f32".into(),
            Shape::F64 => "f64".into(),
            Shape::Bool => "bool".into(),
            Shape::Char => "char".into(),
            Shape::Unit => "()".into(),
            Shape::Str => "&'static str".into(),
            Shape::String => "String".into(),
            Shape::BoxStr => "Box<str>".into(),
            Shape::CowStr => "std::borrow::Cow<'static, str>".into(),
            Shape::Slice(t) => format!("&'static [{}]", t.ty(defs)),
            Shape::Vec(t) => format!("Vec<{}>", t.ty(defs)),
            Shape::Array(t, n) => format!("[{}; {n}]", t.ty(defs)),
            Shape::Tuple(ts) => {
                let parts: Vec<String> = ts.iter().map(|t| t.ty(defs)).collect();
                format!("({},)", parts.join(", "))
            }
            Shape::Option(t) => format!("Option<{}>", t.ty(defs)),
            Shape::Result(t, e) => format!("Result<{}, {}>", t.ty(defs), e.ty(defs)),
            Shape::Boxed(t) => format!("Box<{}>", t.ty(defs)),
            Shape::Ref(t) => format!("&'static {}", t.ty(defs)),
            Shape::Def(i) => match &defs.0[*i] {
                Def::Struct(name, _) | Def::Enum(name, _) => name.clone(),
            },
        }
    }

    fn zero_sized(&self, defs: &Defs) -> bool {
        let fields = |f: &Fields| match f {
            Fields::Unit => true,
            Fields::Tuple(ts) => ts.iter().all(|t| t.zero_sized(defs)),
            Fields::Named(fs) => fs.iter().all(|(_, t)| t.zero_sized(defs)),
        };
        match self {
            Shape::Unit => true,
            Shape::Array(t, n) => *n == 0 || t.zero_sized(defs),
            Shape::Tuple(ts) => ts.iter().all(|t| t.zero_sized(defs)),
            Shape::Def(i) => match &defs.0[*i] {
                Def::Struct(_, f) => fields(f),
                Def::Enum(_, vs) => vs.len() == 1 && fields(&vs[0].1),
            },
            _ => false,
        }
    }

    /// A Rust expression of a random value of this shape (in a context that knows the type).
    fn expr(&self, rng: &mut Rng, defs: &Defs) -> String {
        match self {
            Shape::Int(t) => int_expr(rng, t),
            Shape::F32 => match rng.below(4) {
                0 => rng
                    .pick(&["0.0f32", "-0.0f32", "1.5f32", "-2.25e-7f32", "f32::MAX"])
                    .to_string(),
                1 => rng
                    .pick(&["f32::INFINITY", "f32::NAN", "f32::MIN_POSITIVE", "3.0e9f32"])
                    .to_string(),
                _ => format!("f32::from_bits({:#x})", rng.next() as u32),
            },
            Shape::F64 => match rng.below(4) {
                0 => rng
                    .pick(&["0.0f64", "-0.0f64", "1.5f64", "-2.25e-300f64", "f64::MAX"])
                    .to_string(),
                1 => rng
                    .pick(&["f64::NEG_INFINITY", "f64::NAN", "1e16f64", "0.1f64"])
                    .to_string(),
                _ => format!("f64::from_bits({:#x})", rng.next()),
            },
            Shape::Bool => rng.pick(&["true", "false"]).to_string(),
            Shape::Char => {
                let c = random_char(rng);
                format!("{c:?}")
            }
            Shape::Unit => "()".into(),
            Shape::Str => str_lit(rng),
            Shape::String => format!("String::from({})", str_lit(rng)),
            Shape::BoxStr => format!("Box::<str>::from({})", str_lit(rng)),
            Shape::CowStr => {
                if rng.one_in(2) {
                    format!("std::borrow::Cow::Borrowed({})", str_lit(rng))
                } else {
                    format!("std::borrow::Cow::Owned(String::from({}))", str_lit(rng))
                }
            }
            Shape::Slice(t) => {
                let elems = elems_expr(rng, t, defs);
                format!(
                    "{{ let v: Vec<{}> = vec![{elems}]; &*Box::leak(v.into_boxed_slice()) }}",
                    t.ty(defs)
                )
            }
            Shape::Vec(t) => {
                let elems = elems_expr(rng, t, defs);
                format!("{{ let v: Vec<{}> = vec![{elems}]; v }}", t.ty(defs))
            }
            Shape::Array(t, n) => {
                let elems: Vec<String> = (0..*n).map(|_| t.expr(rng, defs)).collect();
                format!(
                    "{{ let a: [{}; {n}] = [{}]; a }}",
                    t.ty(defs),
                    elems.join(", ")
                )
            }
            Shape::Tuple(ts) => {
                let parts: Vec<String> = ts.iter().map(|t| t.expr(rng, defs)).collect();
                format!("({},)", parts.join(", "))
            }
            Shape::Option(t) => {
                if rng.one_in(3) {
                    "None".into()
                } else {
                    format!("Some({})", t.expr(rng, defs))
                }
            }
            Shape::Result(t, e) => {
                if rng.one_in(2) {
                    format!("Ok({})", t.expr(rng, defs))
                } else {
                    format!("Err({})", e.expr(rng, defs))
                }
            }
            Shape::Boxed(t) => format!("Box::new({})", t.expr(rng, defs)),
            Shape::Ref(t) => format!(
                "{{ let r: &'static {} = Box::leak(Box::new({})); r }}",
                t.ty(defs),
                t.expr(rng, defs)
            ),
            Shape::Def(i) => match &defs.0[*i] {
                Def::Struct(name, fields) => format!("{name}{}", fields_expr(rng, fields, defs)),
                Def::Enum(name, variants) => {
                    let (variant, fields) = &variants[rng.below(variants.len())];
                    format!("{name}::{variant}{}", fields_expr(rng, fields, defs))
                }
            },
        }
    }
}

fn int_expr(rng: &mut Rng, t: &str) -> String {
    let bits: u32 = match t {
        "usize" | "isize" => 64,
        _ => t[1..].parse().unwrap(),
    };
    let signed = t.starts_with('i');
    match rng.below(6) {
        0 => format!("{t}::MAX"),
        1 => format!("{t}::MIN"),
        2 => format!("{}{t}", rng.below(10)),
        _ => {
            let raw = (u128::from(rng.next()) << 64) | u128::from(rng.next());
            let raw = if bits == 128 {
                raw
            } else {
                raw & ((1u128 << bits) - 1)
            };
            if signed {
                // Sign-extend, then write it so that a negative literal parses.
                let v = ((raw << (128 - bits)) as i128) >> (128 - bits);
                if v == i128::MIN >> (128 - bits) {
                    format!("{t}::MIN")
                } else {
                    format!("({v}{t})")
                }
            } else {
                format!("{raw}{t}")
            }
        }
    }
}

fn random_char(rng: &mut Rng) -> char {
    loop {
        let c = match rng.below(4) {
            0 => char::from_u32(0x20 + rng.below(0x5f) as u32),
            1 => Some(rng.pick(&['\0', '\n', '\'', '"', '\\', '\u{7f}', '\u{200b}'])),
            2 => char::from_u32(0x80 + rng.below(0x3000) as u32),
            _ => char::from_u32(rng.below(0x11_0000) as u32),
        };
        if let Some(c) = c {
            return c;
        }
    }
}

/// A string literal: mostly short, sometimes longer than the recording's string limit.
fn str_lit(rng: &mut Rng) -> String {
    let len = if rng.one_in(12) {
        STRING_LIMIT + rng.below(20)
    } else {
        rng.below(12)
    };
    let s: String = (0..len)
        .map(|_| {
            if rng.one_in(3) {
                random_char(rng)
            } else {
                char::from_u32(0x61 + rng.below(26) as u32).unwrap()
            }
        })
        .collect();
    format!("{s:?}")
}

fn elems_expr(rng: &mut Rng, t: &Shape, defs: &Defs) -> String {
    let n = if rng.one_in(10) {
        ELEMS_LIMIT + 1 + rng.below(3)
    } else {
        rng.below(4)
    };
    let elems: Vec<String> = (0..n).map(|_| t.expr(rng, defs)).collect();
    elems.join(", ")
}

fn fields_expr(rng: &mut Rng, fields: &Fields, defs: &Defs) -> String {
    match fields {
        Fields::Unit => String::new(),
        Fields::Tuple(ts) => {
            let parts: Vec<String> = ts.iter().map(|t| t.expr(rng, defs)).collect();
            format!("({})", parts.join(", "))
        }
        Fields::Named(fs) => {
            let parts: Vec<String> = fs
                .iter()
                .map(|(n, t)| format!("{n}: {}", t.expr(rng, defs)))
                .collect();
            format!(" {{ {} }}", parts.join(", "))
        }
    }
}

fn random_fields(rng: &mut Rng, defs: usize) -> Fields {
    match rng.below(3) {
        0 => Fields::Unit,
        1 => {
            let n = 1 + rng.below(3);
            Fields::Tuple((0..n).map(|_| Shape::random(rng, 2, defs)).collect())
        }
        _ => {
            let n = 1 + rng.below(3);
            Fields::Named(
                (0..n)
                    .map(|i| (format!("x{i}"), Shape::random(rng, 2, defs)))
                    .collect(),
            )
        }
    }
}

fn fields_decl(fields: &Fields, defs: &Defs) -> String {
    match fields {
        Fields::Unit => String::new(),
        Fields::Tuple(ts) => {
            let parts: Vec<String> = ts.iter().map(|t| t.ty(defs)).collect();
            format!("({})", parts.join(", "))
        }
        Fields::Named(fs) => {
            let parts: Vec<String> = fs
                .iter()
                .map(|(n, t)| format!("{n}: {}", t.ty(defs)))
                .collect();
            format!(" {{ {} }}", parts.join(", "))
        }
    }
}

/// The recording limits the corpus is recorded with, small so that truncation is exercised.
const STRING_LIMIT: usize = 40;
const ELEMS_LIMIT: usize = 6;

struct Function {
    args: Vec<Shape>,
    /// The return type is zero-sized: rustc's DWARF then gives the function no return type, so
    /// nothing is recorded for it.
    zero_sized_return: bool,
}

/// One generated program: its source and its functions.
fn program(rng: &mut Rng, crate_name: &str, functions: usize) -> (String, Vec<Function>) {
    let mut defs = Defs(Vec::new());
    for i in 0..(functions / 8).max(4) {
        let def = if rng.one_in(2) {
            Def::Struct(format!("S{i}"), random_fields(rng, defs.0.len()))
        } else {
            let n = 1 + rng.below(4);
            Def::Enum(
                format!("E{i}"),
                (0..n)
                    .map(|v| (format!("V{v}"), random_fields(rng, defs.0.len())))
                    .collect(),
            )
        };
        defs.0.push(def);
    }
    let mut src = String::new();
    writeln!(src, "//! conformance corpus {crate_name}").unwrap();
    writeln!(src, "#![allow(warnings)]\nuse std::hint::black_box;").unwrap();
    for def in &defs.0 {
        match def {
            Def::Struct(name, fields) => {
                let semi = if matches!(fields, Fields::Named(_)) {
                    ""
                } else {
                    ";"
                };
                writeln!(
                    src,
                    "#[derive(Debug)]\nstruct {name}{}{semi}",
                    fields_decl(fields, &defs)
                )
                .unwrap();
            }
            Def::Enum(name, variants) => {
                let vs: Vec<String> = variants
                    .iter()
                    .map(|(v, f)| format!("{v}{}", fields_decl(f, &defs)))
                    .collect();
                writeln!(src, "#[derive(Debug)]\nenum {name} {{ {} }}", vs.join(", ")).unwrap();
            }
        }
    }
    let mut fns = Vec::new();
    let mut main = String::from("fn main() {\n");
    for i in 0..functions {
        let args: Vec<Shape> = (0..rng.below(4))
            .map(|_| Shape::random(rng, 3, defs.0.len()))
            .collect();
        let ret = Shape::random(rng, 3, defs.0.len());
        let params: Vec<String> = args
            .iter()
            .enumerate()
            .map(|(k, a)| format!("a{k}: {}", a.ty(&defs)))
            .collect();
        let refs: String = (0..args.len()).map(|k| format!("&a{k}, ")).collect();
        writeln!(
            src,
            "#[inline(never)]\nfn f{i}({}) -> {} {{\n    black_box({i}u32);\n    black_box(({refs}));\n    black_box({})\n}}",
            params.join(", "),
            ret.ty(&defs),
            ret.expr(rng, &defs)
        )
        .unwrap();
        let mut call = format!("#[inline(never)]\nfn call{i}() {{\n");
        for (k, a) in args.iter().enumerate() {
            writeln!(
                call,
                "    let a{k}: {} = {};",
                a.ty(&defs),
                a.expr(rng, &defs)
            )
            .unwrap();
            writeln!(call, "    println!(\"@{i} a{k} {{:?}}\", a{k});").unwrap();
        }
        let passed: Vec<String> = (0..args.len())
            .map(|k| format!("black_box(a{k})"))
            .collect();
        writeln!(
            call,
            "    let r = f{i}({});\n    println!(\"@{i} r {{:?}}\", r);\n}}",
            passed.join(", ")
        )
        .unwrap();
        src.push_str(&call);
        writeln!(main, "    call{i}();").unwrap();
        let zero_sized_return = ret.zero_sized(&defs);
        fns.push(Function {
            args,
            zero_sized_return,
        });
    }
    main.push_str("}\n");
    src.push_str(&main);
    (src, fns)
}

/// What `{:?}` prints for `value`, with `WILD` standing for each part not read exactly.
const WILD: char = '\u{0}';

fn debug(value: &Value) -> String {
    let mut out = String::new();
    render(value, &mut out);
    out
}

fn render(value: &Value, out: &mut String) {
    match value {
        Value::Unit => out.push_str("()"),
        Value::Bool { value } => write!(out, "{value}").unwrap(),
        Value::Int { value, .. } => write!(out, "{value}").unwrap(),
        Value::Uint { value, .. } => write!(out, "{value}").unwrap(),
        Value::Float { ty, bits } if ty == "f32" => {
            write!(out, "{:?}", f32::from_bits(*bits as u32)).unwrap()
        }
        Value::Float { bits, .. } => write!(out, "{:?}", f64::from_bits(*bits)).unwrap(),
        Value::Char { value } => write!(out, "{value:?}").unwrap(),
        Value::Str {
            value,
            truncated: false,
            ..
        } => write!(out, "{value:?}").unwrap(),
        Value::Struct { ty, fields } => compose(short_name(ty), fields, out),
        Value::Enum {
            ty,
            variant,
            fields,
        } => {
            if ty.starts_with("alloc::borrow::Cow<") && fields.len() == 1 {
                // `Cow`'s Debug shows what it holds, borrowed or owned.
                render(&fields[0].value, out)
            } else {
                compose(variant, fields, out)
            }
        }
        Value::Tuple { elems, .. } => {
            out.push('(');
            for (i, e) in elems.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                render(e, out);
            }
            if elems.len() == 1 {
                out.push(',');
            }
            out.push(')');
        }
        Value::Seq {
            elems,
            truncated: false,
            ..
        } => {
            out.push('[');
            for (i, e) in elems.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                render(e, out);
            }
            out.push(']');
        }
        Value::Ref { target, .. } => render(target, out),
        Value::Str { .. }
        | Value::Seq { .. }
        | Value::Pointer { .. }
        | Value::Function { .. }
        | Value::Opaque { .. }
        | Value::Unavailable { .. } => out.push(WILD),
    }
}

fn short_name(ty: &str) -> &str {
    let base = ty.split('<').next().unwrap_or(ty);
    base.rsplit("::").next().unwrap_or(base)
}

fn compose(name: &str, fields: &[Field], out: &mut String) {
    out.push_str(name);
    if fields.is_empty() {
        return;
    }
    let tuple = fields.iter().all(|f| f.name.starts_with("__"));
    out.push_str(if tuple { "(" } else { " { " });
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        if !tuple {
            write!(out, "{}: ", f.name).unwrap();
        }
        render(&f.value, out);
    }
    out.push_str(if tuple { ")" } else { " }" });
}

/// Whether `text` matches `pattern`, where each `WILD` in the pattern matches any run of text.
fn wild_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while ti < t.len() {
        if pi < p.len() && p[pi] != WILD && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == WILD {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == WILD)
}

/// Counts of what a check saw.
#[derive(Default, Debug)]
struct Tally {
    values: usize,
    exact: usize,
    marked: usize,
    /// Why parts were not read (`Unavailable` reasons, `Opaque`, truncation...), with counts.
    reasons: std::collections::BTreeMap<String, usize>,
}

fn count_marks(value: &Value, reasons: &mut std::collections::BTreeMap<String, usize>) {
    let mut note = |r: String| *reasons.entry(r).or_default() += 1;
    match value {
        Value::Unavailable { reason, .. } => {
            // Addresses make every reason unique; keep the words.
            let words: String = reason.split(" at 0x").next().unwrap_or(reason).to_string();
            note(words)
        }
        Value::Opaque { ty, .. } => note(format!("opaque {ty}")),
        Value::Pointer { .. } => note("pointer not followed".into()),
        Value::Str {
            truncated: true, ..
        } => note("string truncated".into()),
        Value::Seq {
            truncated: true, ..
        } => note("sequence truncated".into()),
        _ => {}
    }
    match value {
        Value::Struct { fields, .. } | Value::Enum { fields, .. } => {
            fields.iter().for_each(|f| count_marks(&f.value, reasons))
        }
        Value::Tuple { elems, .. } | Value::Seq { elems, .. } => {
            elems.iter().for_each(|e| count_marks(e, reasons))
        }
        Value::Ref { target, .. } => count_marks(target, reasons),
        _ => {}
    }
}

/// Compiles `src` as `name` with `opt` (`"0"` or `"3"`) into `dir`.
fn compile(dir: &Path, name: &str, src: &str, opt: &str) -> PathBuf {
    let file = dir.join(format!("{name}.rs"));
    std::fs::write(&file, src).unwrap();
    let bin = dir.join(name);
    let out = Command::new("rustc")
        .args(["-g", "--edition", "2021", "-C"])
        .arg(format!("opt-level={opt}"))
        .args(["-C", "debug-assertions=off", "-o"])
        .arg(&bin)
        .arg(&file)
        .output()
        .expect("rustc runs");
    assert!(
        out.status.success(),
        "rustc failed on {}: {}",
        file.display(),
        stderr(&out)
    );
    bin
}

/// Records `bin`, then checks every recorded value against what the program printed; returns
/// the mismatches (one line each) and the counts.
fn check(dir: &Path, name: &str, bin: &Path, fns: &[Function]) -> (Vec<String>, Tally) {
    let db = dir.join(format!("{name}.db"));
    let glob = format!("{name}::f*");
    let string_limit = STRING_LIMIT.to_string();
    let elems_limit = ELEMS_LIMIT.to_string();
    let selection = [
        "--filter",
        &glob,
        "--max-string",
        &string_limit,
        "--max-elements",
        &elems_limit,
    ];
    let out = record(&db, &selection, bin, &[]);
    assert!(
        out.status.success(),
        "recording {name} failed: {}",
        stderr(&out)
    );
    let printed = stdout(&out);
    let mut expected: std::collections::HashMap<(usize, String), String> = Default::default();
    for line in printed.lines() {
        let Some(rest) = line.strip_prefix('@') else {
            continue;
        };
        let mut parts = rest.splitn(3, ' ');
        let (Some(id), Some(slot), Some(text)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        expected.insert((id.parse().unwrap(), slot.to_string()), text.to_string());
    }
    let trace = load(&db);
    let mut mismatches = Vec::new();
    let mut tally = Tally::default();
    for (i, f) in fns.iter().enumerate() {
        let path = format!("{name}::f{i}");
        let Some(info) = trace.functions.iter().find(|x| x.path == path) else {
            mismatches.push(format!("{path}: not traced"));
            continue;
        };
        let calls: Vec<_> = trace
            .calls
            .iter()
            .filter(|c| c.function == info.id)
            .collect();
        let [call] = calls.as_slice() else {
            mismatches.push(format!("{path}: {} calls recorded, 1 made", calls.len()));
            continue;
        };
        let mut slots: Vec<(String, Option<&Value>)> = (0..f.args.len())
            .map(|k| {
                let slot = format!("a{k}");
                (slot.clone(), call.arg(&slot))
            })
            .collect();
        slots.push(("r".into(), call.ret.as_ref()));
        for (slot, value) in slots {
            let Some(want) = expected.get(&(i, slot.clone())) else {
                mismatches.push(format!("{path} {slot}: the program printed nothing"));
                continue;
            };
            tally.values += 1;
            let got = match value {
                Some(v) => debug(v),
                // Nothing is stored for `()` and other zero-sized return values.
                None if slot == "r" && f.zero_sized_return => want.clone(),
                None => {
                    mismatches.push(format!("{path} {slot}: not recorded"));
                    continue;
                }
            };
            if !got.contains(WILD) {
                tally.exact += 1;
            } else {
                tally.marked += 1;
                if let Some(v) = value {
                    count_marks(v, &mut tally.reasons);
                }
            }
            if !wild_match(&got, want) {
                mismatches.push(format!(
                    "{path} {slot}: printed {want}\n    recorded {}\n    value {value:?}",
                    got.replace(WILD, "<?>")
                ));
            }
        }
    }
    // The default capture (`auto`: in process where it can) against the ptrace path, call for
    // call: a value the in-process copies missed would be marked there and exact here.
    let ptrace_db = dir.join(format!("{name}-ptrace.db"));
    let mut flags = vec!["--capture", "ptrace"];
    flags.extend_from_slice(&selection);
    let out = record(&ptrace_db, &flags, bin, &[]);
    assert!(
        out.status.success(),
        "recording {name} with --capture ptrace failed: {}",
        stderr(&out)
    );
    let shown = |db: &Path| -> serde_json::Value {
        let out = output_within(
            carve().args(["show", "--format", "json", "--db"]).arg(db),
            RECORD_LIMIT,
        );
        assert!(out.status.success(), "carve show: {out:?}");
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let (default, ptrace) = (
        common::inprocess::calls(&shown(&db)),
        common::inprocess::calls(&shown(&ptrace_db)),
    );
    if default.len() != ptrace.len() {
        mismatches.push(format!(
            "{name}: {} calls recorded by default, {} with --capture ptrace",
            default.len(),
            ptrace.len()
        ));
    }
    for (n, (a, b)) in default.iter().zip(&ptrace).enumerate() {
        if a != b {
            mismatches.push(format!(
                "{name}: call {n} differs from the ptrace path's\n    default {a}\n    ptrace  {b}"
            ));
        }
    }
    (mismatches, tally)
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn recorded_values_print_as_the_program_printed_them_or_are_marked_not_read() {
    let seed = env_number(
        "CARVE_CONFORMANCE_SEED",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64,
    );
    let programs = env_number("CARVE_CONFORMANCE_PROGRAMS", 2) as usize;
    let functions = env_number("CARVE_CONFORMANCE_FUNCTIONS", 260) as usize;
    eprintln!("conformance seed: {seed} (CARVE_CONFORMANCE_SEED={seed} replays it)");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut rng = Rng(seed);
    let sources: Vec<(String, String, Vec<Function>)> = (0..programs)
        .map(|p| {
            let name = format!("conf_{p}");
            let (src, fns) = program(&mut rng, &name, functions);
            (name, src, fns)
        })
        .collect();
    // Build every program both ways, two compilers at a time.
    let jobs: Vec<(usize, String, &str)> = sources
        .iter()
        .enumerate()
        .flat_map(|(p, (name, _, _))| {
            [("0", "debug"), ("3", "opt")].map(|(opt, label)| (p, format!("{name}_{label}"), opt))
        })
        .collect();
    let mut builds: Vec<(String, PathBuf, usize)> = Vec::new();
    for pair in jobs.chunks(2) {
        std::thread::scope(|s| {
            let handles: Vec<_> = pair
                .iter()
                .map(|(p, build_name, opt)| {
                    let src = &sources[*p].1;
                    // The crate name (and so the recorded paths) is the file name.
                    s.spawn(move || (build_name.clone(), compile(dir, build_name, src, opt), *p))
                })
                .collect();
            builds.extend(handles.into_iter().map(|h| h.join().unwrap()));
        });
    }
    let mut failures = Vec::new();
    let mut total = Tally::default();
    let mut shapes = 0;
    for (build_name, bin, p) in &builds {
        let fns = &sources[*p].2;
        shapes += fns.iter().map(|f| f.args.len() + 1).sum::<usize>();
        let (mismatches, tally) = check(dir, build_name, bin, fns);
        eprintln!(
            "{build_name}: {} values, {} exact, {} marked; {} mismatches; marks: {:?}",
            tally.values,
            tally.exact,
            tally.marked,
            mismatches.len(),
            tally.reasons
        );
        total.values += tally.values;
        total.exact += tally.exact;
        total.marked += tally.marked;
        for (r, n) in tally.reasons {
            *total.reasons.entry(r).or_default() += n;
        }
        failures.extend(mismatches);
    }
    eprintln!(
        "{shapes} value shapes ({} functions) checked: {} exact, {} marked as not read",
        builds
            .iter()
            .map(|(_, _, p)| sources[*p].2.len())
            .sum::<usize>(),
        total.exact,
        total.marked
    );
    if !failures.is_empty() {
        let keep = std::env::var("CARVE_CONFORMANCE_KEEP").is_ok();
        if keep {
            let kept = tmp.keep();
            eprintln!("corpus kept in {}", kept.display());
        }
        panic!(
            "seed {seed}: {} recorded values differ from what the program printed \
             (CARVE_CONFORMANCE_SEED={seed} replays it; CARVE_CONFORMANCE_KEEP=1 keeps the \
             programs):\n{}",
            failures.len(),
            failures.join("\n")
        );
    }
}

#[test]
fn the_wildcard_matches_any_run_and_nothing_else_is_loose() {
    let w = WILD.to_string();
    assert!(wild_match(&format!("Some({w})"), "Some(\"abc\")"));
    assert!(wild_match(&format!("[1, {w}]"), "[1, 2, 3]"));
    assert!(!wild_match(&format!("Ok({w})"), "Err(1)"));
    assert!(!wild_match("Ok(1)", "Ok(12)"));
    assert!(wild_match("", ""));
}
