//! Names chosen among the tests a file keeps. A test's name is made unique among the tests of
//! its file (`naming.rs`): two tests of `iter_all_changes` become
//! `iter_all_changes_returns_items_when_newline_terminated_false` and `…_2`, each saying
//! what tells it from the others. Once distilling has dropped the others, what the name
//! tells apart is gone, and a reader sees a `_2` with no `_1`. So the names of the tests a
//! file keeps are made again from their parts over those tests alone
//! (`iter_all_changes_returns_items`); tables keep theirs, and a name one of them holds is
//! not given again.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use syn::visit_mut::VisitMut;

use crate::error::GenerateError;
use crate::plan::model::{FilePlan, Plan};

/// Names each file's tests again over the tests it keeps, in the plan and in the file.
pub(crate) fn rename_kept(out_dir: &Path, plan: &mut Plan) -> Result<(), GenerateError> {
    for file in &mut plan.files {
        let renamed = new_names(file);
        if renamed.is_empty() {
            continue;
        }
        crate::verify::cargo::rewrite(out_dir, &file.file_name, |source| {
            crate::render::edit_rust(source, |f| Renamer(&renamed).visit_file_mut(f))
        })?;
        for t in &mut file.tests {
            if let Some(name) = renamed.get(&t.name) {
                t.name = name.clone();
            }
        }
    }
    Ok(())
}

/// The tests of `file` whose name, made again over the tests it holds, is another: old → new.
fn new_names(file: &FilePlan) -> BTreeMap<String, String> {
    let named: Vec<_> = file
        .tests
        .iter()
        .filter_map(|t| Some((t.name.as_str(), t.name_parts.as_ref()?)))
        .collect();
    let parts: Vec<_> = named.iter().map(|(_, p)| (*p).clone()).collect();
    let mut taken: BTreeSet<String> = file
        .tests
        .iter()
        .filter(|t| t.name_parts.is_none())
        .map(|t| t.name.clone())
        .collect();
    let mut out = BTreeMap::new();
    for ((old, _), new) in named.iter().zip(crate::naming::test_names(&parts)) {
        let new = crate::naming::apart(new, &mut taken);
        if new != *old {
            out.insert(old.to_string(), new);
        }
    }
    out
}

/// Renames the test functions named in its map.
struct Renamer<'a>(&'a BTreeMap<String, String>);

impl VisitMut for Renamer<'_> {
    fn visit_item_fn_mut(&mut self, f: &mut syn::ItemFn) {
        let is_test = f.attrs.iter().any(|a| a.path().is_ident("test"));
        if let Some(new) = self.0.get(&f.sig.ident.to_string()).filter(|_| is_test) {
            f.sig.ident = syn::Ident::new(new, f.sig.ident.span());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::distil::fold;
    use crate::naming::NameParts;
    use crate::plan::model::TestPlan;

    fn parts(ret: &str, when: Option<&str>) -> NameParts {
        NameParts {
            subject: "changes".into(),
            args: vec![],
            ret: Some(ret.into()),
            panics: false,
            when: when.map(str::to_string),
            steps: 0,
            instance: None,
            arranged: Vec::new(),
        }
    }

    fn test(name: &str, parts: Option<NameParts>) -> TestPlan {
        let body = fold::testing::body("p::changes", &[], crate::body::Assertion::Unit);
        let mut t = fold::testing::test(name, 1, body);
        t.name_parts = parts;
        t
    }

    fn file(tests: Vec<TestPlan>) -> FilePlan {
        FilePlan {
            file_name: "carved_p.rs".into(),
            module_path: "p".into(),
            tests,
            mocks: vec![],
            uses: vec![],
            needs_predicates: false,
            needs_sequence: false,
        }
    }

    #[test]
    fn a_name_that_told_apart_tests_the_file_no_longer_holds_is_made_again_without_them() {
        // Of `changes_returns_items_when_a`, `…_when_b` and `…_when_b_2`, the second alone
        // was kept: it is `changes_returns_items`.
        let kept = file(vec![test(
            "changes_returns_items_when_b_2",
            Some(parts("items", Some("b"))),
        )]);
        assert_eq!(
            new_names(&kept),
            [(
                "changes_returns_items_when_b_2".to_string(),
                "changes_returns_items".to_string()
            )]
            .into()
        );
        // Two kept that still clash keep what tells them apart.
        let two = file(vec![
            test(
                "changes_returns_items_when_a",
                Some(parts("items", Some("a"))),
            ),
            test(
                "changes_returns_items_when_b_2",
                Some(parts("items", Some("b"))),
            ),
        ]);
        assert_eq!(
            new_names(&two),
            [(
                "changes_returns_items_when_b_2".to_string(),
                "changes_returns_items_when_b".to_string()
            )]
            .into()
        );
        // A table's name is not given again, and a name already right is not in the map.
        let table = file(vec![
            test("changes_returns_items", None),
            test("changes_returns_items_2", Some(parts("items", None))),
        ]);
        assert!(new_names(&table).is_empty());
    }

    #[test]
    fn only_test_functions_are_renamed() {
        let renamed: BTreeMap<String, String> = [("old".to_string(), "new".to_string())].into();
        let source = "fn old() {}\n\n#[test]\nfn old() {\n    helper();\n}\n";
        let out =
            crate::render::edit_rust(source, |f| Renamer(&renamed).visit_file_mut(f)).unwrap();
        assert!(out.contains("fn old() {}"), "{out}");
        assert!(out.contains("#[test]\nfn new() {"), "{out}");
    }
}
