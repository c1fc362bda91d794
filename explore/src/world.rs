//! The files explored calls read. In, the recording (its calls and the file reads the recorder
//! saw under each) and the pools; out, which functions read files (a recorded call of theirs,
//! or a call below one, did) and the directory they run in: what the recorded reads saw,
//! rebuilt as carved tests rebuild it (`carve_generator::files_layout`: the deepest directory
//! an argument names that holds every read), grown by the relative paths the run named (texts
//! such as `src/a/b/mod.rs` become empty files: a walk has directories to go down). The
//! harness runs with that directory as its working directory, and every kept test that calls
//! a function reading files runs inside a fresh copy of it (`in_recorded_files`), so what the
//! calls see is the same on every machine and in every run. A recorded text naming a path
//! under the directory is pooled relative to it; the harness refuses a reader an absolute
//! path or one with `..` (it would read the machine's files, not the world's).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use carve_generator::FileNode;
use carve_storage::{CallId, Trace};

use crate::api::{Explorable, PoolKind};
use crate::pools::{Lit, Pools};

/// The directory the explored functions that read files run in.
#[derive(Debug, Clone, Default)]
pub struct World {
    /// The recorded directory the reads were under (absolute).
    pub root: String,
    /// What is built there, by path relative to it (`/src/main.rs`).
    pub nodes: BTreeMap<String, FileNode>,
    /// The functions (recorded paths) whose calls read files.
    pub readers: BTreeSet<String>,
    /// Where the harness finds it built (its working directory).
    pub dir: Option<std::path::PathBuf>,
}

/// Why functions that read files are not explored.
pub const NOT_REBUILT: &str = "it reads files the recording cannot rebuild as one directory \
     (a relative path, a file too long to copy, a symlink, or reads under no directory its \
     arguments name); to explore it, record a run that gives it an absolute path to a \
     directory holding what it reads";

/// The most paths the run named that the world grows by, and their most components.
const MAX_NAMED: usize = 64;
const MAX_DEPTH: usize = 4;

impl World {
    /// The world of the functions among `explored` (recorded paths) whose calls read files:
    /// `Ok(None)` when none does, `Err(readers)` when their reads cannot be rebuilt.
    pub fn of(
        trace: &Trace,
        explored: &BTreeSet<String>,
    ) -> Result<Option<World>, BTreeSet<String>> {
        let calls = Calls::of(trace);
        let readers = readers(trace, &calls);
        let readers: BTreeSet<String> = readers.intersection(explored).cloned().collect();
        if readers.is_empty() {
            return Ok(None);
        }
        let of_reader = |id: CallId| calls.path(id).is_some_and(|p| readers.contains(p));
        let under_reader = |id: CallId| calls.up_from(id).any(of_reader);
        let reads: Vec<_> = (trace.file_reads.iter())
            .filter(|r| under_reader(r.call))
            .collect();
        let mut texts = Vec::new();
        for c in trace.calls.iter().filter(|c| of_reader(c.id)) {
            for a in &c.args {
                carve_generator::recorded_strings(&a.value, &mut texts);
            }
        }
        let Some((root, nodes)) = carve_generator::files_layout(&reads, &texts) else {
            return Err(readers);
        };
        let mut world = World {
            root,
            nodes,
            readers,
            dir: None,
        };
        // The paths the run named to any explored function (glob's `matches("src/lib.rs")`).
        let mut named = Vec::new();
        for c in &trace.calls {
            if calls.path(c.id).is_some_and(|p| explored.contains(p)) {
                (c.args.iter())
                    .for_each(|a| carve_generator::recorded_strings(&a.value, &mut named));
            }
        }
        world.grow_by(named);
        Ok(Some(world))
    }

    /// `text` as a path relative to the world's directory when it names one under it
    /// (`/r/src/*.rs` → `src/*.rs`; the directory itself → `.`).
    pub fn relative(&self, text: &str) -> Option<String> {
        let rest = text.strip_prefix(&self.root)?;
        if rest.is_empty() || rest == "/" {
            return Some(".".to_string());
        }
        let rest = rest.strip_prefix('/')?;
        Some(rest.to_string())
    }

