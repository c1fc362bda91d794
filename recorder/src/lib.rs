//! carve's recorder: runs a native program under ptrace, breaks on the selected functions and
//! reads their arguments and return values through DWARF, reporting calls to a `TraceSink`.
//!
//! The only crate of carve that touches ptrace and the live process.

mod abi;
mod addr;
mod decode;
mod dwarf;
mod error;
mod forced;
mod lines;
mod location;
mod objects;
mod panic_message;
mod process;
mod select;
mod sources;
mod stepping;
mod tracer;
mod types;
mod unwind;

pub use addr::{FileAddr, LoadBias, RuntimeAddr};
pub use decode::Limits;
pub use dwarf::FunctionEntry;
pub use error::RecordError;
pub use forced::{Extreme, ForcedValue};
pub use select::Selection;
pub use tracer::RecordSummary;

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use carve_storage::{FunctionId, FunctionInfo, ParamInfo, TraceEvent, TraceSink};
use nix::unistd::Pid;
use tracer::PanicHooks;

/// An executable and its debug information, ready to be recorded.
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

    /// The functions `selection` picks; an error listing some that exist when it picks none.
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
                filters: if selection.filters.is_empty() {
                    "(default: own code)".into()
                } else {
                    selection.filters.join(" --filter ")
                },
                examples,
            });
        }
        Ok(chosen)
    }
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
    /// After this many recorded calls of one function, its breakpoint is removed.
    pub max_calls_per_function: Option<u64>,
    /// Functions (by glob, as `--filter`) whose body is skipped: each call returns the value
    /// given instead (an extreme transformation). `ForcedValue::Int` is accepted only for
    /// functions returning an integer; other values must fit the return type exactly
    /// ([`Program::extremes`] lists those that do).
    pub force_returns: Vec<(String, ForcedValue)>,
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
}

impl Default for RecordOptions {
    fn default() -> Self {
        RecordOptions {
            selection: Selection::default(),
            limits: Limits::default(),
            max_calls_per_function: None,
            force_returns: Vec::new(),
            pin_cpu: true,
            coverage: false,
            coverage_per_thread: false,
            output_to: None,
        }
    }
}

/// Makes the sink of a forked child's own run, given the child's pid (`--follow-forks`).
pub type ChildSinks<'f> = &'f (dyn Fn(i32) -> Option<Box<dyn TraceSink + Send>> + Sync);

