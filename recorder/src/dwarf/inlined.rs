//! Functions with no code of their own: every call of them was inlined into its caller
//! (`#[inline(always)]`, inlined even in a debug build). No breakpoint can stop in them, so no
//! call of them is recorded; but their code runs where it was inlined, and `--coverage` sees
//! its lines there: each inlined instance (`DW_TAG_inlined_subroutine`) names the abstract
//! instance of its function (`DW_AT_abstract_origin`) and the addresses of its code.

use std::collections::{HashMap, HashSet};

use gimli::AttributeValue;

use super::{
    attr_string, described, file_table, specification, CodeRow, DebugInfo, FunctionEntry,
    InlinedDie, Place,
};
use crate::addr::FileAddr;

/// A function with no code of its own, and its abstract instances (global DIE offsets): one per
/// unit that inlines it, and one per generic instance.
#[derive(Debug, Clone)]
pub(crate) struct InlinedOnly {
    /// Addresses 0.
    pub entry: FunctionEntry,
    abstracts: Vec<usize>,
}

impl DebugInfo {
    /// The functions with no code of their own: every call of them was inlined into its caller
    /// (`#[inline(always)]`, even in debug builds), so no breakpoint can stop in them. Each
    /// once, none that also has code of its own somewhere; addresses 0.
    pub fn inlined_only(&self) -> Vec<FunctionEntry> {
        (self.inlined_only_dies().iter())
            .map(|f| f.entry.clone())
            .collect()
    }

    /// [`DebugInfo::inlined_only`], each function with its abstract instances, worked out once.
    pub(crate) fn inlined_only_dies(&self) -> &[InlinedOnly] {
        self.inlined_only.get_or_init(|| self.find_inlined_only())
    }

    /// [`DebugInfo::inlined_only_dies`]. The path of an abstract instance is worked out once
    /// per linkage name: a large program has tens of thousands of them (the standard
    /// library's, one per unit that inlines one).
    fn find_inlined_only(&self) -> Vec<InlinedOnly> {
        let concrete: HashSet<&str> = (self.functions.iter())
            .flat_map(|f| {
                f.linkage_name
                    .as_deref()
                    .into_iter()
                    .chain([f.path.as_str()])
            })
            .collect();
        // Linkage name -> index into `out` (`None`: it has code of its own somewhere).
        let mut by_key: HashMap<String, Option<usize>> = HashMap::new();
        let mut by_path: HashMap<String, usize> = HashMap::new();
        let mut files: HashMap<usize, Vec<Option<String>>> = HashMap::new();
        let mut out: Vec<InlinedOnly> = Vec::new();
        for InlinedDie {
            unit: unit_index,
            die,
            prefix,
            language,
        } in self.inlined_dies.iter()
        {
            let Some(unit) = self.units.get(*unit_index) else {
                continue;
            };
            let Ok(entry) = unit.entry(*die) else {
                continue;
            };
            let global = global_offset(unit, die.0);
            let spec = specification(unit, &entry);
            let key =
                (attr_string(&self.dwarf, unit, &entry, gimli::DW_AT_linkage_name)).or_else(|| {
                    let s = spec.as_ref()?;
                    attr_string(&self.dwarf, unit, s, gimli::DW_AT_linkage_name)
                });
            if let Some(known) = key.as_ref().and_then(|k| by_key.get(k)) {
                if let Some(i) = known {
                    out[*i].abstracts.push(global);
                }
                continue;
            }
            if key.as_ref().is_some_and(|k| concrete.contains(k.as_str())) {
                by_key.insert(key.unwrap_or_default(), None);
                continue;
            }
            let files = (files.entry(*unit_index)).or_insert_with(|| file_table(&self.dwarf, unit));
            let scopes: Vec<(isize, std::sync::Arc<str>)> =
                prefix.iter().map(|p| (0, p.clone())).collect();
            let place: Place = (files, *language, &scopes);
            let code = (FileAddr(0), FileAddr(0));
            let found = described(&self.dwarf, unit, &entry, place, code)
                .filter(|f| !concrete.contains(f.path.as_str()));
            let index = found.map(|f| {
                *by_path.entry(f.path.clone()).or_insert_with(|| {
                    out.push(InlinedOnly {
                        entry: FunctionEntry {
                            unit: *unit_index,
                            die: *die,
                            ..f
                        },
                        abstracts: Vec::new(),
                    });
                    out.len() - 1
                })
            });
            if let Some(i) = index {
                out[i].abstracts.push(global);
            }
            if let Some(k) = key {
                by_key.insert(k, index);
            }
        }
        out
    }

