//! A grown round's first sequences (EvoSuite's and Randoop's change of a primitive value in a
//! sequence that did something): each kept sequence again with one of its calls' values
//! taken from what its pool gained instead, value by value, so that a new value is first
//! tried where a value of its pool already reached something (`unit("kb")` kept, then
//! `unit("kibibyte")`; `width("🇦")` kept, then `width("🇦🏻")`), not only where a walk over
//! the whole grown space happens to put it.

use crate::strategy::Space;

/// One index of one call of a kept sequence whose pool grew.
#[derive(Debug, Clone)]
struct Site {
    /// The kept sequence, as call numbers of the grown space.
    seq: usize,
    call: usize,
    digit: usize,
    /// The pool's size before it grew, and now.
    before: u64,
    now: u64,
}

/// The substituted sequences, made as they are asked for.
pub struct Substitutions {
    space: Space,
    kept: Vec<Vec<u64>>,
    sites: Vec<Site>,
    /// The most new values any site's pool gained.
    most: u64,
    /// The next new value (counted from each pool's first new one) and site.
    value: u64,
    site: usize,
}

impl Substitutions {
    /// The substitutions of `kept` (numbered in `grown`), whose pools had the sizes `before`
    /// gives before they grew.
    pub fn new(before: &Space, grown: &Space, kept: Vec<Vec<u64>>) -> Substitutions {
        let mut sites = Vec::new();
        for (seq, calls) in kept.iter().enumerate() {
            for (call, &c) in calls.iter().enumerate() {
                let (f, _) = grown.decode(c);
                let pairs = before.dims[f].iter().zip(&grown.dims[f]);
                for (digit, (&b, &n)) in pairs.enumerate() {
                    if n > b {
                        sites.push(Site {
                            seq,
                            call,
                            digit,
                            before: b,
                            now: n,
                        });
                    }
                }
            }
        }
        let most = sites.iter().map(|s| s.now - s.before).max().unwrap_or(0);
        Substitutions {
            space: grown.clone(),
            kept,
            sites,
            most,
            value: 0,
            site: 0,
        }
    }

    /// The next substituted sequence: every site with the first new value, then every site
    /// with the second...; `None` when each site has had each of its pool's new values.
    pub fn next(&mut self) -> Option<Vec<u64>> {
        loop {
            if self.value >= self.most {
                return None;
            }
            if self.site >= self.sites.len() {
                self.site = 0;
                self.value += 1;
                continue;
            }
            let s = &self.sites[self.site];
            self.site += 1;
            let index = s.before + self.value;
            if index >= s.now {
                continue;
            }
            let mut seq = self.kept[s.seq].clone();
            let (f, mut digits) = self.space.decode(seq[s.call]);
            digits[s.digit] = index;
            seq[s.call] = self.space.encode(f, &digits);
            return Some(seq);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_new_value_takes_the_place_of_a_kept_calls_value_of_its_pool_one_value_at_a_time() {
        // Callable 0: a slot (2) and a text (3 → 5); callable 1: an integer (4, not grown).
        let before = Space::new(vec![vec![2, 3], vec![4]]).unwrap();
        let grown = Space::new(vec![vec![2, 5], vec![4]]).unwrap();
        let kept = vec![vec![grown.encode(0, &[1, 2]), grown.encode(1, &[3])]];
        let mut s = Substitutions::new(&before, &grown, kept);
        let mut all = Vec::new();
        while let Some(seq) = s.next() {
            all.push(seq);
        }
        let decoded: Vec<Vec<(usize, Vec<u64>)>> = (all.iter())
            .map(|seq| seq.iter().map(|&c| grown.decode(c)).collect())
            .collect();
        assert_eq!(
            decoded,
            [
                vec![(0, vec![1, 3]), (1, vec![3])],
                vec![(0, vec![1, 4]), (1, vec![3])],
            ]
        );
    }

    #[test]
    fn nothing_grew_nothing_to_substitute() {
        let space = Space::new(vec![vec![2, 3]]).unwrap();
        let mut s = Substitutions::new(&space, &space, vec![vec![1]]);
        assert_eq!(s.next(), None);
    }
}
