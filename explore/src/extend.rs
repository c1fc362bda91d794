//! Extending what was kept (JET's incremental construction, seed 001; Randoop's
//! feedback-directed generation): a kept sequence reached a state no earlier one did, so one
//! more call on that state is worth more than a sequence drawn blind. Each kept sequence
//! shorter than `--length` is queued once per callable with one call more, whose receiver and
//! object arguments are objects the sequence already used and whose arguments are values its
//! calls already took, where it took one of that pool: `put(3, "a")` is followed by
//! `contains(&3)` and `pop(&3)`, which a sequence drawn from the whole space meets about once
//! in a million (lru's `contains`, a cache of 2 slots and 60 integers a key). A kept sequence
//! grows this way up to [`GROWS_TO`] times `--length`, one kept call at a time: what a
//! collection does only once it holds a few entries (indexmap sweeps its whole index table
//! when a removal shifts more entries than half its capacity, three `insert`s and a
//! `shift_remove`) is out of reach of the strategy's sequences of three calls. The strategy's
//! own sequences are the rest of every batch.

use std::collections::{BTreeMap, HashSet, VecDeque};

use crate::api::{Callable, PoolKind};
use crate::strategy::{Rng, Space};

/// What one index of a call picks from.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Key {
    /// An object slot of object type N (a receiver or an object argument).
    Slot(usize),
    /// A value of this pool.
    Pool(PoolKind),
    /// The slot of object type N a call's result fills: a new object goes where it will,
    /// never over one the sequence holds on purpose; what an earlier call made there is an
    /// object the sequence holds (`Slot(N)`).
    Fresh(usize),
}

/// What each index of `c` picks from, in the order `harness::dims` gives their radixes.
pub fn keys(c: &Callable) -> Vec<Key> {
    let mut k = Vec::new();
    if let Some(r) = &c.receiver {
        k.push(Key::Slot(r.object));
    }
    k.extend(c.params.iter().map(|p| match &p.kind {
        PoolKind::Object(t) => Key::Slot(*t),
        kind => Key::Pool(kind.clone()),
    }));
    if let Some((t, _)) = c.makes {
        k.push(Key::Fresh(t));
    }
    k
}

/// At most this many sequences wait to be run (the oldest kept are extended first).
const MAX_QUEUED: usize = 1 << 16;

/// A kept sequence is extended while it is shorter than this many times the strategy's
/// length.
const GROWS_TO: usize = 2;

/// Sequences extending the kept ones, waiting to be run.
pub struct Extender {
    keys: Vec<Vec<Key>>,
    queue: VecDeque<Vec<u64>>,
    /// Extensions of sequences an earlier round kept, run after a round's substitutions.
    earlier: VecDeque<Vec<u64>>,
    /// The sequences extended already.
    extended: HashSet<Vec<u64>>,
    rng: Rng,
}

impl Extender {
    pub fn new(callables: &[Callable], seed: u64) -> Extender {
        Extender {
            keys: callables.iter().map(keys).collect(),
            queue: VecDeque::new(),
            earlier: VecDeque::new(),
            extended: HashSet::new(),
            // Not the strategy's draws: R's sequence stays what the seed makes it.
            rng: Rng::new(seed ^ 0x6578_7465_6e64),
        }
    }

    /// `seq` was kept: queues it with one call more of each callable, when it is shorter
    /// than [`GROWS_TO`] times `length`, and the prefix before its last call (the state where
    /// that call found something) the same way: the last call's siblings.
    pub fn kept(&mut self, space: &Space, seq: &[u64], length: usize) {
        self.queue_extensions(space, seq, length, false);
    }

    /// `seq` was kept by an earlier round: queued as [`Self::kept`] queues it, to run when
    /// nothing else waits ([`Self::next_earlier`]).
    pub fn kept_earlier(&mut self, space: &Space, seq: &[u64], length: usize) {
        self.queue_extensions(space, seq, length, true);
    }

