//! One round's search: sequences run in batches through the harness until the budget is
//! spent, the strategy has none left, or (when the pools can still grow) the search levels
//! off; the keeper takes in each answer, the strategy learns the dead prefixes, and each kept
//! sequence is queued for extension.

use std::time::{Duration, Instant};

use crate::{extend, harness, keep, strategy, substitute, Budget, ExploreError, Interrupt};

/// Sequences sent to the harness at a time.
pub(crate) const BATCH: usize = 256;
/// A search that could go on with grown pools levels off when it has run this many
/// sequences since it last kept one, and as many as it had run before that.
const LEVEL_OFF: u64 = 20_000;
/// Sequences the strategy skips (dead prefixes) before the budget is checked again.
const MAX_SKIPS: u32 = 100_000;
/// Longest a sequence may run before it counts as hung.
pub(crate) const SEQUENCE_TIMEOUT: Duration = Duration::from_secs(10);

impl Budget {
    pub(crate) fn is_spent(self) -> bool {
        matches!(self, Budget::Time(t) if t.is_zero()) || self == Budget::Runs(0)
    }
}

/// What a search did (over all rounds).
#[derive(Default)]
pub(crate) struct Searched {
    pub(crate) run: u64,
    /// Of those run, extensions of kept sequences.
    pub(crate) extended: u64,
    pub(crate) exhausted: bool,
    /// It ran twice the sequences it had run when it last kept one (and [`LEVEL_OFF`] more).
    pub(crate) levelled_off: bool,
    pub(crate) seconds: f64,
    pub(crate) harness_seconds: f64,
    /// Of those run, a kept sequence with a grown pool's value in place of one of its own.
    pub(crate) substituted: u64,
    /// Proposed by the strategies, and skipped for a dead prefix.
    pub(crate) proposed: u64,
    pub(crate) skipped: u64,
}

impl Searched {
    /// Adds a search `s` of a round whose strategy is `seqs` (counted from `counted`, what
    /// its strategy had proposed and skipped before this search: a round may search twice).
    pub(crate) fn add(
        &mut self,
        s: &Searched,
        (seqs, counted): (&strategy::Sequences, (u64, u64)),
    ) {
        self.run += s.run;
        self.extended += s.extended;
        self.substituted += s.substituted;
        self.exhausted = s.exhausted;
        self.levelled_off = s.levelled_off;
        self.seconds += s.seconds;
        self.harness_seconds += s.harness_seconds;
        self.proposed += seqs.proposed - counted.0;
        self.skipped += seqs.skipped - counted.1;
    }

    /// The share of `budget` the next round takes: what is left, or, when its pools can still
    /// grow, half of that, but never less than a tenth of the whole (a round that spends its
    /// share goes on as one that levelled off: smallvec's space is too large to run whole and
    /// keeps finding a little, so without a share its one round never learnt what the crate
    /// compared its values with).
    pub(crate) fn share_of(&self, budget: Budget, can_grow: bool) -> Budget {
        let left = self.left_of(budget);
        if !can_grow {
            return left;
        }
        match (budget, left) {
            (Budget::Time(whole), Budget::Time(left)) => {
                Budget::Time(left.min((left / 2).max(whole / 10)))
            }
            // At least one run: a share of none would grow the pools round after round.
            (Budget::Runs(whole), Budget::Runs(left)) => {
                Budget::Runs(left.min((left / 2).max(whole / 10).max(1)))
            }
            (_, left) => left,
        }
    }

    /// What is left of `budget` after the rounds so far.
    pub(crate) fn left_of(&self, budget: Budget) -> Budget {
        match budget {
            Budget::Time(t) => {
                Budget::Time(t.saturating_sub(Duration::from_secs_f64(self.seconds)))
            }
            Budget::Runs(n) => Budget::Runs(n.saturating_sub(self.run)),
        }
    }
}

