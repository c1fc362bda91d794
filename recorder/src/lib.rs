//! carve's recorder: runs a native program under ptrace, breaks on the selected functions and
//! reads their arguments and return values through DWARF, reporting calls to a `TraceSink`.
//!
//! The only crate of carve that touches ptrace and the live process.

mod abi;
mod addr;
mod capture;
mod decode;
mod dwarf;
mod ending;
mod error;
mod fmt_writes;
mod forced;
mod handover;
mod inject;
mod inprocess;
mod lines;
mod location;
mod objects;
mod panic_message;
mod process;
mod select;
mod sigtrap;
mod snapshot;
mod sources;
mod stepping;
mod tracer;
mod types;
mod untraced;
mod unwind;

pub use addr::{FileAddr, LoadBias, RuntimeAddr};
pub use decode::Limits;
pub use dwarf::{FunctionEntry, LineTable};
pub use error::RecordError;
pub use forced::{Extreme, ForcedValue};
pub use inprocess::{patchable, probe, probe_with, ProbeRecord, ProbeRun, Sharing};
pub use select::Selection;
pub use tracer::RecordSummary;

/// The line tables of the executable at `binary`, to place many addresses one at a time:
/// `carve explore` places the coverage its harness reports with them.
pub fn line_table(binary: &std::path::Path) -> Result<LineTable, RecordError> {
    Ok(dwarf::DebugInfo::load(binary)?.line_table())
}

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use carve_storage::{FunctionId, FunctionInfo, ParamInfo, TraceEvent, TraceSink};
use nix::unistd::Pid;
use tracer::PanicHooks;

/// An executable and its debug information, ready to be recorded. A clone shares the file's
/// bytes and DWARF sections: cheaper than loading it again for each of many recordings.
#[derive(Clone)]
pub struct Program {
    info: dwarf::DebugInfo,
}

impl Program {
    /// Reads `path`'s ELF and DWARF. Fails with a one-line error when the file is missing, not
    /// executable, not ELF, or has no debug info.
    pub fn load(path: &Path) -> Result<Program, RecordError> {
        let meta = std::fs::metadata(path).map_err(|source| RecordError::ProgramUnreadable {
            path: path.to_path_buf(),
            source,
        })?;
        if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
            return Err(RecordError::NotExecutable {
                path: path.to_path_buf(),
            });
        }
        check_machine(path)?;
        Ok(Program {
            info: dwarf::DebugInfo::load(path)?,
        })
    }

    pub fn path(&self) -> &Path {
        self.info.path()
    }

    /// Every function with code and debug info in the program.
    pub fn functions(&self) -> &[FunctionEntry] {
        self.info.functions()
    }

    /// `f`'s parameters and return type, read from DWARF and lowered to full type names (what
    /// a recording stores about it), without running anything.
    pub fn signature(&mut self, f: &FunctionEntry) -> Result<FunctionInfo, RecordError> {
        let detail = self.info.detail(f)?;
        Ok(function_info(FunctionId(0), f, &detail, &self.info.types))
    }

    /// The values `f` can be forced to return without running its body (see
    /// [`RecordOptions::force_returns`]), or why there are none: unit, `true`/`false`, `0`/`1`,
    /// `0.0`/`1.0`, `None`, empty `String`/`Vec`/`&str`/slices, and `Some`/`Ok` of those.
    pub fn extremes(&mut self, f: &FunctionEntry) -> Result<Vec<Extreme>, String> {
        let detail = self.info.detail(f).map_err(|e| e.to_string())?;
        if !detail.rust_abi {
            return Err("a C function (only the Rust return convention is known)".into());
        }
        let types = &self.info.types;
        let all = forced::extremes(types, detail.return_type)?;
        // Only those the return convention can be worked out for.
        if let (Some(ty), Some(first)) = (detail.return_type, all.first()) {
            let bytes = forced::value_bytes(types, ty, &first.value)?;
            abi::place_return(types, ty, &bytes, Some(0))?;
        }
        Ok(all)
    }

    /// The paths of the functions `selection` matches that have no code of their own in the
    /// program (every call of them inlined into its caller, as `#[inline(always)]` is even in
    /// debug builds): no breakpoint can stop in them, so none of their calls is recorded.
    pub fn inlined_only(&self, selection: &Selection) -> Vec<String> {
        let mut out: Vec<String> = (self.info.inlined_only().into_iter())
            .filter(|f| selection.matches(f))
            .map(|f| f.path)
            .collect();
        out.sort();
        out
    }

    /// The functions `selection` picks; an error listing some that exist when it picks none.
    /// For each function `options` select, whether it is captured in process (`None`) or
    /// keeps the ptrace path, and why: the rule `carve record` applies.
    pub fn capture_paths(
        &mut self,
        options: &RecordOptions,
    ) -> Result<Vec<(String, Option<&'static str>)>, RecordError> {
        let chosen = self.traced(options)?;
        let mut out = Vec::with_capacity(chosen.len());
        for (f, selected) in chosen {
            let Ok(detail) = self.info.detail(&f) else {
                continue;
            };
            let cfa = unwind::cfa_rule(&self.info, detail.breakpoint.0);
            let types = &self.info.types;
            let acts = fmt_writes::formatter_param(types, &detail.params).is_some()
                || forced_value(options, &f).is_some();
            let why = in_process_plan(&self.info, &f, &detail, cfa, options, acts, selected).err();
            out.push((f.path.clone(), why));
        }
        Ok(out)
    }

    /// The functions `selection` picks, then the closures the program passes to them that it
    /// does not pick (`false`): a closure's calls are recorded only inside a recorded call,
    /// nested under it, so a test of the call that got the closure can replay what it answered.
    /// With [`RecordOptions::only_at`], only the picked functions at those addresses.
    fn traced(&self, options: &RecordOptions) -> Result<Vec<(FunctionEntry, bool)>, RecordError> {
        let mut chosen = self.select(&options.selection)?;
        if !options.only_at.is_empty() {
            chosen.retain(|f| options.only_at.contains(&f.low_pc));
            return Ok(chosen.into_iter().map(|f| (f.clone(), true)).collect());
        }
        let picked: std::collections::HashSet<FileAddr> = chosen.iter().map(|f| f.low_pc).collect();
        let mut passed = self.info.closures_passed_to(&chosen);
        passed.retain(|f| !picked.contains(&f.low_pc));
        passed.sort_by_key(|f| f.low_pc);
        passed.dedup_by_key(|f| f.low_pc);
        let chosen = chosen.into_iter().map(|f| (f.clone(), true));
        Ok(chosen
            .chain(passed.into_iter().map(|f| (f.clone(), false)))
            .collect())
    }

    pub fn select(&self, selection: &Selection) -> Result<Vec<&FunctionEntry>, RecordError> {
        let mut chosen: Vec<&FunctionEntry> = self
            .functions()
            .iter()
            .filter(|f| selection.selects(f))
            .collect();
        // One breakpoint per address (DWARF may describe one function twice).
        chosen.sort_by_key(|f| f.low_pc);
        chosen.dedup_by_key(|f| f.low_pc);
        if !chosen.iter().any(|f| selection.matches(f)) {
            let mut own: Vec<&str> = self
                .functions()
                .iter()
                .filter(|f| f.own_code)
                .map(|f| f.path.as_str())
                .collect();
            own.sort_unstable();
            own.dedup();
            let examples = if own.is_empty() {
                "(no functions from the program's own sources)".to_string()
            } else {
                let mut s = own.iter().take(12).copied().collect::<Vec<_>>().join(", ");
                if own.len() > 12 {
                    s.push_str(&format!(" … ({} in all)", own.len()));
                }
                s
            };
            return Err(RecordError::NothingSelected {
                path: self.path().to_path_buf(),
                filters: match (selection.filters.is_empty(), selection.crates.is_empty()) {
                    (true, true) => "--filter (default: own code)".into(),
                    (false, _) if selection.crates.is_empty() => {
                        format!("--filter {}", selection.filters.join(" --filter "))
                    }
                    _ => selection
                        .filters
                        .iter()
                        .map(|f| format!("--filter {f}"))
                        .chain(selection.crates.iter().map(|c| format!("--crate {c}")))
                        .collect::<Vec<_>>()
                        .join(" "),
                },
                examples,
            });
        }
        Ok(chosen)
    }
}

