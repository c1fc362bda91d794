//! The trace model: plain data that the recorder produces and the generator and `show` consume.
//!
//! Nothing here knows about SQL or ptrace. Values are trees that keep full Rust type paths, field
//! names and variant names so a literal can be rebuilt from them exactly; anything the recorder
//! could not read exactly is marked (`Opaque`, `Unavailable`, `truncated`) rather than guessed.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

/// A recording session of one program run, numbered by the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct RunId(pub i64);

/// A function of the recorded program, numbered by the recorder (unique within a run).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct FunctionId(pub u32);

/// A source line of the selected code, numbered by the recorder (unique within a run).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct LineId(pub u32);

/// One recorded call, numbered by the recorder in the order calls started (unique within a run).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct CallId(pub u64);

impl std::fmt::Display for RunId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::fmt::Display for FunctionId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::fmt::Display for CallId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// An object of the traced program (what `self` or a reference argument pointed to), numbered
/// by the recorder in the order it was first seen (unique within a run).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ObjectId(pub u64);

/// An object and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObjectInfo {
    pub id: ObjectId,
    /// Full type path (`account::Account`).
    pub type_name: String,
    /// Where it lived when first seen; an address reused by a new object gets a new id.
    pub addr: u64,
    /// The constructor-like call (an associated function of the type returning it, or `Ok` /
    /// `Some` of it) that produced it, when the recording shows one.
    pub created_by: Option<CallId>,
}

/// Which object an argument of a call referred to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArgObject {
    /// The parameter name (`self`, `other`).
    pub arg: String,
    pub object: ObjectId,
}

/// What was run and how it was selected; written when the run starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    /// Absolute path of the executable.
    pub program: String,
    pub args: Vec<String>,
    pub cwd: String,
    pub pid: i32,
    /// Milliseconds since the Unix epoch.
    pub started_at_ms: i64,
    /// The `--filter` globs as given (empty: the program's own crate).
    pub filters: Vec<String>,
    /// The `--exclude` globs as given.
    pub excludes: Vec<String>,
    /// The `--crate` names as given (empty: no crate restriction; also for runs recorded
    /// before schema version 7).
    #[serde(default)]
    pub crates: Vec<String>,
    pub carve_version: String,
    /// Calls equivalent to one stored already were counted as its repeats, not stored
    /// (`carve record`'s default; false with `--all-calls` and for runs recorded before schema
    /// version 9). See [`crate::Store::repeats`].
    #[serde(default)]
    pub distinct_calls: bool,
    /// The cargo features the program's package was built with beyond its defaults, which
    /// tests calling that package need too (set by `cargo carve record`: the test target's
    /// `required-features` and `--features`; empty for other recordings and for runs recorded
    /// before schema version 10).
    #[serde(default)]
    pub features: Vec<String>,
}

/// How the traced process ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ProcessExit {
    /// `exit(code)` or returning from `main`.
    Exited { code: i32 },
    /// Killed by a signal (SIGSEGV, SIGABRT, SIGKILL...).
    Signaled { signal: i32, name: String },
    /// The tracer stopped before the process ended (tracer error or interrupted).
    Lost { reason: String },
}

/// Written when the run ends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunEnd {
    pub exit: ProcessExit,
    pub ended_at_ms: i64,
}

/// Source language of a function, from the DWARF compile unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Language {
    Rust,
    C,
    Other,
}

/// A formal parameter as declared in DWARF.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParamInfo {
    pub name: String,
    /// Full Rust (or C) type name, e.g. `&str`, `alloc::string::String`, `i32`.
    pub type_name: String,
}

/// A traced function of the program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionInfo {
    pub id: FunctionId,
    /// Demangled path without hash, e.g. `expr::lexer::precedence` or
    /// `<abc::A as abc::Answerer>::answer`; for C, the plain name.
    pub path: String,
    /// DW_AT_name: the bare function name.
    pub name: String,
    pub linkage_name: Option<String>,
    pub language: Language,
    /// Source file as an absolute path when DWARF allows it.
    pub decl_file: Option<String>,
    pub decl_line: Option<u32>,
    /// Address of the function's first instruction in the ELF file (not relocated).
    pub low_pc: u64,
    pub params: Vec<ParamInfo>,
    /// `None` for functions returning unit / void.
    pub return_type: Option<String>,
}

