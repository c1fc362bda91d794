//! `carve record --size-warning MB`: one line on stderr when the trace grows past a size, and
//! again at each doubling, naming the function with the most calls and how to record fewer.
//!
//! A program that loops stores every call (a looping integration test grew a trace by 80 MB/s);
//! the user learns it from the disk filling up unless carve says so while it happens. The runs'
//! sinks count calls per function ([`HotCounts`], one array increment per call on the tracer's
//! thread, in the run's report the summary reads) and a watcher looks at the trace file's size
//! (with its write-ahead log) twice a second.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use carve_storage::{FunctionInfo, TraceEvent};

/// How often the watcher looks at the trace's size.
const POLL: Duration = Duration::from_millis(500);

/// Calls per function of one run, and which function has the most so far.
#[derive(Debug, Default, Clone)]
pub struct HotCounts {
    paths: Vec<String>,
    calls: Vec<u64>,
    /// The index of the function with the most calls, and how many.
    hottest: Option<(usize, u64)>,
    total: u64,
}

impl HotCounts {
    /// Takes note of `event`: a function list names functions, a call start counts one.
    pub fn note(&mut self, event: &TraceEvent) {
        match event {
            TraceEvent::Functions(functions) => self.name(functions),
            TraceEvent::CallStarted(start) => self.count(start.function.0 as usize),
            _ => {}
        }
    }

    fn name(&mut self, functions: &[FunctionInfo]) {
        for f in functions {
            let i = f.id.0 as usize;
            if self.paths.len() <= i {
                self.paths.resize(i + 1, String::new());
            }
            self.paths[i] = f.path.clone();
        }
    }

    fn count(&mut self, f: usize) {
        if self.calls.len() <= f {
            self.calls.resize(f + 1, 0);
        }
        self.calls[f] += 1;
        self.total += 1;
        let n = self.calls[f];
        if self.hottest.is_none_or(|(_, most)| n > most) {
            self.hottest = Some((f, n));
        }
    }

    /// Calls recorded.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The function with the most calls (its path, or `#id` if it was never named), its calls
    /// and the run's calls.
    pub fn hottest(&self) -> Option<Hottest> {
        let (f, n) = self.hottest?;
        let path = self
            .paths
            .get(f)
            .filter(|p| !p.is_empty())
            .cloned()
            .unwrap_or_else(|| format!("#{f}"));
        Some((path, n, self.total))
    }
}

/// A run's hottest function: its path, its calls, and the run's calls.
pub type Hottest = (String, u64, u64);

/// What the watcher says when `db` passes `size` bytes, given each run's [`Hottest`]: the
/// line, or `None` when no call was recorded yet.
pub fn warning(db: &Path, size: u64, counts: Vec<Hottest>) -> Option<String> {
    let total: u64 = counts.iter().map(|c| c.2).sum();
    let (path, n, _) = counts.into_iter().max_by_key(|c| c.1)?;
    Some(format!(
        "carve: the trace {} has grown to {} MB ({total} calls), {n} of them calls of `{path}`: record fewer with --max-calls-per-function N, or leave it out with --exclude '{path}' (this warning: --size-warning MB, 0 for never)",
        db.display(),
        size / (1024 * 1024),
    ))
}

/// The trace's size on disk: the database and its write-ahead log.
fn trace_size(db: &Path) -> u64 {
    let mut wal = db.as_os_str().to_owned();
    wal.push("-wal");
    [db.to_path_buf(), PathBuf::from(wal)]
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum()
}

