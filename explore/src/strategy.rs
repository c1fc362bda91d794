//! Search strategies over canonical-form sequences (seed 004): a call is one integer in
//! `[0, C)` (the callable, then its receiver slot, arguments' pool indices and result slot in
//! mixed radix, `Space`), a sequence of `n` calls one integer in `[0, C^n)`. R draws calls with
//! replacement, BE walks every sequence in order, BOBW walks every sequence exactly once in the
//! order of a keyed full-period permutation of `[0, C^n)` (`Permutation`: a Feistel network
//! over the next even power of two, cycle-walking back into range). Prefixes the harness found
//! dead (a panic, an empty receiver slot, a state already reached by another prefix) are not
//! extended again: BE jumps over their whole block, R and BOBW skip the sequences holding one.

use std::collections::HashSet;

use serde::Serialize;

/// Which order sequences are tried in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Strategy {
    /// R: each call drawn at random (a callable, then its indices), with replacement.
    Random,
    /// BE: every sequence of the length, in order.
    Exhaustive,
    /// BOBW: every sequence of the length exactly once, in pseudo-random order.
    Bobw,
}

/// The calls one sequence position can take: per callable, how many values each of its
/// indices ranges over.
#[derive(Debug, Clone, Serialize)]
pub struct Space {
    /// Per callable, the radix of each of its indices.
    pub dims: Vec<Vec<u64>>,
    /// Per callable, the first call number that is its.
    starts: Vec<u64>,
    /// C: how many distinct calls.
    pub calls: u64,
}

impl Space {
    /// `None` when some callable has no call (an empty pool) or C overflows.
    pub fn new(dims: Vec<Vec<u64>>) -> Option<Space> {
        let mut starts = Vec::with_capacity(dims.len());
        let mut calls: u64 = 0;
        for d in &dims {
            starts.push(calls);
            let n = d.iter().try_fold(1u64, |a, &b| a.checked_mul(b))?;
            calls = calls.checked_add(n)?;
        }
        (calls > 0).then_some(Space {
            dims,
            starts,
            calls,
        })
    }

    /// Call number `c` as (callable, its indices).
    pub fn decode(&self, c: u64) -> (usize, Vec<u64>) {
        let f = self.starts.partition_point(|&s| s <= c) - 1;
        let mut rest = c - self.starts[f];
        let mut digits = vec![0; self.dims[f].len()];
        for (i, &radix) in self.dims[f].iter().enumerate().rev() {
            digits[i] = rest % radix;
            rest /= radix;
        }
        (f, digits)
    }

    /// Callable `f` with `digits` as a call number (the inverse of `decode`).
    pub fn encode(&self, f: usize, digits: &[u64]) -> u64 {
        let within = digits
            .iter()
            .zip(&self.dims[f])
            .fold(0, |acc, (&d, &radix)| acc * radix + d);
        self.starts[f] + within
    }

    /// Callable `f`'s calls: the first call number that is its, and how many.
    pub fn block(&self, f: usize) -> (u64, u64) {
        let end = self.starts.get(f + 1).copied().unwrap_or(self.calls);
        (self.starts[f], end - self.starts[f])
    }

    /// C^n, the sequences of length `n`; `None` past `u128`.
    pub fn sequences(&self, n: usize) -> Option<u128> {
        (0..n).try_fold(1u128, |acc, _| acc.checked_mul(u128::from(self.calls)))
    }

    /// Sequence number `x` of length `n` as its calls, the first call the most significant
    /// digit (so BE's order keeps a prefix's sequences together).
    pub fn sequence(&self, mut x: u128, n: usize) -> Vec<u64> {
        let c = u128::from(self.calls);
        let mut calls = vec![0; n];
        for slot in calls.iter_mut().rev() {
            *slot = (x % c) as u64;
            x /= c;
        }
        calls
    }
}