/// One value read from the traced process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Value {
    Unit,
    Bool {
        value: bool,
    },
    /// Signed integers; `ty` is `i8`..`i128`, `isize`, or a C name such as `int`.
    Int {
        ty: String,
        #[serde(with = "wide_int::signed")]
        value: i128,
    },
    /// Unsigned integers; `ty` is `u8`..`u128`, `usize`, or a C name.
    Uint {
        ty: String,
        #[serde(with = "wide_int::unsigned")]
        value: u128,
    },
    /// Floats kept as their bits so they round-trip exactly; `ty` is `f32` (low 32 bits) or `f64`.
    Float {
        ty: String,
        bits: u64,
    },
    Char {
        value: char,
    },
    /// `&str`, `String`, or a C string; `truncated` when longer than the recording limit.
    Str {
        ty: String,
        value: String,
        truncated: bool,
    },
    Struct {
        ty: String,
        fields: Vec<Field>,
    },
    Tuple {
        ty: String,
        elems: Vec<Value>,
    },
    /// Arrays, slices, `Vec`, `VecDeque`; `truncated` when only the first elements were read.
    Seq {
        ty: String,
        elems: Vec<Value>,
        truncated: bool,
    },
    /// An enum value including `Option` and `Result`; `fields` are named (`__0`, `__1` for
    /// tuple variants).
    Enum {
        ty: String,
        variant: String,
        fields: Vec<Field>,
    },
    /// A reference, `Box` or other followed pointer; `addr` is the pointee's address.
    Ref {
        ty: String,
        addr: u64,
        target: Box<Value>,
    },
    /// A pointer that was not followed (raw pointer, depth limit, null).
    Pointer {
        ty: String,
        addr: u64,
    },
    /// A function given as a value: a zero-sized function item (`Ord::cmp` passed as `F: Fn..`)
    /// whose function the instance's code names. `path` is the function's, demangled without
    /// hash (`core::cmp::impls::<impl core::cmp::Ord for u32>::cmp`); `ty` its signature.
    Function {
        ty: String,
        path: String,
    },
    /// A value whose type is known but which carve does not decode yet: its raw bytes.
    Opaque {
        ty: String,
        bytes: Vec<u8>,
    },
    /// A value that could not be read at all (optimized out, unreadable memory, no location).
    Unavailable {
        ty: String,
        reason: String,
    },
}

/// Serde forms of `i128` / `u128` that survive self-describing formats such as JSON.
///
/// serde buffers the fields of internally tagged enums like [`Value`] and that buffer has no
/// 128-bit integers, so a plain `i128` outside the 64-bit range would not deserialize. In
/// human-readable formats a value is written as a number when it fits in 64 bits and as a
/// decimal string otherwise (`"170141183460469231731687303715884105727"`); both forms are read.
/// Compact binary formats get the plain 128-bit integer.
mod wide_int {
    use std::fmt;

    use serde::de::{self, Deserializer, Visitor};
    use serde::Serializer;

    struct WideVisitor<T>(std::marker::PhantomData<T>);

