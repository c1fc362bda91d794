//! Matching a new trace against a baseline, call by call, and collecting the divergences.
//!
//! Roots are matched by function path and order (whatever thread ran them); the children of
//! each matched pair are aligned with a longest common subsequence over their function paths, so
//! an inserted or removed call does not shift the rest. Every difference has a *position*: the
//! chain of function paths from the root, which part of the call, and where inside the value.
//! Positions that differ between the baseline's own runs are unstable (Reneri keeps only the
//! properties equal across N executions) and are never reported. Nor is what a call left behind
//! (result, field effects) when something it read differed in an unstable way (an argument, or
//! a value inside one of its calls): `roll_sum` sums random rolls, so its result can differ even
//! if the baseline runs happened to agree on it.
//!
//! Values derived from unstable state are unstable too, even where the baseline runs happened
//! to agree. A call *holds* unstable state when one of its arguments (the receiver included)
//! differs from the reference at an unstable position, or holds a hash seed that differs (a
//! `RandomState`: a new one in every process). Below such a call, which nested call sees which
//! value, and which nested calls happen in which order, may follow that state (a hash picks
//! the probe, the seed the order of a walk over the entries): the arguments, return values
//! and effects of the calls nested under it, and nested calls added or missing, are not
//! reported, nor how many calls of each function ran below it (a probe per hash collision).
//! The holder's own result and effects (unless it read an unstable argument), any change of
//! outcome, and everything outside the holder are still compared.

use std::cell::Cell;
use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::hash::{Hash, Hasher};
use std::rc::Rc;

use carve_storage::{
    Arg, Call, CallId, FunctionId, FunctionInfo, Outcome, ProcessExit, Trace, Value,
};

use crate::align::{align_scored, Step};
use crate::error::GateError;
use crate::report::{Divergence, DivergenceKind, Group, Mode, Report, Summary};
use crate::value_diff::{one_sided, Difference};
use carve_storage::matches_function;

/// How to compare.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// Function globs (the syntax of `carve record --filter`) whose calls are not compared:
    /// differences in their arguments, results and effects, and their being added, missing or
    /// counted differently, are skipped.
    pub ignore: Vec<String>,
}

/// Added (or missing) calls listed one by one under one parent; the rest are counted in one
/// divergence (a panic can run thousands of selected calls in the panic machinery).
const MAX_LISTED: usize = 5;

/// Longest rendering of one value in a report.
const MAX_RENDERED: usize = 240;

/// Compares `new` with the baseline: `baseline` holds runs of the same program and selection,
/// oldest first; the last is the reference, the earlier ones teach which positions are unstable.
pub fn compare(baseline: &[Trace], new: &Trace, options: &Options) -> Result<Report, GateError> {
    let (reference, earlier) = baseline.split_last().ok_or(GateError::NoBaseline)?;
    if let Some(empty) = options.ignore.iter().find(|g| g.trim().is_empty()) {
        return Err(GateError::EmptyIgnore(empty.clone()));
    }
    let reference_tree = Tree::new(reference);
    let mut unstable = HashSet::new();
    for run in earlier {
        let tree = Tree::new(run);
        let mut learner = Walker::new(&reference_tree, &tree, None, &[]);
        learner.walk();
        unstable.extend(learner.learned);
    }
    let new_tree = Tree::new(new);
    let mut walker = Walker::new(&reference_tree, &new_tree, Some(&unstable), &options.ignore);
    walker.walk();
    let mut report = walker.into_report();
    report.subject = new.run.info.program.clone();
    report.baseline_runs = baseline.iter().map(|t| t.run.id.0).collect();
    Ok(report)
}

/// A trace indexed for walking: children per parent in start order, functions by id.
struct Tree<'t> {
    trace: &'t Trace,
    kids: HashMap<Option<CallId>, Vec<&'t Call>>,
    functions: HashMap<FunctionId, &'t FunctionInfo>,
}

