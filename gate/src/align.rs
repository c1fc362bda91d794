//! Aligning two call sequences (the children of a matched call) so that an inserted or removed
//! call does not shift everything after it: a weighted longest common subsequence that only pairs
//! calls of the same function and prefers those with equal arguments and results, with a bounded
//! linear fallback for very long sequences.

/// One step of an alignment of `a` (baseline) with `b` (new), in sequence order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// `a[i]` and `b[j]` are the same call.
    Both(usize, usize),
    /// `a[i]` has no counterpart: the call is missing from the new trace.
    Base(usize),
    /// `b[j]` has no counterpart: the call was added.
    New(usize),
}

/// Largest LCS table (cells) computed exactly; longer middles use [`greedy`].
const MAX_CELLS: usize = 4_000_000;
/// How far [`greedy`] looks ahead for a resynchronisation point.
const LOOKAHEAD: usize = 64;

/// Aligns `a` with `b` by equality (the weighted form with weights 0 and 1).
#[cfg(test)]
pub(crate) fn align<T: PartialEq>(a: &[T], b: &[T]) -> Vec<Step> {
    align_scored(a.len(), b.len(), 1, |i, j| u32::from(a[i] == b[j]))
}

/// Aligns `n` baseline items with `m` new ones. `score(i, j)` is 0 when the two can never be the
/// same call (different functions) and up to `best` the more alike they are; the alignment
/// maximises the total score (a weighted longest common subsequence) when affordable. Steps are
/// monotone (in the order of both sequences) and deterministic.
pub(crate) fn align_scored(
    n: usize,
    m: usize,
    best: u32,
    score: impl Fn(usize, usize) -> u32,
) -> Vec<Step> {
    let exact = |i: usize, j: usize| score(i, j) >= best;
    let prefix = (0..n.min(m)).take_while(|&k| exact(k, k)).count();
    let suffix = (0..(n - prefix).min(m - prefix))
        .take_while(|&k| exact(n - 1 - k, m - 1 - k))
        .count();
    let (a_mid, b_mid) = (prefix..n - suffix, prefix..m - suffix);
    let mut steps: Vec<Step> = (0..prefix).map(|i| Step::Both(i, i)).collect();
    let shifted = |i: usize, j: usize| score(i + prefix, j + prefix);
    let middle = if (a_mid.len() + 1).saturating_mul(b_mid.len() + 1) <= MAX_CELLS {
        lcs(a_mid.len(), b_mid.len(), shifted)
    } else {
        greedy(a_mid.len(), b_mid.len(), shifted)
    };
    steps.extend(middle.into_iter().map(|s| match s {
        Step::Both(i, j) => Step::Both(i + prefix, j + prefix),
        Step::Base(i) => Step::Base(i + prefix),
        Step::New(j) => Step::New(j + prefix),
    }));
    let (a_tail, b_tail) = (n - suffix, m - suffix);
    steps.extend((0..suffix).map(|k| Step::Both(a_tail + k, b_tail + k)));
    steps
}

/// Exact weighted longest common subsequence; on ties, removals come before additions.
fn lcs(n: usize, m: usize, score: impl Fn(usize, usize) -> u32) -> Vec<Step> {
    let width = m + 1;
    // table[i][j]: best total score of a[i..] and b[j..].
    let mut table = vec![0u32; (n + 1) * width];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            let skip = table[(i + 1) * width + j].max(table[i * width + j + 1]);
            let s = score(i, j);
            table[i * width + j] = if s > 0 {
                skip.max(s + table[(i + 1) * width + j + 1])
            } else {
                skip
            };
        }
    }
    let mut steps = Vec::with_capacity(n.max(m));
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        let here = table[i * width + j];
        let s = score(i, j);
        if s > 0 && here == s + table[(i + 1) * width + j + 1] {
            steps.push(Step::Both(i, j));
            i += 1;
            j += 1;
        } else if here == table[(i + 1) * width + j] {
            steps.push(Step::Base(i));
            i += 1;
        } else {
            steps.push(Step::New(j));
            j += 1;
        }
    }
    steps.extend((i..n).map(Step::Base));
    steps.extend((j..m).map(Step::New));
    steps
}

