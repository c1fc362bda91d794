//! Feasible call sequences for hidden state (seed 001): which recorded calls, replayed in which
//! order on a freshly built object, bring it to a state that no completed call ever left it in.
//!
//! The states in question are the ones a recursive method sees: `Evaluator::eval` bumps a private
//! counter and recurses, so every inner call starts from a count that only existed inside the
//! outer, unfinished call. No exact chain of recorded transitions reaches it. What the recording
//! does show is what each call did to the object's integers (`visited: 2 → 3`), so this module
//! treats each recorded call as that change and searches, breadth first, for the shortest
//! sequence of changes from a constructed state to the wanted one.
//!
//! That a call changes the counters by the same amount from another state is a hypothesis, not a
//! fact: the test that uses such a sequence asserts the state it arranged before acting, and
//! verification drops the test when the hypothesis was wrong (JET checks each step by running it;
//! carve checks the whole sequence by running the test).

use std::collections::{HashMap, HashSet, VecDeque};

use carve_storage::Value;

/// The longest sequence the search tries.
pub const MAX_STEPS: usize = 8;
/// How many distinct states the search visits at most.
const MAX_STATES: usize = 20_000;

/// A recorded call that changed an object: its state before and after.
#[derive(Debug, Clone, Copy)]
pub struct Transition<'a> {
    pub before: &'a Value,
    pub after: &'a Value,
}

/// An object's state split into what a counter step leaves alone (the skeleton, integers zeroed)
/// and its integers, in tree order.
struct Split {
    skeleton: Value,
    counters: Vec<i128>,
    /// `(min, max)` of each integer's type.
    ranges: Vec<(i128, i128)>,
}

fn split(value: &Value) -> Option<Split> {
    let mut skeleton = value.clone();
    let mut counters = Vec::new();
    let mut ranges = Vec::new();
    zero_integers(&mut skeleton, &mut counters, &mut ranges)?;
    Some(Split {
        skeleton,
        counters,
        ranges,
    })
}

/// Replaces every integer in `value` with 0, collecting the old values; `None` for an unsigned
/// value beyond `i128`.
fn zero_integers(
    value: &mut Value,
    counters: &mut Vec<i128>,
    ranges: &mut Vec<(i128, i128)>,
) -> Option<()> {
    match value {
        Value::Int { ty, value } => {
            counters.push(*value);
            ranges.push(range(ty, true));
            *value = 0;
        }
        Value::Uint { ty, value } => {
            counters.push(i128::try_from(*value).ok()?);
            ranges.push(range(ty, false));
            *value = 0;
        }
        Value::Struct { fields, .. } | Value::Enum { fields, .. } => {
            for f in fields {
                zero_integers(&mut f.value, counters, ranges)?;
            }
        }
        Value::Tuple { elems, .. } | Value::Seq { elems, .. } => {
            for e in elems {
                zero_integers(e, counters, ranges)?;
            }
        }
        Value::Ref { target, .. } => zero_integers(target, counters, ranges)?,
        _ => {}
    }
    Some(())
}