    /// [`Self::kept`]'s extensions, into the queue of earlier rounds' when `earlier`.
    fn queue_extensions(&mut self, space: &Space, seq: &[u64], length: usize, earlier: bool) {
        self.extend(space, seq, length, earlier);
        if seq.len() >= 2 {
            self.extend(space, &seq[..seq.len() - 1], length, earlier);
        }
    }

    fn extend(&mut self, space: &Space, seq: &[u64], length: usize, earlier: bool) {
        if seq.len() >= GROWS_TO * length
            || self.queue.len() + self.earlier.len() >= MAX_QUEUED
            || !self.extended.insert(seq.to_vec())
        {
            return;
        }
        let used = self.used(space, seq);
        for f in 0..self.keys.len() {
            let digits: Vec<u64> = (self.keys[f].iter().zip(&space.dims[f]))
                .map(|(key, &radix)| match used.get(key) {
                    // Never a `Fresh` key: those are noted as the slots they filled.
                    Some(took) => took[self.rng.below(took.len() as u64) as usize],
                    None => self.rng.below(radix),
                })
                .collect();
            let mut next = seq.to_vec();
            next.push(space.encode(f, &digits));
            match earlier {
                true => self.earlier.push_back(next),
                false => self.queue.push_back(next),
            }
        }
    }

    /// The indices the calls of `seq` took, by what they pick from.
    fn used(&self, space: &Space, seq: &[u64]) -> BTreeMap<Key, Vec<u64>> {
        let mut used: BTreeMap<Key, Vec<u64>> = BTreeMap::new();
        for &c in seq {
            let (f, digits) = space.decode(c);
            for (key, d) in self.keys[f].iter().zip(digits) {
                let key = match key {
                    Key::Fresh(t) => Key::Slot(*t),
                    key => key.clone(),
                };
                let took = used.entry(key).or_default();
                if !took.contains(&d) {
                    took.push(d);
                }
            }
        }
        used
    }

    /// The next extension to run.
    pub fn next(&mut self) -> Option<Vec<u64>> {
        self.queue.pop_front()
    }

    /// The next extension of a sequence an earlier round kept.
    pub fn next_earlier(&mut self) -> Option<Vec<u64>> {
        self.earlier.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Param, Pass, Receiver, Ret};

    fn callable(path: &str, receiver: bool, params: Vec<PoolKind>, makes: bool) -> Callable {
        Callable {
            path: path.to_string(),
            call: path.to_string(),
            receiver: receiver.then_some(Receiver {
                object: 0,
                mutable: true,
                by_value: false,
            }),
            params: (params.into_iter())
                .map(|kind| Param {
                    name: "x".to_string(),
                    kind,
                    pass: Pass::Value,
                })
                .collect(),
            makes: makes.then_some((0, crate::api::Made::Plain)),
            ret: Ret::Other,
        }
    }

    #[test]
    fn an_earlier_rounds_kept_sequence_waits_behind_this_rounds_own() {
        let int = PoolKind::Scalar("u64".to_string());
        let callables = vec![
            callable("Cache::new", false, vec![], true),
            callable("Cache::contains", true, vec![int], false),
        ];
        let space = Space::new(vec![vec![2], vec![2, 60]]).unwrap();
        let mut ex = Extender::new(&callables, 1);
        let earlier = vec![space.encode(0, &[1])];
        let now = vec![space.encode(0, &[0])];
        ex.kept_earlier(&space, &earlier, 3);
        ex.kept(&space, &now, 3);
        let first: Vec<Vec<u64>> = std::iter::from_fn(|| ex.next()).collect();
        assert_eq!(first.len(), 2);
        assert!(first.iter().all(|s| s[0] == now[0]), "{first:?}");
        let then: Vec<Vec<u64>> = std::iter::from_fn(|| ex.next_earlier()).collect();
        assert_eq!(then.len(), 2);
        assert!(then.iter().all(|s| s[0] == earlier[0]), "{then:?}");
    }