/// SplitMix64: a small, well-mixed generator that a seed reproduces exactly.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }

    /// Uniform in `[0, n)` (`n > 0`), by rejection so no value is favoured.
    pub fn below(&mut self, n: u64) -> u64 {
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let r = self.next_u64();
            if r < zone {
                return r % n;
            }
        }
    }
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A keyed bijection of `[0, size)`: a balanced Feistel network over `2^bits` (the next even
/// power of two at or above `size`, so at most `4 * size`), applied again while the image is
/// out of range (cycle walking). Every Feistel network is a permutation of its domain, and
/// walking a cycle of a permutation until it re-enters a subset is a permutation of that
/// subset; expected walks per index stay under 4.
#[derive(Debug, Clone)]
pub struct Permutation {
    size: u128,
    half_bits: u32,
    keys: [u64; ROUNDS],
}

const ROUNDS: usize = 6;

impl Permutation {
    pub fn new(size: u128, seed: u64) -> Permutation {
        let bits = (128 - size.saturating_sub(1).leading_zeros()).max(2);
        let bits = bits + bits % 2;
        let mut rng = Rng::new(seed);
        Permutation {
            size,
            half_bits: bits / 2,
            keys: std::array::from_fn(|_| rng.next_u64()),
        }
    }

    pub fn size(&self) -> u128 {
        self.size
    }

    fn round(&self, x: u128) -> u128 {
        let mask = (1u128 << self.half_bits) - 1;
        let (mut left, mut right) = (x >> self.half_bits, x & mask);
        for key in self.keys {
            let lo = mix((right as u64) ^ key);
            let hi = mix(((right >> 64) as u64) ^ key.rotate_left(17) ^ lo);
            let f = ((u128::from(hi) << 64) | u128::from(lo)) & mask;
            (left, right) = (right, left ^ f);
        }
        (left << self.half_bits) | right
    }

    /// The image of `x < size`.
    pub fn apply(&self, x: u128) -> u128 {
        let mut y = self.round(x);
        while y >= self.size {
            y = self.round(y);
        }
        y
    }
}

/// The calls a sequence can start with, numbered `[0, F)`: those of the callables whose
/// receiver and object arguments a slot holds before any call (a type with `Default`). A
/// sequence starting with another ends at once on an empty slot; on lru, whose cache has no
/// `Default`, that was all but 1 in 10,000 of the space, which BOBW walked past at ~90 ns a
/// sequence while the harness waited.
#[derive(Debug, Clone)]
pub struct FirstCalls {
    /// Per callable that can come first: the callable, its first call number, how many, and
    /// how many come before them among those that can come first.
    blocks: Vec<(usize, u64, u64, u64)>,
    pub count: u64,
}

impl FirstCalls {
    /// From which callables can come first (`can[f]`); all of them when none can.
    pub fn new(space: &Space, can: &[bool]) -> FirstCalls {
        let any = can.iter().any(|&c| c);
        let mut blocks = Vec::new();
        let mut count = 0;
        for f in (0..space.dims.len()).filter(|&f| !any || can[f]) {
            let (start, n) = space.block(f);
            blocks.push((f, start, n, count));
            count += n;
        }
        FirstCalls { blocks, count }
    }

    /// The `i`th call that can come first (`i < count`).
    fn call(&self, i: u64) -> u64 {
        let b = self
            .blocks
            .partition_point(|&(_, _, _, before)| before <= i)
            - 1;
        let (_, start, _, before) = self.blocks[b];
        start + (i - before)
    }

    /// Where call `c` is among those that can come first.
    fn index(&self, c: u64) -> Option<u64> {
        self.blocks
            .iter()
            .find(|&&(_, start, n, _)| (start..start + n).contains(&c))
            .map(|&(_, start, _, before)| before + (c - start))
    }
}

/// The sequences one strategy proposes, in its order, skipping those holding a dead prefix.
pub struct Sequences {
    strategy: Strategy,
    space: Space,
    length: usize,
    /// R: the generator; BE and BOBW: the next position in `[0, C^n)`.
    rng: Rng,
    next: u128,
    total: Option<u128>,
    permutation: Option<Permutation>,
    /// The calls a sequence starts with: BE and BOBW number `[0, F * C^(n-1))`.
    first: FirstCalls,
    dead: HashSet<Vec<u64>>,
    /// Calls that killed the harness: a sequence holding one anywhere is skipped.
    fatal: HashSet<u64>,
    /// Sequences proposed, and those skipped for a dead prefix.
    pub proposed: u64,
    pub skipped: u64,
    /// R's draws in a row that extended a dead prefix.
    misses: u32,
}

/// At most this many dead prefixes are remembered (R and BOBW).
const MAX_DEAD: usize = 1 << 20;

/// R gives up after this many draws in a row that extend a dead prefix: what is left alive
/// is too small to be found by drawing (its space is as good as exhausted).
const MAX_RANDOM_MISSES: u32 = 1_000_000;

/// [`Sequences::next_within`] skipped its share of sequences without finding one to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Paused;

impl Sequences {
    /// Every call can come first; see [`Self::starting_with`].
    #[cfg(test)]
    pub fn new(strategy: Strategy, space: Space, length: usize, seed: u64) -> Sequences {
        let first = FirstCalls::new(&space, &[]);
        Sequences::starting_with(strategy, (space, first), length, seed)
    }

    /// Sequences whose first call is one of `first`.
    pub fn starting_with(
        strategy: Strategy,
        (space, first): (Space, FirstCalls),
        length: usize,
        seed: u64,
    ) -> Sequences {
        let total = space
            .sequences(length - 1)
            .and_then(|rest| rest.checked_mul(u128::from(first.count)));
        let permutation = match (strategy, total) {
            (Strategy::Bobw, Some(t)) => Some(Permutation::new(t, seed)),
            _ => None,
        };
        Sequences {
            strategy,
            space,
            length,
            rng: Rng::new(seed),
            next: 0,
            total,
            permutation,
            first,
            dead: HashSet::new(),
            fatal: HashSet::new(),
            proposed: 0,
            skipped: 0,
            misses: 0,
        }
    }

    pub fn space(&self) -> &Space {
        &self.space
    }

    /// The calls that can come first.
    pub fn first_calls(&self) -> u64 {
        self.first.count
    }

    /// F * C^(n-1) when it fits in `u128` (BE and BOBW need it).
    pub fn total(&self) -> Option<u128> {
        self.total
    }

    /// The next sequence to run; `None` when BE or BOBW have visited every one.
    #[cfg(test)]
    pub fn next_sequence(&mut self) -> Option<Vec<u64>> {
        loop {
            if let Ok(next) = self.next_within(u32::MAX) {
                return next;
            }
        }
    }

    /// Calls per sequence.
    pub fn length(&self) -> usize {
        self.length
    }

    /// [`Self::next_sequence`], or `Err(Paused)` after skipping `max_skips` sequences that
    /// extend a dead prefix (BOBW and BE may skip for minutes on a space of mostly dead
    /// prefixes: the caller checks its budget between pauses).
    pub fn next_within(&mut self, max_skips: u32) -> Result<Option<Vec<u64>>, Paused> {
        let mut skips = 0u32;
        loop {
            let seq = match self.strategy {
                Strategy::Random => self.random(),
                Strategy::Exhaustive | Strategy::Bobw => {
                    let Some(total) = self.total else {
                        return Ok(None);
                    };
                    if self.next >= total {
                        return Ok(None);
                    }
                    let x = match &self.permutation {
                        Some(p) => p.apply(self.next),
                        None => self.next,
                    };
                    self.next += 1;
                    self.sequence(x)
                }
            };
            self.proposed += 1;
            if self.holds_dead(&seq) {
                self.skipped += 1;
                self.misses += 1;
                if self.strategy == Strategy::Random && self.misses >= MAX_RANDOM_MISSES {
                    return Ok(None);
                }
                skips += 1;
                if skips >= max_skips {
                    return Err(Paused);
                }
                continue;
            }
            self.misses = 0;
            return Ok(Some(seq));
        }
    }

    /// Sequence number `x < total`: its first call (most significant) among those that can
    /// come first, the rest in `[0, C)` each.
    fn sequence(&self, x: u128) -> Vec<u64> {
        let rest = self.length - 1;
        let block = self.space.sequences(rest).unwrap_or(u128::MAX);
        let mut seq = vec![self.first.call((x / block) as u64)];
        seq.extend(self.space.sequence(x % block, rest));
        seq
    }

    /// R: a callable drawn at random (the first among those that can come first), then each
    /// of its indices.
    fn random(&mut self) -> Vec<u64> {
        let firsts = self.first.blocks.len() as u64;
        (0..self.length)
            .map(|k| {
                let f = match k {
                    0 => self.first.blocks[self.rng.below(firsts) as usize].0,
                    _ => self.rng.below(self.space.dims.len() as u64) as usize,
                };
                let digits: Vec<u64> = self.space.dims[f]
                    .iter()
                    .map(|&r| self.rng.below(r))
                    .collect();
                self.space.encode(f, &digits)
            })
            .collect()
    }

    /// Call `c` killed the harness (an abort: an allocation the size of the address space, a
    /// stack overflow): it is a finding once, and no sequence holding it is run again, at any
    /// position, since each would cost the harness's restart (indexmap's `with_capacity` of a
    /// huge `usize` aborted 92 times in 20 s).
    pub fn fatal_call(&mut self, c: u64) {
        if self.fatal.len() < MAX_DEAD {
            self.fatal.insert(c);
        }
    }

    /// Whether a proper prefix of `seq` is dead, or it holds a call that killed the harness.
    pub fn holds_dead(&self, seq: &[u64]) -> bool {
        (1..seq.len()).any(|k| self.dead.contains(&seq[..k]))
            || seq.iter().any(|c| self.fatal.contains(c))
    }

    /// `seq[..k]` is dead: no sequence extending it is run again. BE jumps past the block of
    /// sequences starting with it when it has not yet.
    pub fn dead_prefix(&mut self, seq: &[u64], k: usize) {
        if k == 0 || k >= self.length {
            return;
        }
        if self.strategy == Strategy::Exhaustive {
            let c = u128::from(self.space.calls);
            let block = (k..self.length).fold(1u128, |a, _| a.saturating_mul(c));
            let Some(first) = self.first.index(seq[0]) else {
                return;
            };
            let prefix = (seq[1..k].iter()).fold(u128::from(first), |a, &d| a * c + u128::from(d));
            let (start, end) = (prefix * block, (prefix + 1).saturating_mul(block));
            // A dead prefix of an extension (`extend.rs`) may lie ahead: BE jumps only out
            // of the block it is in.
            if start <= self.next {
                self.next = self.next.max(end);
            }
        } else if self.dead.len() < MAX_DEAD {
            self.dead.insert(seq[..k].to_vec());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_permutation_is_a_bijection_for_many_sizes_and_seeds() {
        for size in (1..300u128).chain([1000, 1023, 1024, 1025, 4097, 65_537]) {
            for seed in 0..4 {
                let p = Permutation::new(size, seed);
                let mut seen = vec![false; size as usize];
                for x in 0..size {
                    let y = p.apply(x);
                    assert!(y < size, "size {size} seed {seed}: {x} -> {y}");
                    assert!(!seen[y as usize], "size {size} seed {seed}: {y} twice");
                    seen[y as usize] = true;
                }
            }
        }
    }

    #[test]
    fn the_permutation_depends_on_the_seed_and_is_not_the_identity() {
        let a: Vec<u128> = (0..64).map(|x| Permutation::new(64, 1).apply(x)).collect();
        let b: Vec<u128> = (0..64).map(|x| Permutation::new(64, 2).apply(x)).collect();
        let again: Vec<u128> = (0..64).map(|x| Permutation::new(64, 1).apply(x)).collect();
        assert_ne!(a, b);
        assert_eq!(a, again);
        let fixed = a
            .iter()
            .enumerate()
            .filter(|(i, &y)| *i as u128 == y)
            .count();
        assert!(fixed < 8, "{fixed} fixed points of 64");
    }

    #[test]
    fn the_permutation_stays_in_range_for_huge_sizes() {
        let size = u128::MAX / 3;
        let p = Permutation::new(size, 9);
        for x in [0, 1, size / 2, size - 1] {
            assert!(p.apply(x) < size);
        }
    }

    fn space() -> Space {
        // Callable 0: one index of 3; callable 1: indices of 2 and 2.
        Space::new(vec![vec![3], vec![2, 2]]).unwrap()
    }

    #[test]
    fn calls_decode_to_their_callable_and_indices_and_back() {
        let s = space();
        assert_eq!(s.calls, 7);
        assert_eq!(s.decode(2), (0, vec![2]));
        assert_eq!(s.decode(3), (1, vec![0, 0]));
        assert_eq!(s.decode(6), (1, vec![1, 1]));
        for c in 0..7 {
            let (f, d) = s.decode(c);
            assert_eq!(s.encode(f, &d), c);
        }
    }

    fn all(strategy: Strategy, length: usize, seed: u64) -> Vec<Vec<u64>> {
        let mut seqs = Sequences::new(strategy, space(), length, seed);
        std::iter::from_fn(|| seqs.next_sequence()).collect()
    }

    #[test]
    fn bobw_visits_every_sequence_exactly_once_in_another_order_than_be() {
        let be = all(Strategy::Exhaustive, 3, 0);
        let bobw = all(Strategy::Bobw, 3, 5);
        assert_eq!(be.len(), 343);
        let mut sorted = bobw.clone();
        sorted.sort();
        assert_eq!(sorted, be, "BE is in order, BOBW is a permutation of it");
        assert_ne!(bobw, be);
    }

    #[test]
    fn random_draws_with_replacement_reproducibly() {
        let mut a = Sequences::new(Strategy::Random, space(), 3, 7);
        let mut b = Sequences::new(Strategy::Random, space(), 3, 7);
        let xs: Vec<_> = (0..500).map(|_| a.next_sequence().unwrap()).collect();
        let ys: Vec<_> = (0..500).map(|_| b.next_sequence().unwrap()).collect();
        assert_eq!(xs, ys);
        let distinct: HashSet<_> = xs.iter().collect();
        assert!(distinct.len() < 500, "500 draws of 343 repeat some");
        assert!(xs.iter().flatten().all(|&c| c < 7));
    }

    #[test]
    fn random_stops_when_every_first_call_is_dead() {
        let mut s = Sequences::new(Strategy::Random, space(), 2, 1);
        for c in 0..7 {
            s.dead_prefix(&[c, 0], 1);
        }
        assert_eq!(s.next_sequence(), None);
        assert_eq!(s.skipped, u64::from(MAX_RANDOM_MISSES));
    }

    #[test]
    fn only_the_calls_that_can_come_first_start_a_sequence_and_every_such_one_is_visited() {
        // Callable 1 (calls 3..7) cannot come first: 3 * 7 sequences of length 2, not 49.
        let first = FirstCalls::new(&space(), &[true, false]);
        assert_eq!(first.count, 3);
        assert_eq!(
            (first.call(2), first.index(2), first.index(4)),
            (2, Some(2), None)
        );
        for strategy in [Strategy::Exhaustive, Strategy::Bobw] {
            let mut s = Sequences::starting_with(strategy, (space(), first.clone()), 2, 5);
            assert_eq!(s.total(), Some(21));
            let all: Vec<Vec<u64>> = std::iter::from_fn(|| s.next_sequence()).collect();
            let distinct: HashSet<&Vec<u64>> = all.iter().collect();
            assert_eq!((all.len(), distinct.len()), (21, 21), "{strategy:?}");
            assert!(all.iter().all(|seq| seq[0] < 3), "{strategy:?}");
        }
        let mut r = Sequences::starting_with(Strategy::Random, (space(), first.clone()), 2, 5);
        assert!((0..200).all(|_| r.next_sequence().unwrap()[0] < 3));
        // BE jumps past a dead first call's block, numbered among the first calls.
        let mut be = Sequences::starting_with(Strategy::Exhaustive, (space(), first), 2, 0);
        be.next_sequence();
        be.dead_prefix(&[0, 0], 1);
        assert_eq!(be.next_sequence(), Some(vec![1, 0]));
    }

    #[test]
    fn bobw_pauses_after_its_share_of_dead_prefixes_so_the_budget_is_checked() {
        let mut s = Sequences::new(Strategy::Bobw, space(), 3, 1);
        for c in 0..7 {
            s.dead_prefix(&[c, 0, 0], 1);
        }
        // Every one of the 343 sequences extends a dead prefix: ten skips, then a pause,
        // until the space is walked.
        let mut pauses = 0;
        loop {
            match s.next_within(10) {
                Err(Paused) => pauses += 1,
                Ok(None) => break,
                Ok(Some(seq)) => panic!("{seq:?} extends a dead prefix"),
            }
        }
        assert_eq!(pauses, 34);
        assert_eq!(s.skipped, 343);
    }

    #[test]
    fn a_call_that_killed_the_harness_is_skipped_at_every_position() {
        let mut s = Sequences::new(
            Strategy::Bobw,
            Space::new(vec![vec![], vec![]]).unwrap(),
            3,
            1,
        );
        s.fatal_call(1);
        let mut run = 0;
        while let Some(seq) = s.next_sequence() {
            assert!(!seq.contains(&1), "{seq:?}");
            run += 1;
        }
        assert_eq!((run, s.skipped), (1, 7));
    }

    #[test]
    fn exhaustive_jumps_over_a_dead_prefix() {
        let mut s = Sequences::new(Strategy::Exhaustive, space(), 2, 0);
        let first = s.next_sequence().unwrap();
        assert_eq!(first, [0, 0]);
        s.dead_prefix(&first, 1);
        assert_eq!(s.next_sequence().unwrap(), [1, 0], "[0, _] skipped");
    }

    #[test]
    fn bobw_skips_sequences_holding_a_dead_prefix() {
        let mut s = Sequences::new(Strategy::Bobw, space(), 2, 3);
        let first = s.next_sequence().unwrap();
        s.dead_prefix(&first, 1);
        let rest: Vec<_> = std::iter::from_fn(|| s.next_sequence()).collect();
        assert_eq!(
            rest.len(),
            49 - 7,
            "the other six sequences of its prefix are skipped"
        );
        assert!(rest.iter().all(|q| q[0] != first[0]));
        assert_eq!(s.proposed, 49);
        assert_eq!(s.skipped, 6);
    }
}
