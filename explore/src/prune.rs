//! A kept sequence without the calls it does not need: in, a kept sequence (which of its calls
//! added something) and the calls' slots; out, the same sequence with only the calls that
//! added something and those that make or change an object a later kept call uses. A second
//! object made and never used, or a free call that added nothing, goes (a reviewer reads only
//! what the test needs); verification still runs what is left.

use std::collections::BTreeSet;

use crate::api::Callable;
use crate::keep::Kept;
use crate::strategy::Space;

/// `kept` with only the calls it needs (see the module's comment).
pub fn needed(kept: &Kept, callables: &[Callable], space: &Space) -> Kept {
    let n = kept.calls.len();
    let mut keep = vec![false; n];
    // The object slots a later kept call reads.
    let mut live: BTreeSet<(usize, u64)> = BTreeSet::new();
    for k in (0..n).rev() {
        let (f, digits) = space.decode(kept.calls[k]);
        let c = &callables[f];
        // The receiver's slot (which the call may change), and every slot it reads (object
        // arguments too, which it does not change).
        let receiver = c.receiver_slot(&digits);
        let reads = c.slots_read(&digits);
        // A maker that gave `Err` or `None` left the slot as it was.
        let writes = c.filled_slot(&digits, kept.outcomes.get(k));
        let feeds = receiver.is_some_and(|r| live.contains(&r))
            || writes.is_some_and(|w| live.contains(&w));
        if kept.adds.contains(&k) || k + 1 == n || feeds {
            keep[k] = true;
            // What it made is new from here: earlier makers of that slot are not needed for it.
            if let Some(w) = writes.filter(|w| Some(*w) != receiver) {
                live.remove(&w);
            }
            live.extend(reads);
        }
    }
    let at: Vec<usize> = (0..n).filter(|&k| keep[k]).collect();
    Kept {
        calls: at.iter().map(|&k| kept.calls[k]).collect(),
        outcomes: at
            .iter()
            .filter_map(|&k| kept.outcomes.get(k).cloned())
            .collect(),
        adds: at
            .iter()
            .enumerate()
            .filter(|(_, k)| kept.adds.contains(k))
            .map(|(i, _)| i)
            .collect(),
        ..kept.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::run::CallOutcome;
    use crate::testdata;

    #[test]
    fn a_call_that_added_nothing_and_feeds_no_later_call_goes() {
        // Gauge::new(max) into a slot, then `level` on a slot.
        let (ex, _, space) = testdata::gauge_with_level();
        let new_into = |slot| space.encode(0, &[1, slot]);
        let level_of = |slot| space.encode(1, &[slot]);
        let ok = || CallOutcome::Returned(Some("0".into()));
        let kept = Kept {
            // Slot 1 made and never used; slot 0 made, then read by the last call.
            calls: vec![new_into(1), new_into(0), level_of(0)],
            outcomes: vec![ok(), ok(), ok()],
            new: Vec::new(),
            new_lines: Vec::new(),
            new_compares: Vec::new(),
            new_branches: Vec::new(),
            adds: vec![2],
        };
        let pruned = needed(&kept, &ex.callables, &space);
        assert_eq!(pruned.calls, vec![new_into(0), level_of(0)]);
        assert_eq!(pruned.outcomes.len(), 2);
        assert_eq!(pruned.adds, vec![1]);
        // A call that added something stays, whatever it feeds.
        let kept = Kept {
            adds: vec![0, 2],
            ..kept
        };
        assert_eq!(needed(&kept, &ex.callables, &space).calls.len(), 3);
    }

    #[test]
    fn a_maker_that_gave_err_feeds_nothing_and_the_object_before_it_stays() {
        let parse = testdata::parse();
        let ex = testdata::gauge_api(vec![testdata::getter("level", "u8"), parse]);
        let space = Space::new(vec![vec![2, 2], vec![2], vec![1, 2]]).unwrap();
        let answer = |t: &str| CallOutcome::Returned(Some(t.into()));
        // new(0) into slot 0; parse into slot 0 gives Err; slot 0's level.
        let calls = vec![
            space.encode(0, &[0, 0]),
            space.encode(2, &[0, 0]),
            space.encode(1, &[0]),
        ];
        let kept = Kept {
            calls: calls.clone(),
            outcomes: vec![answer("Gauge"), answer("Err(Empty)"), answer("0")],
            new: Vec::new(),
            new_lines: Vec::new(),
            new_compares: Vec::new(),
            new_branches: Vec::new(),
            adds: vec![2],
        };
        let pruned = needed(&kept, &ex.callables, &space);
        assert_eq!(pruned.calls, vec![calls[0], calls[2]]);
    }
}
