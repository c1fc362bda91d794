//! A test under construction: the bindings, checks, effects and mocks the rules add as they
//! build the values a test needs, and how to undo a failed attempt.

use std::collections::{BTreeSet, HashMap};

use carve_storage::{CallId, ObjectId};

use crate::body::{Binding, Effect, Returns};
use crate::naming;

/// How many producer calls deep an arrange step may go to rebuild one object
/// ([`Builder::producer_depth`]).
pub(crate) const MAX_PRODUCER_DEPTH: u32 = 4;

/// A recorded call made through a dependency: (rank among all the test's mock calls, method,
/// predicates, returns).
pub(crate) type Interaction = (usize, String, Vec<String>, Returns);

#[derive(Clone)]
pub(crate) struct Dep {
    pub(crate) trait_path: String,
    pub(crate) addr: u64,
    pub(crate) var: String,
    /// Recorded interactions, in order.
    pub(crate) calls: Vec<Interaction>,
}

#[derive(Default, Clone)]
pub(crate) struct Builder {
    /// The first value a mock answers with, as a name slug (`next_u32_returns_7`).
    pub(crate) first_answer: Option<String>,
    pub(crate) deps: Vec<Dep>,
    pub(crate) vars: BTreeSet<String>,
    pub(crate) setup: Vec<Binding>,
    pub(crate) checks: Vec<Effect>,
    pub(crate) effects: Vec<Effect>,
    /// Traits the arrange steps call methods of (a producer reached through a trait).
    pub(crate) trait_uses: BTreeSet<String>,
    /// How many producer calls deep the object being rebuilt is (`a.b().c()`).
    pub(crate) producer_depth: u32,
    /// Producer calls whose arguments are other objects to rebuild are not tried (yet).
    pub(crate) plain_only: bool,
    /// Recorded calls the arrange steps make again as they were made (`Url::options()` in
    /// `Url::options().base_url(Some(&base)).parse(..)`): the test runs them and checks what
    /// they gave through the call it asserts on.
    pub(crate) replayed: BTreeSet<u64>,
    /// Recorded calls that arrange steps make again and that read files (see [`crate::arrange::world`]).
    pub(crate) arranged: Vec<CallId>,
    /// A closure argument of the call or of an arrange step is a replay closure.
    pub(crate) replay_closures: bool,
    /// The rebuilds that failed so far in this test, and why (see [`Attempt`]).
    pub(crate) failed: HashMap<Attempt, &'static str>,
    /// The call's result is dropped before what it changed is checked (`assert/rules/
    /// dropped.rs`): the recording saw the receiver before that drop, so its checks are
    /// probes, their values observed at verification.
    pub(crate) after_drop: bool,
    /// A check takes the result's items (`assert/rules/items.rs`): a closure the result keeps
    /// runs there.
    pub(crate) items_taken: bool,
}

/// A rebuild asked of the rules (`arrange/rebuild.rs`), with everything of the test under
/// construction a rule's answer depends on: the same attempt again fails again, so it is not
/// worked out again. (base64's 1,001 equal `internal_decoded_len_estimate` results each had
/// their engine's two arguments rebuilt anew, 800,000 failed rebuilds in 40 s.)
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Attempt {
    pub(crate) type_path: String,
    /// The state's [`crate::arrange::values::state_key`]: two keys alike with states unlike
    /// would only give up a rebuild, never give a wrong one.
    pub(crate) state: u64,
    pub(crate) object: Option<ObjectId>,
    pub(crate) before: CallId,
    pub(crate) mutable: bool,
    pub(crate) producer_depth: u32,
    pub(crate) plain_only: bool,
    /// The mocks so far and their expectations: a rule's mock may clash with one of them.
    pub(crate) mocks: (usize, usize),
    /// The context's fallbacks (`Ctx::whole_histories`, `Ctx::weak_oracles`).
    pub(crate) fallbacks: (bool, bool),
}

