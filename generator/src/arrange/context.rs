//! The recording as the rules query it: the trace, the crate's API and each function's
//! [`Target`], with what lies below each call worked out once (trait calls, reads of the world,
//! files) and caches the rules fill as they go. Built once per plan.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use carve_storage::{Call, CallId, FileRead, FunctionId, Trace, Value};

use crate::act::target::Target;
use crate::arrange::builder::Builder;
use crate::arrange::sequence::SplitStep;
use crate::arrange::wanted::Wanted;
use crate::read::crate_api::CrateApi;

/// What lies below a call (the call itself included for the reads), computed once for every
/// call so that no question about a subtree walks it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Below {
    /// A call made through a trait lies below it.
    pub trait_calls: bool,
    /// It or a call below it read the world in a way no test rebuilds.
    pub world: bool,
    /// It or a call below it read files a test rebuilds (see [`crate::arrange::world`]).
    pub files: bool,
    /// A call below it runs code outside the library (see [`leaves_library`]).
    pub outside: bool,
}

/// What the planner knows about the whole trace.
pub struct Ctx<'a> {
    pub trace: &'a Trace,
    pub api: &'a CrateApi,
    pub targets: &'a HashMap<FunctionId, Target>,
    pub children: &'a HashMap<Option<CallId>, Vec<usize>>,
    /// Per call, what lies below it (see [`Below`]).
    pub(crate) below: HashMap<CallId, Below>,
    /// Per call, the positions of its own file reads in `trace.file_reads`.
    pub(crate) file_reads: HashMap<CallId, Vec<usize>>,
    /// The replayable calls on each type, the shortest to write first (see [`crate::arrange::rebuild::derive`]).
    pub(crate) steps: RefCell<HashMap<String, Rc<Steps<'a>>>>,
    /// The counter searches done: by type, the class of the start state among the type's
    /// producers ([`Producers::class`]) and the key of the state wanted, the steps found.
    pub(crate) counter_paths: RefCell<CounterPaths>,
    /// Per type, the positions of the calls [`crate::arrange::rebuild::replay`] may use, in
    /// recording order, by the key of the state they leave the object in
    /// ([`crate::arrange::values::state_key`]).
    pub(crate) candidates: RefCell<HashMap<String, Rc<ByStateKey>>>,
    /// Per type, its recorded producers in the order they are tried, with the key of the state
    /// each gave (see [`crate::arrange::rebuild::producer::producers`]).
    pub(crate) producers: RefCell<HashMap<String, Rc<Producers>>>,
    /// Per `type::getter`, the positions of its recorded calls (see [`crate::arrange::check::getter_contradicted`]).
    pub(crate) getter_calls: RefCell<HashMap<String, Rc<Vec<usize>>>>,
    /// Per type, the positions of the calls whose result holds such a value as a part.
    pub(crate) parts: RefCell<HashMap<String, Rc<Vec<usize>>>>,
    /// Per type, its constructors that store their arguments (see
    /// [`crate::arrange::rebuild::stored_fields`]).
    pub(crate) stored_fields: RefCell<HashMap<String, Rc<Vec<Storing>>>>,
    /// Per type, the positions of its recorded text getters' calls (see [`crate::arrange::rebuild::text`]).
    pub(crate) text_getters: RefCell<HashMap<String, Rc<Vec<usize>>>>,
    /// The calls grouping left out of `trace`: per kept call, the equivalent calls dropped.
    pub(crate) equivalent: &'a BTreeMap<CallId, Vec<CallId>>,
    /// Per function, how many of its calls grouping dropped over its cap.
    pub(crate) over_max: &'a BTreeMap<FunctionId, usize>,
    /// The `Display` texts the recording holds, by state (see [`crate::arrange::texts::Texts`]).
    pub(crate) texts: crate::arrange::texts::Texts,
    /// Replay every step of an object's history, state-equivalent ones included (the fallback
    /// for a call whose shortened test failed verification; see [`crate::arrange::rebuild::history`]).
    pub(crate) whole_histories: std::cell::Cell<bool>,
    /// The calls whose result the program went on using (an object it made that a later call
    /// took by reference), with that object's type: a test replaying such a call keeps its
    /// result alive too (it may share state with the receiver: a split buffer's storage).
    pub(crate) results_used_later: HashMap<CallId, String>,
    /// Check the result only as the recording says it, no getter, `Display` or `Debug` beyond
    /// (the fallback for a call whose stronger test failed verification; `assert/getters.rs`),
    /// but for the probes of `assert/rules/variant_getters.rs`, which assert nothing recorded.
    pub(crate) weak_oracles: std::cell::Cell<bool>,
    /// The rebuild runner (`rebuild.rs`), which a rule that needs another object in turn (a
    /// producer's receiver, an object argument) reaches through [`Ctx::rebuild`]: no rule file
    /// names the runner that tries it, so the family has no loop between its files.
    rebuild: Rebuild<'a>,
    /// The writer of a private-field value through a constructor that stores its fields
    /// (`crate::arrange::rebuild::stored_fields::written`), reached through [`Constructing`].
    construct: Construct<'a>,
}