/// A linear alignment for sequences too long for the exact table: walk both, and on a mismatch
/// skip ahead on the side whose next element reappears soonest on the other.
fn greedy(n: usize, m: usize, score: impl Fn(usize, usize) -> u32) -> Vec<Step> {
    let mut steps = Vec::with_capacity(n.max(m));
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if score(i, j) > 0 {
            steps.push(Step::Both(i, j));
            i += 1;
            j += 1;
            continue;
        }
        let in_a = (i..n.min(i + LOOKAHEAD)).position(|x| score(x, j) > 0);
        let in_b = (j..m.min(j + LOOKAHEAD)).position(|y| score(i, y) > 0);
        match (in_a, in_b) {
            (Some(da), db) if db.is_none_or(|db| da <= db) => {
                steps.extend((i..i + da).map(Step::Base));
                i += da;
            }
            (_, Some(db)) => {
                steps.extend((j..j + db).map(Step::New));
                j += db;
            }
            _ => {
                steps.push(Step::Base(i));
                steps.push(Step::New(j));
                i += 1;
                j += 1;
            }
        }
    }
    steps.extend((i..n).map(Step::Base));
    steps.extend((j..m).map(Step::New));
    steps
}

#[cfg(test)]
mod tests {
    use super::Step::*;
    use super::*;

    #[test]
    fn a_call_inserted_in_the_middle_does_not_shift_the_rest() {
        let steps = align(&["a", "b", "c", "d"], &["a", "b", "x", "c", "d"]);
        assert_eq!(
            steps,
            vec![Both(0, 0), Both(1, 1), New(2), Both(2, 3), Both(3, 4)]
        );
    }

    #[test]
    fn a_removed_call_is_missing_and_the_rest_still_match() {
        let steps = align(&["a", "b", "a", "c"], &["a", "a", "c"]);
        assert_eq!(steps, vec![Both(0, 0), Base(1), Both(2, 1), Both(3, 2)]);
    }

    #[test]
    fn among_calls_of_one_function_the_alike_ones_are_paired() {
        // Three calls of one function; the first vanished. Arguments tell which.
        let (a, b) = ([1, 3, 5], [3, 5]);
        let steps = align_scored(3, 2, 6, |i, j| 5 + u32::from(a[i] == b[j]));
        assert_eq!(steps, vec![Base(0), Both(1, 0), Both(2, 1)]);
        // Random values never cost a pair: all three rolls stay matched in place.
        let (a, b) = ([3, 2, 4], [1, 3, 2]);
        let steps = align_scored(3, 3, 8, |i, j| 7 + u32::from(a[i] == b[j]));
        assert_eq!(steps, vec![Both(0, 0), Both(1, 1), Both(2, 2)]);
    }

    #[test]
    fn a_reordering_inside_the_middle_is_one_removal_and_one_addition() {
        let steps = align(&["p", "a", "b", "q"], &["p", "b", "a", "q"]);
        let both = steps.iter().filter(|s| matches!(s, Both(..))).count();
        assert_eq!(both, 3, "{steps:?}");
    }

    #[test]
    fn very_long_sequences_are_aligned_without_a_quadratic_table() {
        let a: Vec<u32> = (0..5000).map(|i| i % 7).collect();
        let mut b = a.clone();
        b.insert(10, 99);
        b.remove(4000);
        b[20] = 98;
        let steps = align(&a, &b);
        let both = steps.iter().filter(|s| matches!(s, Both(..))).count();
        assert!(both >= 4990, "{both}");
    }

    #[test]
    fn empty_sequences_align_to_nothing_or_to_all_added() {
        assert_eq!(align::<u8>(&[], &[]), vec![]);
        assert_eq!(align_scored(0, 0, 1, |_, _| 1), vec![]);
        assert_eq!(align(&[], &[1]), vec![New(0)]);
        assert_eq!(align(&[1], &[]), vec![Base(0)]);
    }
}
