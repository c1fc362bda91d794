//! `--coverage`: the source lines of the selected code and where to break to see each one run
//! (kcov's way: a one-shot breakpoint on the first address of every line-table row with code,
//! taken out with the line's other rows at the first hit, so a line costs at most one stop per
//! function with code on it).

use std::collections::{BTreeSet, HashMap, HashSet};

use carve_storage::{CodeLine, FunctionId, LineId};

use crate::addr::FileAddr;
use crate::dwarf::CodeRow;

/// What `--coverage` breaks on.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct LinePlan {
    /// One per (file, line, function), numbered from 1 in that order.
    pub lines: Vec<CodeLine>,
    /// Each row's first address and its line, one entry per address, by address.
    pub sites: Vec<(FileAddr, LineId)>,
}

/// Groups `rows` by (file, line, function); `ids[row.function]` is the function id a row's
/// function has in the recording. Only rows of `files` count (the files declaring the selected
/// functions): code inlined from elsewhere (std's `#[inline(always)]` helpers, even in debug
/// builds) is not the selected code, and a line elsewhere would be reported as a line of the
/// program.
pub(crate) fn plan(rows: &[CodeRow], ids: &[FunctionId], files: &HashSet<&str>) -> LinePlan {
    fn keyed<'r>(
        row: &'r CodeRow,
        ids: &[FunctionId],
        files: &HashSet<&str>,
    ) -> Option<(&'r str, u32, FunctionId)> {
        let id = ids.get(row.function)?;
        files
            .contains(&*row.file)
            .then_some((&*row.file, row.line, *id))
    }
    let keys: BTreeSet<(&str, u32, FunctionId)> =
        rows.iter().filter_map(|r| keyed(r, ids, files)).collect();
    let mut numbers: HashMap<(&str, u32, FunctionId), LineId> = HashMap::new();
    let lines: Vec<CodeLine> = keys
        .into_iter()
        .enumerate()
        .map(|(i, key @ (file, line, function))| {
            let id = LineId(i as u32 + 1);
            numbers.insert(key, id);
            CodeLine {
                id,
                file: file.to_string(),
                line,
                function,
            }
        })
        .collect();
    let mut sites: Vec<(FileAddr, LineId)> = rows
        .iter()
        .filter_map(|row| Some((row.addr, *numbers.get(&keyed(row, ids, files)?)?)))
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
    fn rows_of_one_line_in_one_function_share_a_line_id_and_keep_every_address() {
        let rows = [
            row(0, 0x10, "/s/lib.rs", 3),
            row(0, 0x18, "/s/lib.rs", 4),
            row(0, 0x20, "/s/lib.rs", 3), // a loop header: the line's second range
            row(1, 0x40, "/s/lib.rs", 3), // a closure on the same line: another function
            row(1, 0x48, "/s/a.rs", 9),
        ];
        let files = HashSet::from(["/s/lib.rs", "/s/a.rs"]);
        let p = plan(&rows, &[FunctionId(7), FunctionId(8)], &files);
        let lines: Vec<(u32, &str, u32, u32)> = p
            .lines
            .iter()
            .map(|l| (l.id.0, l.file.as_str(), l.line, l.function.0))
            .collect();
        assert_eq!(
            lines,
            vec![
                (1, "/s/a.rs", 9, 8),
                (2, "/s/lib.rs", 3, 7),
                (3, "/s/lib.rs", 3, 8),
                (4, "/s/lib.rs", 4, 7),
            ]
        );
        let sites: Vec<(u64, u32)> = p.sites.iter().map(|(a, l)| (a.0, l.0)).collect();
        assert_eq!(
            sites,
            vec![(0x10, 2), (0x18, 4), (0x20, 2), (0x40, 3), (0x48, 1)]
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