/// A constructor of a type that stores its arguments (see
/// [`crate::arrange::rebuild::stored_fields`]): the position of its latest recorded call in the
/// trace, and for each of its arguments (in order) the position of the field it becomes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Storing {
    pub(crate) call: usize,
    pub(crate) fields: Vec<usize>,
}

/// The signature of the rebuild runner, [`crate::arrange::rebuild::rebuild`].
pub(crate) type Rebuild<'a> = fn(&Ctx<'a>, &mut Builder, Wanted<'_>) -> Result<(), &'static str>;

/// The signature of [`crate::arrange::rebuild::stored_fields::written_avoiding`].
pub(crate) type Construct<'a> = fn(&Ctx<'a>, &Value, Option<FunctionId>) -> Option<String>;

/// The crate's types as [`Ctx::api`] knows them, with the values of private-field types written
/// through a constructor that stores their fields, wherever a literal holds one
/// (`Some(NodeIndex::<u32>::new(3usize))`); never by the function a test checks (`.1`), whose
/// expected value it would otherwise write by calling it.
pub(crate) struct Constructing<'c, 'a>(pub(crate) &'c Ctx<'a>, pub(crate) Option<FunctionId>);

impl crate::read::types::TypeFacts for Constructing<'_, '_> {
    fn shape(&self, path: &str) -> Option<crate::read::types::Shape> {
        self.0.api.shape(path)
    }

    fn unseen_type_nameable(&self, path: &str) -> bool {
        self.0.api.unseen_type_nameable(path)
    }

    fn constructed(&self, value: &Value) -> Option<String> {
        (self.0.construct)(self.0, value, self.1)
    }
}

/// The sources (`recorder/src/sources.rs` labels) that only read files by path, each through
/// one of the std functions whose reads the recorder snapshots.
pub const FILE_READS: &[&str] = &[
    "fs: std::fs::read_dir",
    "fs: std::fs::metadata",
    "fs: std::fs::symlink_metadata",
    "fs: std::fs::canonicalize",
    "fs: std::fs::read",
    "fs: std::fs::read_to_string",
    "fs: std::fs::File::open",
    "fs: std::path::Path::exists",
    "fs: std::path::Path::is_file",
    "fs: std::path::Path::is_dir",
    "fs: std::path::Path::metadata",
    "fs: std::path::Path::canonicalize",
    "fs: std::path::Path::read_dir",
];

pub(crate) const FILE_OPEN: &str = "fs: std::fs::File::open";

pub(crate) const OPTIONS_OPEN: &str = "fs: std::fs::OpenOptions::open";

/// See [`Ctx::counter_paths`].
pub(crate) type CounterPaths = HashMap<(String, usize, u64), Option<Rc<Vec<usize>>>>;

/// Positions of recorded calls by the key of a state ([`crate::arrange::values::state_key`]).
pub(crate) type ByStateKey = HashMap<u64, Vec<usize>>;