/// The value `options` force `f` to return, if any: by its address first, then by glob.
fn forced_value<'o>(options: &'o RecordOptions, f: &FunctionEntry) -> Option<&'o ForcedValue> {
    let by_address = options.force_at.iter().find(|(at, _)| *at == f.low_pc);
    let by_glob = || {
        options
            .force_returns
            .iter()
            .find(|(glob, _)| carve_storage::matches_function(glob, &f.path, &f.name))
            .map(|(_, value)| value)
    };
    by_address.map(|(_, value)| value).or_else(by_glob)
}

/// The bytes `f` returns when forced to return `value`: checked against its return type and
/// return convention before anything runs.
fn forced_bytes(
    f: &FunctionEntry,
    detail: &dwarf::FunctionDetail,
    types: &types::TypeTable,
    value: &ForcedValue,
) -> Result<Vec<u8>, RecordError> {
    let ret = detail.return_type;
    if let ForcedValue::Int(_) = value {
        // `--force-return GLOB=N`: integers only.
        let integer = ret.and_then(|t| types.get(t)).is_some_and(|t| {
            matches!(
                t.kind,
                types::TypeKind::Base(types::BaseKind::Signed | types::BaseKind::Unsigned)
            ) && t.size <= 8
        });
        if !integer {
            return Err(RecordError::CannotForce {
                function: f.path.clone(),
            });
        }
    }
    let refuse = |reason: String| RecordError::CannotForceValue {
        function: f.path.clone(),
        value: value.to_string(),
        reason,
    };
    if !detail.rust_abi {
        return Err(refuse("it is a C function".into()));
    }
    let Some(ty) = ret else {
        return match value {
            ForcedValue::Unit => Ok(Vec::new()),
            _ => Err(refuse("it returns ()".into())),
        };
    };
    let bytes = forced::value_bytes(types, ty, value).map_err(refuse)?;
    abi::place_return(types, ty, &bytes, Some(0)).map_err(refuse)?;
    Ok(bytes)
}