impl<'t> Tree<'t> {
    fn new(trace: &'t Trace) -> Tree<'t> {
        let ids: HashSet<CallId> = trace.calls.iter().map(|c| c.id).collect();
        let mut kids: HashMap<Option<CallId>, Vec<&Call>> = HashMap::new();
        let mut calls: Vec<&Call> = trace.calls.iter().collect();
        calls.sort_by_key(|c| c.id);
        for c in calls {
            // A parent must exist and have started earlier; anything else is read as a root, so
            // an odd trace can never make the walk loop.
            let parent = c.parent.filter(|p| ids.contains(p) && *p < c.id);
            kids.entry(parent).or_default().push(c);
        }
        let functions = trace.functions.iter().map(|f| (f.id, f)).collect();
        Tree {
            trace,
            kids,
            functions,
        }
    }

    fn kids(&self, parent: Option<CallId>) -> &[&'t Call] {
        self.kids.get(&parent).map(Vec::as_slice).unwrap_or(&[])
    }

    fn path(&self, c: &Call) -> &'t str {
        self.functions
            .get(&c.function)
            .map(|f| f.path.as_str())
            .unwrap_or("?")
    }

    /// What aligning siblings looks at: the function path and fingerprints of the arguments
    /// and of the way the call ended (as displayed, so addresses of references do not count).
    fn key(&self, c: &Call) -> (&'t str, u64, u64) {
        let mut args = DefaultHasher::new();
        for a in &c.args {
            a.name.hash(&mut args);
            a.value.to_string().hash(&mut args);
        }
        let mut end = DefaultHasher::new();
        outcome_text(c).hash(&mut end);
        c.ret.as_ref().map(Value::to_string).hash(&mut end);
        (self.path(c), args.finish(), end.finish())
    }

    fn name(&self, c: &Call) -> &'t str {
        self.functions
            .get(&c.function)
            .map(|f| f.name.as_str())
            .unwrap_or("?")
    }
}

/// Where a call sits, shared by its children.
struct Ctx {
    /// For people: `main > evaluate > apply#2`.
    display: String,
    /// For positions: full function paths from the root, joined by ` > `.
    chain: String,
    /// Index of the group (top-level function) the call belongs to.
    group: usize,
    /// A root `main`: its children are the top-level calls.
    transparent: bool,
    /// An enclosing call holds unstable state (see the module doc): this call's values, and
    /// its being added or missing, may be derived from it.
    derived: bool,
    /// This call's arguments hold unstable state: set when its arguments are compared, before
    /// its children get their contexts.
    holds: Cell<bool>,
}

impl Ctx {
    /// What the children of this call inherit: whether they run under unstable state.
    fn passes_on_unstable_state(&self) -> bool {
        self.derived || self.holds.get()
    }
}

enum Work<'t> {
    /// Visit one alignment step under `parent`; `nth` is the call's rank among its siblings of
    /// the same function (1-based).
    Visit {
        step: Pair<'t>,
        parent: Option<Rc<Ctx>>,
        nth: usize,
    },
    /// Compare how a matched pair ended, after its children.
    Finish {
        base: &'t Call,
        new: &'t Call,
        ctx: Rc<Ctx>,
    },
}