/// The values an integer type holds; C and unknown names are taken as 64 bits wide.
fn range(ty: &str, signed: bool) -> (i128, i128) {
    let bits: u32 = match ty.trim_start_matches(['i', 'u']) {
        "8" => 8,
        "16" => 16,
        "32" => 32,
        "128" => {
            return if signed {
                (i128::MIN, i128::MAX)
            } else {
                (0, i128::MAX)
            }
        }
        _ => 64,
    };
    if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

/// The shortest sequence of `steps` (indices, in order) that takes `start` to `target` when each
/// step changes the integers as it did in the recording; `None` when the two differ in more than
/// integers or no sequence of at most [`MAX_STEPS`] steps gets there. Earlier steps are preferred
/// among those making the same change. `same` compares two skeletons.
#[cfg(test)]
pub fn counter_path(
    start: &Value,
    target: &Value,
    steps: &[Transition],
    same: &dyn Fn(&Value, &Value) -> bool,
) -> Option<Vec<usize>> {
    let key = |_: &Value| 0;
    counter_path_split(start, target, &split_steps(steps, &key), same, &key)
}

/// A recorded call's states before and after, split (see [`split`]) once for every search,
/// with the keys of their skeletons.
pub struct SplitStep {
    before: Split,
    after: Split,
    /// `key` of each skeleton: steps whose skeletons cannot equal the start's are passed by
    /// without comparing them.
    keys: (u64, u64),
}

/// `steps` split, each `None` where a state holds an integer beyond `i128`; `key` hashes a
/// skeleton so that two a `same` equals share it.
pub fn split_steps(steps: &[Transition], key: &dyn Fn(&Value) -> u64) -> Vec<Option<SplitStep>> {
    steps
        .iter()
        .map(|t| {
            let (before, after) = (split(t.before)?, split(t.after)?);
            let keys = (key(&before.skeleton), key(&after.skeleton));
            Some(SplitStep {
                before,
                after,
                keys,
            })
        })
        .collect()
}

/// The counter search (`counter_path`) over steps split once ([`split_steps`]): splitting every recorded call's
/// states again for each search cloned them all (bytes' buffers: most of its planning time).
pub fn counter_path_split(
    start: &Value,
    target: &Value,
    steps: &[Option<SplitStep>],
    same: &dyn Fn(&Value, &Value) -> bool,
    key: &dyn Fn(&Value) -> u64,
) -> Option<Vec<usize>> {
    let from = split(start)?;
    let to = split(target)?;
    if from.counters.len() != to.counters.len() || !same(&from.skeleton, &to.skeleton) {
        return None;
    }
    let from_key = key(&from.skeleton);
    // One step per distinct change that applies to this shape of state.
    let mut moves: Vec<(usize, Vec<i128>)> = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        let Some(SplitStep {
            before,
            after,
            keys,
        }) = step
        else {
            continue;
        };
        if *keys != (from_key, from_key) {
            continue;
        }
        let applies = before.counters.len() == from.counters.len()
            && after.counters.len() == from.counters.len()
            && same(&before.skeleton, &from.skeleton)
            && same(&after.skeleton, &from.skeleton);
        if !applies {
            continue;
        }
        let delta: Option<Vec<i128>> = after
            .counters
            .iter()
            .zip(&before.counters)
            .map(|(a, b)| a.checked_sub(*b))
            .collect();
        let Some(delta) = delta else { continue };
        if delta.iter().all(|d| *d == 0) || moves.iter().any(|(_, d)| *d == delta) {
            continue;
        }
        moves.push((i, delta));
    }

    // Out of reach when even MAX_STEPS of the largest change in each direction falls short.
    let reachable = (0..from.counters.len()).all(|k| {
        let need = to.counters[k] - from.counters[k];
        let most_up = moves.iter().map(|(_, d)| d[k].max(0)).max().unwrap_or(0);
        let most_down = moves.iter().map(|(_, d)| d[k].min(0)).min().unwrap_or(0);
        need <= most_up.saturating_mul(MAX_STEPS as i128)
            && need >= most_down.saturating_mul(MAX_STEPS as i128)
    });
    if !reachable {
        return None;
    }

    // Breadth first over counter vectors: the first arrival is a shortest sequence.
    let mut came_from: HashMap<Vec<i128>, (Vec<i128>, usize)> = HashMap::new();
    let mut seen: HashSet<Vec<i128>> = HashSet::from([from.counters.clone()]);
    let mut queue = VecDeque::from([(from.counters.clone(), 0usize)]);
    while let Some((state, depth)) = queue.pop_front() {
        if state == to.counters {
            let mut path = Vec::new();
            let mut at = state;
            while let Some((prev, step)) = came_from.get(&at) {
                path.push(*step);
                at = prev.clone();
            }
            path.reverse();
            return Some(path);
        }
        if depth == MAX_STEPS {
            continue;
        }
        for (step, delta) in &moves {
            let next: Option<Vec<i128>> = state
                .iter()
                .zip(delta)
                .zip(&from.ranges)
                .map(|((v, d), (lo, hi))| v.checked_add(*d).filter(|n| (lo..=hi).contains(&n)))
                .collect();
            let Some(next) = next else { continue };
            if seen.len() >= MAX_STATES || !seen.insert(next.clone()) {
                continue;
            }
            came_from.insert(next.clone(), (state.clone(), *step));
            queue.push_back((next, depth + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use carve_storage::Field;

    fn counter(ty: &str, visited: u128, name: &str) -> Value {
        Value::Struct {
            ty: ty.to_string(),
            fields: vec![
                Field {
                    name: "visited".into(),
                    value: Value::Uint {
                        ty: "usize".into(),
                        value: visited,
                    },
                },
                Field {
                    name: "name".into(),
                    value: Value::Str {
                        ty: "alloc::string::String".into(),
                        value: name.into(),
                        truncated: false,
                    },
                },
            ],
        }
    }

    fn eq(a: &Value, b: &Value) -> bool {
        a == b
    }

    #[test]
    fn a_counter_raised_inside_an_unfinished_call_is_reached_by_the_fewest_recorded_steps() {
        let states: Vec<Value> = [0, 1, 4, 5, 9]
            .iter()
            .map(|&v| counter("E", v, "x"))
            .collect();
        // Recorded: 0 → 9 (a whole tree), 1 → 5 (a subtree), 4 → 5 (a leaf).
        let steps = [
            Transition {
                before: &states[0],
                after: &states[4],
            },
            Transition {
                before: &states[1],
                after: &states[3],
            },
            Transition {
                before: &states[2],
                after: &states[3],
            },
        ];
        let target = counter("E", 6, "x");
        assert_eq!(
            counter_path(&states[0], &target, &steps, &eq),
            Some(vec![1, 2, 2])
        );
        assert_eq!(
            counter_path(&states[0], &states[0], &steps, &eq),
            Some(vec![])
        );
    }

    #[test]
    fn states_that_differ_in_more_than_integers_have_no_counter_path() {
        let start = counter("E", 0, "x");
        let after = counter("E", 1, "x");
        let steps = [Transition {
            before: &start,
            after: &after,
        }];
        assert_eq!(
            counter_path(&start, &counter("E", 3, "y"), &steps, &eq),
            None
        );
    }

    #[test]
    fn steps_that_change_more_than_integers_are_not_used() {
        let start = counter("E", 0, "x");
        let renamed = counter("E", 1, "y");
        let steps = [Transition {
            before: &start,
            after: &renamed,
        }];
        assert_eq!(
            counter_path(&start, &counter("E", 2, "x"), &steps, &eq),
            None
        );
    }

    #[test]
    fn an_unsigned_counter_never_goes_below_zero_on_the_way() {
        let zero = counter("E", 0, "x");
        let (two, one, five) = (
            counter("E", 2, "x"),
            counter("E", 1, "x"),
            counter("E", 5, "x"),
        );
        // -1 and +5 only: 0 → 4 needs 5 - 1, never 0 - 1 first.
        let steps = [
            Transition {
                before: &two,
                after: &one,
            },
            Transition {
                before: &zero,
                after: &five,
            },
        ];
        assert_eq!(
            counter_path(&zero, &counter("E", 4, "x"), &steps, &eq),
            Some(vec![1, 0])
        );
    }

    #[test]
    fn a_state_too_many_steps_away_is_not_reached() {
        let zero = counter("E", 0, "x");
        let one = counter("E", 1, "x");
        let steps = [Transition {
            before: &zero,
            after: &one,
        }];
        let far = counter("E", MAX_STEPS as u128 + 1, "x");
        assert_eq!(counter_path(&zero, &far, &steps, &eq), None);
        let near = counter("E", MAX_STEPS as u128, "x");
        assert_eq!(
            counter_path(&zero, &near, &steps, &eq).map(|p| p.len()),
            Some(MAX_STEPS)
        );
    }
}