/// Refuses an ELF file for another machine or word size (a 32-bit x86 program would run, and
/// be read with the wrong ABI); anything not ELF is left to the DWARF loader to name.
fn check_machine(path: &Path) -> Result<(), RecordError> {
    use std::io::Read;
    let mut header = [0u8; 20];
    // Too short to be ELF, or unreadable: the loader says which, with the reason.
    let read = std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut header));
    if read.is_err() || header[..4] != *b"\x7fELF" {
        return Ok(());
    }
    let machine = match header[5] {
        2 => u16::from_be_bytes([header[18], header[19]]),
        _ => u16::from_le_bytes([header[18], header[19]]),
    };
    let found = match (header[4], machine) {
        (2, 62) => return Ok(()),
        (1, 3) => "a 32-bit x86 (i386) ELF executable".to_string(),
        (1, 62) => "a 32-bit x86-64 (x32) ELF executable".to_string(),
        (2, 183) => "an AArch64 ELF executable".to_string(),
        (1, 40) => "a 32-bit ARM ELF executable".to_string(),
        (1, m) => format!("a 32-bit ELF executable for machine {m}"),
        (_, m) => format!("an ELF executable for machine {m}"),
    };
    Err(RecordError::WrongArchitecture {
        path: path.to_path_buf(),
        found,
    })
}

/// How to record.
#[derive(Debug, Clone)]
pub struct RecordOptions {
    pub selection: Selection,
    pub limits: Limits,
    /// After this many recorded calls of one function, its breakpoint is removed (in process:
    /// its trampolines stop capturing, see `inprocess::Limits`).
    pub max_calls_per_function: Option<u64>,
    /// Functions (by glob, as `--filter`) whose body is skipped: each call returns the value
    /// given instead (an extreme transformation). `ForcedValue::Int` is accepted only for
    /// functions returning an integer; other values must fit the return type exactly
    /// ([`Program::extremes`] lists those that do).
    pub force_returns: Vec<(String, ForcedValue)>,
    /// Functions forced as `force_returns` does, named by their file address
    /// (`FunctionEntry::low_pc`): one instance of a generic function, whose instances share a
    /// path and may return different types.
    pub force_at: Vec<(FileAddr, ForcedValue)>,
    /// When not empty, of the functions the selection picks only those at these file
    /// addresses (`FunctionEntry::low_pc`) are traced: one instance of a generic function,
    /// whose instances share a path (`carve assess` forces one instance at a time).
    pub only_at: Vec<FileAddr>,
    /// Run carve and a single-threaded program on one CPU (much cheaper ptrace stops); both are
    /// unpinned as soon as the program starts a second thread.
    pub pin_cpu: bool,
    /// Also record which source lines of the selected functions ran (one-shot breakpoints on
    /// each line-table row's first address), as `CodeLines` and `LineReached` events.
    pub coverage: bool,
    /// With `coverage`: arm every line again whenever the program starts a thread, so each
    /// thread's lines are its own (libtest runs each test on a thread of its own; with
    /// `--test-threads=1` one at a time, so the lines of each test are exactly its own).
    pub coverage_per_thread: bool,
    /// The program's stdout and stderr go to this file (created or truncated) instead of
    /// carve's own.
    pub output_to: Option<std::path::PathBuf>,
    /// Only the selected functions' entries stop the program: no breakpoint on the panic
    /// machinery or on the functions that read the world (`sources.rs`). For runs that only
    /// act (`force_returns`) and are judged by their exit, not by what they record.
    pub entries_only: bool,
    /// Where calls are captured: ptrace stops, or in the program itself for the functions
    /// the in-process path covers (docs/inprocess-capture.md).
    pub capture: CaptureMode,
}

/// How calls are captured (`carve record --capture`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CaptureMode {
    /// Two ptrace stops per call (entry and return breakpoints).
    #[default]
    Ptrace,
    /// Functions whose entry and every `ret` can be patched and whose parameters and result
    /// the capture programs cover are captured in process (no stop per call); every other
    /// selected function keeps the ptrace path.
    InProcess,
}

impl Default for RecordOptions {
    fn default() -> Self {
        RecordOptions {
            selection: Selection::default(),
            limits: Limits::default(),
            max_calls_per_function: None,
            force_returns: Vec::new(),
            force_at: Vec::new(),
            only_at: Vec::new(),
            pin_cpu: true,
            coverage: false,
            coverage_per_thread: false,
            output_to: None,
            entries_only: false,
            capture: CaptureMode::Ptrace,
        }
    }
}

/// A program a traced process started running: at `exec`, or a forked child with
/// `--follow-forks`. What the caller needs to open a run for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launched {
    pub pid: i32,
    /// The executable (`/proc/PID/exe`).
    pub program: PathBuf,
    /// Its arguments, without `argv[0]`.
    pub args: Vec<String>,
    pub cwd: PathBuf,
    /// A forked child going on with its parent's program (`--follow-forks`), not an `exec`.
    pub forked: bool,
}

/// Makes the sink of a new run for a program a traced process launched (see [`Launched`]);
/// `None` lets that program run untraced.
pub type RunSinks<'f> = &'f (dyn Fn(&Launched) -> Option<Box<dyn TraceSink + Send>> + Sync);

/// A program started under ptrace and stopped before its first instruction.
pub struct Recording {
    /// `None` for a launcher: a program without debug info (or selecting nothing) that is only
    /// run to record the programs it runs.
    program: Option<Program>,
    path: PathBuf,
    pid: Pid,
    /// carve's CPU affinity before it pinned itself (and so the program) to one CPU.
    pinned_from: Option<nix::sched::CpuSet>,
    options: RecordOptions,
    started: bool,
}

impl Recording {
    /// Starts `program` with `args` (stdin/stdout/stderr inherited) stopped at its entry.
    /// Nothing runs until [`Recording::run`]; dropping the recording kills the process.
    pub fn spawn(
        program: Program,
        args: &[OsString],
        options: RecordOptions,
    ) -> Result<Recording, RecordError> {
        program.select(&options.selection)?;
        let path = program.path().to_path_buf();
        let pid = process::spawn(&path, args, options.output_to.as_deref())?;
        Ok(Recording {
            program: Some(program),
            path,
            pid,
            pinned_from: None,
            options,
            started: false,
        })
    }

