//! Equivalent calls counted while a run is recorded, not stored again (`carve record`'s
//! default; `--all-calls` stores every call): the trace grows with the program's behaviour,
//! not with the length of its loops.
//!
//! The equivalence is the one `generate` groups calls by (`generator/src/read/group.rs`), so
//! the tests carved from a trace recorded this way are those carved from every call: two calls
//! are *equivalent* when they are calls of the same function under the same parent (roots are
//! siblings too) with the same arguments and objects (the start's JSON), the same outcome,
//! return value, state after the call and reads of the world (the end's JSON), and equivalent
//! calls below them, in the same order, as many kept below each. The later one is not stored,
//! nor anything below it; its id is stored as a *repeat* of the earlier one (the
//! representative), and each call below it as a repeat of its counterpart below the
//! representative. Calls are compared by a 128-bit digest of that JSON.
//!
//! Never counted as repeats: calls of trait methods (`<T as Trait>::m`) and closures under a
//! recorded parent, which the parent's test replays through a mock, one expectation per call
//! (at the root no test replays them: there they repeat like other calls); calls that made an
//! object
//! (an object's `created_by` must stay in the trace). When the calls stop nesting (a call
//! starting under a parent that is not the innermost open call of its thread, an end that is
//! not the innermost call's), or when [`MAX_REMEMBERED`] distinct calls are remembered, the
//! counting stops for the rest of the run: every later call is stored, and memory is freed.
//!
//! A function whose first [`GIVE_UP_AFTER`] calls repeated no sibling is given up: its later
//! calls are stored (never looked up nor remembered), so a function whose every call is new
//! costs what it cost before counting; `generate` still groups those of its calls alike.
//!
//! Repeats are kept as runs of ids (`first`, `first + step`, ... `count` of them), so a loop
//! that repeats one call ten million times stores one row.

use std::collections::{HashMap, HashSet};
use std::hash::Hasher;

/// How many distinct calls (keys) are remembered at most before counting stops: some 100 MB.
pub(crate) const MAX_REMEMBERED: usize = 2_000_000;
/// After this many calls of a function none of which repeated a sibling, its calls are no
/// longer looked up nor remembered: they are stored, as `--all-calls` stores them (and
/// `generate` still groups those alike). A function whose every call is new (`hash(i)` over a
/// loop's counter) then costs what it cost before counting.
pub(crate) const GIVE_UP_AFTER: u64 = 4096;

/// A run of repeat ids, all made on one thread: `first`, `first + step`, ..., `count` ids in
/// all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IdRun {
    pub(crate) first: u64,
    pub(crate) step: u64,
    pub(crate) count: u64,
    pub(crate) thread: i32,
}

impl IdRun {
    fn one(id: u64, thread: i32) -> IdRun {
        IdRun {
            first: id,
            step: 0,
            count: 1,
            thread,
        }
    }

    /// Takes `id` (of `thread`) in when it continues the run.
    fn extend(&mut self, id: u64, thread: i32) -> bool {
        if thread != self.thread {
            return false;
        }
        if self.count == 1 && id > self.first {
            self.step = id - self.first;
            self.count = 2;
            return true;
        }
        let next = self
            .step
            .checked_mul(self.count)
            .and_then(|d| d.checked_add(self.first));
        if self.step > 0 && next == Some(id) {
            self.count += 1;
            return true;
        }
        false
    }

    /// The ids of the run.
    pub(crate) fn ids(self) -> impl Iterator<Item = u64> {
        (0..self.count).map(move |i| self.first + i * self.step)
    }
}

/// A call kept, as its later siblings meet it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Kept {
    pub(crate) id: u64,
    pub(crate) thread: i32,
    /// The last call id started on its thread before it ended: the calls below it are the
    /// calls of its thread with ids `id + 1 ..= last`.
    pub(crate) last: u64,
    /// How many kept calls lie below it.
    descendants: usize,
}

/// A call still running on its thread.
#[derive(Debug)]
struct Open {
    id: u64,
    function: u32,
    /// The digest of its start's JSON.
    start: u128,
    /// The keys of the children that ended, folded in order.
    kids: u128,
    /// Its kept children by key: the first of each.
    seen: ByDigest<Kept>,
    descendants: usize,
    creator: bool,
}

/// What became of a call that ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    Kept,
    /// The call (`id`) repeats `onto`: it and the calls of `thread` with ids up to `last`
    /// (those below it) go, each a repeat of its counterpart below `onto`. The caller removes
    /// them, then confirms with [`Repeats::repeat`] for each pair, or, when the calls below do
    /// not pair up as stored, takes it back with [`Repeats::keep_after_all`].
    Repeat {
        id: u64,
        thread: i32,
        last: u64,
        onto: Kept,
        /// Its key and its parent (`None`: a root), for `keep_after_all`.
        key: u128,
        parent: Option<u64>,
        descendants: usize,
    },
}