    macro_rules! wide_visitor {
        ($t:ty, $what:literal) => {
            impl<'de> Visitor<'de> for WideVisitor<$t> {
                type Value = $t;

                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str($what)
                }

                fn visit_i64<E: de::Error>(self, v: i64) -> Result<$t, E> {
                    <$t>::try_from(v).map_err(|_| E::custom(format_args!("{v} is out of range")))
                }

                fn visit_u64<E: de::Error>(self, v: u64) -> Result<$t, E> {
                    <$t>::try_from(v).map_err(|_| E::custom(format_args!("{v} is out of range")))
                }

                fn visit_i128<E: de::Error>(self, v: i128) -> Result<$t, E> {
                    <$t>::try_from(v).map_err(|_| E::custom(format_args!("{v} is out of range")))
                }

                fn visit_u128<E: de::Error>(self, v: u128) -> Result<$t, E> {
                    <$t>::try_from(v).map_err(|_| E::custom(format_args!("{v} is out of range")))
                }

                fn visit_str<E: de::Error>(self, v: &str) -> Result<$t, E> {
                    v.parse()
                        .map_err(|_| E::custom(format_args!("{v:?} is not a valid {}", $what)))
                }
            }
        };
    }

    wide_visitor!(i128, "an i128 as a number or a decimal string");
    wide_visitor!(u128, "a u128 as a number or a decimal string");

    pub mod signed {
        use super::*;

        pub fn serialize<S: Serializer>(v: &i128, s: S) -> Result<S::Ok, S::Error> {
            match i64::try_from(*v) {
                _ if !s.is_human_readable() => s.serialize_i128(*v),
                Ok(small) => s.serialize_i64(small),
                Err(_) => s.collect_str(v),
            }
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<i128, D::Error> {
            if d.is_human_readable() {
                d.deserialize_any(WideVisitor::<i128>(std::marker::PhantomData))
            } else {
                d.deserialize_i128(WideVisitor::<i128>(std::marker::PhantomData))
            }
        }
    }

    pub mod unsigned {
        use super::*;

        pub fn serialize<S: Serializer>(v: &u128, s: S) -> Result<S::Ok, S::Error> {
            match u64::try_from(*v) {
                _ if !s.is_human_readable() => s.serialize_u128(*v),
                Ok(small) => s.serialize_u64(small),
                Err(_) => s.collect_str(v),
            }
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u128, D::Error> {
            if d.is_human_readable() {
                d.deserialize_any(WideVisitor::<u128>(std::marker::PhantomData))
            } else {
                d.deserialize_u128(WideVisitor::<u128>(std::marker::PhantomData))
            }
        }
    }
}

/// A named member of a struct or enum variant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Field {
    pub name: String,
    pub value: Value,
}

impl Field {
    pub fn new(name: impl Into<String>, value: Value) -> Field {
        Field {
            name: name.into(),
            value,
        }
    }
}

impl Value {
    /// The value's type name as recorded.
    pub fn type_name(&self) -> &str {
        match self {
            Value::Unit => "()",
            Value::Bool { .. } => "bool",
            Value::Char { .. } => "char",
            Value::Int { ty, .. }
            | Value::Uint { ty, .. }
            | Value::Float { ty, .. }
            | Value::Str { ty, .. }
            | Value::Struct { ty, .. }
            | Value::Tuple { ty, .. }
            | Value::Seq { ty, .. }
            | Value::Enum { ty, .. }
            | Value::Ref { ty, .. }
            | Value::Pointer { ty, .. }
            | Value::Function { ty, .. }
            | Value::Opaque { ty, .. }
            | Value::Unavailable { ty, .. } => ty,
        }
    }

    /// True when the value and everything inside it was read completely, so a test may
    /// rebuild or assert it as a literal.
    pub fn is_exact(&self) -> bool {
        match self {
            Value::Unit
            | Value::Bool { .. }
            | Value::Int { .. }
            | Value::Uint { .. }
            | Value::Float { .. }
            | Value::Char { .. }
            | Value::Function { .. } => true,
            Value::Str { truncated, .. } => !truncated,
            Value::Struct { fields, .. } | Value::Enum { fields, .. } => {
                fields.iter().all(|f| f.value.is_exact())
            }
            Value::Tuple { elems, .. } => elems.iter().all(Value::is_exact),
            Value::Seq {
                elems, truncated, ..
            } => !truncated && elems.iter().all(Value::is_exact),
            Value::Ref { target, .. } => target.is_exact(),
            Value::Pointer { .. } | Value::Opaque { .. } | Value::Unavailable { .. } => false,
        }
    }

    /// True for `()`, a `bool`, a number or a `char`.
    pub fn is_scalar(&self) -> bool {
        matches!(
            self,
            Value::Unit
                | Value::Bool { .. }
                | Value::Int { .. }
                | Value::Uint { .. }
                | Value::Float { .. }
                | Value::Char { .. }
        )
    }

    /// True for the scalar and string values that issue #2's generator turns into literals.
    pub fn is_scalar_or_string(&self) -> bool {
        match self {
            Value::Str { truncated, .. } => !truncated,
            other => other.is_scalar(),
        }
    }
}

/// An argument as read at function entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Arg {
    pub name: String,
    pub value: Value,
}

/// How a call ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Outcome {
    /// The function returned normally; the call's `ret` holds the value.
    Returned,
    /// A panic started inside this call (or a callee) and unwound through it.
    Panicked { message: Option<String> },
    /// The frame disappeared without returning (unwinding, longjmp, thread exit).
    Unwound,
    /// The process ended (crash, exit, kill) while the call was still running, or outlived
    /// the command carve ran and was let go with the call still running.
    Unfinished,
}