    /// Starts the executable at `path`, whose own code is not recorded (it has no debug info,
    /// or nothing in it is selected: `cargo`, a shell), to record the programs it runs (see
    /// [`Recording::run_following`]).
    pub fn spawn_launcher(
        path: &Path,
        args: &[OsString],
        options: RecordOptions,
    ) -> Result<Recording, RecordError> {
        let meta = std::fs::metadata(path).map_err(|source| RecordError::ProgramUnreadable {
            path: path.to_path_buf(),
            source,
        })?;
        if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
            return Err(RecordError::NotExecutable {
                path: path.to_path_buf(),
            });
        }
        let pid = process::spawn(path, args, options.output_to.as_deref())?;
        Ok(Recording {
            program: None,
            path: path.to_path_buf(),
            pid,
            pinned_from: None,
            options,
            started: false,
        })
    }

    pub fn pid(&self) -> i32 {
        self.pid.as_raw()
    }

    /// Runs the program to its end, reporting functions, calls and the exit to `sink`. A
    /// process it forks runs untraced; if it calls `exec`, tracing stops there.
    /// A recording that fails before the program runs (a value it cannot force, breakpoints
    /// it cannot set) kills the program, as dropping an unstarted one does.
    pub fn run(mut self, sink: &mut dyn TraceSink) -> Result<RecordSummary, RecordError> {
        let Some(program) = self.program.take() else {
            return Err(RecordError::NoDebugInfo {
                path: self.path.clone(),
            });
        };
        let image = Image::prepare(program, self.pid, &self.options)?;
        image.announce(sink, &self.options);
        let mut tracer = image.tracer(self.pid, &self.options, sink)?;
        self.started = true;
        if self.options.pin_cpu {
            self.pinned_from = process::pin_to_current_cpu(self.pid);
        }
        tracer.pinned_from(self.pinned_from);
        let summary = tracer.run();
        if let Some(mask) = &self.pinned_from {
            process::unpin(Pid::from_raw(0), mask);
        }
        summary.map(|end| end.summary)
    }

    /// Runs the program and everything it starts to the end. The program, and each program a
    /// traced process runs through `exec`, is recorded as a run of its own, into the sink
    /// `runs` makes for it, when its debug info has functions the selection picks; the others
    /// run with no breakpoint (carve sees only their forks, execs and exits). A forked child
    /// is followed the same way; with `record_forks` it is also recorded as a run of its own
    /// until it calls `exec`, with the breakpoints it inherited (`--follow-forks`). Returns
    /// once the first process ended: the processes it left running (daemons) are let go
    /// then, their runs ended as having outlived it (see `ending.rs`); the summary's exit is
    /// the first process's.
    pub fn run_following(
        mut self,
        runs: RunSinks<'_>,
        record_forks: bool,
    ) -> Result<RecordSummary, RecordError> {
        let (image, sink) = match self.program.take() {
            Some(program) => {
                let image = Image::prepare(program, self.pid, &self.options)?;
                let sink = runs(&launched(self.pid));
                if self.options.pin_cpu {
                    // Only this thread and the program, once the run's sink exists: threads
                    // started before (such as the store's writer, started by `runs`) keep
                    // running on the other CPUs instead of taking turns with the tracer.
                    self.pinned_from = process::pin_to_current_cpu(self.pid);
                }
                match sink {
                    Some(mut sink) => {
                        image.announce(&mut *sink, &self.options);
                        (Some(Arc::new(image)), Some(sink))
                    }
                    None => (None, None),
                }
            }
            None => (None, None),
        };
        // From here the driver owns the process: it ends or is let go with the run.
        self.started = true;
        let driver = Driver {
            spawned: self.pid,
            runs,
            options: &self.options,
            record_forks,
            ending: ending::Ending::new(),
        };
        let pinned_from = self.pinned_from;
        let summary = std::thread::scope(|scope| {
            let summary = drive(
                scope,
                &driver,
                self.pid,
                image,
                sink,
                Start::Spawned(pinned_from),
            );
            // The command has ended (and is reaped): what it left running is let go.
            driver.ending.finish();
            summary
        });
        if let Some(mask) = &self.pinned_from {
            process::unpin(Pid::from_raw(0), mask);
        }
        summary
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        if !self.started {
            let _ = nix::sys::signal::kill(self.pid, nix::sys::signal::Signal::SIGKILL);
            let _ = nix::sys::wait::waitpid(self.pid, None);
        }
    }
}

/// One program as loaded into one process, ready to trace: what DWARF says about its selected
/// functions, where they are, and the full names its tests may have. Shared (read-only) with
/// the forked children that inherit its breakpoints.
struct Image {
    types: types::TypeTable,
    traced: Vec<tracer::Traced>,
    infos: Vec<FunctionInfo>,
    line_plan: lines::LinePlan,
    panic: PanicHooks,
    sources: Vec<sources::Source>,
    entry: FileAddr,
    bias: LoadBias,
    /// The program's own function paths without their crate: how libtest names its tests.
    test_names: Vec<String>,
    /// The `core::fmt::Write` methods, for the text formatting calls write (`fmt_writes.rs`).
    write_methods: fmt_writes::WriteMethods,
}

