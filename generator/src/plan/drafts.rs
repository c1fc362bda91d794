//! Tests under construction, by module: one draft per distinct body (equivalent calls share
//! one), those past `--max-per-function` taken out or gathered into table tests.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::body::Body;
use crate::naming::NameParts;
use crate::plan::table::{self, Row, Table};

pub(crate) struct Draft {
    pub(crate) body: Body,
    pub(crate) name: NameParts,
    /// The recorded calls it stands for, in recording order.
    pub(crate) calls: Vec<u64>,
    pub(crate) replayed: Vec<u64>,
    /// Every recorded call its arrange steps make again.
    pub(crate) arranged: Vec<u64>,
    /// Made from a call kept only as a table row: written on its own only when its function
    /// has fewer tests than the cap.
    pub(crate) row_only: bool,
    /// How many of `calls` were kept only as table rows.
    pub(crate) row_calls: usize,
}

/// Keeps at most `max` drafts per function, those standing for the most calls (in their order
/// otherwise; drafts of calls kept only as table rows last); returns the others.
pub(crate) fn cap_per_function(drafts: &mut Vec<Draft>, max: usize) -> Vec<Draft> {
    let mut by_function: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, d) in drafts.iter().enumerate() {
        by_function
            .entry(d.body.function_path.as_str())
            .or_default()
            .push(i);
    }
    let mut keep = vec![true; drafts.len()];
    for mut indices in by_function.into_values() {
        indices.sort_by_key(|&i| {
            let d = &drafts[i];
            (d.row_only, std::cmp::Reverse(d.calls.len() - d.row_calls))
        });
        for &i in indices.iter().skip(max) {
            keep[i] = false;
        }
    }
    let (kept, dropped): (Vec<_>, Vec<_>) = std::mem::take(drafts)
        .into_iter()
        .zip(keep)
        .partition(|(_, kept)| *kept);
    *drafts = kept.into_iter().map(|(d, _)| d).collect();
    dropped.into_iter().map(|(d, _)| d).collect()
}

/// A table test to write: its function's name slug, its body with `case.N` holes, its rows.
pub(crate) type TableDraft = (String, Body, Table);

/// The table tests the drafts past the cap make (see [`crate::plan::table`]), at most `max_rows`
/// rows per function; returns them and the drafts no table took.
pub(crate) fn tables_of(over: Vec<Draft>, max_rows: usize) -> (Vec<TableDraft>, Vec<Draft>) {
    let bodies: Vec<&Body> = over.iter().map(|d| &d.body).collect();
    let (found, alone) = table::gather(&bodies, max_rows);
    let mut over: Vec<Option<Draft>> = over.into_iter().map(Some).collect();
    let mut tables = Vec::new();
    for (shape, rows) in found {
        let mut subject = String::new();
        let rows = rows
            .into_iter()
            .filter_map(|(i, values)| {
                let d = over[i].take()?;
                if subject.is_empty() {
                    subject = d.name.subject.clone();
                }
                Some(Row {
                    values,
                    calls: d.calls,
                    replayed: d.replayed,
                    arranged: d.arranged,
                })
            })
            .collect();
        tables.push((
            subject,
            shape.body,
            Table {
                columns: shape.columns,
                rows,
                inferred: false,
            },
        ));
    }
    let alone = alone.into_iter().filter_map(|i| over[i].take()).collect();
    (tables, alone)
}

/// `format_recorded_cases` for a table of `format`'s calls, kept apart from `taken` and each
/// other: by the type of its first column when that is a primitive (`format_u64_recorded_cases`,
/// another instance of a generic function), else by a number (`format_recorded_cases_2`).
pub(crate) fn table_names(tables: &[TableDraft], taken: &[String]) -> Vec<String> {
    let mut used: BTreeSet<String> = taken.iter().cloned().collect();
    tables
        .iter()
        .map(|(subject, _, table)| {
            crate::naming::apart_by_type(subject, "recorded_cases", &table.columns, &mut used)
        })
        .collect()
}

/// The drafts of each module (by path below the crate root), in the order they were made, and
/// where each body already is.
#[derive(Default)]
pub(crate) struct Drafts {
    pub(crate) modules: BTreeMap<Vec<String>, Vec<Draft>>,
    index: HashMap<(Vec<String>, Body, Option<u64>), usize>,
}

impl Drafts {
    /// Adds `draft` (of one call) to `module`'s drafts, or its call to the draft with the same
    /// body: equivalent calls (same arranged state, arguments and interactions) give the same
    /// body; with `keep_equivalent` the call id keeps them apart.
    pub(crate) fn add(&mut self, module: &[String], draft: Draft, keep_equivalent: bool) {
        let call = draft.calls[0];
        let key = (
            module.to_vec(),
            draft.body.clone(),
            keep_equivalent.then_some(call),
        );
        match self.index.get(&key) {
            Some(&i) => {
                if let Some(existing) = self.modules.get_mut(module).and_then(|v| v.get_mut(i)) {
                    existing.calls.push(call);
                    existing.replayed.extend(draft.replayed);
                    existing.arranged.extend(draft.arranged);
                    existing.row_calls += usize::from(draft.row_only);
                }
            }
            None => {
                let list = self.modules.entry(module.to_vec()).or_default();
                self.index.insert(key, list.len());
                list.push(draft);
            }
        }
    }
}