    /// Grows the world by the relative paths among `texts` (plain names, at most
    /// [`MAX_DEPTH`] deep): each an empty file where nothing is, its directories made.
    pub fn grow_by<'t>(&mut self, texts: impl IntoIterator<Item = &'t str>) {
        let mut added = 0;
        for text in texts {
            if added == MAX_NAMED {
                break;
            }
            let Some(parts) = plain_relative(text) else {
                continue;
            };
            let mut at = String::new();
            let mut fits = true;
            for (i, part) in parts.iter().enumerate() {
                at.push('/');
                at.push_str(part);
                let last = i + 1 == parts.len();
                match self.nodes.get(&at) {
                    Some(FileNode::Dir) => {}
                    Some(_) if !last => fits = false,
                    Some(_) => {}
                    None if last => {
                        self.nodes.insert(at.clone(), FileNode::File(None));
                    }
                    None => {
                        self.nodes.insert(at.clone(), FileNode::Dir);
                    }
                }
                if !fits {
                    break;
                }
            }
            added += usize::from(fits);
        }
    }

    /// The statements that build the world under the `Path` expression `base`.
    pub fn build_steps(&self, base: &str) -> String {
        carve_generator::file_build_steps(&self.nodes, base)
    }

    /// The helper a test file whose tests read files starts with: it builds the world afresh
    /// in a temporary directory and runs a test there, one at a time.
    pub fn helper(&self) -> String {
        let steps: String = (self.build_steps("dir").lines())
            .map(|l| format!("    {l}\n"))
            .collect();
        format!(
            "/// Runs `test` with a fresh directory as its working directory (one test at a time:
/// it is the process's), holding the files the recorded run read and the paths it named
/// (empty files). Recorded under {root:?}.
#[allow(dead_code)]
fn in_recorded_files(test: impl FnOnce()) {{
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = std::env::temp_dir().join(format!(\"carve-explored-files-{{}}\", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
{steps}    let back = std::env::current_dir().unwrap();
    std::env::set_current_dir(&dir).unwrap();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(test));
    std::env::set_current_dir(back).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(panic) = outcome {{
        std::panic::resume_unwind(panic);
    }}
}}
",
            root = self.root
        )
    }

    /// Builds the world afresh under `dir`.
    fn build_in(&self, dir: &std::path::Path) -> std::io::Result<()> {
        if dir.exists() {
            std::fs::remove_dir_all(dir)?;
        }
        std::fs::create_dir_all(dir)?;
        for (rel, node) in &self.nodes {
            let at = dir.join(rel.trim_start_matches('/'));
            match node {
                FileNode::Dir => std::fs::create_dir_all(&at)?,
                FileNode::File(contents) => {
                    if let Some(parent) = at.parent() {
                        std::fs::create_dir_all(parent)?;
                    }
                    std::fs::write(&at, contents.as_deref().unwrap_or_default())?;
                }
                FileNode::Missing => {}
            }
        }
        Ok(())
    }
}

/// `ex` with the world its readers of files run in, or without those readers (left out, with
/// why) when their reads cannot be rebuilt.
pub fn settle(trace: &Trace, ex: &mut Explorable) {
    let explored: BTreeSet<String> = ex.callables.iter().map(|c| c.path.clone()).collect();
    match World::of(trace, &explored) {
        Ok(world) => ex.world = world,
        Err(readers) => {
            for path in &readers {
                ex.left_out.push((path.clone(), NOT_REBUILT.to_string()));
            }
            ex.callables.retain(|c| !readers.contains(&c.path));
            crate::api::drop_unmakeable(ex);
        }
    }
}

/// The world of `ex` built in `harness_dir` (the harness's working directory), and the text
/// pool with the texts naming paths under its recorded directory written relative to it.
pub fn build(
    ex: &mut Explorable,
    pools: &mut Pools,
    harness_dir: &std::path::Path,
) -> Result<(), crate::ExploreError> {
    relative_texts(ex, pools);
    if let Some(world) = &mut ex.world {
        let dir = harness_dir.join("world");
        let built = world.build_in(&dir);
        built.map_err(|e| crate::ExploreError::io(format!("build {}", dir.display()), e))?;
        world.dir = Some(dir);
    }
    Ok(())
}

/// The text pool with every text naming a path under the world's directory written relative
/// to it.
fn relative_texts(ex: &Explorable, pools: &mut Pools) {
    let Some(world) = ex.world.as_ref() else {
        return;
    };
    let Some(texts) = pools.by_kind.get_mut(&PoolKind::Str) else {
        return;
    };
    let mut out: Vec<Lit> = Vec::with_capacity(texts.len());
    for lit in texts.drain(..) {
        let lit = match lit {
            Lit::Str(t) => Lit::Str(world.relative(&t).unwrap_or(t)),
            other => other,
        };
        if !out.contains(&lit) {
            out.push(lit);
        }
    }
    *texts = out;
}