/// The recorded producers of one type (see [`crate::arrange::rebuild::producer::producers`]).
#[derive(Debug, Default)]
pub(crate) struct Producers {
    /// Positions of the calls in the order they are tried, each with the key of the state it
    /// gave ([`crate::arrange::values::state_key`]).
    pub(crate) in_order: Vec<(usize, u64)>,
    /// The same positions by key, in the same order within a key: a state wanted is compared
    /// only with the states that may equal it (comparing every producer's state, 20 KB each in
    /// base64's engines, was most of the planning time).
    pub(crate) by_key: ByStateKey,
    /// Per position of `in_order`, the class of its state: producers of the same state share
    /// one, numbered in order of first appearance (derived sequences start from one state of
    /// each class without comparing states again).
    pub(crate) class: Vec<usize>,
    /// How many classes there are (`class` holds 0 to `classes - 1`).
    pub(crate) classes: usize,
}

/// `cache[key]`, computing it with `make` the first time.
pub(crate) fn cached(
    cache: &RefCell<HashMap<String, Rc<Vec<usize>>>>,
    key: &str,
    make: impl FnOnce() -> Vec<usize>,
) -> Rc<Vec<usize>> {
    if let Some(found) = cache.borrow().get(key) {
        return Rc::clone(found);
    }
    let made = Rc::new(make());
    cache.borrow_mut().insert(key.to_string(), Rc::clone(&made));
    made
}

/// A recorded `&mut self` call a derived sequence may replay: `method(args)`, and the state
/// before and after.
pub(crate) type Step<'t> = (String, &'t Value, &'t Value);

/// The replayable calls on one type, the shortest to write first, and the same calls split for
/// the counter search ([`crate::arrange::sequence::split_steps`]), worked out once per type.
pub(crate) struct Steps<'t> {
    pub(crate) calls: Vec<Step<'t>>,
    pub(crate) split: Vec<Option<SplitStep>>,
}

impl<'a> Ctx<'a> {
    /// The recorded call with id `id` (calls are in id order).
    pub(crate) fn call_by_id(&self, id: CallId) -> Option<&'a Call> {
        let calls = &self.trace.calls;
        match calls.binary_search_by_key(&id, |c| c.id) {
            Ok(at) => Some(&calls[at]),
            Err(_) => calls.iter().find(|c| c.id == id),
        }
    }

    /// Works out once, for every call, what lies below it (walking the tree per question made
    /// carving a 10,000-call trace take minutes).
    pub fn new(
        trace: &'a Trace,
        api: &'a CrateApi,
        targets: &'a HashMap<FunctionId, Target>,
        children: &'a HashMap<Option<CallId>, Vec<usize>>,
        equivalent: &'a BTreeMap<CallId, Vec<CallId>>,
        over_max: &'a BTreeMap<FunctionId, usize>,
        (rebuild, construct): (Rebuild<'a>, Construct<'a>),
    ) -> Ctx<'a> {
        let mut cx = Ctx {
            trace,
            api,
            targets,
            children,
            equivalent,
            over_max,
            below: HashMap::new(),
            file_reads: HashMap::new(),
            steps: RefCell::new(HashMap::new()),
            counter_paths: RefCell::new(HashMap::new()),
            candidates: RefCell::new(HashMap::new()),
            producers: RefCell::new(HashMap::new()),
            getter_calls: RefCell::new(HashMap::new()),
            parts: RefCell::new(HashMap::new()),
            text_getters: RefCell::new(HashMap::new()),
            stored_fields: RefCell::new(HashMap::new()),
            texts: crate::arrange::texts::Texts::new(trace),
            whole_histories: std::cell::Cell::new(false),
            weak_oracles: std::cell::Cell::new(false),
            results_used_later: results_used_later(trace),
            rebuild,
            construct,
        };
        for (i, read) in trace.file_reads.iter().enumerate() {
            cx.file_reads.entry(read.call).or_default().push(i);
        }
        // Children start after their parent: in reverse order every child comes first.
        let mut below: HashMap<CallId, Below> = HashMap::with_capacity(trace.calls.len());
        for call in trace.calls.iter().rev() {
            let own: Vec<&FileRead> = cx.file_reads(call.id).collect();
            let (world, files) = own_reads(call, &own);
            let mut here = Below {
                world,
                files,
                ..Below::default()
            };
            for &i in children.get(&Some(call.id)).map_or(&[][..], Vec::as_slice) {
                let kid = &trace.calls[i];
                let theirs = below.get(&kid.id).copied().unwrap_or_default();
                here.trait_calls |= theirs.trait_calls || is_trait_call(&cx, kid).is_some();
                here.world |= theirs.world;
                here.files |= theirs.files;
                here.outside |= theirs.outside || !in_library(&cx, kid);
            }
            below.insert(call.id, here);
        }
        cx.below = below;
        cx
    }

    /// Adds a binding `w.var` holding an object in `w.state`, by the rules of `rebuild/` in
    /// their order (see [`crate::arrange::rebuild::rebuild`]).
    pub(crate) fn rebuild(&self, b: &mut Builder, w: Wanted) -> Result<(), &'static str> {
        (self.rebuild)(self, b, w)
    }

    /// The file reads `call` made itself, in the order it made them.
    pub(crate) fn file_reads(&self, call: CallId) -> impl Iterator<Item = &'a FileRead> + '_ {
        let trace = self.trace;
        self.file_reads
            .get(&call)
            .into_iter()
            .flatten()
            .map(move |&i| &trace.file_reads[i])
    }

    /// Whether the tests carved next replay objects' whole histories, leaving out no
    /// state-equivalent step (see [`crate::arrange::rebuild::history`]).
    pub fn replay_whole_histories(&self, whole: bool) {
        self.whole_histories.set(whole);
    }
}

