//! Whether the carved tests reach again the lines the recording reached: lines compared by
//! (source file, line) within the library's own files, and the lines they miss grouped by the
//! recorded function that ran them, with what became of that function's calls (skipped, and
//! why; not supported yet). Pure: the CLI records the test binaries with `--coverage` (the
//! generator never touches ptrace) and hands in the lines they reached.

use std::collections::{BTreeMap, BTreeSet};

use carve_storage::Coverage;
use serde::Serialize;

use crate::plan::model::{OverMax, Summary};
use crate::reasons::OVER_MAX_PER_FUNCTION;

/// The carved tests' line coverage, against the recording's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LineCoverage {
    /// Lines of the library's files the recording reached (M).
    pub recorded_lines: usize,
    /// Of those, the lines the carved tests reach too (N).
    pub reached_lines: usize,
    /// The carved test targets recorded to measure it, in order.
    pub test_targets: Vec<String>,
    /// The recorded lines the carved tests do not reach, by the function that reached them in
    /// the recording (a line shared by several, such as a closure and its parent, is listed
    /// under each), in file then line order.
    pub not_reached: Vec<MissedFunction>,
}

/// A recorded function with lines the carved tests do not reach.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MissedFunction {
    pub file: String,
    /// As recorded: `hex::encode_to_slice`, `<T as hex::ToHex>::encode_hex::<String>`.
    pub function: String,
    /// Lines of `file` it reached in the recording that no carved test reaches.
    pub lines: Vec<u32>,
    /// Its recorded calls that got no test, by reason (most calls first).
    pub skipped: Vec<SkipReason>,
    /// Why carve writes no test for any of its calls, when it does not yet (`closure`,
    /// `trait impl`...). A function with neither is private (its lines are reached through
    /// the calls above it) or was carved, and its tests do not take the recorded path.
    pub not_supported: Option<String>,
}

/// The calls of one function skipped for one reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkipReason {
    pub reason: String,
    pub calls: usize,
    /// The first call's detail, when the reason has one (what an `untestable` call read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl LineCoverage {
    /// `carved tests reach 12 of the 40 lines (30%) the recording reached in hex`.
    pub fn line(&self, crate_name: &str) -> String {
        let pct = if self.recorded_lines == 0 {
            100.0
        } else {
            100.0 * self.reached_lines as f64 / self.recorded_lines as f64
        };
        format!(
            "carved tests reach {} of the {} lines ({pct:.0}%) the recording reached in {crate_name}",
            self.reached_lines, self.recorded_lines
        )
    }
}