/// Recorded at function entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallStart {
    pub call: CallId,
    pub parent: Option<CallId>,
    pub function: FunctionId,
    /// Kernel thread id of the thread that made the call.
    pub thread: i32,
    /// Nesting depth among traced calls on this thread (0 for a root).
    pub depth: u32,
    pub args: Vec<Arg>,
    /// The objects `self` and reference arguments referred to.
    #[serde(default)]
    pub objects: Vec<ArgObject>,
    /// When the call started: nanoseconds since the run started, on a monotonic clock.
    #[serde(default)]
    pub at_ns: Option<u64>,
}

/// The effect holding what a returned `&mut` scalar pointed to at the thread's next recorded
/// stop (the caller wrote through it in between: `*map.entry(k).or_insert(0) += 1`).
pub const RESULT_EFFECT: &str = "*result";

/// The effect holding the text a call wrote through its `&mut core::fmt::Formatter` parameter
/// when the formatter wrote to something other than a `String` (stdout, a `PadAdapter`...): the
/// writes caught at the formatter's `dyn Write` while the call was open, exactly (`truncated`
/// past the string limit). Absent when they could not be caught; a `String` buffer is read
/// back in the parameter's own effect instead.
pub const WRITTEN_EFFECT: &str = "*written";

/// Recorded when a call ends (returns, unwinds, or the process ends under it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallEnd {
    pub call: CallId,
    pub outcome: Outcome,
    /// The return value when `outcome` is `Returned` and the function returns something.
    pub ret: Option<Value>,
    /// Field effects: what `self` (for `&self` / `&mut self` methods) and `&mut` arguments point
    /// to once the call returned, by parameter name. Compare with the same-named `args` entry,
    /// whose reference target is the state before the call. An outermost call returning `&mut`
    /// to a scalar also has [`RESULT_EFFECT`]: the value behind it at the thread's next stop;
    /// a formatting call, [`WRITTEN_EFFECT`].
    #[serde(default)]
    pub after: Vec<Arg>,
    /// What the call itself (or code it ran that was not recorded) read that a test cannot
    /// control: `clock: std::time::SystemTime::now`, `env: std::env::var`... Calls it made
    /// that were recorded have their own list.
    #[serde(default)]
    pub touches: Vec<String>,
    /// When the call ended, as [`CallStart::at_ns`]; `None` when that is not known (a frame
    /// seen gone only later: unwound, panicked, or open when the process ended).
    #[serde(default)]
    pub at_ns: Option<u64>,
}

/// A source line with code in one selected function (`--coverage`). A line shared by several
/// functions (a closure and its parent, a generic function's instances) is one `CodeLine` per
/// function, so a hit says which function ran; reads merge them per (file, line).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodeLine {
    pub id: LineId,
    /// The source file as DWARF names it (absolute where the DWARF allows).
    pub file: String,
    pub line: u32,
    pub function: FunctionId,
}

/// The line coverage of one run, as `carve coverage` and the generator read it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Coverage {
    /// Every line with code in the selected functions, by file then line: `true` when it was
    /// reached. Breakpoints are one-shot, so whether a line ran is exact; how often is not
    /// read (`carve coverage --lcov` writes 1 for a reached line).
    pub lines: BTreeMap<String, BTreeMap<u32, bool>>,
    /// Each selected function with lines: its lines with code and how many of them it reached.
    pub functions: Vec<FunctionLines>,
    /// Who reached each line first: the lines each thread reached. A line is charged to the
    /// thread that hit its breakpoint (usually one: the breakpoint is gone afterwards).
    pub threads: Vec<ThreadLines>,
}

impl Coverage {
    /// The selected functions `thread` reached a line of: what a test reached when the thread
    /// is a libtest test's (recorded with `--coverage-per-thread` and `--test-threads=1`; with
    /// plain `--coverage`, only the functions whose lines it reached first).
    pub fn functions_reached_by(&self, thread: &ThreadLines) -> Vec<&FunctionLines> {
        self.functions
            .iter()
            .filter(|f| thread.functions.contains(&f.id))
            .collect()
    }

    /// (lines reached, lines with code) over all files.
    pub fn totals(&self) -> (usize, usize) {
        self.lines.values().fold((0, 0), |(hit, all), lines| {
            (
                hit + lines.values().filter(|r| **r).count(),
                all + lines.len(),
            )
        })
    }
}