/// The counting state of one run (see the module's documentation).
#[derive(Debug)]
pub(crate) struct Repeats {
    droppable: HashSet<u32>,
    /// Per function: calls ended, and how many of them were repeats, until it is given up.
    tally: HashMap<u32, (u64, u64)>,
    /// Functions given up ([`GIVE_UP_AFTER`]).
    all_new: HashSet<u32>,
    open: ByThread<Vec<Open>>,
    last_started: ByThread<u64>,
    /// The thread of the last call that started or ended: the likeliest of the next end.
    recent: i32,
    roots: ByDigest<Kept>,
    counting: bool,
    remembered: usize,
    /// Per representative, its run of repeat ids still growing.
    growing: HashMap<u64, IdRun>,
    /// Runs that changed since [`Repeats::take_changed`]: (representative, run).
    changed: HashMap<(u64, u64), IdRun>,
}

impl Default for Repeats {
    fn default() -> Repeats {
        Repeats {
            droppable: HashSet::new(),
            tally: HashMap::new(),
            all_new: HashSet::new(),
            open: ByThread::default(),
            last_started: ByThread::default(),
            recent: 0,
            roots: ByDigest::default(),
            counting: true,
            remembered: 0,
            growing: HashMap::new(),
            changed: HashMap::new(),
        }
    }
}

/// A 128-bit digest of `parts`, in order (each with its length, so no two lists of parts
/// run together), with `salt`: XXH3-128 of the parts laid end to end. Called twice or more per
/// recorded call on the writer's thread, which is the recording's bottleneck: SipHash (std's
/// hasher) made a recording of 300,000 distinct calls 40% slower, this a few percent.
pub(crate) fn digest(salt: u8, parts: &[&[u8]]) -> u128 {
    thread_local! {
        static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    SCRATCH.with_borrow_mut(|buf| {
        buf.clear();
        for part in parts {
            buf.extend_from_slice(&(part.len() as u64).to_le_bytes());
            buf.extend_from_slice(part);
        }
        twox_hash::XxHash3_128::oneshot_with_seed(u64::from(salt), buf)
    })
}

/// Hashes a key that is a digest already: its low 64 bits, as they are.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct DigestHasher(u64);

impl Hasher for DigestHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only digests are hashed with it; any other key still spreads, if slowly.
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = self.0.rotate_left(5) ^ u64::from_le_bytes(word);
        }
    }

    fn write_u128(&mut self, n: u128) {
        self.0 = n as u64;
    }
}

/// A map keyed by digests (or thread ids: a few small numbers).
type ByDigest<V> = HashMap<u128, V, std::hash::BuildHasherDefault<DigestHasher>>;
type ByThread<V> = HashMap<i32, V, std::hash::BuildHasherDefault<DigestHasher>>;

fn fold(kids: u128, kid: u128) -> u128 {
    digest(0, &[&kids.to_le_bytes(), &kid.to_le_bytes()])
}

impl Repeats {
    /// A function of the run: its calls may be counted unless it is a trait method or a
    /// closure.
    pub(crate) fn function(&mut self, id: u32, path: &str) {
        if !path.starts_with('<') && !path.contains("{{closure}}") {
            self.droppable.insert(id);
        }
    }

    /// Whether calls are still being counted.
    #[cfg(test)]
    pub(crate) fn counting(&self) -> bool {
        self.counting
    }

    /// Stops counting for the rest of the run and lets go of what it held.
    fn stop(&mut self) {
        self.counting = false;
        self.open.clear();
        self.roots.clear();
        self.last_started.clear();
    }

    /// A call started; `start` is the digest of its start's JSON.
    pub(crate) fn started(
        &mut self,
        id: u64,
        parent: Option<u64>,
        thread: i32,
        function: u32,
        start: u128,
    ) {
        if !self.counting {
            return;
        }
        let stack = self.open.entry(thread).or_default();
        if stack.last().map(|o| o.id) != parent {
            self.stop();
            return;
        }
        stack.push(Open {
            id,
            function,
            start,
            kids: 0,
            seen: ByDigest::default(),
            descendants: 0,
            creator: false,
        });
        self.last_started.insert(thread, id);
        self.recent = thread;
    }

    /// An object was made by call `by` (which is open: the object event comes before its end).
    pub(crate) fn made_object(&mut self, by: u64) {
        for stack in self.open.values_mut() {
            if let Some(open) = stack.iter_mut().rev().find(|o| o.id == by) {
                open.creator = true;
                return;
            }
        }
    }

