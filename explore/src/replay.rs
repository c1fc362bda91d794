//! The recording's own calls as the harness runs them: in, the trace, the explorable calls and
//! their pools; out, one sequence per distinct recorded call that needs no object (a free
//! function, a constructor), has a carved test and whose every argument is in its pool. Run
//! before the search, they say which lines, comparison outcomes and outcome classes the
//! carved tests give, so that what the search keeps is what it adds to them, not them again.

use std::collections::BTreeSet;

use carve_storage::{Arg, Trace};

use crate::api::Callable;
use crate::pools::{index_of, Pools};
use crate::strategy::Space;

/// At most this many recorded calls are replayed.
pub const MAX_REPLAYS: usize = 4096;

/// The sequences (one call each) that replay the recording's calls of `callables` that the
/// carved suite tests (`carved`, by call id): what they give is what a carved test checks.
pub fn sequences(
    (trace, carved): (&Trace, &BTreeSet<u64>),
    callables: &[Callable],
    pools: &Pools,
    space: &Space,
) -> Vec<Vec<u64>> {
    let calls = trace.calls.iter().filter_map(|call| {
        if !carved.contains(&call.id.0) {
            return None;
        }
        let f = trace.function(call.function)?;
        Some((f.path.as_str(), call.args.as_slice()))
    });
    of_calls(calls, callables, pools, space)
}

/// The same from (function path, arguments) pairs.
fn of_calls<'t>(
    calls: impl Iterator<Item = (&'t str, &'t [Arg])>,
    callables: &[Callable],
    pools: &Pools,
    space: &Space,
) -> Vec<Vec<u64>> {
    let mut out = BTreeSet::new();
    for (path, args) in calls {
        for (i, c) in callables.iter().enumerate() {
            let other = c.path != path || c.receiver.is_some() || c.into_collected();
            if other || c.params.len() != args.len() {
                continue;
            }
            let digits: Option<Vec<u64>> = c
                .params
                .iter()
                .zip(args)
                .map(|(p, a)| index_of(pools, &p.kind, &a.value).map(|at| at as u64))
                .chain(c.makes.iter().map(|_| Some(0)))
                .collect();
            if let Some(digits) = digits {
                out.insert(vec![space.encode(i, &digits)]);
            }
        }
        if out.len() >= MAX_REPLAYS {
            break;
        }
    }
    out.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata;
    use carve_storage::Value;

    #[test]
    fn a_recorded_call_with_pooled_arguments_is_replayed_once_and_a_method_is_not() {
        let (ex, pools, space) = testdata::gauge_with_level();
        let max = |v: u128| {
            vec![Arg {
                name: "max".into(),
                value: Value::Uint {
                    ty: "u8".into(),
                    value: v,
                },
            }]
        };
        let (new255, new7, new0) = (max(255), max(7), max(0));
        let calls = [
            ("g::Gauge::new", new255.as_slice()),
            ("g::Gauge::new", new255.as_slice()),
            // 7 is in no pool.
            ("g::Gauge::new", new7.as_slice()),
            ("g::Gauge::level", &[][..]),
            ("g::Gauge::new", new0.as_slice()),
        ];
        let got = of_calls(calls.into_iter(), &ex.callables, &pools, &space);
        // `new(max)` then its result slot: pool index 1 (255) and 0 (0), slot 0.
        let want: BTreeSet<Vec<u64>> = [space.encode(0, &[1, 0]), space.encode(0, &[0, 0])]
            .into_iter()
            .map(|c| vec![c])
            .collect();
        assert_eq!(got.into_iter().collect::<BTreeSet<_>>(), want);
    }
}