/// A program started under ptrace and stopped before its first instruction.
pub struct Recording {
    program: Program,
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
        let pid = process::spawn(program.path(), args, options.output_to.as_deref())?;
        Ok(Recording {
            program,
            pid,
            pinned_from: None,
            options,
            started: false,
        })
    }

    pub fn pid(&self) -> i32 {
        self.pid.as_raw()
    }

    /// Runs the program to its end, reporting functions, calls and the exit to `sink`.
    pub fn run(self, sink: &mut dyn TraceSink) -> Result<RecordSummary, RecordError> {
        self.run_with_children(sink, None)
    }

    /// Like [`Recording::run`]; with `children`, a process the program forks is recorded too,
    /// as a run of its own, into the sink `children` makes for its pid (`--follow-forks`; a
    /// child it makes no sink for is released untraced). Returns once every process ended.
    pub fn run_with_children(
        mut self,
        sink: &mut dyn TraceSink,
        children: Option<ChildSinks<'_>>,
    ) -> Result<RecordSummary, RecordError> {
        self.started = true;
        if self.options.pin_cpu {
            // Only this thread and the program: threads the caller started before (such as the
            // store's writer) keep running on the other CPUs.
            self.pinned_from = process::pin_to_current_cpu(self.pid);
        }
        let bias = process::load_bias(
            self.pid,
            self.program.path(),
            self.program.info.first_load_vaddr,
            self.program.info.is_pie,
        )?;
        self.program.info.types.set_load_bias(bias);
        let chosen: Vec<FunctionEntry> = self
            .program
            .select(&self.options.selection)?
            .into_iter()
            .cloned()
            .collect();
        let mut infos = Vec::with_capacity(chosen.len());
        let mut traced = Vec::with_capacity(chosen.len());
        let mut traced_entries = Vec::with_capacity(chosen.len());
        for (i, f) in chosen.iter().enumerate() {
            let id = FunctionId(i as u32 + 1);
            let detail = match self.program.info.detail(f) {
                Ok(d) => d,
                Err(_) => continue, // unreadable DWARF for one function: skip it, trace the rest
            };
            let cfa = unwind::cfa_rule(&self.program.info, detail.breakpoint.0);
            let float_return = detail
                .return_type
                .is_some_and(|t| abi::uses_float_registers(&self.program.info.types, t));
            let types = &self.program.info.types;
            let forced_return = match self
                .options
                .force_returns
                .iter()
                .find(|(glob, _)| carve_storage::matches_function(glob, &f.path, &f.name))
            {
                Some((_, value)) => Some((f.path.clone(), forced_bytes(f, &detail, types, value)?)),
                None => None,
            };
            infos.push(function_info(id, f, &detail, types));
            traced_entries.push(f);
            traced.push(tracer::Traced {
                id,
                detail,
                cfa,
                max_calls: self.options.max_calls_per_function,
                calls: 0,
                float_return,
                constructs: objects::constructed_type(&f.path),
                matched: self.options.selection.matches(f),
                forced_return,
            });
        }
        let line_plan = if self.options.coverage {
            let rows = self.program.info.code_rows(&traced_entries);
            let ids: Vec<FunctionId> = traced.iter().map(|t| t.id).collect();
            let files: std::collections::HashSet<&str> = traced_entries
                .iter()
                .filter_map(|f| f.decl_file.as_deref())
                .collect();
            lines::plan(&rows, &ids, &files)
        } else {
            lines::LinePlan::default()
        };
        let infos_for_children = children.map(|_| infos.clone());
        let lines_for_children = children.map(|_| line_plan.lines.clone());
        sink.record(TraceEvent::Functions(infos));
        if self.options.coverage {
            sink.record(TraceEvent::CodeLines(line_plan.lines));
        }
        let panic_addrs = PanicHooks {
            unwinding: self.program.info.symbol("__rustc::rust_panic"),
            message: self.program.info.symbol("core::panicking::panic_fmt"),
            message_str: self
                .program
                .info
                .symbol("std::panicking::begin_panic::<&str>"),
        };
        let sources = sources::find(self.program.info.symbols());
        let for_children = children.map(|_| traced.clone());
        let types = &self.program.info.types;
        let (entry, limits, depth) = (
            self.program.info.entry,
            self.options.limits,
            self.options.selection.depth,
        );
        let pinned_from = self.pinned_from;
        let coverage = self.options.coverage;
        let per_thread = self.options.coverage_per_thread;
        let summary = std::thread::scope(|scope| {
            let mut follow = |forked: tracer::Forked| -> bool {
                let (Some(make), Some(functions)) = (children, for_children.clone()) else {
                    return false;
                };
                let Some(mut child_sink) = make(forked.pid.as_raw()) else {
                    return false;
                };
                // The child's run needs the same function table as the parent's.
                child_sink.record(TraceEvent::Functions(
                    infos_for_children.clone().unwrap_or_default(),
                ));
                if let Some(lines) = &lines_for_children {
                    if coverage {
                        child_sink.record(TraceEvent::CodeLines(lines.clone()));
                    }
                }
                scope.spawn(move || {
                    let recorded = tracer::Tracer::adopt(
                        forked,
                        bias,
                        types,
                        functions,
                        entry,
                        limits,
                        depth,
                        &mut *child_sink,
                    )
                    .and_then(|t| t.run());
                    if let Err(e) = recorded {
                        child_sink.record(TraceEvent::RunEnded(carve_storage::RunEnd {
                            exit: carve_storage::ProcessExit::Lost {
                                reason: e.to_string(),
                            },
                            ended_at_ms: tracer::now_ms(),
                        }));
                    }
                });
                true
            };
            let mut tracer = tracer::Tracer::new(
                self.pid,
                bias,
                types,
                traced,
                panic_addrs,
                sources,
                entry,
                limits,
                sink,
            )?;
            tracer.pinned_from(pinned_from);
            tracer.break_on_lines(&line_plan.sites, per_thread)?;
            tracer.set_depth(depth);
            if children.is_some() {
                tracer.follow_forks(&mut follow);
            }
            tracer.run()
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