#[derive(Clone, Copy)]
enum Pair<'t> {
    Both(&'t Call, &'t Call),
    Base(&'t Call),
    New(&'t Call),
}

struct GroupAcc {
    function: String,
    /// Call path of its first top-level call.
    display: String,
    calls: usize,
    divergences: Vec<Divergence>,
    /// Calls per function inside this group's top-level calls: (function, baseline, new),
    /// leaving out calls made below a call holding unstable state.
    counts: Vec<(String, usize, usize)>,
    /// Calls made below a call holding unstable state, per function: (function, baseline, new).
    /// How many there are may follow the state (a probe per hash collision); only counted as
    /// ignored when they differ.
    derived_counts: BTreeMap<String, (usize, usize)>,
    count_index: HashMap<String, usize>,
}

struct Walker<'a, 't> {
    base: &'a Tree<'t>,
    new: &'a Tree<'t>,
    /// `None` while learning unstable positions from another baseline run.
    unstable: Option<&'a HashSet<String>>,
    ignore: &'a [String],
    learned: HashSet<String>,
    groups: Vec<GroupAcc>,
    group_index: HashMap<String, usize>,
    process: Vec<Divergence>,
    summary: Summary,
    /// Added / missing calls listed so far per (parent call path, kind).
    listed: HashMap<(String, DivergenceKind), usize>,
    /// Those beyond [`MAX_LISTED`]: (group, parent call path, kind) → how many.
    unlisted: Vec<((usize, String, DivergenceKind), usize)>,
    /// Calls (by display path) that read a value differing in an unstable way, in an argument or
    /// inside a call they made, and each of their callers.
    tainted: HashSet<String>,
}

impl<'a, 't> Walker<'a, 't> {
    fn new(
        base: &'a Tree<'t>,
        new: &'a Tree<'t>,
        unstable: Option<&'a HashSet<String>>,
        ignore: &'a [String],
    ) -> Self {
        Walker {
            base,
            new,
            unstable,
            ignore,
            learned: HashSet::new(),
            groups: Vec::new(),
            group_index: HashMap::new(),
            process: Vec::new(),
            summary: Summary::default(),
            listed: HashMap::new(),
            unlisted: Vec::new(),
            tainted: HashSet::new(),
        }
    }

    /// Marks the call at `display` and its callers as having read an unstable value.
    fn taint(&mut self, display: &str) {
        let mut end = display.len();
        loop {
            if !self.tainted.insert(display[..end].to_string()) {
                return; // its callers are marked already
            }
            match display[..end].rfind(" > ") {
                Some(at) => end = at,
                None => return,
            }
        }
    }

    fn learning(&self) -> bool {
        self.unstable.is_none()
    }

    fn walk(&mut self) {
        self.compare_exit();
        let mut stack: Vec<Work<'t>> = Vec::new();
        let roots = self.match_roots();
        push_visits(&mut stack, roots, None, self.base, self.new);
        while let Some(work) = stack.pop() {
            match work {
                Work::Visit { step, parent, nth } => self.visit(step, parent, nth, &mut stack),
                Work::Finish { base, new, ctx } => {
                    self.flush_unlisted(&ctx.display);
                    self.finish(base, new, &ctx)
                }
            }
        }
        self.flush_unlisted("");
        self.count_divergences();
    }

    /// Roots by (function path, order), whatever thread ran them.
    fn match_roots(&self) -> Vec<Pair<'t>> {
        let base = self.base.kids(None);
        let new = self.new.kids(None);
        let mut by_path: HashMap<&str, VecDeque<usize>> = HashMap::new();
        for (j, c) in new.iter().enumerate() {
            by_path.entry(self.new.path(c)).or_default().push_back(j);
        }
        let mut used = vec![false; new.len()];
        let mut pairs = Vec::with_capacity(base.len().max(new.len()));
        for b in base {
            match by_path
                .get_mut(self.base.path(b))
                .and_then(VecDeque::pop_front)
            {
                Some(j) => {
                    used[j] = true;
                    pairs.push(Pair::Both(b, new[j]));
                }
                None => pairs.push(Pair::Base(b)),
            }
        }
        pairs.extend(
            new.iter()
                .zip(&used)
                .filter(|(_, used)| !**used)
                .map(|(c, _)| Pair::New(c)),
        );
        pairs
    }

    fn compare_exit(&mut self) {
        let base = exit_text(&self.base.trace.run.end.as_ref().map(|e| e.exit.clone()));
        let new = exit_text(&self.new.trace.run.end.as_ref().map(|e| e.exit.clone()));
        if base == new {
            return;
        }
        let key = "exit|".to_string();
        if self.learning() {
            self.learned.insert(key);
            return;
        }
        if self.is_unstable(&key) {
            self.summary.ignored_unstable += 1;
            return;
        }
        self.process.push(Divergence {
            kind: DivergenceKind::ExitChanged,
            call_path: "process".into(),
            function: self.base.trace.run.info.program.clone(),
            field: None,
            at: String::new(),
            baseline: Some(base),
            new: Some(new),
        });
    }

    fn group(&mut self, function: &str) -> usize {
        if let Some(&g) = self.group_index.get(function) {
            return g;
        }
        self.groups.push(GroupAcc {
            function: function.to_string(),
            display: String::new(),
            calls: 0,
            divergences: Vec::new(),
            counts: Vec::new(),
            derived_counts: BTreeMap::new(),
            count_index: HashMap::new(),
        });
        self.group_index
            .insert(function.to_string(), self.groups.len() - 1);
        self.groups.len() - 1
    }

    fn context(&mut self, parent: Option<&Ctx>, path: &str, name: &str, nth: usize) -> Rc<Ctx> {
        let shown = if nth > 1 {
            format!("{name}#{nth}")
        } else {
            name.to_string()
        };
        let ctx = match parent {
            None => Ctx {
                display: shown,
                chain: path.to_string(),
                group: self.group(path),
                transparent: name == "main",
                derived: false,
                holds: Cell::new(false),
            },
            Some(p) => Ctx {
                display: format!("{} > {shown}", p.display),
                chain: format!("{} > {path}", p.chain),
                group: if p.transparent {
                    self.group(path)
                } else {
                    p.group
                },
                transparent: false,
                derived: p.passes_on_unstable_state(),
                holds: Cell::new(false),
            },
        };
        Rc::new(ctx)
    }

    fn visit(
        &mut self,
        step: Pair<'t>,
        parent: Option<Rc<Ctx>>,
        nth: usize,
        stack: &mut Vec<Work<'t>>,
    ) {
        let top = parent.as_ref().is_none_or(|p| p.transparent);
        match step {
            Pair::Both(b, n) => {
                let (path, name) = (self.base.path(b), self.base.name(b));
                let ctx = self.context(parent.as_deref(), path, name, nth);
                if top {
                    self.top_level(&ctx, true);
                }
                self.count(&ctx, path, 1, 1);
                self.summary.calls_compared += 1;
                self.compare_args(b, n, &ctx, path, name);
                // A call that now panics (or returns where it panicked) says so before what
                // changed inside it: the panic's own calls are consequences.
                self.compare_outcome(b, n, &ctx, path, name);
                stack.push(Work::Finish {
                    base: b,
                    new: n,
                    ctx: ctx.clone(),
                });
                let base_kids = self.base.kids(Some(b.id));
                let new_kids = self.new.kids(Some(n.id));
                let base_keys: Vec<(&str, u64, u64)> =
                    base_kids.iter().map(|c| self.base.key(c)).collect();
                let new_keys: Vec<(&str, u64, u64)> =
                    new_kids.iter().map(|c| self.new.key(c)).collect();
                // Pairing one more call always beats any number of equal values (so random
                // values never shift the alignment); equal arguments and results only choose
                // among alignments pairing as many calls.
                let pair = 2 * base_keys.len().min(new_keys.len()) as u32 + 1;
                let pairs = align_scored(base_keys.len(), new_keys.len(), pair + 2, |i, j| {
                    let (b, n) = (&base_keys[i], &new_keys[j]);
                    if b.0 != n.0 {
                        0
                    } else {
                        pair + u32::from(b.1 == n.1) + u32::from(b.2 == n.2)
                    }
                })
                .into_iter()
                .map(|s| match s {
                    Step::Both(i, j) => Pair::Both(base_kids[i], new_kids[j]),
                    Step::Base(i) => Pair::Base(base_kids[i]),
                    Step::New(j) => Pair::New(new_kids[j]),
                })
                .collect();
                push_visits(stack, pairs, Some(ctx), self.base, self.new);
            }
            Pair::Base(b) => self.one_sided(b, true, parent.as_deref(), nth, top),
            Pair::New(n) => self.one_sided(n, false, parent.as_deref(), nth, top),
        }
    }

    /// A call only the baseline made (`in_base`: missing now) or only the new run made (added).
    fn one_sided(
        &mut self,
        call: &Call,
        in_base: bool,
        parent: Option<&Ctx>,
        nth: usize,
        top: bool,
    ) {
        let tree = if in_base { self.base } else { self.new };
        let (path, name) = (tree.path(call), tree.name(call));
        let ctx = self.context(parent, path, name, nth);
        if top {
            self.top_level(&ctx, in_base);
        }
        let (in_baseline, in_new) = if in_base { (1, 0) } else { (0, 1) };
        self.count(&ctx, path, in_baseline, in_new);
        let key = structural_key(parent, path);
        let summary = Some(call_summary(call, name));
        let (kind, base, new) = if in_base {
            (DivergenceKind::CallMissing, summary, None)
        } else {
            (DivergenceKind::CallAdded, None, summary)
        };
        self.structural(kind, &ctx, path, name, key, base, new);
    }

    /// Notes a top-level call of its group (`in_base`: the baseline made it).
    fn top_level(&mut self, ctx: &Ctx, in_base: bool) {
        let group = &mut self.groups[ctx.group];
        if in_base {
            group.calls += 1;
        }
        if group.display.is_empty() {
            group.display = ctx.display.clone();
        }
    }

    fn compare_outcome(&mut self, b: &Call, n: &Call, ctx: &Ctx, path: &str, name: &str) {
        let (base_end, new_end) = (outcome_text(b), outcome_text(n));
        if base_end != new_end {
            self.value_divergence(
                DivergenceKind::OutcomeChanged,
                ctx,
                path,
                name,
                ("outcome", "outcome"),
                vec![Difference {
                    at: String::new(),
                    position: String::new(),
                    scope: String::new(),
                    base: None,
                    new: None,
                    seed: false,
                }],
                Some((ended(b, &base_end), ended(n, &new_end))),
            );
        }
    }

    /// What a matched call left behind: its result and field effects, when both returned.
    fn finish(&mut self, b: &Call, n: &Call, ctx: &Ctx) {
        let (path, name) = (self.base.path(b), self.base.name(b));
        if b.outcome != Outcome::Returned || outcome_text(b) != outcome_text(n) {
            return;
        }
        let diffs = one_sided(b.ret.as_ref(), n.ret.as_ref());
        self.value_divergence(
            DivergenceKind::ReturnChanged,
            ctx,
            path,
            name,
            ("return value", "ret"),
            diffs,
            None,
        );
        let effects = (DivergenceKind::EffectChanged, &b.after[..], &n.after[..]);
        self.compare_named(effects, ctx, (path, name), |p| {
            (format!("{p} after the call"), format!("after:{p}"))
        });
    }

    fn compare_args(&mut self, b: &Call, n: &Call, ctx: &Ctx, path: &str, name: &str) {
        let args = (DivergenceKind::ArgumentChanged, &b.args[..], &n.args[..]);
        self.compare_named(args, ctx, (path, name), |p| {
            (format!("argument {p}"), format!("arg:{p}"))
        });
    }

    /// Compares same-named values (arguments, or states after the call) of a matched pair;
    /// `label` gives each parameter's label and position key.
    fn compare_named(
        &mut self,
        (kind, base, new): (DivergenceKind, &[Arg], &[Arg]),
        ctx: &Ctx,
        (path, name): (&str, &str),
        label: impl Fn(&str) -> (String, String),
    ) {
        fn value<'v>(args: &'v [Arg], p: &str) -> Option<&'v Value> {
            args.iter().find(|a| a.name == p).map(|a| &a.value)
        }
        for param in names(base, new) {
            let diffs = one_sided(value(base, param), value(new, param));
            let (text, key) = label(param);
            self.value_divergence(kind, ctx, path, name, (&text, &key), diffs, None);
        }
    }

    /// Records (or learns) a difference in one part of a matched call. `texts` overrides the
    /// rendered values (outcomes).
    #[allow(clippy::too_many_arguments)]
    fn value_divergence(
        &mut self,
        kind: DivergenceKind,
        ctx: &Ctx,
        path: &str,
        name: &str,
        (label, field_key): (&str, &str),
        diffs: Vec<Difference<'_>>,
        texts: Option<(String, String)>,
    ) {
        // A differing hash seed is never reported; in an argument, it is unstable state held.
        let seeds = diffs.iter().any(|d| d.seed);
        let diffs: Vec<Difference<'_>> = diffs.into_iter().filter(|d| !d.seed).collect();
        let key = |d: &Difference<'_>| format!("{}|{field_key}|{}", ctx.chain, d.position);
        if kind == DivergenceKind::ArgumentChanged
            && !self.learning()
            && (seeds || diffs.iter().any(|d| self.is_unstable(&key(d))))
        {
            ctx.holds.set(true);
        }
        if diffs.is_empty() {
            return;
        }
        if self.learning() {
            // What differs between baseline runs makes its whole scope unstable.
            let keys: Vec<String> = diffs
                .iter()
                .map(|d| format!("{}|{field_key}|{}", ctx.chain, d.scope))
                .collect();
            self.learned.extend(keys);
            return;
        }
        let value_kind = matches!(
            kind,
            DivergenceKind::ArgumentChanged
                | DivergenceKind::ReturnChanged
                | DivergenceKind::EffectChanged
        );
        if value_kind && ctx.derived {
            self.summary.ignored_unstable += 1;
            return;
        }
        let left_behind = matches!(
            kind,
            DivergenceKind::ReturnChanged | DivergenceKind::EffectChanged
        );
        if left_behind && self.tainted.contains(&ctx.display) {
            self.summary.ignored_unstable += 1;
            return;
        }
        let Some(first) = diffs.iter().find(|d| !self.is_unstable(&key(d))) else {
            self.summary.ignored_unstable += 1;
            self.taint(&ctx.display);
            return;
        };
        if self.ignored(path, name) {
            self.summary.ignored_by_glob += 1;
            return;
        }
        let (baseline, new) = match texts {
            Some((b, n)) => (Some(b), Some(n)),
            None => (first.base.map(render), first.new.map(render)),
        };
        let divergence = Divergence {
            kind,
            call_path: ctx.display.clone(),
            function: path.to_string(),
            field: Some(label.to_string()),
            at: first.at.clone(),
            baseline,
            new,
        };
        self.groups[ctx.group].divergences.push(divergence);
    }

    #[allow(clippy::too_many_arguments)]
    fn structural(
        &mut self,
        kind: DivergenceKind,
        ctx: &Ctx,
        path: &str,
        name: &str,
        key: String,
        baseline: Option<String>,
        new: Option<String>,
    ) {
        if self.learning() {
            self.learned.insert(key);
            return;
        }
        if self.is_unstable(&key) {
            self.taint(&ctx.display);
            self.summary.ignored_unstable += 1;
            return;
        }
        // Added or missing under a call holding unstable state (ctx is the added call's own).
        if ctx.derived {
            self.summary.ignored_unstable += 1;
            return;
        }
        if self.ignored(path, name) {
            self.summary.ignored_by_glob += 1;
            return;
        }
        let parent = match ctx.display.rsplit_once(" > ") {
            Some((parent, _)) => parent.to_string(),
            None => String::new(),
        };
        let listed = self.listed.entry((parent.clone(), kind)).or_default();
        if *listed >= MAX_LISTED {
            let slot = (ctx.group, parent, kind);
            match self.unlisted.iter_mut().find(|(k, _)| *k == slot) {
                Some((_, n)) => *n += 1,
                None => self.unlisted.push((slot, 1)),
            }
            return;
        }
        *listed += 1;
        self.groups[ctx.group].divergences.push(Divergence {
            kind,
            call_path: ctx.display.clone(),
            function: path.to_string(),
            field: None,
            at: String::new(),
            baseline,
            new,
        });
    }

    /// One divergence for the added or missing calls not listed under `parent`.
    fn flush_unlisted(&mut self, parent: &str) {
        let (done, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut self.unlisted)
            .into_iter()
            .partition(|((_, p, _), _)| p == parent);
        self.unlisted = keep;
        for ((group, parent, kind), n) in done {
            let text = format!("{n} more call{}", if n == 1 { "" } else { "s" });
            let (baseline, new) = match kind {
                DivergenceKind::CallMissing => (Some(text), None),
                _ => (None, Some(text)),
            };
            let call_path = if parent.is_empty() {
                "…".to_string()
            } else {
                format!("{parent} > …")
            };
            self.groups[group].divergences.push(Divergence {
                kind,
                call_path,
                function: String::new(),
                field: None,
                at: String::new(),
                baseline,
                new,
            });
        }
    }

    fn count(&mut self, ctx: &Ctx, path: &str, base: usize, new: usize) {
        let g = &mut self.groups[ctx.group];
        if ctx.derived {
            let n = g.derived_counts.entry(path.to_string()).or_default();
            n.0 += base;
            n.1 += new;
            return;
        }
        let i = match g.count_index.get(path) {
            Some(&i) => i,
            None => {
                g.counts.push((path.to_string(), 0, 0));
                g.count_index.insert(path.to_string(), g.counts.len() - 1);
                g.counts.len() - 1
            }
        };
        g.counts[i].1 += base;
        g.counts[i].2 += new;
    }

    /// Per group, every function whose matched plus added (or missing) calls differ in number:
    /// a summary after the group's other divergences. Calls inside an added or missing subtree
    /// are not counted; the subtree's root already says it all.
    fn count_divergences(&mut self) {
        for g in 0..self.groups.len() {
            self.summary.ignored_unstable += self.groups[g]
                .derived_counts
                .values()
                .filter(|(base, new)| base != new)
                .count();
            let group = self.groups[g].function.clone();
            let counts = self.groups[g].counts.clone();
            for (function, base, new) in counts {
                if base == new {
                    continue;
                }
                let key = format!("count|{group}|{function}");
                if self.learning() {
                    self.learned.insert(key);
                    continue;
                }
                if self.is_unstable(&key) {
                    self.summary.ignored_unstable += 1;
                    continue;
                }
                let name = bare_name(&function);
                if self.ignored(&function, name) {
                    self.summary.ignored_by_glob += 1;
                    continue;
                }
                let call_path = self.groups[g].display.clone();
                self.groups[g].divergences.push(Divergence {
                    kind: DivergenceKind::CallCountChanged,
                    call_path,
                    function: function.clone(),
                    field: Some("calls".into()),
                    at: String::new(),
                    baseline: Some(times(base)),
                    new: Some(times(new)),
                });
            }
        }
    }

    /// True when `key` or a position enclosing it differed between baseline runs.
    fn is_unstable(&self, key: &str) -> bool {
        let Some(unstable) = self.unstable else {
            return false;
        };
        if unstable.contains(key) {
            return true;
        }
        // `chain|field|.a.b[*]` is also covered by `chain|field|.a` and `chain|field|`.
        let Some(bar) = key.rfind('|') else {
            return false;
        };
        key[bar + 1..]
            .char_indices()
            .filter(|(_, c)| matches!(c, '.' | '['))
            .any(|(i, _)| unstable.contains(&key[..bar + 1 + i]))
    }

    fn ignored(&self, path: &str, name: &str) -> bool {
        self.ignore.iter().any(|g| matches_function(g, path, name))
    }

    fn into_report(self) -> Report {
        let mut summary = self.summary;
        let groups: Vec<Group> = self
            .groups
            .into_iter()
            .map(|g| {
                let mut divergences = g.divergences.into_iter();
                Group {
                    module: module_of(&g.function),
                    function: g.function,
                    calls: g.calls,
                    first: divergences.next(),
                    others: divergences.collect(),
                }
            })
            .collect();
        summary.functions = groups.len();
        summary.diverged_functions = groups.iter().filter(|g| g.diverged()).count();
        summary.divergences = self.process.len()
            + groups
                .iter()
                .map(|g| g.divergences().count())
                .sum::<usize>();
        Report {
            mode: Mode::Trace,
            subject: String::new(),
            baseline_runs: Vec::new(),
            process: self.process,
            groups,
            summary,
        }
    }
}

