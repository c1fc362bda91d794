//! The test files: per module of the library, its drafts in a stable order, named, capped, with
//! the mocks and imports its tests need.

use std::collections::{BTreeMap, BTreeSet};

use crate::body::MockDecl;
use crate::naming;
use crate::plan::drafts::{cap_per_function, table_names, tables_of, Draft, TableDraft};
use crate::plan::model::{FilePlan, PlanOptions, Summary, TestPlan};
use crate::plan::table;
use crate::read::crate_api::CrateApi;
use crate::reasons::{MOCK_NAME_CLASH, OVER_MAX_PER_FUNCTION};

/// One file per module with drafts, in module order.
pub(crate) fn plan_files(
    modules: BTreeMap<Vec<String>, Vec<Draft>>,
    api: &CrateApi,
    options: &PlanOptions,
    summary: &mut Summary,
) -> Vec<FilePlan> {
    let mut used_names: BTreeMap<String, usize> = BTreeMap::new();
    modules
        .into_iter()
        .map(|(module, drafts)| file_plan(&module, drafts, api, options, &mut used_names, summary))
        .collect()
}

/// The file of `module`'s tests.
fn file_plan(
    module: &[String],
    mut drafts: Vec<Draft>,
    api: &CrateApi,
    options: &PlanOptions,
    used_names: &mut BTreeMap<String, usize>,
    summary: &mut Summary,
) -> FilePlan {
    // Ordered by what the tests are, not when their calls happened: a re-recording whose
    // threads ran in another order writes the same file.
    drafts.sort_by_cached_key(|d| {
        (
            d.body.function_path.clone(),
            d.name.clone(),
            format!("{:?}", d.body),
            d.calls[0],
        )
    });
    let mut drafts = without_mock_clashes(drafts, summary);
    let mut tables = Vec::new();
    if let Some(max) = options.max_per_function {
        let over = cap_per_function(&mut drafts, max);
        let (found, alone) = tables_of(over, max.saturating_mul(table::ROWS_PER_CAP));
        tables = found;
        for d in alone {
            summary.uncarve(&d.body.function_path, &d.calls, OVER_MAX_PER_FUNCTION);
        }
    }
    let mut names = naming::test_names(&drafts.iter().map(|d| d.name.clone()).collect::<Vec<_>>());
    let mut module_path = vec![api.crate_name.clone()];
    module_path.extend(module.iter().cloned());
    let file_name = file_name(&module_path, options, used_names);
    let table_names = table_names(&tables, &names);
    names.extend(table_names);
    let tests = tests(drafts, tables, names);
    let header = Header::of(&tests);
    count_tests(summary, &tests, header.mocks.len());
    FilePlan {
        file_name,
        module_path: module_path.join("::"),
        tests,
        mocks: header.mocks,
        uses: header.uses,
        needs_predicates: header.needs_predicates,
        needs_sequence: header.needs_sequence,
    }
}

/// What a file declares above its tests for them: the `mock!`s, the trait imports and the
/// mockall imports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Header {
    /// Sorted by trait path.
    pub(crate) mocks: Vec<MockDecl>,
    /// Sorted.
    pub(crate) uses: Vec<String>,
    pub(crate) needs_predicates: bool,
    pub(crate) needs_sequence: bool,
}

impl Header {
    /// What `tests` need: a file declares exactly that.
    pub(crate) fn of(tests: &[TestPlan]) -> Header {
        let mocks: BTreeSet<MockDecl> = tests
            .iter()
            .flat_map(|t| t.body.mock_decls.iter().cloned())
            .collect();
        let uses: BTreeSet<String> = tests
            .iter()
            .flat_map(|t| t.body.trait_uses.iter().cloned())
            .collect();
        Header {
            mocks: mocks.into_iter().collect(),
            uses: uses.into_iter().collect(),
            needs_predicates: tests
                .iter()
                .flat_map(|t| &t.body.mocks)
                .flat_map(|m| &m.expectations)
                .any(|e| !e.with.is_empty()),
            needs_sequence: tests.iter().any(|t| t.body.sequence),
        }
    }