    /// The line-table rows with code of every place `functions` were inlined into, each
    /// charged to the function (index into the slice) whose instance is the innermost holding
    /// it: a row of another function inlined into one of them (a getter it calls) is neither's.
    pub(crate) fn inlined_code_rows(&self, functions: &[&InlinedOnly]) -> Vec<CodeRow> {
        let targets: HashMap<usize, usize> = (functions.iter().enumerate())
            .flat_map(|(i, f)| f.abstracts.iter().map(move |g| (*g, i)))
            .collect();
        let mut out = Vec::new();
        if targets.is_empty() {
            return out;
        }
        for unit in self.units.iter() {
            let instances = self.inlined_instances(unit, &targets);
            let spans = target_spans(&instances);
            if spans.is_empty() {
                continue;
            }
            // A unit holds thousands of instances (the standard library's too) and as many
            // rows: only rows inside a target's instance look for the innermost one.
            let inside = |addr: u64| {
                let at = spans.partition_point(|(start, _)| *start <= addr);
                at > 0 && addr < spans[at - 1].1
            };
            for row in self
                .unit_code_rows(unit)
                .into_iter()
                .filter(|r| inside(r.start))
            {
                let innermost = (instances.iter())
                    .filter(|(start, end, _, _)| *start <= row.start && row.start < *end)
                    .max_by_key(|(_, _, _, depth)| *depth);
                if let Some((_, _, Some(function), _)) = innermost {
                    out.push(CodeRow {
                        function: *function,
                        addr: FileAddr(row.start),
                        file: row.file,
                        line: row.line,
                    });
                }
            }
        }
        out.sort_by_key(|r| r.addr);
        out
    }

    /// Every inlined instance in `unit`: (start, end, function, depth) per address range, the
    /// function an index of `targets` (by its abstract instance's global offset) or `None`.
    fn inlined_instances(
        &self,
        unit: &gimli::Unit<super::Reader>,
        targets: &HashMap<usize, usize>,
    ) -> Vec<(u64, u64, Option<usize>, isize)> {
        // Code the linker dropped is described at address 0 (a tombstone): only ranges in
        // the text the program runs hold code.
        let (text_at, range) = &self.text;
        let text = *text_at..text_at + range.len() as u64;
        let mut out = Vec::new();
        let mut entries = unit.entries();
        while let Ok(Some(entry)) = entries.next_dfs() {
            if entry.tag() != gimli::DW_TAG_inlined_subroutine {
                continue;
            }
            let function = match entry.attr_value(gimli::DW_AT_abstract_origin) {
                Some(AttributeValue::UnitRef(o)) => targets.get(&global_offset(unit, o.0)),
                Some(AttributeValue::DebugInfoRef(o)) => targets.get(&o.0),
                _ => None,
            };
            let Ok(mut ranges) = self.dwarf.die_ranges(unit, entry) else {
                continue;
            };
            while let Ok(Some(r)) = ranges.next() {
                if r.end > r.begin && text.contains(&r.begin) && r.end <= text.end {
                    out.push((r.begin, r.end, function.copied(), entry.depth()));
                }
            }
        }
        out
    }
}

/// The address ranges of the instances of a target function (`Some`), merged and sorted.
fn target_spans(instances: &[(u64, u64, Option<usize>, isize)]) -> Vec<(u64, u64)> {
    let mut ranges: Vec<(u64, u64)> = (instances.iter())
        .filter(|i| i.2.is_some())
        .map(|&(start, end, _, _)| (start, end))
        .collect();
    ranges.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
    for (start, end) in ranges {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

/// The offset in `.debug_info` of the DIE at `offset` in `unit`.
fn global_offset(unit: &gimli::Unit<super::Reader>, offset: usize) -> usize {
    unit.header.offset().0 + offset
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_target_functions_instances_merge_into_sorted_spans_others_are_left_out() {
        let instances = [
            (0x40, 0x50, Some(1), 3),
            (0x10, 0x20, Some(0), 2),
            (0x18, 0x30, Some(0), 4),
            (0x60, 0x70, None, 2),
        ];
        assert_eq!(
            super::target_spans(&instances),
            vec![(0x10, 0x30), (0x40, 0x50)]
        );
    }
}