/// Runs sequences until the budget is spent or the strategy has none left: extensions of
/// kept sequences first, then `substitutions`, then extensions of those earlier rounds kept,
/// then the strategy's. When `can_level_off` (a later round can grow the pools) it also
/// stops once it levels off: [`LEVEL_OFF`] sequences and as many as it had run before its
/// last kept one have run since that one.
pub(crate) fn search(
    (seqs, mut extender, mut substitutions): (
        &mut strategy::Sequences,
        Option<&mut extend::Extender>,
        Option<substitute::Substitutions>,
    ),
    keeper: &mut keep::Keeper,
    runner: &mut harness::run::Runner,
    (budget, interrupt, can_level_off): (Budget, Interrupt, bool),
) -> Result<Searched, ExploreError> {
    let start = Instant::now();
    let mut done = Searched::default();
    // Sequences run when the last one was kept.
    let mut kept_at = 0;
    // BE learns a prefix is dead only from the answers: while most of a batch is stopped at
    // a dead prefix, the next batch is smaller, so BE jumps sooner.
    let mut size = BATCH;
    loop {
        if interrupt.is_set() {
            return Err(ExploreError::Interrupted);
        }
        let left = match budget {
            Budget::Time(limit) if start.elapsed() >= limit => break,
            Budget::Runs(n) if done.run >= n => break,
            Budget::Runs(n) => (n - done.run) as usize,
            Budget::Time(_) => size,
        };
        let mut batch = Vec::new();
        let mut paused = false;
        while batch.len() < size.min(left) {
            // (sequence, whether a substitution rather than an extension)
            let queued = (extender.as_mut().and_then(|e| e.next()).map(|s| (s, false)))
                .or_else(|| substitutions.as_mut()?.next().map(|s| (s, true)))
                .or_else(|| extender.as_mut()?.next_earlier().map(|s| (s, false)));
            if let Some((s, substituted)) = queued {
                if !seqs.holds_dead(&s) {
                    batch.push(s);
                    match substituted {
                        true => done.substituted += 1,
                        false => done.extended += 1,
                    }
                }
                continue;
            }
            match seqs.next_within(MAX_SKIPS) {
                Ok(Some(s)) => batch.push(s),
                Ok(None) => break,
                Err(strategy::Paused) => {
                    paused = true;
                    break;
                }
            }
        }
        if batch.is_empty() && paused {
            // Only dead prefixes so far: the budget is checked again before skipping more.
            continue;
        }
        if batch.is_empty() {
            done.exhausted = true;
            break;
        }
        let kept_before = keeper.kept.len();
        let asked = Instant::now();
        let results = runner.run_batch(&batch)?;
        done.harness_seconds += asked.elapsed().as_secs_f64();
        for (seq, result) in batch.iter().zip(&results) {
            let kept = keeper.kept.len();
            if let Some(k) = keeper.observe(seqs.space(), seq, result) {
                seqs.dead_prefix(seq, k);
            }
            if let (Some(e), Some(k)) = (extender.as_mut(), keeper.kept.get(kept)) {
                e.kept(seqs.space(), &k.calls, seqs.length());
            }
            if matches!(result.end, harness::run::End::Crashed(_)) {
                // The call it died in: the first one not answered.
                if let Some(&c) = seq.get(result.calls.len()) {
                    seqs.fatal_call(c);
                }
            }
        }
        let ran = results
            .iter()
            .filter(|r| r.end != harness::run::End::Skipped)
            .count();
        if keeper.kept.len() > kept_before {
            kept_at = done.run + ran as u64;
        }
        done.run += ran as u64;
        let since = done.run - kept_at;
        if can_level_off && since >= LEVEL_OFF && since >= kept_at {
            done.levelled_off = true;
            break;
        }
        size = (ran * 2).clamp(1, BATCH);
    }
    done.seconds = start.elapsed().as_secs_f64();
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_that_can_grow_takes_half_of_what_is_left_but_never_under_a_tenth_of_the_whole() {
        let mut done = Searched::default();
        let whole = Budget::Runs(1000);
        assert_eq!(done.share_of(whole, false), Budget::Runs(1000));
        assert_eq!(done.share_of(whole, true), Budget::Runs(500));
        done.run = 850;
        assert_eq!(done.share_of(whole, true), Budget::Runs(100));
        done.run = 950;
        assert_eq!(done.share_of(whole, true), Budget::Runs(50));
        done.run = 999;
        assert_eq!(done.share_of(Budget::Runs(5), true), Budget::Runs(0));
        let mut few = Searched {
            run: 4,
            ..Searched::default()
        };
        assert_eq!(few.share_of(Budget::Runs(5), true), Budget::Runs(1));
        let minute = Budget::Time(Duration::from_secs(60));
        few.seconds = 40.0;
        assert_eq!(
            few.share_of(minute, true),
            Budget::Time(Duration::from_secs(10))
        );
        few.seconds = 55.0;
        assert_eq!(
            few.share_of(minute, true),
            Budget::Time(Duration::from_secs(5))
        );
    }
}