impl Image {
    /// The program `pid` runs now (at `exec`), when its debug info has functions the
    /// selection picks; `None` for any program carve does not record (no debug info, not
    /// ELF, nothing selected).
    fn load(path: &Path, pid: Pid, options: &RecordOptions) -> Option<Image> {
        if !Image::may_select(path, options) {
            return None;
        }
        let program = Program::load(path).ok()?;
        program.select(&options.selection).ok()?;
        Image::prepare(program, pid, options).ok()
    }

    /// False when the program at `path` cannot have functions `options` select, told from its
    /// ELF section table and DWARF unit headers alone (cheap, unlike loading it): no debug
    /// info (`cc`, `ld`, a shell), not an ELF file, or, without `--filter`, built from the
    /// standard library's sources alone (cargo, rustc): only own code or a user's crate is
    /// selected then, and such a program has neither.
    fn may_select(path: &Path, options: &RecordOptions) -> bool {
        let std_crates = [
            "std",
            "core",
            "alloc",
            "compiler_builtins",
            "test",
            "proc_macro",
        ];
        let names_std = (options.selection.crates.iter()).any(|c| std_crates.contains(&c.as_str()));
        let std_selectable = !options.selection.filters.is_empty() || names_std;
        dwarf::may_have_selectable(path, std_selectable)
    }

    /// Reads the details of the selected functions of `program`, loaded in `pid`.
    fn prepare(
        mut program: Program,
        pid: Pid,
        options: &RecordOptions,
    ) -> Result<Image, RecordError> {
        let bias = process::load_bias(
            pid,
            program.path(),
            program.info.first_load_vaddr,
            program.info.is_pie,
        )?;
        program.info.types.set_load_bias(bias);
        let chosen = program.traced(options)?;
        let mut infos = Vec::with_capacity(chosen.len());
        let mut traced = Vec::with_capacity(chosen.len());
        let mut traced_entries = Vec::with_capacity(chosen.len());
        for (i, (f, selected)) in chosen.iter().enumerate() {
            let id = FunctionId(i as u32 + 1);
            let detail = match program.info.detail(f) {
                Ok(d) => d,
                Err(_) => continue, // unreadable DWARF for one function: skip it, trace the rest
            };
            let cfa = unwind::cfa_rule(&program.info, detail.breakpoint.0);
            let float_return = detail
                .return_type
                .is_some_and(|t| abi::uses_float_registers(&program.info.types, t));
            let types = &program.info.types;
            let forced_return = match forced_value(options, f) {
                Some(value) => Some((f.path.clone(), forced_bytes(f, &detail, types, value)?)),
                None => None,
            };
            infos.push(function_info(id, f, &detail, types));
            let formatter = fmt_writes::formatter_param(types, &detail.params);
            let acts = forced_return.is_some() || formatter.is_some();
            let in_process =
                in_process_plan(&program.info, f, &detail, cfa, options, acts, *selected)
                    .ok()
                    .map(Arc::new);
            // A passed closure's lines are the program's, not the selection's.
            if *selected {
                traced_entries.push(f);
            }
            traced.push(tracer::Traced {
                id,
                detail,
                cfa,
                max_calls: options.max_calls_per_function,
                calls: 0,
                float_return,
                constructs: objects::constructed_type(&f.path),
                matched: options.selection.matches(f),
                passed_closure: !selected,
                forced_return,
                formatter,
                in_process,
            });
        }
        let line_plan = if options.coverage {
            let mut rows = program.info.code_rows(&traced_entries);
            let mut ids: Vec<FunctionId> = traced
                .iter()
                .filter(|t| !t.passed_closure)
                .map(|t| t.id)
                .collect();
            let mut files: std::collections::HashSet<String> = traced_entries
                .iter()
                .filter_map(|f| f.decl_file.clone())
                .collect();
            if options.only_at.is_empty() {
                let next = FunctionId(chosen.len() as u32 + 1);
                let inlined = inlined_lines(&mut program, options, next);
                let first = ids.len();
                for (info, file) in inlined.functions {
                    ids.push(info.id);
                    files.extend(file);
                    infos.push(info);
                }
                // A line of a function only inlined is that function's, wherever it was
                // inlined: in a traced function's code too.
                let theirs: std::collections::HashSet<FileAddr> =
                    inlined.rows.iter().map(|r| r.addr).collect();
                rows.retain(|r| !theirs.contains(&r.addr));
                rows.extend(inlined.rows.into_iter().map(|r| dwarf::CodeRow {
                    function: first + r.function,
                    ..r
                }));
                rows.sort_by_key(|r| r.addr);
            }
            let files = files.iter().map(String::as_str).collect();
            lines::plan(&rows, &ids, &files)
        } else {
            lines::LinePlan::default()
        };
        let hook = |name: &str| {
            (!options.entries_only)
                .then(|| program.info.symbol(name))
                .flatten()
        };
        let panic = PanicHooks {
            unwinding: hook("__rustc::rust_panic"),
            message: hook("core::panicking::panic_fmt"),
            message_str: hook("std::panicking::begin_panic::<&str>"),
        };
        let sources = if options.entries_only {
            Vec::new()
        } else {
            let info = &program.info;
            sources::with_path_reads(sources::find(info.symbols()), info.symbols(), |addr| {
                // Enough for the 32 instructions `path_registers` looks at, short of the end.
                [256, 128, 64]
                    .into_iter()
                    .find_map(|len| info.code(addr, FileAddr(addr.0 + len)))
            })
        };
        let test_names = test_names(program.functions());
        let write_methods = if traced.iter().any(|t| t.formatter.is_some()) {
            program.info.write_methods()
        } else {
            fmt_writes::WriteMethods::default()
        };
        Ok(Image {
            types: std::mem::take(&mut program.info.types),
            traced,
            infos,
            line_plan,
            panic,
            sources,
            entry: program.info.entry,
            bias,
            test_names,
            write_methods,
        })
    }

