//! The plan after verification: without the tests and table rows it took out, their calls
//! counted as skipped.

use std::collections::BTreeSet;

use crate::plan::model::Plan;
use crate::reasons::FAILED_VERIFICATION;
use crate::verify::Quarantined;

/// The recorded calls of the tests and table rows verification took out.
pub(crate) fn failed_calls(plan: &Plan, quarantined: &[Quarantined]) -> Vec<u64> {
    let mut out = Vec::new();
    for file in &plan.files {
        for t in &file.tests {
            for q in quarantined
                .iter()
                .filter(|q| q.file == file.file_name && q.test == t.name)
            {
                match (q.row, &t.table) {
                    (Some(row), Some(table)) => {
                        out.extend(table.rows.get(row).into_iter().flat_map(|r| &r.calls));
                    }
                    _ => out.extend(&t.calls),
                }
            }
        }
    }
    out
}

/// Of the `failed` calls, those not carved again yet (not in `weak`): what another round of
/// verification carves again. None left means the round's failures fail however carved.
pub(crate) fn to_carve_again(weak: &BTreeSet<u64>, failed: Vec<u64>) -> BTreeSet<u64> {
    failed.into_iter().filter(|c| !weak.contains(c)).collect()
}

/// Removes the quarantined tests and table rows from `plan`; their calls count as skipped.
pub(crate) fn take_out(plan: &mut Plan, quarantined: &[Quarantined]) {
    for file in &mut plan.files {
        for t in &mut file.tests {
            let Some(table) = t.table.as_mut() else {
                continue;
            };
            let gone: BTreeSet<usize> = quarantined
                .iter()
                .filter(|q| q.file == file.file_name && q.test == t.name)
                .filter_map(|q| q.row)
                .collect();
            if gone.is_empty() {
                continue;
            }
            let mut at = 0;
            table.rows.retain(|row| {
                let out = gone.contains(&at);
                at += 1;
                if out {
                    plan.summary
                        .uncarve(&t.body.function_path, &row.calls, FAILED_VERIFICATION);
                    t.calls.retain(|c| !row.calls.contains(c));
                }
                !out
            });
        }
        file.tests.retain(|t| {
            let emptied = t.table.as_ref().is_some_and(|table| table.rows.is_empty());
            if emptied {
                plan.summary.tests_written -= 1;
                return false;
            }
            let out = quarantined
                .iter()
                .any(|q| q.file == file.file_name && q.test == t.name && q.row.is_none());
            if out {
                plan.summary.tests_written -= 1;
                plan.summary
                    .uncarve(&t.body.function_path, &t.calls, FAILED_VERIFICATION);
            }
            !out
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_calls_not_carved_again_yet_are_carved_again() {
        let weak: BTreeSet<u64> = [3, 5].into();
        // A test of call 7 passed the first round and failed beside the tests of 3 and 5
        // carved again: 7 is carved again, 3 and 5 fail however carved.
        assert_eq!(to_carve_again(&weak, vec![3, 7, 5, 7]), [7].into());
        assert!(to_carve_again(&weak, vec![5, 3]).is_empty());
        assert_eq!(to_carve_again(&BTreeSet::new(), vec![1, 2]), [1, 2].into());
    }
}