/// Whether a call's touch (`fs: std::fs::read_dir`) is a read of files the recorder
/// snapshots, which a world rebuilds (the generator's list), not a write or another source a
/// test cannot control.
pub(crate) fn is_file_read(touch: &str) -> bool {
    carve_generator::FILE_READS.contains(&touch)
}

/// Each recorded call's function path and parent: what walking up from a call needs.
struct Calls<'t> {
    of: HashMap<CallId, (Option<&'t str>, Option<CallId>)>,
}

impl<'t> Calls<'t> {
    fn of(trace: &'t Trace) -> Calls<'t> {
        let paths: HashMap<_, _> = (trace.functions.iter())
            .map(|f| (f.id, f.path.as_str()))
            .collect();
        let of = (trace.calls.iter())
            .map(|c| (c.id, (paths.get(&c.function).copied(), c.parent)))
            .collect();
        Calls { of }
    }

    fn path(&self, id: CallId) -> Option<&'t str> {
        self.of.get(&id)?.0
    }

    /// `id` and the calls it was made in, innermost first.
    fn up_from(&self, id: CallId) -> impl Iterator<Item = CallId> + '_ {
        std::iter::successors(Some(id), |at| self.of.get(at)?.1)
    }
}

/// The functions (recorded paths) a call of which read files, or had a call below it that did
/// (the reads the recorder saw, and the calls that said they read files).
fn readers(trace: &Trace, calls: &Calls) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut done = BTreeSet::new();
    let touched = (trace.calls.iter())
        .filter(|c| c.touches.iter().any(|t| is_file_read(t)))
        .map(|c| c.id);
    for start in trace.file_reads.iter().map(|r| r.call).chain(touched) {
        // A call walked up from before had its callers walked too.
        for at in calls.up_from(start).take_while(|at| done.insert(*at)) {
            out.extend(calls.path(at).map(str::to_string));
        }
    }
    out
}

/// The components of `text` when it is a relative path of plain names (letters, digits, `.`,
/// `_`, `-`; no `.` or `..` component), at most [`MAX_DEPTH`] deep.
fn plain_relative(text: &str) -> Option<Vec<&str>> {
    if text.is_empty() || text.starts_with('/') || text.ends_with('/') {
        return None;
    }
    let parts: Vec<&str> = text.split('/').collect();
    let plain = |p: &&str| {
        !p.is_empty()
            && *p != "."
            && *p != ".."
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
    };
    (parts.len() <= MAX_DEPTH && parts.iter().all(plain)).then_some(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_paths_the_run_named_grow_the_world_and_texts_under_it_become_relative() {
        let mut w = World {
            root: "/r/app/src".into(),
            nodes: [
                ("".to_string(), FileNode::Dir),
                ("/main.rs".into(), FileNode::File(None)),
            ]
            .into_iter()
            .collect(),
            readers: BTreeSet::new(),
            dir: None,
        };
        w.grow_by([
            "src/a/b/mod.rs",
            "main.rs/x",
            "README",
            "*.rs",
            "../up",
            "/abs",
            "a b",
            "one/two/three/four/five",
        ]);
        let nodes: Vec<(&str, &FileNode)> = w.nodes.iter().map(|(k, v)| (k.as_str(), v)).collect();
        assert_eq!(
            nodes,
            vec![
                ("", &FileNode::Dir),
                ("/README", &FileNode::File(None)),
                ("/main.rs", &FileNode::File(None)),
                ("/src", &FileNode::Dir),
                ("/src/a", &FileNode::Dir),
                ("/src/a/b", &FileNode::Dir),
                ("/src/a/b/mod.rs", &FileNode::File(None)),
            ]
        );
        assert_eq!(w.relative("/r/app/src/*.rs").as_deref(), Some("*.rs"));
        assert_eq!(w.relative("/r/app/src").as_deref(), Some("."));
        assert_eq!(w.relative("/r/app/srcx"), None);
        assert_eq!(w.relative("src/*.rs"), None);
    }

    #[test]
    fn reads_of_files_are_rebuilt_and_writes_or_other_sources_are_not() {
        assert!(is_file_read("fs: std::fs::read_dir"));
        assert!(is_file_read("fs: std::path::Path::is_dir"));
        assert!(!is_file_read("fs: std::fs::write"));
        assert!(!is_file_read("fs: std::fs::OpenOptions::open"));
        assert!(!is_file_read("clock: std::time::SystemTime::now"));
        assert!(!is_file_read("env: std::env::var"));
    }
}