    /// Sends what a run of this program starts with: its function table (and lines).
    fn announce(&self, sink: &mut dyn TraceSink, options: &RecordOptions) {
        sink.record(TraceEvent::Functions(self.infos.clone()));
        if options.coverage {
            sink.record(TraceEvent::CodeLines(self.line_plan.lines.clone()));
        }
    }

    /// A tracer of `pid`, stopped at the start of this program, with its breakpoints placed.
    fn tracer<'a>(
        &'a self,
        pid: Pid,
        options: &RecordOptions,
        sink: &'a mut dyn TraceSink,
    ) -> Result<tracer::Tracer<'a>, RecordError> {
        let mut tracer = tracer::Tracer::new(
            pid,
            self.bias,
            &self.types,
            self.traced.clone(),
            self.panic.clone(),
            self.sources.clone(),
            self.entry,
            options.limits,
            sink,
        )?;
        tracer.break_on_lines(&self.line_plan.sites, options.coverage_per_thread)?;
        tracer.set_depth(options.selection.depth);
        tracer.set_test_names(&self.test_names);
        tracer.set_write_methods(&self.write_methods);
        Ok(tracer)
    }
}

/// The selected functions with no code of their own (every call inlined) and the rows of
/// the code inlined from them, for `--coverage`: their lines run where they were inlined.
struct InlinedLines {
    /// Their function table entries (ids from the one given on) and declaring files.
    functions: Vec<(FunctionInfo, Option<String>)>,
    /// Rows with code in them, `function` an index into `functions`.
    rows: Vec<dwarf::CodeRow>,
}

/// The lines of the selected functions only inlined into their callers, wherever they were
/// inlined, numbered from `next`.
fn inlined_lines(program: &mut Program, options: &RecordOptions, next: FunctionId) -> InlinedLines {
    let picked: Vec<dwarf::InlinedOnly> = (program.info.inlined_only_dies().iter())
        .filter(|f| options.selection.matches(&f.entry))
        .cloned()
        .collect();
    let mut functions = Vec::new();
    let mut kept = Vec::new();
    for f in &picked {
        let Ok(detail) = program.info.detail(&f.entry) else {
            continue;
        };
        let id = FunctionId(next.0 + functions.len() as u32);
        let info = function_info(id, &f.entry, &detail, &program.info.types);
        functions.push((info, f.entry.decl_file.clone()));
        kept.push(f);
    }
    let rows = program.info.inlined_code_rows(&kept);
    InlinedLines { functions, rows }
}

/// The in-process plan of a selected function, or why it keeps the ptrace path.
fn in_process_plan(
    info: &dwarf::DebugInfo,
    f: &FunctionEntry,
    detail: &dwarf::FunctionDetail,
    cfa: Option<unwind::CfaRule>,
    options: &RecordOptions,
    acts: bool,
    selected: bool,
) -> Result<capture::Plan, &'static str> {
    if options.capture != CaptureMode::InProcess {
        return Err("--capture ptrace");
    }
    if options.coverage {
        return Err("--coverage puts breakpoints inside functions");
    }
    if acts {
        return Err("its return is forced, or it writes through a Formatter");
    }
    if !selected {
        return Err("a closure passed to a traced function (recorded only inside its calls)");
    }
    if !options.selection.matches(f) {
        return Err("traced only as a callee within --depth");
    }
    if detail
        .return_type
        .is_some_and(|t| capture::returns_mut_scalar(&info.types, t))
    {
        return Err("it returns &mut to a scalar (its end waits for the thread's next stop)");
    }
    let code = info
        .code(f.low_pc, f.high_pc)
        .ok_or("its code is not in the file's .text")?;
    capture::plan(
        &info.types,
        options.limits,
        detail,
        code,
        f.low_pc.0,
        info.padding_after(f.high_pc, inprocess::JMP_LEN - 1),
        cfa,
        &|a| unwind::cfa_rule(info, a),
    )
}