/// One selected function's share of a run's coverage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionLines {
    pub id: FunctionId,
    pub path: String,
    pub decl_file: Option<String>,
    pub decl_line: Option<u32>,
    /// Its lines with code, as (file, line).
    pub lines: Vec<(String, u32)>,
    /// How many of them it reached (in this function's code: a closure on the same line is
    /// another function).
    pub reached: usize,
    /// Those it reached, as (file, line), in the order of `lines`.
    pub reached_lines: Vec<(String, u32)>,
}

/// The lines one thread reached first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadLines {
    pub thread: i32,
    /// The kernel's name for the thread (15 bytes at most; see [`TraceEvent::ThreadNamed`]).
    pub name: Option<String>,
    pub lines: BTreeMap<String, BTreeSet<u32>>,
    /// The selected functions whose lines it reached.
    pub functions: BTreeSet<FunctionId>,
}

/// Everything the recorder reports, in the order it happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum TraceEvent {
    /// The functions that may appear in calls (sent before any call that uses them).
    Functions(Vec<FunctionInfo>),
    CallStarted(CallStart),
    CallEnded(CallEnd),
    /// An object seen for the first time (or a new object at a reused address).
    ObjectCreated(ObjectInfo),
    ThreadStarted {
        thread: i32,
    },
    ThreadExited {
        thread: i32,
    },
    /// `--coverage`: the source lines of the selected code (sent once, after `Functions` and
    /// before any `LineReached`). A run with this event is a coverage run.
    CodeLines(Vec<CodeLine>),
    /// `--coverage`: `thread` reached `line` (the first time any thread of the process did,
    /// or at the same moment as that one: breakpoints are one-shot and process-wide).
    LineReached {
        line: LineId,
        thread: i32,
    },
    /// A thread's name as the kernel keeps it (`/proc/PID/task/TID/comm`: at most 15 bytes),
    /// read at its first recorded call or line. libtest names each test's thread after the
    /// test: a name the kernel cut is given in full when it starts exactly one of the
    /// program's own function paths (without the crate), which is how tests are named.
    ThreadNamed {
        thread: i32,
        name: String,
    },
    /// A file-system read the innermost recorded call made, with what was at the path then
    /// (see [`FileRead`]).
    FileRead(FileRead),
    /// The program ended; always the last event of a run.
    RunEnded(RunEnd),
}

/// What a call read from the file system through one of std's read-only functions that take a
/// `&Path` (`metadata`, `read_dir`, `read_to_string`...), and what carve found at that path at
/// the moment of the read (the program stopped), so that a test can build the same files in a
/// temporary directory. Charged, like [`CallEnd::touches`], to the innermost recorded call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRead {
    pub call: CallId,
    /// The std function, by its last name: `metadata`, `symlink_metadata`, `read_dir`,
    /// `canonicalize`, `read`, `read_to_string`, `open` (`File::open`).
    pub op: String,
    /// The path as the program gave it (it may be relative: to the program's directory then).
    pub path: String,
    pub found: Found,
}

/// What was at a [`FileRead`]'s path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Found {
    /// Nothing: the read failed with "not found".
    Missing,
    /// A regular file of `len` bytes; `contents` is `None` when it was longer than the bound
    /// carve copies (the snapshot is then incomplete).
    File { len: u64, contents: Option<Vec<u8>> },
    /// A directory; `entries` when the read listed it (`read_dir`), sorted by name.
    Dir { entries: Option<Vec<DirEntry>> },
    /// A symbolic link, not followed (a test does not rebuild it).
    Symlink { target: String },
    /// What was there could not be told: a relative path, a path that is not UTF-8, an error
    /// other than "not found" (the reason says which).
    NotRead { reason: String },
}

impl Found {
    /// Whether a test can build exactly what the read saw.
    pub fn is_complete(&self) -> bool {
        match self {
            Found::Missing | Found::Dir { .. } => true,
            Found::File { contents, .. } => contents.is_some(),
            Found::Symlink { .. } | Found::NotRead { .. } => false,
        }
    }
}

/// One entry of a listed directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirEntry {
    pub name: String,
    pub kind: EntryKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    File,
    Dir,
    Symlink,
    /// A socket, FIFO or device.
    Other,
}