/// The variable a replayed step's result is bound to: `_` (dropped at once) unless the program
/// went on using what one of `calls` returned ([`Ctx::results_used_later`]); then a fresh
/// `_name` that keeps it alive to the end of the test, as the program kept it.
pub(crate) fn step_result_var(cx: &Ctx, b: &mut Builder, calls: &[CallId]) -> String {
    let Some(ty) = calls.iter().find_map(|c| cx.results_used_later.get(c)) else {
        return "_".to_string();
    };
    let base = crate::read::types::strip_generics(ty);
    let name = base.rsplit("::").next().unwrap_or(base);
    // Unused by the test: its name says so (`_buf_2`, never a warning).
    format!("_{}", b.fresh(&crate::naming::snake_case(name)))
}

/// See [`Ctx::results_used_later`].
fn results_used_later(trace: &Trace) -> HashMap<CallId, String> {
    let mut last_use: HashMap<carve_storage::ObjectId, CallId> = HashMap::new();
    for call in &trace.calls {
        for o in &call.objects {
            let last = last_use.entry(o.object).or_insert(call.id);
            *last = (*last).max(call.id);
        }
    }
    (trace.objects.iter())
        .filter_map(|o| {
            let made_by = o.created_by?;
            (*last_use.get(&o.id)? > made_by).then(|| (made_by, o.type_name.clone()))
        })
        .collect()
}

pub(crate) fn is_trait_call(cx: &Ctx, call: &Call) -> Option<String> {
    let info = cx.trace.function(call.function)?;
    crate::read::paths::trait_of_impl(&info.path)
}

/// Whether `call`, or any call below it, read what a test cannot control, files included.
pub(crate) fn reads_world(cx: &Ctx, call: &Call) -> bool {
    cx.below.get(&call.id).is_some_and(|b| b.world || b.files)
}

/// Whether `call`, or any call below it, read what a test cannot control, files that
/// [`crate::arrange::world`] rebuilds left out: an arrange step replaying such a call is kept in
/// [`Builder`]'s `arranged`, and the test gets those files.
pub(crate) fn reads_unbuilt_world(cx: &Ctx, call: &Call) -> bool {
    cx.below.get(&call.id).is_some_and(|b| b.world)
}