/// The names libtest may give a test of a program with these functions: each own function's
/// path without its crate (`tests::adds` for `mylib::tests::adds`, `adds` in `tests/a.rs`).
fn test_names(functions: &[FunctionEntry]) -> Vec<String> {
    let mut names: Vec<String> = functions
        .iter()
        .filter(|f| f.own_code && f.language == carve_storage::Language::Rust)
        .filter(|f| !f.path.starts_with('<') && !f.path.contains('{'))
        .filter_map(|f| f.path.split_once("::").map(|(_, rest)| rest.to_string()))
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// `pid`'s program, arguments and working directory, from `/proc`.
fn launched(pid: Pid) -> Launched {
    let proc = |what: &str| format!("/proc/{pid}/{what}");
    let args = std::fs::read(proc("cmdline"))
        .map(|raw| {
            raw.split(|b| *b == 0)
                .skip(1)
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    // The last empty piece is the terminating NUL's.
    let mut args = args;
    if args.last().is_some_and(|a| a.is_empty()) {
        args.pop();
    }
    Launched {
        pid: pid.as_raw(),
        program: std::fs::read_link(proc("exe")).unwrap_or_default(),
        args,
        cwd: std::fs::read_link(proc("cwd")).unwrap_or_default(),
        forked: false,
    }
}

/// What every process tracer of a recording shares.
struct Driver<'d> {
    /// The process carve started (a child of the thread that drives it).
    spawned: Pid,
    runs: RunSinks<'d>,
    options: &'d RecordOptions,
    record_forks: bool,
    /// When the command ends, the threads tracing what it left running let it go.
    ending: ending::Ending,
}

/// How a process came to its tracer.
enum Start {
    /// Spawned by carve (with the CPU pinning to undo when it starts a thread).
    Spawned(Option<nix::sched::CpuSet>),
    /// Forked by a traced process and let go (see `Tracer::follow_child`), to be taken over.
    Adopted(tracer::Forked, handover::Handover),
    /// Let go by the thread serving it (see `untraced::serve`), to be taken over: at its
    /// `exec` event (then the new program is loaded), or at its first stop after a fork.
    TakenOver {
        execed: bool,
        handover: handover::Handover,
    },
}

/// Where a process stands when its tracer (this thread) begins a program of it.
enum At {
    /// Spawned by carve (with the CPU pinning to undo when it starts a thread).
    Spawned(Option<nix::sched::CpuSet>),
    /// Forked, with the breakpoints and frames it inherited.
    Forked(tracer::Forked),
    /// Stopped at its `exec` event, by this same thread.
    Execed(Option<nix::sched::CpuSet>),
}

/// The handle of a thread running [`drive`].
type Driven<'scope> = std::thread::ScopedJoinHandle<'scope, Result<RecordSummary, RecordError>>;

/// Traces process `pid` on this thread until it ends, through every program it runs: a program
/// that selects something (`image`) is recorded into `sink`, and each `exec` loads the new
/// program and opens a run for it when it selects anything; a program that selects nothing
/// is served by `untraced::serve`, with the processes it starts. Processes that must be traced
/// elsewhere are handed to new threads of `scope`, which do the same.
fn drive<'scope, 'env>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    d: &'env Driver<'env>,
    pid: Pid,
    mut image: Option<Arc<Image>>,
    mut sink: Option<Box<dyn TraceSink + Send>>,
    start: Start,
) -> Result<RecordSummary, RecordError> {
    let mut calls = 0;
    let lost = |e: RecordError, calls| -> Result<RecordSummary, RecordError> {
        // A process that was gone before its tracer could take it (killed from outside between
        // its fork or exec and our first request: cargo ends helpers it no longer needs) is
        // lost, not a failure of the recording of the others.
        let vanished = matches!(
            e,
            RecordError::Ptrace {
                source: nix::errno::Errno::ESRCH,
                ..
            }
        );
        if vanished {
            let exit = carve_storage::ProcessExit::Lost {
                reason: e.to_string(),
            };
            return Ok(RecordSummary { exit, calls });
        }
        Err(e)
    };
    let mut at = match start {
        Start::Spawned(pinned) => At::Spawned(pinned),
        Start::TakenOver { execed, handover } => {
            if let Err(e) = handover.take_over() {
                return lost(e, calls);
            }
            if execed {
                (image, sink) = load(d, pid);
            }
            At::Execed(None)
        }
        Start::Adopted(forked, handover) => {
            if let Err(e) = handover.take_over() {
                return lost(e, calls);
            }
            match image {
                Some(_) => At::Forked(forked),
                None => At::Execed(None),
            }
        }
    };
    loop {
        let Some(img) = image.clone() else {
            if let At::Execed(Some(mask)) = &at {
                // Pinned for a single-threaded recorded program: what runs now is not recorded.
                process::unpin(pid, mask);
                process::unpin(Pid::from_raw(0), mask);
            }
            let mut may_select = |pid: Pid| {
                std::fs::read_link(format!("/proc/{pid}/exe"))
                    .is_ok_and(|exe| Image::may_select(&exe, d.options))
            };
            let mut hand_over = |handover: handover::Handover, execed: bool| -> Driven<'scope> {
                take_over_on_a_thread(scope, d, handover, execed)
            };
            let own_child = pid == d.spawned;
            let ending = (!own_child).then_some(&d.ending);
            match untraced::serve(pid, own_child, ending, &mut may_select, &mut hand_over) {
                Ok(untraced::Served::Done(exit)) => {
                    let exit = exit.unwrap_or(carve_storage::ProcessExit::Lost {
                        reason: "no traced process left".into(),
                    });
                    return Ok(RecordSummary { exit, calls });
                }
                Ok(untraced::Served::Alone) => {
                    (image, sink) = load(d, pid);
                    at = At::Execed(None);
                    continue;
                }
                Ok(untraced::Served::RootTaken(handle)) => {
                    let taken = match handle.join() {
                        Ok(taken) => taken?,
                        Err(panic) => std::panic::resume_unwind(panic),
                    };
                    return Ok(RecordSummary {
                        exit: taken.exit,
                        calls: calls + taken.calls,
                    });
                }
                Err(e) => return lost(e, calls),
            }
        };
        // The processes carve follows without recording them.
        let mut null = ();
        let mut follow = |forked: tracer::Forked| -> bool { adopt(scope, d, &img, forked) };
        let sink_ref: &mut dyn TraceSink = match sink.as_mut() {
            Some(s) => &mut **s,
            None => &mut null,
        };
        let traced = (|| {
            let mut tracer = match at {
                At::Spawned(pinned) | At::Execed(pinned) => {
                    let mut tracer = img.tracer(pid, d.options, &mut *sink_ref)?;
                    tracer.pinned_from(pinned);
                    tracer
                }
                At::Forked(forked) => {
                    let mut tracer = tracer::Tracer::adopt(
                        forked,
                        img.bias,
                        &img.types,
                        img.traced.clone(),
                        img.entry,
                        d.options.limits,
                        d.options.selection.depth,
                        &mut *sink_ref,
                    )?;
                    tracer.set_test_names(&img.test_names);
                    tracer.set_write_methods(&img.write_methods);
                    tracer
                }
            };
            tracer.follow_forks(&mut follow);
            tracer.follow_exec(d.record_forks);
            if pid != d.spawned {
                tracer.end_with(&d.ending);
            }
            tracer.run()
        })();
        let end = match traced {
            Ok(end) => end,
            Err(e) => {
                if let Some(s) = sink.as_mut() {
                    s.record(TraceEvent::RunEnded(carve_storage::RunEnd {
                        exit: carve_storage::ProcessExit::Lost {
                            reason: e.to_string(),
                        },
                        ended_at_ms: tracer::now_ms(),
                    }));
                }
                return lost(e, calls);
            }
        };
        calls += end.summary.calls;
        // The run of the program just left is complete: let its writer finish.
        drop(sink.take());
        if !end.execed {
            return Ok(RecordSummary {
                exit: end.summary.exit,
                calls,
            });
        }
        (image, sink) = load(d, pid);
        at = At::Execed(end.pinned_from);
    }
}