/// Pushes visits for `pairs` so they pop in order, numbering each call among its siblings of
/// the same function.
fn push_visits<'t>(
    stack: &mut Vec<Work<'t>>,
    pairs: Vec<Pair<'t>>,
    parent: Option<Rc<Ctx>>,
    base: &Tree<'t>,
    new: &Tree<'t>,
) {
    let mut base_seen: HashMap<&str, usize> = HashMap::new();
    let mut new_seen: HashMap<&str, usize> = HashMap::new();
    let mut visits = Vec::with_capacity(pairs.len());
    for pair in pairs {
        let nth = match pair {
            Pair::Both(b, n) => {
                *new_seen.entry(new.path(n)).or_default() += 1;
                bump(&mut base_seen, base.path(b))
            }
            Pair::Base(b) => bump(&mut base_seen, base.path(b)),
            Pair::New(n) => bump(&mut new_seen, new.path(n)),
        };
        visits.push(Work::Visit {
            step: pair,
            parent: parent.clone(),
            nth,
        });
    }
    stack.extend(visits.into_iter().rev());
}

fn bump<'s>(seen: &mut HashMap<&'s str, usize>, path: &'s str) -> usize {
    let n = seen.entry(path).or_default();
    *n += 1;
    *n
}

/// The position of a call added or missing under `parent`.
fn structural_key(parent: Option<&Ctx>, path: &str) -> String {
    let chain = parent.map(|p| p.chain.as_str()).unwrap_or("");
    format!("{chain}|children|{path}")
}