/// Watches `db` until `stop` is set (then unpark the watcher's thread: it waits parked between
/// looks, so a recording's end never waits for a poll), calling `say` with a [`warning`] each time the size passes
/// `mb` megabytes, then twice that, and so on, each run's hottest function from `hottest`.
/// `mb == 0`: returns at once.
pub fn watch(
    db: &Path,
    mb: u64,
    stop: &AtomicBool,
    hottest: impl Fn() -> Vec<Hottest>,
    say: impl Fn(&str),
) {
    let Some(mut next) = mb.checked_mul(1024 * 1024).filter(|&b| b > 0) else {
        return;
    };
    while !stop.load(Ordering::Relaxed) {
        let size = trace_size(db);
        if size >= next {
            if let Some(line) = warning(db, size, hottest()) {
                say(&line);
            }
            while next <= size {
                next = next.saturating_mul(2);
            }
        }
        std::thread::park_timeout(POLL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use carve_storage::{CallId, CallStart, FunctionId, Language};
    use std::sync::Mutex;

    fn function(id: u32, path: &str) -> FunctionInfo {
        FunctionInfo {
            id: FunctionId(id),
            path: path.into(),
            name: path.rsplit("::").next().unwrap_or(path).into(),
            linkage_name: None,
            language: Language::Rust,
            decl_file: None,
            decl_line: None,
            low_pc: 0,
            params: Vec::new(),
            return_type: None,
        }
    }

    fn call(f: u32) -> TraceEvent {
        TraceEvent::CallStarted(CallStart {
            call: CallId(0),
            parent: None,
            function: FunctionId(f),
            thread: 1,
            depth: 0,
            args: Vec::new(),
            objects: Vec::new(),
            at_ns: None,
        })
    }

    #[test]
    fn the_warning_names_the_function_with_the_most_calls_over_every_run() {
        let (mut a, mut b) = (HotCounts::default(), HotCounts::default());
        a.note(&TraceEvent::Functions(vec![
            function(0, "lib::cold"),
            function(1, "lib::hot"),
        ]));
        for f in [0, 1, 1, 1, 0] {
            a.note(&call(f));
        }
        b.note(&TraceEvent::Functions(vec![function(0, "lib::other")]));
        b.note(&call(0));
        let runs = [a, b].iter().filter_map(HotCounts::hottest).collect();
        let line = warning(Path::new("t.db"), 3 << 20, runs).unwrap();
        assert!(
            line.contains("grown to 3 MB (6 calls), 3 of them calls of `lib::hot`"),
            "{line}"
        );
        assert!(line.contains("--exclude 'lib::hot'"), "{line}");
        assert_eq!(
            warning(
                Path::new("t.db"),
                1,
                HotCounts::default().hottest().into_iter().collect()
            ),
            None
        );
    }

    #[test]
    fn the_watcher_warns_at_the_size_and_at_each_doubling_only() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("t.db");
        std::fs::write(&db, vec![0u8; 3 << 20]).unwrap();
        let mut counts = HotCounts::default();
        counts.note(&call(4));
        let runs = || counts.hottest().into_iter().collect();
        let stop = AtomicBool::new(false);
        let said = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            let watcher = s.spawn(|| {
                watch(&db, 1, &stop, runs, |l| {
                    said.lock().unwrap().push(l.to_string())
                })
            });
            std::thread::sleep(POLL * 3);
            // 3 MB passed 1 and 2 MB at once: one line. At 5 MB it passes 4: a second. (Put
            // in place whole: the watcher must not see it half-written, at 4 MB.)
            let grown = dir.path().join("grown");
            std::fs::write(&grown, vec![0u8; 5 << 20]).unwrap();
            std::fs::rename(&grown, &db).unwrap();
            std::thread::sleep(POLL * 3);
            stop.store(true, Ordering::Relaxed);
            watcher.thread().unpark();
        });
        let said = said.into_inner().unwrap();
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(
            said[0].contains("grown to 3 MB") && said[0].contains("`#4`"),
            "{said:?}"
        );
        assert!(said[1].contains("grown to 5 MB"), "{said:?}");
        let quiet = Mutex::new(Vec::<String>::new());
        watch(&db, 0, &stop, runs, |l| {
            quiet.lock().unwrap().push(l.into())
        });
        assert!(quiet.into_inner().unwrap().is_empty());
    }
}
