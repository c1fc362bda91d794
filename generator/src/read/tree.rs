//! The call tree a trace's parent links make, checked before anything walks it.

use std::collections::HashMap;

use carve_storage::CallId;

/// A call whose parent links lead back to itself (its own parent, two calls parenting each
/// other, `main` under its child), if the trace has one. A recorder writes none: a call's
/// parent started before it. Every walk of the call tree (up the parents, down the children)
/// assumes a tree, so a damaged trace is refused here, before anything walks it.
pub(crate) fn call_in_parent_cycle<'c>(
    calls: impl Iterator<Item = &'c carve_storage::Call>,
) -> Option<CallId> {
    #[derive(Clone, Copy, PartialEq)]
    enum Seen {
        OnPath,
        Done,
    }
    let calls: Vec<&carve_storage::Call> = calls.collect();
    let parent: HashMap<CallId, Option<CallId>> = calls.iter().map(|c| (c.id, c.parent)).collect();
    let mut seen: HashMap<CallId, Seen> = HashMap::with_capacity(calls.len());
    let mut path = Vec::new();
    for call in calls {
        let mut at = Some(call.id);
        while let Some(id) = at {
            match seen.get(&id) {
                Some(Seen::OnPath) => return Some(id),
                Some(Seen::Done) => break,
                None => {}
            }
            // A parent outside the trace (grouping left it out) ends the walk.
            let Some(&up) = parent.get(&id) else { break };
            seen.insert(id, Seen::OnPath);
            path.push(id);
            at = up;
        }
        for id in path.drain(..) {
            seen.insert(id, Seen::Done);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use carve_storage::FunctionId;

    fn call(id: u64, parent: Option<u64>) -> carve_storage::Call {
        carve_storage::Call {
            id: CallId(id),
            parent: parent.map(CallId),
            function: FunctionId(1),
            thread: 1,
            depth: 0,
            args: Vec::new(),
            outcome: carve_storage::Outcome::Returned,
            ret: None,
            after: Vec::new(),
            objects: Vec::new(),
            touches: Vec::new(),
        }
    }

    #[test]
    fn parent_links_that_loop_are_found_and_a_tree_is_not_taken_for_a_loop() {
        let cycle = |links: &[(u64, Option<u64>)]| {
            let calls: Vec<_> = links.iter().map(|&(id, p)| call(id, p)).collect();
            call_in_parent_cycle(calls.iter()).map(|c| c.0)
        };
        // A tree, and a parent grouping left out of the trace (9).
        assert_eq!(
            cycle(&[(1, None), (2, Some(1)), (3, Some(2)), (4, Some(9))]),
            None
        );
        assert_eq!(cycle(&[(1, None), (2, Some(2))]), Some(2));
        assert_eq!(cycle(&[(1, None), (2, Some(3)), (3, Some(2))]), Some(2));
        assert_eq!(cycle(&[(1, Some(3)), (2, Some(1)), (3, Some(2))]), Some(1));
    }
}
