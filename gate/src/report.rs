//! The gate's result as plain data: per top-level function, the first divergence and the others.
//! It serializes to the JSON documented in docs/gate-report.md.

use serde::Serialize;

/// What was compared to produce a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// A new recording compared with a baseline trace.
    Trace,
    /// Carved tests run with `cargo test`.
    Tests,
}

/// The result of a gate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub mode: Mode,
    /// The recorded program (trace mode) or the crate directory (tests mode).
    pub subject: String,
    /// Baseline run ids, oldest first; the last is the reference the new run is compared with,
    /// the earlier ones only teach which values are unstable. Empty in tests mode.
    pub baseline_runs: Vec<i64>,
    /// Divergences of the process as a whole (its exit status).
    pub process: Vec<Divergence>,
    /// One group per top-level function, in the order the comparison met them. The children of
    /// a root `main` are the top-level calls (`main` keeps a group for its own values).
    pub groups: Vec<Group>,
    pub summary: Summary,
}

/// The calls of one top-level function (in tests mode: the carved tests of one function).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Group {
    /// Full function path, e.g. `expr::evaluate`.
    pub function: String,
    /// The module or type holding it (`expr`, `dice::Dice`): JUnit's classname.
    pub module: String,
    /// Top-level calls of the function in the baseline (tests mode: carved tests of it).
    pub calls: usize,
    /// The earliest divergence in execution order, if any.
    pub first: Option<Divergence>,
    /// Every other divergence, in execution order.
    pub others: Vec<Divergence>,
}

impl Group {
    /// Every divergence of the group, the first one first.
    pub fn divergences(&self) -> impl Iterator<Item = &Divergence> {
        self.first.iter().chain(&self.others)
    }

    pub fn diverged(&self) -> bool {
        self.first.is_some()
    }
}

/// Counts over the whole report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Groups in the report.
    pub functions: usize,
    /// Groups with at least one divergence.
    pub diverged_functions: usize,
    /// Divergences reported (process and groups).
    pub divergences: usize,
    /// Calls present in both traces and compared field by field (tests mode: tests run).
    pub calls_compared: usize,
    /// Differences skipped because the value also differed between baseline runs.
    pub ignored_unstable: usize,
    /// Differences skipped because `--ignore` matched the function.
    pub ignored_by_glob: usize,
}

/// Which kind of behaviour changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DivergenceKind {
    /// A call returned a different value.
    ReturnChanged,
    /// A call ended differently: returned vs panicked, another panic message, unwound...
    OutcomeChanged,
    /// What `self` or a `&mut` argument held after the call changed.
    EffectChanged,
    /// A call received different arguments.
    ArgumentChanged,
    /// The new run made a call the baseline did not.
    CallAdded,
    /// The baseline made a call the new run did not.
    CallMissing,
    /// A function was called a different number of times within one top-level call.
    CallCountChanged,
    /// The process exited differently.
    ExitChanged,
    /// A carved test failed (tests mode).
    TestFailed,
}

impl DivergenceKind {
    /// The kind's JSON name: `return_changed`.
    pub fn as_str(self) -> &'static str {
        match self {
            DivergenceKind::ReturnChanged => "return_changed",
            DivergenceKind::OutcomeChanged => "outcome_changed",
            DivergenceKind::EffectChanged => "effect_changed",
            DivergenceKind::ArgumentChanged => "argument_changed",
            DivergenceKind::CallAdded => "call_added",
            DivergenceKind::CallMissing => "call_missing",
            DivergenceKind::CallCountChanged => "call_count_changed",
            DivergenceKind::ExitChanged => "exit_changed",
            DivergenceKind::TestFailed => "test_failed",
        }
    }

    /// A short phrase for people: `return value changed`.
    pub fn describe(self) -> &'static str {
        match self {
            DivergenceKind::ReturnChanged => "return value changed",
            DivergenceKind::OutcomeChanged => "outcome changed",
            DivergenceKind::EffectChanged => "field effect changed",
            DivergenceKind::ArgumentChanged => "argument changed",
            DivergenceKind::CallAdded => "call added",
            DivergenceKind::CallMissing => "call missing",
            DivergenceKind::CallCountChanged => "call count changed",
            DivergenceKind::ExitChanged => "exit changed",
            DivergenceKind::TestFailed => "test failed",
        }
    }
}

/// One place where the new behaviour differs from the baseline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Divergence {
    pub kind: DivergenceKind,
    /// Where: bare function names from the top, `#n` for the n-th call of a function among its
    /// siblings (`main > evaluate > apply#2`); for a count change, the group's first top-level
    /// call; in tests mode, `file::test_name`.
    pub call_path: String,
    /// Full path of the function concerned (for a count change, the callee counted).
    pub function: String,
    /// Which part of the call: `return value`, `argument lhs`, `self after the call`,
    /// `outcome`, `calls`; `None` for added or missing calls.
    pub field: Option<String>,
    /// Where inside the value (`.occupation`, `.0[2]`); empty for the whole value.
    pub at: String,
    /// The baseline's value, rendered with the trace's `Display` (`None` when absent).
    pub baseline: Option<String>,
    /// The new value (`None` when absent).
    pub new: Option<String>,
}

impl Divergence {
    /// One line for people: `main > apply#2: return value changed: 7.0 → 8.0`.
    pub fn one_line(&self) -> String {
        if self.kind == DivergenceKind::CallCountChanged {
            return format!(
                "{}: calls to {} changed: {} → {}",
                self.call_path,
                self.function,
                self.baseline.as_deref().unwrap_or("?"),
                self.new.as_deref().unwrap_or("?")
            );
        }
        let mut line = format!("{}: {}", self.call_path, self.kind.describe());
        if let Some(field) = &self.field {
            if !matches!(
                self.kind,
                DivergenceKind::ReturnChanged | DivergenceKind::OutcomeChanged
            ) {
                line.push_str(&format!(" ({field}{})", self.at));
            } else if !self.at.is_empty() {
                line.push_str(&format!(" (at {})", self.at));
            }
        }
        match (&self.baseline, &self.new) {
            (None, None) => {}
            (b, n) => line.push_str(&format!(
                ": {} → {}",
                b.as_deref().unwrap_or("(none)"),
                n.as_deref().unwrap_or("(none)")
            )),
        }
        line
    }
}