/// The program `pid` runs now (stopped at its `exec`), loaded with a run for it when it
/// selects anything; `(None, None)` when it is to run with no breakpoint.
fn load(d: &Driver<'_>, pid: Pid) -> (Option<Arc<Image>>, Option<Box<dyn TraceSink + Send>>) {
    let now = launched(pid);
    let Some(loaded) = Image::load(&now.program, pid, d.options) else {
        return (None, None);
    };
    match (d.runs)(&now) {
        Some(mut s) => {
            loaded.announce(&mut *s, d.options);
            (Some(Arc::new(loaded)), Some(s))
        }
        None => (None, None),
    }
}

/// Starts the thread that takes over a process let go by this one (`execed`: at its `exec`
/// event, so the new program is loaded there) and drives it.
fn take_over_on_a_thread<'scope, 'env>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    d: &'env Driver<'env>,
    handover: handover::Handover,
    execed: bool,
) -> Driven<'scope> {
    let ticket = d.ending.ticket();
    let pid = handover.pid();
    scope.spawn(move || {
        let _member = ticket.enter();
        let start = Start::TakenOver { execed, handover };
        drive(scope, d, pid, None, None, start)
    })
}

/// Takes a forked child (stopped, handed over by its parent's tracer) to a thread of its own:
/// lets it go, and returns once the new thread has taken it over (see [`handover`]). A child
/// that inherits the parent's breakpoints gets a run of its own; false when no sink could be made for it (the parent's
/// tracer then releases it, still traced by it).
fn adopt<'scope, 'env>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    d: &'env Driver<'env>,
    parent: &Arc<Image>,
    forked: tracer::Forked,
) -> bool {
    if forked.execed {
        // At its `exec` event already: the new program is loaded by the thread taking it.
        let pid = forked.pid;
        handover::hand_over(pid, |handover| {
            take_over_on_a_thread(scope, d, handover, true)
        });
        return true;
    }
    let (image, sink) = if forked.recorded {
        let child = Launched {
            forked: true,
            ..launched(forked.pid)
        };
        let Some(mut sink) = (d.runs)(&child) else {
            return false;
        };
        // The child's run needs the same function table as the parent's.
        parent.announce(&mut *sink, d.options);
        (Some(parent.clone()), Some(sink))
    } else {
        (None, None)
    };
    let pid = forked.pid;
    let ticket = d.ending.ticket();
    handover::hand_over(pid, |handover| {
        scope.spawn(move || {
            let _member = ticket.enter();
            drive(scope, d, pid, image, sink, Start::Adopted(forked, handover))
        })
    });
    true
}

/// The program path as the recorder will run it (resolved against PATH like a shell would).
pub fn resolve_program(program: &Path) -> PathBuf {
    if program.components().count() > 1 || program.exists() {
        return program.to_path_buf();
    }
    if let Some(paths) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&paths) {
            let candidate = dir.join(program);
            if candidate.is_file() {
                return candidate;
            }
        }
    }
    program.to_path_buf()
}

/// What the trace says about a function: its path, source and signature.
fn function_info(
    id: FunctionId,
    f: &FunctionEntry,
    detail: &dwarf::FunctionDetail,
    types: &types::TypeTable,
) -> FunctionInfo {
    FunctionInfo {
        id,
        path: f.path.clone(),
        name: f.name.clone(),
        linkage_name: f.linkage_name.clone(),
        language: f.language,
        decl_file: f.decl_file.clone(),
        decl_line: f.decl_line,
        low_pc: f.low_pc.0,
        params: detail
            .params
            .iter()
            .map(|p| ParamInfo {
                name: p.name.clone(),
                type_name: p.ty.map(|t| types.name(t).to_string()).unwrap_or_default(),
            })
            .collect(),
        return_type: detail
            .return_type
            .map(|t| types.name(t).to_string())
            .filter(|n| n != "()"),
    }
}
