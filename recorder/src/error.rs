//! The recorder's one error type: every variant names the program, pid, address or DIE involved.

use std::path::PathBuf;

/// Everything that can stop a recording before or while it runs.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    #[error(
        "cannot read program {path}: {source}; check the path (carve record -- ./path/to/program)"
    )]
    ProgramUnreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not executable: build it first, or chmod +x it")]
    NotExecutable { path: PathBuf },
    #[error("{path} is not an ELF executable carve can read ({reason})")]
    NotElf { path: PathBuf, reason: String },
    #[error("{path} is {found}; carve records x86-64 (64-bit) programs only: build it for x86_64-unknown-linux-gnu")]
    WrongArchitecture { path: PathBuf, found: String },
    #[error("no debug info in {path}: build with debug = true (cargo's dev profile) or -g")]
    NoDebugInfo { path: PathBuf },
    #[error("the debug info of {path} is split into .dwo files ({dwo}), which carve does not read yet: build without -gsplit-dwarf (cargo: split-debuginfo = \"off\")")]
    SplitDwarf { path: PathBuf, dwo: String },
    #[error("bad DWARF in {path} at DIE offset {offset:#x}: {reason}")]
    Dwarf {
        path: PathBuf,
        offset: usize,
        reason: String,
    },
    #[error("no function of {path} matches {filters}; functions that exist include: {examples}")]
    NothingSelected {
        path: PathBuf,
        filters: String,
        examples: String,
    },
    #[error("cannot start {path}: {source}")]
    Spawn {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("ptrace {op} failed on pid {pid}: {source}")]
    Ptrace {
        op: &'static str,
        pid: i32,
        source: nix::Error,
    },
    #[error("cannot {op} memory of pid {pid} at {addr:#x}: {source}")]
    Memory {
        op: &'static str,
        pid: i32,
        addr: u64,
        source: std::io::Error,
    },
    #[error("--force-return works only on functions returning an integer, and {function} does not: pick another function")]
    CannotForce { function: String },
    #[error("{function} cannot be forced to return {value}: {reason}")]
    CannotForceValue {
        function: String,
        value: String,
        reason: String,
    },
    #[error("cannot find where {path} is loaded in pid {pid} (/proc/{pid}/maps)")]
    LoadAddress { path: PathBuf, pid: i32 },
}

impl RecordError {
    /// The tracee the operation was on no longer exists or no longer stops for carve (killed
    /// meanwhile, say by another thread's `exit`): not a failure of the recording, whose
    /// next `waitpid` reports that end.
    pub(crate) fn tracee_gone(&self) -> bool {
        match self {
            RecordError::Ptrace { source, .. } => *source == nix::errno::Errno::ESRCH,
            RecordError::Memory { source, .. } => source.raw_os_error() == Some(libc::ESRCH),
            _ => false,
        }
    }
}