/// Parameter names of both sides: the baseline's order, then names only the new call has.
fn names<'c>(base: &'c [Arg], new: &'c [Arg]) -> Vec<&'c str> {
    let mut out: Vec<&str> = base.iter().map(|a| a.name.as_str()).collect();
    for a in new {
        if !out.contains(&a.name.as_str()) {
            out.push(&a.name);
        }
    }
    out
}

fn outcome_text(c: &Call) -> String {
    match &c.outcome {
        Outcome::Returned => "returned".into(),
        Outcome::Panicked { message: Some(m) } => format!("panicked: {m}"),
        Outcome::Panicked { message: None } => "panicked".into(),
        Outcome::Unwound => "unwound".into(),
        Outcome::Unfinished => "unfinished".into(),
    }
}

/// How a call ended, with its value when it returned one.
fn ended(c: &Call, outcome: &str) -> String {
    match (&c.outcome, &c.ret) {
        (Outcome::Returned, Some(v)) => format!("returned {}", render(v)),
        _ => outcome.to_string(),
    }
}

fn exit_text(exit: &Option<ProcessExit>) -> String {
    match exit {
        Some(ProcessExit::Exited { code }) => format!("exited with {code}"),
        Some(ProcessExit::Signaled { name, .. }) => format!("killed by {name}"),
        Some(ProcessExit::Lost { .. }) => "recording lost the process".into(),
        None => "recording did not finish".into(),
    }
}