    /// Call `id` ended; `end` is the digest of its end's JSON.
    pub(crate) fn ended(&mut self, id: u64, end: u128) -> Ended {
        if !self.counting {
            return Ended::Kept;
        }
        // Its thread: the one whose innermost open call it is (nearly always the last one's).
        let innermost_of = |stack: &Vec<Open>| stack.last().is_some_and(|o| o.id == id);
        let innermost = if self.open.get(&self.recent).is_some_and(innermost_of) {
            Some(self.recent)
        } else {
            self.open
                .iter()
                .find(|(_, stack)| innermost_of(stack))
                .map(|(thread, _)| *thread)
        };
        let Some(thread) = innermost else {
            self.stop();
            return Ended::Kept;
        };
        self.recent = thread;
        let stack = self.open.get_mut(&thread).expect("the thread found");
        let done = stack.pop().expect("the call that ended is open");
        let key = digest(
            1,
            &[
                &done.function.to_le_bytes(),
                &done.start.to_le_bytes(),
                &end.to_le_bytes(),
                &done.kids.to_le_bytes(),
            ],
        );
        let last = self.last_started.get(&thread).copied().unwrap_or(id);
        let parent = stack.last().map(|p| p.id);
        let seen = match stack.last_mut() {
            Some(parent) => {
                parent.kids = fold(parent.kids, key);
                &parent.seen
            }
            None => &self.roots,
        };
        let kept = Kept {
            id,
            thread,
            last,
            descendants: done.descendants,
        };
        if self.all_new.contains(&done.function) {
            self.keep_unremembered(thread, kept);
            return Ended::Kept;
        }
        // A root's test replays no mock: a root trait call or closure may repeat another.
        let droppable =
            (self.droppable.contains(&done.function) || parent.is_none()) && !done.creator;
        let first = seen.get(&key).copied();
        let tally = self.tally.entry(done.function).or_default();
        tally.0 += 1;
        if let Some(first) = first {
            if droppable && first.descendants == done.descendants {
                tally.1 += 1;
                return Ended::Repeat {
                    id,
                    thread,
                    last,
                    onto: first,
                    key,
                    parent,
                    descendants: done.descendants,
                };
            }
        }
        if *tally == (GIVE_UP_AFTER, 0) {
            self.all_new.insert(done.function);
        }
        self.keep(thread, key, kept);
        Ended::Kept
    }

    /// Counts `kept` under the innermost open call of `thread`, without remembering it.
    fn keep_unremembered(&mut self, thread: i32, kept: Kept) {
        if let Some(parent) = self.open.get_mut(&thread).and_then(|s| s.last_mut()) {
            parent.descendants += 1 + kept.descendants;
        }
    }

    /// Remembers `kept` under the innermost open call of `thread` (or among the roots).
    fn keep(&mut self, thread: i32, key: u128, kept: Kept) {
        if self.remembered >= MAX_REMEMBERED {
            self.stop();
            return;
        }
        let parent = self.open.get_mut(&thread).and_then(|s| s.last_mut());
        let seen = match parent {
            Some(parent) => {
                parent.descendants += 1 + kept.descendants;
                &mut parent.seen
            }
            None => &mut self.roots,
        };
        if let std::collections::hash_map::Entry::Vacant(slot) = seen.entry(key) {
            slot.insert(kept);
            self.remembered += 1;
        }
    }

    /// Takes back a [`Ended::Repeat`]: the call stays, as if it had been kept.
    pub(crate) fn keep_after_all(&mut self, ended: Ended) {
        if let Ended::Repeat {
            id,
            thread,
            last,
            key,
            parent,
            descendants,
            ..
        } = ended
        {
            if !self.counting {
                return;
            }
            let top = self.open.get(&thread).and_then(|s| s.last()).map(|o| o.id);
            if top != parent {
                self.stop();
                return;
            }
            self.keep(
                thread,
                key,
                Kept {
                    id,
                    thread,
                    last,
                    descendants,
                },
            );
        }
    }

    /// `call` (of `thread`) is a repeat of `onto`, and so are the repeats stored under `call`
    /// before (its runs, `moved`, read back and taken out by the caller: they are `onto`'s
    /// now).
    pub(crate) fn repeat(&mut self, onto: u64, (call, thread): (u64, i32), moved: &[IdRun]) {
        self.add(onto, call, thread);
        for run in moved {
            self.changed.insert((onto, run.first), *run);
        }
        if let Some(run) = self.growing.remove(&call) {
            self.changed.remove(&(call, run.first));
        }
    }

    fn add(&mut self, onto: u64, call: u64, thread: i32) {
        let extended = self
            .growing
            .get_mut(&onto)
            .is_some_and(|run| run.extend(call, thread));
        if !extended {
            self.growing.insert(onto, IdRun::one(call, thread));
        }
        let run = self.growing[&onto];
        self.changed.insert((onto, run.first), run);
    }

    /// The runs that changed since the last call, to be stored (a run is stored under its
    /// representative and first id: storing it again replaces it).
    pub(crate) fn take_changed(&mut self) -> Vec<(u64, IdRun)> {
        let mut out: Vec<(u64, IdRun)> = self
            .changed
            .drain()
            .map(|((rep, _), run)| (rep, run))
            .collect();
        out.sort_by_key(|(rep, run)| (*rep, run.first));
        out
    }
}

#[cfg(test)]
mod tests;
