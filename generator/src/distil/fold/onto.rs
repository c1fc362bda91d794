//! Folding's first rule: a kept test that is one more row of a table the file already holds
//! (a function's calls past `--max-per-function`, `plan/table.rs`: the same steps, the same
//! literal shape, other values) joins that table, at its end. Without it a reader met two
//! tables of one call side by side, itoa's `format_i16_recorded_cases` (the calls past the
//! cap) and `format_recorded_cases_2` (the kept tests of `format` on `i16`), different only in
//! which calls distilling weighed one by one. A row runs the same steps and checks as the
//! test it replaces, so the table catches what both did.

use crate::plan::model::TestPlan;
use crate::plan::table::{self, Row};

/// `tests` with each test that fits a typed table of the file as a row of it, and how many
/// tables took one or more.
pub(super) fn onto_tables(tests: Vec<TestPlan>) -> (Vec<TestPlan>, usize) {
    let mut joins: Vec<Option<(usize, Vec<String>)>> = vec![None; tests.len()];
    for (i, t) in tests.iter().enumerate() {
        if t.table.is_some() || t.story {
            continue;
        }
        let Some((shape, values)) = table::split(&t.body) else {
            continue;
        };
        let host = tests.iter().position(|h| {
            h.table
                .as_ref()
                .is_some_and(|tb| !tb.inferred && tb.columns == shape.columns)
                && h.body == shape.body
        });
        if let Some(j) = host {
            joins[i] = Some((j, values));
        }
    }
    let hosts: std::collections::BTreeSet<usize> =
        joins.iter().flatten().map(|(j, _)| *j).collect();
    if hosts.is_empty() {
        return (tests, 0);
    }
    let mut rows: Vec<Vec<(TestPlan, Vec<String>)>> = vec![Vec::new(); tests.len()];
    let mut kept: Vec<Option<TestPlan>> = Vec::with_capacity(tests.len());
    for (t, join) in tests.into_iter().zip(joins) {
        match join {
            Some((j, values)) => {
                rows[j].push((t, values));
                kept.push(None);
            }
            None => kept.push(Some(t)),
        }
    }
    let tests = kept
        .into_iter()
        .zip(rows)
        .filter_map(|(t, joined)| {
            let mut t = t?;
            for (member, values) in joined {
                t.calls.extend(&member.calls);
                t.replayed.extend(&member.replayed);
                t.arranged.extend(&member.arranged);
                if let Some(table) = t.table.as_mut() {
                    table.rows.push(Row {
                        values,
                        calls: member.calls,
                        replayed: member.replayed,
                        arranged: member.arranged,
                    });
                }
            }
            Some(t)
        })
        .collect();
    (tests, hosts.len())
}

#[cfg(test)]
mod tests {
    use super::super::testing::{body, eq, test};
    use super::*;
    use crate::plan::table::Table;

    #[test]
    fn a_kept_test_of_a_tables_shape_is_one_more_row_of_it() {
        // The calls of `format` past the cap, on `u64`: a table of two rows.
        let (shape, _) = table::split(&body("buffer.format", &["7u64"], eq("\"7\""))).unwrap();
        let mut past_cap = test("format_recorded_cases", 10, shape.body);
        past_cap.table = Some(Table {
            columns: shape.columns,
            rows: [("7u64", "\"7\"", 10), ("8u64", "\"8\"", 11)]
                .iter()
                .map(|(a, r, call)| Row {
                    values: vec![a.to_string(), r.to_string()],
                    calls: vec![*call],
                    replayed: vec![],
                    arranged: vec![],
                })
                .collect(),
            inferred: false,
        });
        past_cap.calls = vec![10, 11];
        let kept = test(
            "format_returns_0",
            1,
            body("buffer.format", &["0u64"], eq("\"0\"")),
        );
        // Another literal shape (an `i16`), which no table holds: it stays a test.
        let other = test(
            "format_returns_minus_1",
            2,
            body("buffer.format", &["-1i16"], eq("\"-1\"")),
        );
        let (out, joined) = onto_tables(vec![kept, past_cap, other]);
        assert_eq!(joined, 1);
        let names: Vec<&str> = out.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["format_recorded_cases", "format_returns_minus_1"]);
        let table = out[0].table.as_ref().unwrap();
        let rows: Vec<&[String]> = table.rows.iter().map(|r| r.values.as_slice()).collect();
        assert_eq!(
            rows,
            [
                ["7u64", "\"7\""].map(String::from).as_slice(),
                ["8u64", "\"8\""].map(String::from).as_slice(),
                ["0u64", "\"0\""].map(String::from).as_slice(),
            ]
        );
        assert_eq!(out[0].calls, [10, 11, 1]);
    }
}