/// Compares the lines `recorded` reached in `lib_files` with `tests_reached`, the (file, line)s
/// the carved tests' binaries reached. File names on both sides must be spelled alike (the CLI
/// makes them canonical); lines in other files (the program's `main.rs`, the tests' own files,
/// other crates) are not compared. `summary` says what became of the recorded calls, and
/// `recorded_function` the recorded function of a skipped call by its id (a skipped call names
/// its function as a test would write it: `T::to_string` for `<T as Display>::fmt`), and
/// `over_max` the calls `--max-per-function` left out, per recorded function.
pub fn compare_lines(
    recorded: &Coverage,
    lib_files: &BTreeSet<String>,
    tests_reached: &BTreeSet<(String, u32)>,
    test_targets: Vec<String>,
    summary: &Summary,
    recorded_function: &BTreeMap<u64, String>,
    over_max: &[OverMax],
) -> LineCoverage {
    let mut out = LineCoverage {
        test_targets,
        ..LineCoverage::default()
    };
    for (file, lines) in &recorded.lines {
        if !lib_files.contains(file) {
            continue;
        }
        for (line, reached) in lines {
            if *reached {
                out.recorded_lines += 1;
                if tests_reached.contains(&(file.clone(), *line)) {
                    out.reached_lines += 1;
                }
            }
        }
    }
    // Skip reasons and unsupported kinds by function path.
    let mut skipped: BTreeMap<&str, BTreeMap<&str, (usize, Option<&str>)>> = BTreeMap::new();
    for s in &summary.skipped_calls {
        let function = recorded_function.get(&s.call).unwrap_or(&s.function);
        let entry = skipped
            .entry(function.as_str())
            .or_default()
            .entry(s.reason.as_str())
            .or_insert((0, None));
        entry.0 += 1;
        if entry.1.is_none() {
            entry.1 = s.detail.as_deref();
        }
    }
    for o in over_max {
        skipped
            .entry(o.function.as_str())
            .or_default()
            .entry(OVER_MAX_PER_FUNCTION)
            .or_insert((0, None))
            .0 += o.calls;
    }
    let unsupported: BTreeMap<&str, &str> = summary
        .unsupported_functions
        .iter()
        .map(|u| (u.function.as_str(), u.reason.as_str()))
        .collect();
    let mut missed: BTreeMap<(String, String), BTreeSet<u32>> = BTreeMap::new();
    for f in &recorded.functions {
        for (file, line) in &f.reached_lines {
            if lib_files.contains(file) && !tests_reached.contains(&(file.clone(), *line)) {
                missed
                    .entry((file.clone(), f.path.clone()))
                    .or_default()
                    .insert(*line);
            }
        }
    }
    let mut not_reached: Vec<MissedFunction> = missed
        .into_iter()
        .map(|((file, function), lines)| {
            let mut reasons: Vec<SkipReason> = skipped
                .get(function.as_str())
                .into_iter()
                .flatten()
                .map(|(reason, (calls, detail))| SkipReason {
                    reason: reason.to_string(),
                    calls: *calls,
                    detail: detail.map(str::to_string),
                })
                .collect();
            reasons.sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| a.reason.cmp(&b.reason)));
            MissedFunction {
                not_supported: unsupported.get(function.as_str()).map(|r| r.to_string()),
                skipped: reasons,
                lines: lines.into_iter().collect(),
                file,
                function,
            }
        })
        .collect();
    not_reached.sort_by(|a, b| {
        (&a.file, a.lines.first(), &a.function).cmp(&(&b.file, b.lines.first(), &b.function))
    });
    out.not_reached = not_reached;
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::model::{SkippedCall, UnsupportedFunction};
    use carve_storage::{FunctionId, FunctionLines};

    fn function(id: u32, path: &str, reached: &[(&str, u32)]) -> FunctionLines {
        let lines: Vec<(String, u32)> = reached.iter().map(|(f, l)| (f.to_string(), *l)).collect();
        FunctionLines {
            id: FunctionId(id),
            path: path.into(),
            decl_file: None,
            decl_line: None,
            reached: lines.len(),
            lines: lines.clone(),
            reached_lines: lines,
        }
    }

    /// A recording of `c` that reached lines in lib.rs and main.rs, through five functions.
    fn recorded() -> Coverage {
        let mut c = Coverage::default();
        c.lines.insert(
            "/c/src/lib.rs".into(),
            BTreeMap::from([
                (2, true),
                (3, true),
                (6, true),
                (7, true),
                (9, false),
                (11, true),
            ]),
        );
        c.lines
            .insert("/c/src/main.rs".into(), BTreeMap::from([(1, true)]));
        c.functions = vec![
            function(
                1,
                "c::double",
                &[("/c/src/lib.rs", 2), ("/c/src/lib.rs", 3)],
            ),
            function(
                2,
                "c::stamped",
                &[("/c/src/lib.rs", 6), ("/c/src/lib.rs", 7)],
            ),
            function(3, "c::stamped::{closure#0}", &[("/c/src/lib.rs", 7)]),
            function(4, "c::main", &[("/c/src/main.rs", 1)]),
            // Its calls were all over --max-per-function (in a made-up run).
            function(5, "c::big", &[("/c/src/lib.rs", 11)]),
        ];
        c
    }

    /// Two calls of `c::stamped` skipped as untestable; its closure not supported yet.
    fn summary() -> Summary {
        Summary {
            skipped_calls: vec![
                SkippedCall {
                    call: 4,
                    function: "c::stamped".into(),
                    reason: "untestable".into(),
                    detail: Some("clock: std::time::SystemTime::now in c::stamped".into()),
                },
                SkippedCall {
                    call: 9,
                    function: "c::stamped_text".into(),
                    reason: "untestable".into(),
                    detail: None,
                },
            ],
            unsupported_functions: vec![UnsupportedFunction {
                function: "c::stamped::{closure#0}".into(),
                reason: "closure".into(),
                calls: 2,
                public_api: false,
            }],
            ..Summary::default()
        }
    }

    #[test]
    fn lines_are_compared_in_the_library_files_and_the_missed_ones_say_why() {
        let c = recorded();
        let summary = summary();
        let lib = BTreeSet::from(["/c/src/lib.rs".to_string()]);
        let tests = BTreeSet::from([
            ("/c/src/lib.rs".to_string(), 2),
            ("/c/src/lib.rs".to_string(), 3),
            ("/c/src/lib.rs".to_string(), 9), // not reached by the recording: not counted
            ("/c/tests/carved_c.rs".to_string(), 4),
        ]);
        // Call 9 was carved as `c::stamped_text`, a test's name for the recorded `c::stamped`.
        let recorded_function = BTreeMap::from([(9, "c::stamped".to_string())]);
        let lc = compare_lines(
            &c,
            &lib,
            &tests,
            vec!["carved_c".into()],
            &summary,
            &recorded_function,
            &[OverMax {
                function: "c::big".into(),
                calls: 7,
            }],
        );
        assert_eq!((lc.reached_lines, lc.recorded_lines), (2, 5));
        assert_eq!(
            lc.line("c"),
            "carved tests reach 2 of the 5 lines (40%) the recording reached in c"
        );
        assert_eq!(
            lc.not_reached,
            vec![
                MissedFunction {
                    file: "/c/src/lib.rs".into(),
                    function: "c::stamped".into(),
                    lines: vec![6, 7],
                    skipped: vec![SkipReason {
                        reason: "untestable".into(),
                        calls: 2,
                        detail: Some("clock: std::time::SystemTime::now in c::stamped".into()),
                    }],
                    not_supported: None,
                },
                MissedFunction {
                    file: "/c/src/lib.rs".into(),
                    function: "c::stamped::{closure#0}".into(),
                    lines: vec![7],
                    skipped: vec![],
                    not_supported: Some("closure".into()),
                },
                MissedFunction {
                    file: "/c/src/lib.rs".into(),
                    function: "c::big".into(),
                    lines: vec![11],
                    skipped: vec![SkipReason {
                        reason: OVER_MAX_PER_FUNCTION.into(),
                        calls: 7,
                        detail: None,
                    }],
                    not_supported: None,
                },
            ]
        );
    }

    #[test]
    fn a_recording_that_reached_no_library_line_is_fully_covered() {
        let lc = compare_lines(
            &Coverage::default(),
            &BTreeSet::new(),
            &BTreeSet::new(),
            Vec::new(),
            &Summary::default(),
            &BTreeMap::new(),
            &[],
        );
        assert_eq!(
            lc.line("c"),
            "carved tests reach 0 of the 0 lines (100%) the recording reached in c"
        );
    }
}