/// Whether `call`, or any call below it, read files a test rebuilds.
pub(crate) fn reads_files(cx: &Ctx, id: CallId) -> bool {
    cx.below.get(&id).is_some_and(|b| b.files)
}

/// Whether a call below `id` runs code outside the library (a dependency the program passed
/// in, a closure of the program's).
pub(crate) fn leaves_library(cx: &Ctx, id: CallId) -> bool {
    cx.below.get(&id).is_some_and(|b| b.outside)
}

/// Whether `call` is a call of the library's own code (not the program's `main` around it).
pub(crate) fn in_library(cx: &Ctx, call: &Call) -> bool {
    cx.trace
        .function(call.function)
        .and_then(|f| f.decl_file.as_deref())
        .is_some_and(|file| cx.api.contains_file(std::path::Path::new(file)))
}

/// Whether what `call` itself read (not the calls below it) keeps it from running in a test.
pub(crate) fn own_world(cx: &Ctx, call: &Call) -> bool {
    let own: Vec<&FileRead> = cx.file_reads(call.id).collect();
    own_reads(call, &own).0
}

/// Visits the calls below `id`, each before the calls below it and siblings in recording order
/// (pre-order), going below a call when `visit` says so; stops at the first error. Walks with
/// a stack of its own, not by recursion: a recursion 100,000 calls deep records a tree as
/// deep, which a recursive walk would overflow the stack on.
pub(crate) fn walk_below<'t, E>(
    cx: &Ctx<'t>,
    id: CallId,
    mut visit: impl FnMut(&'t Call) -> Result<bool, E>,
) -> Result<(), E> {
    let trace: &'t Trace = cx.trace;
    let kids = |id: CallId| cx.children.get(&Some(id)).map_or(&[][..], Vec::as_slice);
    let mut stack = vec![kids(id).iter()];
    while let Some(top) = stack.last_mut() {
        let Some(&i) = top.next() else {
            stack.pop();
            continue;
        };
        let call = &trace.calls[i];
        if visit(call)? {
            stack.push(kids(call.id).iter());
        }
    }
    Ok(())
}

/// The first thing `call` or a call below it read that a test cannot control, and where:
/// `clock: std::time::SystemTime::now in app::stamp`.
pub fn world_read(cx: &Ctx, call: &Call) -> Option<String> {
    let read = |call: &Call| {
        let first = call.touches.first()?;
        let function = cx
            .trace
            .function(call.function)
            .map_or("?", |f| f.path.as_str());
        Some(format!("{first} in {function}"))
    };
    if let Some(found) = read(call) {
        return Some(found);
    }
    // The walk ends at the first read, handed out as its "error"; it goes only where some
    // call read the world (one with a read of its own always did).
    walk_below(cx, call.id, |below| match read(below) {
        Some(found) => Err(found),
        None => Ok(reads_world(cx, below)),
    })
    .err()
}

pub(crate) fn has_trait_calls(cx: &Ctx, id: CallId) -> bool {
    cx.below.get(&id).is_some_and(|b| b.trait_calls)
}

/// What `call` itself read: (something no test rebuilds, files a test can rebuild). A source
/// other than a file read by path, a read not seen whole, or a file source with no read seen
/// at all is the first.
pub(crate) fn own_reads(call: &Call, reads: &[&FileRead]) -> (bool, bool) {
    // `File::open` opens through `OpenOptions::open`, which also opens for writing: only
    // beside `File::open` is it taken for a read (a call opening one file each way is not told
    // apart; what it writes then, it writes under the test's directory).
    let opens = call.touches.iter().any(|t| t == FILE_OPEN);
    let other = call
        .touches
        .iter()
        .any(|t| !(FILE_READS.contains(&t.as_str()) || opens && t == OPTIONS_OPEN));
    let unseen = !call.touches.is_empty() && reads.is_empty();
    let partial = reads.iter().any(|r| !r.found.is_complete());
    (other || unseen || partial, !reads.is_empty())
}
