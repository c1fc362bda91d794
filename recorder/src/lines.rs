//! `--coverage`: the source lines of the selected code and where to break to see each one run
//! (kcov's way: a one-shot breakpoint on the first address of every line-table row with code,
//! taken out with the line's other rows at the first hit, so a line costs at most one stop).

use std::collections::{BTreeMap, HashMap, HashSet};

use carve_storage::{CodeLine, FunctionId, LineId};

use crate::addr::FileAddr;
use crate::dwarf::CodeRow;

/// What `--coverage` breaks on.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct LinePlan {
    /// One per (file, line), numbered from 1 in file and line order.
    pub lines: Vec<CodeLine>,
    /// Each row's first address and its line, one entry per address, by address.
    pub sites: Vec<(FileAddr, LineId)>,
}

/// Groups `rows` by (file, line); `ids[row.function]` is the function id a row's function has
/// in the recording. Only rows of `files` count (the files declaring the selected functions):
/// code inlined from elsewhere (std's `#[inline(always)]` helpers, even in debug builds) is not
/// the selected code, and a line elsewhere would be reported as a line of the program.
pub(crate) fn plan(rows: &[CodeRow], ids: &[FunctionId], files: &HashSet<&str>) -> LinePlan {
    let mut by_line: BTreeMap<(&str, u32), Vec<FunctionId>> = BTreeMap::new();
    for row in rows {
        let Some(id) = ids.get(row.function) else {
            continue;
        };
        if !files.contains(&*row.file) {
            continue;
        }
        let functions = by_line.entry((&row.file, row.line)).or_default();
        if !functions.contains(id) {
            functions.push(*id);
        }
    }
    let mut numbers: HashMap<(&str, u32), LineId> = HashMap::new();
    let lines: Vec<CodeLine> = by_line
        .into_iter()
        .enumerate()
        .map(|(i, ((file, line), mut functions))| {
            let id = LineId(i as u32 + 1);
            numbers.insert((file, line), id);
            functions.sort_unstable();
            CodeLine {
                id,
                file: file.to_string(),
                line,
                functions,
            }
        })
        .collect();
    let mut sites: Vec<(FileAddr, LineId)> = rows
        .iter()
        .filter_map(|row| Some((row.addr, *numbers.get(&(&*row.file, row.line))?)))
        .collect();
    sites.sort_unstable();
    // Two rows at one address cannot both hold code; keep the first seen.
    sites.dedup_by_key(|(addr, _)| *addr);
    LinePlan { lines, sites }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(function: usize, addr: u64, file: &str, line: u32) -> CodeRow {
        CodeRow {
            function,
            addr: FileAddr(addr),
            file: file.into(),
            line,
        }
    }

    #[test]
    fn rows_of_one_line_share_a_line_id_and_keep_every_address() {
        let rows = [
            row(0, 0x10, "/s/lib.rs", 3),
            row(0, 0x18, "/s/lib.rs", 4),
            row(0, 0x20, "/s/lib.rs", 3), // a loop header: the line's second range
            row(1, 0x40, "/s/lib.rs", 3), // another instance of a generic function
            row(1, 0x48, "/s/a.rs", 9),
        ];
        let files = HashSet::from(["/s/lib.rs", "/s/a.rs"]);
        let p = plan(&rows, &[FunctionId(7), FunctionId(8)], &files);
        let lines: Vec<(&str, u32, Vec<u32>)> = p
            .lines
            .iter()
            .map(|l| {
                (
                    l.file.as_str(),
                    l.line,
                    l.functions.iter().map(|f| f.0).collect(),
                )
            })
            .collect();
        assert_eq!(
            lines,
            vec![
                ("/s/a.rs", 9, vec![8]),
                ("/s/lib.rs", 3, vec![7, 8]),
                ("/s/lib.rs", 4, vec![7]),
            ]
        );
        let sites: Vec<(u64, u32)> = p.sites.iter().map(|(a, l)| (a.0, l.0)).collect();
        assert_eq!(
            sites,
            vec![(0x10, 2), (0x18, 3), (0x20, 2), (0x40, 2), (0x48, 1)]
        );
    }

    #[test]
    fn one_address_gets_one_site() {
        let rows = [row(0, 0x10, "/s/lib.rs", 3), row(0, 0x10, "/s/lib.rs", 5)];
        let p = plan(&rows, &[FunctionId(1)], &HashSet::from(["/s/lib.rs"]));
        assert_eq!(p.lines.len(), 2);
        assert_eq!(p.sites.len(), 1);
    }

    #[test]
    fn rows_of_code_inlined_from_other_files_are_left_out() {
        let rows = [
            row(0, 0x10, "/s/lib.rs", 3),
            row(0, 0x14, "/rustc/x/library/core/src/hint.rs", 90),
        ];
        let p = plan(&rows, &[FunctionId(1)], &HashSet::from(["/s/lib.rs"]));
        assert_eq!(p.lines.len(), 1);
        assert_eq!(p.lines[0].file, "/s/lib.rs");
        assert_eq!(p.sites, vec![(FileAddr(0x10), LineId(1))]);
    }
}