    #[test]
    fn a_kept_sequence_is_extended_by_each_callable_on_its_object_and_its_values() {
        let int = PoolKind::Scalar("u64".to_string());
        let callables = vec![
            callable("Cache::new", false, vec![], true),
            callable("Cache::put", true, vec![int.clone(), int.clone()], false),
            callable("Cache::contains", true, vec![int.clone()], false),
        ];
        // Slots 2; the integer pool holds 60 values.
        let space = Space::new(vec![vec![2], vec![2, 60, 60], vec![2, 60]]).unwrap();
        let mut ex = Extender::new(&callables, 1);
        // new() into slot 1, then put(41, 7) on slot 1.
        let seq = vec![space.encode(0, &[1]), space.encode(1, &[1, 41, 7])];
        ex.kept(&space, &seq, 3);
        let mut extensions = Vec::new();
        while let Some(s) = ex.next() {
            extensions.push(s);
        }
        // One per callable after the sequence, then after the prefix before its last call.
        assert_eq!(extensions.len(), 6);
        for s in &extensions[..3] {
            assert_eq!(&s[..2], &seq[..]);
        }
        for s in &extensions[3..] {
            assert_eq!(s.len(), 2);
            assert_eq!(s[0], seq[0]);
        }
        let (f, digits) = space.decode(extensions[2][2]);
        assert_eq!(f, 2);
        assert_eq!(digits[0], 1, "the object the sequence made");
        assert!(
            [41, 7].contains(&digits[1]),
            "a key the sequence put: {digits:?}"
        );
        let (_, put) = space.decode(extensions[1][2]);
        assert!(put[1..].iter().all(|d| [41, 7].contains(d)), "{put:?}");
        // After `new()` alone, a call is on the object it made.
        ex.kept(&space, &seq[..1], 3);
        assert!(
            ex.next().is_none(),
            "extended already, as the prefix of `seq`"
        );
        let made = vec![space.encode(0, &[0])];
        ex.kept(&space, &made, 3);
        let on_it: Vec<Vec<u64>> = std::iter::from_fn(|| ex.next()).collect();
        assert_eq!(on_it.len(), 3);
        assert!(
            on_it[1..].iter().all(|s| space.decode(s[1]).1[0] == 0),
            "{on_it:?}"
        );
        // A sequence [`GROWS_TO`] times as long as the search's is not extended, but the
        // prefix before its last call is (once).
        let mut full = extensions[2].clone();
        while full.len() < GROWS_TO * 3 {
            full.push(space.encode(2, &[1, 41]));
        }
        ex.kept(&space, &full, 3);
        let of_prefix: Vec<Vec<u64>> = std::iter::from_fn(|| ex.next()).collect();
        assert_eq!(of_prefix.len(), 3);
        let before_last = &full[..full.len() - 1];
        assert!(of_prefix
            .iter()
            .all(|s| s[..before_last.len()] == *before_last));
        ex.kept(&space, &full, 3);
        assert!(ex.next().is_none(), "its prefix was extended already");
        ex.kept(&space, &seq, 3);
        assert!(ex.next().is_none(), "extended already");
        // A kept sequence as long as the search's grows by one call, and its prefix too.
        let other = vec![space.encode(0, &[0]), space.encode(1, &[0, 5, 6])];
        let mut longer = other.clone();
        longer.push(space.encode(2, &[0, 5]));
        ex.kept(&space, &longer, 3);
        let grown: Vec<Vec<u64>> = std::iter::from_fn(|| ex.next()).collect();
        assert_eq!(grown.len(), 6);
        assert!(grown[..3]
            .iter()
            .all(|s| s.len() == 4 && s[..3] == longer[..]));
        assert!(grown[3..].iter().all(|s| s[..2] == other[..]));
    }
}
