//! A file's header after tests were taken out of it (by verification or distilling): the
//! imports and `mock!`s only the tests taken out needed go too, so the file builds with no
//! warning (`unused import`, a mock never constructed). What the tests left need is what
//! `plan/files.rs` declares for them ([`Header::of`]); the file's other lines are not touched.
//! `verify::tidy_files` rewrites the files with it.

use crate::plan::files::Header;

/// `source` (a file as the template and prettyplease wrote it) without the header lines
/// `declared` has and `needed` has not.
pub(crate) fn without_stale(source: &str, declared: &Header, needed: &Header) -> String {
    let mut stale_lines: Vec<String> = declared
        .uses
        .iter()
        .filter(|u| !needed.uses.contains(u))
        .map(|u| format!("use {u};"))
        .collect();
    if needed.mocks.is_empty() && !declared.mocks.is_empty() {
        stale_lines.push("use mockall::mock;".to_string());
    }
    if declared.needs_predicates && !needed.needs_predicates {
        stale_lines.push("use mockall::predicate::*;".to_string());
    }
    if declared.needs_sequence && !needed.needs_sequence {
        stale_lines.push("use mockall::Sequence;".to_string());
    }
    let stale_mocks: Vec<String> = declared
        .mocks
        .iter()
        .filter(|m| !needed.mocks.contains(m))
        .map(|m| format!("pub {} {{}}", m.name))
        .collect();
    let lines: Vec<&str> = source.lines().collect();
    let mut keep = vec![true; lines.len()];
    let mut i = 0;
    while i < lines.len() {
        // Header items start at the first column; a test's lines never do but its `fn` and `}`.
        if stale_lines.iter().any(|l| l == lines[i]) {
            keep[i] = false;
        } else if lines[i] == "mock! {"
            && lines
                .get(i + 1)
                .is_some_and(|next| stale_mocks.iter().any(|m| m == next.trim()))
        {
            let end = (i..lines.len()).find(|&j| lines[j] == "}").unwrap_or(i);
            keep[i..=end].iter_mut().for_each(|k| *k = false);
            // The blank line that separated it from the next item.
            if lines.get(end + 1).is_some_and(|l| l.trim().is_empty()) {
                keep[end + 1] = false;
            }
            i = end;
        }
        i += 1;
    }
    let mut out = String::with_capacity(source.len());
    for (line, _) in lines.iter().zip(&keep).filter(|(_, k)| **k) {
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::MockDecl;

    fn mock(name: &str) -> MockDecl {
        MockDecl {
            name: name.to_string(),
            trait_path: format!("abc::{name}"),
            methods: vec!["fn next(&mut self) -> u32".to_string()],
        }
    }

    const FILE: &str = "//! Carved by carve.
use mockall::mock;
use mockall::predicate::*;
use abc::Asker;
use abc::Shape;

mock! {
    pub Source {}
    impl abc::Source for Source {
        fn next(&mut self) -> u32;
    }
}

mock! {
    pub Sink {}
    impl abc::Sink for Sink {
        fn next(&mut self) -> u32;
    }
}

#[test]
fn area_of_square() {
    use abc::Asker;
    let mut mock_source = MockSource::new();
}
";

    #[test]
    fn what_only_the_tests_taken_out_needed_goes() {
        let declared = Header {
            mocks: vec![mock("Sink"), mock("Source")],
            uses: vec!["abc::Asker".to_string(), "abc::Shape".to_string()],
            needs_predicates: true,
            needs_sequence: false,
        };
        let needed = Header {
            mocks: vec![mock("Source")],
            uses: vec!["abc::Shape".to_string()],
            needs_predicates: false,
            needs_sequence: false,
        };
        let tidy = without_stale(FILE, &declared, &needed);
        assert!(!tidy.contains("use mockall::predicate::*;"), "{tidy}");
        assert!(!tidy.contains("\nuse abc::Asker;"), "{tidy}");
        assert!(tidy.contains("use abc::Shape;"), "{tidy}");
        assert!(!tidy.contains("pub Sink {}"), "{tidy}");
        assert!(tidy.contains("pub Source {}"), "{tidy}");
        assert!(tidy.contains("use mockall::mock;"), "{tidy}");
        // A test's own lines are never header lines.
        assert!(tidy.contains("    use abc::Asker;"), "{tidy}");
        assert!(tidy.contains("fn area_of_square()"), "{tidy}");
    }

    #[test]
    fn a_file_that_needs_all_it_declares_is_unchanged() {
        let declared = Header {
            mocks: vec![mock("Sink"), mock("Source")],
            uses: vec!["abc::Asker".to_string(), "abc::Shape".to_string()],
            needs_predicates: true,
            needs_sequence: false,
        };
        assert_eq!(without_stale(FILE, &declared, &declared.clone()), FILE);
    }
}