    /// What `file` declares now.
    pub(crate) fn declared(file: &FilePlan) -> Header {
        Header {
            mocks: file.mocks.clone(),
            uses: file.uses.clone(),
            needs_predicates: file.needs_predicates,
            needs_sequence: file.needs_sequence,
        }
    }
}

/// Two traits with the same name cannot both be `MockName` in one file: keeps the first, and
/// counts the calls of the others as skipped.
fn without_mock_clashes(drafts: Vec<Draft>, summary: &mut Summary) -> Vec<Draft> {
    let mut mock_names: BTreeMap<String, String> = BTreeMap::new();
    let (kept, clashing): (Vec<Draft>, Vec<Draft>) = drafts.into_iter().partition(|d| {
        d.body.mock_decls.iter().all(|m| {
            mock_names
                .entry(m.name.clone())
                .or_insert_with(|| m.trait_path.clone())
                == &m.trait_path
        })
    });
    for d in clashing {
        summary.uncarve(&d.body.function_path, &d.calls, MOCK_NAME_CLASH);
    }
    kept
}

/// `carved_expr_lexer.rs` for `expr::lexer` (with `--file-prefix`'s prefix), kept apart from the
/// names already used.
fn file_name(
    module_path: &[String],
    options: &PlanOptions,
    used_names: &mut BTreeMap<String, usize>,
) -> String {
    let mut file_name = naming::file_name(module_path);
    if let Some(prefix) = &options.file_prefix {
        file_name = format!("{prefix}{}", file_name.trim_start_matches("carved_"));
    }
    let seen = used_names.entry(file_name.clone()).or_default();
    *seen += 1;
    if *seen > 1 {
        file_name = format!("{}_{}.rs", file_name.trim_end_matches(".rs"), seen);
    }
    file_name
}

/// The drafts, then the tables, each with its name.
fn tests(drafts: Vec<Draft>, tables: Vec<TableDraft>, names: Vec<String>) -> Vec<TestPlan> {
    drafts
        .into_iter()
        .map(|d| (d.body, d.calls, (d.replayed, d.arranged), Err(d.name)))
        .chain(tables.into_iter().map(|(_, body, table)| {
            let calls = table.rows.iter().flat_map(|r| r.calls.iter().copied());
            let replayed = table.rows.iter().flat_map(|r| r.replayed.iter().copied());
            let arranged = table.rows.iter().flat_map(|r| r.arranged.iter().copied());
            let ran = (replayed.collect(), arranged.collect());
            (body, calls.collect(), ran, Ok(table))
        }))
        .zip(names)
        .map(|((body, calls, (replayed, arranged), made), name)| {
            // A table, or the parts of a test's name.
            let (table, name_parts) = match made {
                Ok(table) => (Some(table), None),
                Err(parts) => (None, Some(parts)),
            };
            TestPlan {
                name,
                body,
                calls,
                replayed,
                arranged,
                table,
                story: false,
                name_parts,
            }
        })
        .collect()
}

/// Counts again the tests `files` hold, once distilling took some out and folded others into
/// tables and stories (each one `#[test]`): written, on methods, with mocks, and the `mock!`s.
pub(crate) fn recount_tests(summary: &mut Summary, files: &[FilePlan]) {
    summary.tests_written = 0;
    summary.method_tests = 0;
    summary.mock_tests = 0;
    summary.mocks = 0;
    for file in files {
        count_tests(summary, &file.tests, file.mocks.len());
    }
}

/// Counts a file's tests in the summary: written, on methods, with mocks, and its `mock!`s.
fn count_tests(summary: &mut Summary, tests: &[TestPlan], mocks: usize) {
    summary.tests_written += tests.len();
    summary.method_tests += tests
        .iter()
        .filter(|t| !t.body.setup.is_empty() && t.body.callee != t.body.function_path)
        .count();
    summary.mock_tests += tests.iter().filter(|t| !t.body.mocks.is_empty()).count();
    summary.mocks += mocks;
}