/// `apply('+', 3.0, 4.0) = 7.0`, for added and missing calls.
fn call_summary(c: &Call, name: &str) -> String {
    let args: Vec<String> = c.args.iter().map(|a| render(&a.value)).collect();
    let end = match (&c.outcome, &c.ret) {
        (Outcome::Returned, Some(v)) => format!(" = {}", render(v)),
        (Outcome::Returned, None) => String::new(),
        _ => format!(" ({})", outcome_text(c)),
    };
    clip(format!("{name}({}){end}", args.join(", ")))
}

fn times(n: usize) -> String {
    if n == 1 {
        "1 call".into()
    } else {
        format!("{n} calls")
    }
}

/// A value for people, cut at [`MAX_RENDERED`] characters.
pub(crate) fn render(v: &Value) -> String {
    clip(v.to_string())
}

fn clip(mut text: String) -> String {
    if let Some((cut, _)) = text.char_indices().nth(MAX_RENDERED) {
        text.truncate(cut);
        text.push('…');
    }
    text
}

/// The last segment of a function path: `answer` for `<abc::A as abc::Answerer>::answer`.
pub(crate) fn bare_name(path: &str) -> &str {
    path.rsplit("::").next().unwrap_or(path)
}

/// The module or type a function lives in (JUnit's classname): `expr::eval` for
/// `expr::eval::apply`, `abc::A` for `<abc::A as abc::Answerer>::answer`, the path itself for a
/// C function.
pub(crate) fn module_of(path: &str) -> String {
    if let Some(rest) = path.strip_prefix('<') {
        let mut depth = 0usize;
        for (i, c) in rest.char_indices() {
            match c {
                '<' => depth += 1,
                '>' if depth == 0 => {
                    let inner = &rest[..i];
                    let ty = inner.split(" as ").next().unwrap_or(inner);
                    return ty.trim().to_string();
                }
                '>' => depth -= 1,
                _ => {}
            }
        }
        return path.to_string();
    }
    match split_last_segment(path) {
        Some(module) => module.to_string(),
        None => path.to_string(),
    }
}

/// `a::b<c::d>::f` → `a::b<c::d>`: the path before its last `::` outside generics.
fn split_last_segment(path: &str) -> Option<&str> {
    let mut depth = 0usize;
    let mut last = None;
    let bytes = path.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'<' => depth += 1,
            b'>' => depth = depth.saturating_sub(1),
            b':' if depth == 0 && bytes.get(i + 1) == Some(&b':') => last = Some(i),
            _ => {}
        }
    }
    last.map(|i| &path[..i])
}