impl Builder {
    pub(crate) fn fresh(&mut self, base: &str) -> String {
        let base = naming::sanitize_ident(base);
        let mut name = base.clone();
        let mut n = 2;
        while !self.vars.insert(name.clone()) {
            name = format!("{base}_{n}");
            n += 1;
        }
        name
    }

    pub(crate) fn add_dep(&mut self, trait_path: String, addr: u64, base: &str) -> String {
        let var = self.fresh(&format!("mock_{base}"));
        self.deps.push(Dep {
            trait_path,
            addr,
            var: var.clone(),
            calls: Vec::new(),
        });
        var
    }

    /// The dependency a call through `trait_path` on the object at `addr` goes to.
    pub(crate) fn find_dep(&self, trait_path: &str, addr: u64) -> Option<usize> {
        let same_trait: Vec<usize> = (0..self.deps.len())
            .filter(|&i| self.deps[i].trait_path == trait_path)
            .collect();
        same_trait
            .iter()
            .copied()
            .find(|&i| self.deps[i].addr == addr)
            .or(match same_trait.as_slice() {
                [only] => Some(*only),
                _ => None,
            })
    }
}

/// How far a test under construction had got: bindings, mocks, and each mock's expectations.
pub(crate) struct Mark {
    pub(crate) arranged: usize,
    pub(crate) setup: usize,
    pub(crate) checks: usize,
    pub(crate) deps: usize,
    pub(crate) calls: Vec<usize>,
    pub(crate) trait_uses: BTreeSet<String>,
}

pub(crate) fn mark(b: &Builder) -> Mark {
    Mark {
        arranged: b.arranged.len(),
        setup: b.setup.len(),
        checks: b.checks.len(),
        deps: b.deps.len(),
        calls: b.deps.iter().map(|d| d.calls.len()).collect(),
        trait_uses: b.trait_uses.clone(),
    }
}

/// Forgets the bindings, mocks, expectations and trait imports added since `mark` (a failed
/// attempt: a trait only it called would be an unused `use`).
pub(crate) fn undo(b: &mut Builder, mark: Mark) {
    b.trait_uses = mark.trait_uses;
    b.arranged.truncate(mark.arranged);
    b.setup.truncate(mark.setup);
    b.checks.truncate(mark.checks);
    for dep in b.deps.drain(mark.deps..) {
        b.vars.remove(&dep.var);
    }
    for (dep, len) in b.deps.iter_mut().zip(mark.calls) {
        dep.calls.truncate(len);
    }
}

/// The same replayed call made three or more times in a row (an iterator advanced, a counter
/// raised) as one binding with its count: a test reads `for _ in 0..40 { let _ = it.next(); }`
/// rather than forty lines. Two stay two lines, which read better than a loop.
pub(crate) fn collapse_repeats(setup: Vec<Binding>) -> Vec<Binding> {
    let mut runs: Vec<Binding> = Vec::with_capacity(setup.len());
    for b in setup {
        match runs.last_mut() {
            Some(last) if last.var == "_" && b.var == "_" && last.expr == b.expr => {
                last.repeat += b.repeat;
            }
            _ => runs.push(b),
        }
    }
    let mut out = Vec::with_capacity(runs.len());
    for b in runs {
        if b.repeat == 2 {
            let one = Binding { repeat: 1, ..b };
            out.push(one.clone());
            out.push(one);
        } else {
            out.push(b);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_attempt_leaves_no_trait_import_behind() {
        let mut b = Builder::default();
        b.trait_uses.insert("abc::Kept".to_string());
        let at = mark(&b);
        b.trait_uses.insert("abc::Tried".to_string());
        b.add_dep("abc::Source".to_string(), 8, "src");
        undo(&mut b, at);
        assert_eq!(b.trait_uses.into_iter().collect::<Vec<_>>(), ["abc::Kept"]);
        assert!(b.deps.is_empty());
    }
}