/// Where the recorder sends what it sees (ripgrep's `Sink`): the store implements it with a
/// writer thread; tests collect events in a `Vec`.
pub trait TraceSink {
    fn record(&mut self, event: TraceEvent);
}

/// A sink that keeps nothing: for runs judged by how the program ended, or processes followed
/// without being recorded.
impl TraceSink for () {
    fn record(&mut self, _: TraceEvent) {}
}

impl TraceSink for Vec<TraceEvent> {
    fn record(&mut self, event: TraceEvent) {
        self.push(event);
    }
}

/// A stored call, as read back for the generator and `show`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Call {
    pub id: CallId,
    pub parent: Option<CallId>,
    pub function: FunctionId,
    pub thread: i32,
    pub depth: u32,
    pub args: Vec<Arg>,
    pub outcome: Outcome,
    pub ret: Option<Value>,
    /// The state behind `self` and `&mut` arguments after the call returned (see [`CallEnd`]).
    #[serde(default)]
    pub after: Vec<Arg>,
    /// The objects `self` and reference arguments referred to.
    #[serde(default)]
    pub objects: Vec<ArgObject>,
    /// What it read that a test cannot control, itself (see [`CallEnd::touches`]).
    #[serde(default)]
    pub touches: Vec<String>,
}

impl Call {
    /// The value of argument `name` at entry.
    pub fn arg(&self, name: &str) -> Option<&Value> {
        self.args.iter().find(|a| a.name == name).map(|a| &a.value)
    }

    /// The object argument `name` referred to, when it was a reference to one.
    pub fn object(&self, name: &str) -> Option<ObjectId> {
        self.objects
            .iter()
            .find(|o| o.arg == name)
            .map(|o| o.object)
    }

    /// What argument `name` pointed to after the call, when it was recorded.
    pub fn after(&self, name: &str) -> Option<&Value> {
        self.after.iter().find(|a| a.name == name).map(|a| &a.value)
    }
}

/// A stored run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub id: RunId,
    pub info: RunInfo,
    /// `None` when the recorder itself died before the run ended.
    pub end: Option<RunEnd>,
}

/// One run with its functions and calls, loaded whole (calls in start order).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    pub run: Run,
    pub functions: Vec<FunctionInfo>,
    pub calls: Vec<Call>,
    /// Objects in the order they were first seen.
    #[serde(default)]
    pub objects: Vec<ObjectInfo>,
    /// The file-system reads of the run's calls, in the order they happened (see
    /// [`FileRead`]).
    #[serde(default)]
    pub file_reads: Vec<FileRead>,
}

impl Trace {
    pub fn function(&self, id: FunctionId) -> Option<&FunctionInfo> {
        self.functions.iter().find(|f| f.id == id)
    }

    /// Direct children of `call` (or the roots when `None`), in start order.
    pub fn children(&self, call: Option<CallId>) -> impl Iterator<Item = &Call> {
        self.calls.iter().filter(move |c| c.parent == call)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(value: &Value) -> String {
        serde_json::to_string(value).expect("serialize")
    }

    #[test]
    fn integers_that_fit_in_64_bits_are_json_numbers() {
        let v = Value::Int {
            ty: "i32".into(),
            value: -3,
        };
        assert_eq!(json(&v), r#"{"kind":"int","ty":"i32","value":-3}"#);
        let v = Value::Uint {
            ty: "u64".into(),
            value: u128::from(u64::MAX),
        };
        assert_eq!(
            json(&v),
            r#"{"kind":"uint","ty":"u64","value":18446744073709551615}"#
        );
    }

    #[test]
    fn wider_integers_are_json_strings_and_read_back() {
        for v in [
            Value::Int {
                ty: "i128".into(),
                value: i128::MIN,
            },
            Value::Uint {
                ty: "u128".into(),
                value: u128::MAX,
            },
        ] {
            let text = json(&v);
            assert!(text.contains(r#""value":""#), "{text}");
            let back: Value = serde_json::from_str(&text).expect("deserialize");
            assert_eq!(back, v);
        }
    }

    #[test]
    fn an_out_of_range_integer_is_an_error_not_a_panic() {
        let text = r#"{"kind":"uint","ty":"u8","value":-1}"#;
        assert!(serde_json::from_str::<Value>(text).is_err());
        let text = r#"{"kind":"int","ty":"i128","value":"12x"}"#;
        assert!(serde_json::from_str::<Value>(text).is_err());
    }
}
