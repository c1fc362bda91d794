//! How to build a value — the files a call read: a call whose only reads of the world are
//! reads of files by path that the recorder saw whole ([`carve_storage::FileRead`]), all under
//! one absolute directory its arguments name, gets those files rebuilt under a fresh temporary
//! directory (`std::env::temp_dir()`, removed when the test ends, panicking or not), and that
//! directory written in place of the recorded one wherever a string literal of the test starts
//! with it: arguments, arrange steps, expected values (`PathBuf::from(files.at("/main.rs"))`).
//!
//! What it cannot rebuild keeps the call untestable: another kind of read (clock,
//! environment, network, a write), a read it did not see whole (a symlink, a file over the
//! recorder's bound, an unreadable or relative path), files under no common directory named
//! by an argument, a directory above that one that was listed, or a file seen two ways.

use std::collections::BTreeMap;
use std::path::{Component, Path};

use carve_storage::{Call, CallId, EntryKind, FileRead, Found, Value};

use crate::arrange::context::{reads_files, walk_below, Ctx};
use crate::body::{Assertion, Binding, Body};
use crate::syntax;

/// The test's variable holding the rebuilt files.
const VAR: &str = "recorded_files";

/// The files `calls` (the call a test makes and the recorded calls its arrange steps make
/// again) and the calls below them read, rebuilt into `body`; `Err` when they cannot be.
pub(crate) fn rebuild(cx: &Ctx, calls: &[&Call], body: &mut Body) -> Result<(), ()> {
    let mut reads = Vec::new();
    for call in calls {
        below(cx, call, &mut reads);
    }
    if reads.is_empty() {
        return Ok(());
    }
    let mut texts = Vec::new();
    for call in calls {
        for arg in &call.args {
            strings(&arg.value, &mut texts);
        }
    }
    let (root, files) = layout(&reads, &texts).ok_or(())?;
    let escaped = syntax::str_lit(&root);
    let opening = &escaped[..escaped.len() - 1];
    let edit = |text: &mut String| *text = rewrite(text, opening);
    body.args.iter_mut().for_each(edit);
    edit(&mut body.callee);
    for b in &mut body.setup {
        edit(&mut b.expr);
    }
    for e in body.checks.iter_mut().chain(&mut body.effects) {
        edit(&mut e.actual);
        edit(&mut e.expected);
    }
    match &mut body.assertion {
        Assertion::Eq { expected } => edit(expected),
        Assertion::Matches { pattern } => edit(pattern),
        _ => {}
    }
    body.setup.insert(
        0,
        Binding {
            var: VAR.to_string(),
            mutable: false,
            expr: files_expr(&files, calls[0].id),
            repeat: 1,
            times: None,
        },
    );
    Ok(())
}

/// The reads of `call` and every call below it, in recording order of the calls.
fn below<'t>(cx: &Ctx<'t>, call: &Call, out: &mut Vec<&'t FileRead>) {
    out.extend(cx.file_reads(call.id));
    // Only where some call read files (one with reads of its own always did).
    let walked = walk_below(cx, call.id, |c| {
        out.extend(cx.file_reads(c.id));
        Ok::<bool, std::convert::Infallible>(reads_files(cx, c.id))
    });
    let Ok(()) = walked;
}

/// Every string in `value` (paths and OS strings are recorded as text too).
pub fn strings<'v>(value: &'v Value, out: &mut Vec<&'v str>) {
    match value {
        Value::Str { value, .. } => out.push(value),
        Value::Ref { target, .. } => strings(target, out),
        Value::Struct { fields, .. } | Value::Enum { fields, .. } => {
            fields.iter().for_each(|f| strings(&f.value, out));
        }
        Value::Tuple { elems, .. } | Value::Seq { elems, .. } => {
            elems.iter().for_each(|e| strings(e, out));
        }
        _ => {}
    }
}

/// What a test builds under its directory, by path relative to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    Dir,
    /// A file; `None` for one only seen listed in its directory (built empty).
    File(Option<Vec<u8>>),
    Missing,
}

/// `path` without `.` components or a trailing `/`; `None` when relative or with `..`.
fn normal(path: &str) -> Option<String> {
    let mut out = String::new();
    for c in Path::new(path).components() {
        match c {
            Component::RootDir => {}
            Component::Normal(name) => {
                out.push('/');
                out.push_str(name.to_str()?);
            }
            Component::CurDir => {}
            Component::ParentDir | Component::Prefix(_) => return None,
        }
    }
    path.starts_with('/')
        .then(|| if out.is_empty() { "/".into() } else { out })
}

/// `dir`'s strict ancestors, nearest first, `/` excluded.
fn ancestors(dir: &str) -> impl Iterator<Item = &str> {
    let mut at = dir;
    std::iter::from_fn(move || {
        let cut = at.rfind('/').filter(|&i| i > 0)?;
        at = &at[..cut];
        Some(at)
    })
}

/// Whether `path` is `dir` or below it.
fn under(path: &str, dir: &str) -> bool {
    path == dir
        || path
            .strip_prefix(dir)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The directory a test rebuilds and what goes under it: the deepest directory, not `/`, that
/// some argument's text starts with (a directory read, above a path read, or above an
/// argument's own path), such that every read is under it or is a directory above it that
/// was not listed (a temporary directory has directories above it too, listing other things).
pub fn layout(reads: &[&FileRead], texts: &[&str]) -> Option<(String, BTreeMap<String, Node>)> {
    let reads: Vec<(String, &Found)> = reads
        .iter()
        .map(|r| Some((normal(&r.path)?, &r.found)))
        .collect::<Option<_>>()?;
    let texts: Vec<String> = texts.iter().filter_map(|t| normal(t)).collect();
    let mut candidates: Vec<&str> = Vec::new();
    for (path, found) in &reads {
        if matches!(found, Found::Dir { .. }) {
            candidates.push(path);
        }
        candidates.extend(ancestors(path));
    }
    for text in &texts {
        candidates.extend(ancestors(text));
    }
    candidates.retain(|c| *c != "/" && texts.iter().any(|t| under(t, c)));
    candidates.sort_by_key(|c| std::cmp::Reverse(c.len()));
    candidates.dedup();
    candidates
        .into_iter()
        .find_map(|root| Some((root.to_string(), files(root, &reads)?)))
}

/// The files under `root` the reads saw, or `None` when a read is elsewhere, lists a directory
/// above `root`, or two reads disagree.
fn files(root: &str, reads: &[(String, &Found)]) -> Option<BTreeMap<String, Node>> {
    /// Adds what a read saw at `rel`; `false` when another read saw something else there (a
    /// file only seen listed is what a read of it saw).
    fn put(nodes: &mut BTreeMap<String, Node>, rel: String, node: Node) -> bool {
        match (nodes.get(&rel), &node) {
            (None, _) | (Some(Node::File(None)), Node::File(Some(_))) => {
                nodes.insert(rel, node);
                true
            }
            (Some(Node::File(Some(_))), Node::File(None)) => true,
            (Some(had), _) => *had == node,
        }
    }
    let mut nodes: BTreeMap<String, Node> = BTreeMap::new();
    for (path, found) in reads {
        if !under(path, root) {
            let above = root
                .strip_prefix(path.as_str())
                .is_some_and(|r| r.starts_with('/'))
                || path == "/";
            if above && matches!(found, Found::Dir { entries: None }) {
                continue;
            }
            return None;
        }
        let rel = path[root.len()..].to_string();
        let ok = match found {
            Found::Missing => !rel.is_empty() && put(&mut nodes, rel, Node::Missing),
            Found::File { contents, .. } => {
                !rel.is_empty() && put(&mut nodes, rel, Node::File(Some(contents.clone()?)))
            }
            Found::Dir { entries } => {
                let mut ok = put(&mut nodes, rel.clone(), Node::Dir);
                for entry in entries.iter().flatten() {
                    let node = match entry.kind {
                        EntryKind::File => Node::File(None),
                        EntryKind::Dir => Node::Dir,
                        EntryKind::Symlink | EntryKind::Other => return None,
                    };
                    ok &= put(&mut nodes, format!("{rel}/{}", entry.name), node);
                }
                ok
            }
            Found::Symlink { .. } | Found::NotRead { .. } => false,
        };
        if !ok {
            return None;
        }
    }
    // A directory a file or directory is in must be one, not a file or missing.
    for rel in nodes.keys() {
        for parent in ancestors(rel) {
            if nodes.get(parent).is_some_and(|n| *n != Node::Dir) {
                return None;
            }
        }
    }
    if nodes.get("").is_some_and(|n| *n != Node::Dir) {
        return None;
    }
    Some(nodes)
}

/// The block that builds the files: a fresh directory per test (the process id and the
/// recorded call's id), removed when the value drops; `at` writes a path under it as the
/// `&'static str` a recorded literal was.
fn files_expr(files: &BTreeMap<String, Node>, call: CallId) -> String {
    let steps = build_steps(files, "files.0");
    format!(
        "{{
    // The files the recorded call read, rebuilt under a temporary directory
    struct Files(std::path::PathBuf);
    impl Files {{
        fn at(&self, rest: &str) -> &'static str {{
            Box::leak(format!(\"{{}}{{rest}}\", self.0.display()).into_boxed_str())
        }}
    }}
    impl Drop for Files {{
        fn drop(&mut self) {{
            let _ = std::fs::remove_dir_all(&self.0);
        }}
    }}
    let files = Files(std::env::temp_dir().join(format!(\"carve-files-{{}}-{call}\", std::process::id())));
    let _ = std::fs::remove_dir_all(&files.0);
    std::fs::create_dir_all(&files.0).unwrap();
    {steps}files
}}",
        call = call.0
    )
}

/// The statements that build `files` under the directory the `std::path::Path` expression
/// `base` names, one per line (`std::fs::create_dir_all(base.join("src")).unwrap();`).
pub fn build_steps(files: &BTreeMap<String, Node>, base: &str) -> String {
    let mut steps = String::new();
    for (rel, node) in files {
        let at = format!(
            "{base}.join({})",
            syntax::str_lit(rel.trim_start_matches('/'))
        );
        match node {
            Node::Dir if !rel.is_empty() => {
                steps.push_str(&format!("std::fs::create_dir_all({at}).unwrap();\n"));
            }
            Node::File(contents) => {
                let contents = contents.as_deref().unwrap_or_default();
                let literal = match std::str::from_utf8(contents) {
                    Ok(text) => syntax::str_lit(text),
                    Err(_) => format!(
                        "[{}]",
                        contents
                            .iter()
                            .map(|b| format!("{b}u8"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                };
                // Its directory, unless a step above made it.
                let made = |p: &&str| files.get(*p) == Some(&Node::Dir);
                if let Some(parent) = ancestors(rel).next().filter(|p| !made(p)) {
                    let parent = syntax::str_lit(parent.trim_start_matches('/'));
                    steps.push_str(&format!(
                        "std::fs::create_dir_all({base}.join({parent})).unwrap();\n"
                    ));
                }
                steps.push_str(&format!("std::fs::write({at}, {literal}).unwrap();\n"));
            }
            Node::Dir | Node::Missing => {}
        }
    }
    steps
}

/// `text` (Rust source) with every string literal that starts with the directory (`opening`:
/// its literal without the closing quote) followed by `/` or the end written as that path
/// under the rebuilt directory: `"/r/src/*.rs"` → `recorded_files.at("/src/*.rs")`.
fn rewrite(text: &str, opening: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(['"', '\'']) {
        let (before, from) = rest.split_at(at);
        out.push_str(before);
        if from.starts_with('\'') {
            // A char literal (`'"'`, `'\''`) or a lifetime: passed over whole.
            let len = char_literal_len(from).unwrap_or(1);
            out.push_str(&from[..len]);
            rest = &from[len..];
            continue;
        }
        let len = string_literal_len(from);
        let literal = &from[..len];
        match literal.strip_prefix(opening) {
            Some(tail) if tail.starts_with('/') || tail == "\"" => {
                out.push_str(&format!("{VAR}.at(\"{tail})"));
            }
            _ => out.push_str(literal),
        }
        rest = &from[len..];
    }
    out.push_str(rest);
    out
}

/// The length of the string literal `text` starts with (at its opening quote), escapes
/// included; the rest of the text when it is not closed.
fn string_literal_len(text: &str) -> usize {
    let mut escaped = false;
    for (i, c) in text.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return i + 1,
            _ => {}
        }
    }
    text.len()
}

/// The length of the char literal `text` starts with, `None` for a lifetime.
fn char_literal_len(text: &str) -> Option<usize> {
    let body = &text[1..];
    let end = if let Some(escape) = body.strip_prefix('\\') {
        1 + escape.find('\'')?
    } else {
        body.chars().next()?.len_utf8()
    };
    (body[end..].starts_with('\'')).then_some(end + 2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use carve_storage::DirEntry;

    fn read(path: &str, found: Found) -> FileRead {
        FileRead {
            call: CallId(1),
            op: "metadata".into(),
            path: path.into(),
            found,
        }
    }

    fn dir() -> Found {
        Found::Dir { entries: None }
    }

    fn listed(names: &[(&str, EntryKind)]) -> Found {
        Found::Dir {
            entries: Some(
                names
                    .iter()
                    .map(|(name, kind)| DirEntry {
                        name: (*name).into(),
                        kind: *kind,
                    })
                    .collect(),
            ),
        }
    }

    fn file(text: &str) -> Found {
        Found::File {
            len: text.len() as u64,
            contents: Some(text.as_bytes().to_vec()),
        }
    }

    fn check(reads: &[FileRead], texts: &[&str]) -> Option<(String, Vec<(String, Node)>)> {
        let reads: Vec<&FileRead> = reads.iter().collect();
        layout(&reads, texts).map(|(root, files)| (root, files.into_iter().collect()))
    }

    #[test]
    fn the_root_is_the_deepest_directory_an_argument_names_with_every_read_under_or_above_it() {
        // glob's walk: every directory down from `/` looked at, the last one listed.
        let reads = [
            read("/", dir()),
            read("/w", dir()),
            read("/w/app", dir()),
            read("/w/app/src", dir()),
            read("/w/app/src", listed(&[("main.rs", EntryKind::File)])),
            read("/w/app/src/lib.rs", file("pub fn f() {}")),
        ];
        assert_eq!(
            check(&reads, &["/w/app/src/*.rs"]),
            Some((
                "/w/app/src".into(),
                vec![
                    ("".into(), Node::Dir),
                    (
                        "/lib.rs".into(),
                        Node::File(Some(b"pub fn f() {}".to_vec()))
                    ),
                    ("/main.rs".into(), Node::File(None)),
                ]
            ))
        );
        // Only `/` read (the iterator made, nothing walked yet): the argument's directory.
        assert_eq!(
            check(&reads[..1], &["/w/app/src/*.rs"]).map(|(root, _)| root),
            Some("/w/app/src".into())
        );
        // A file named by the argument: its directory.
        assert_eq!(
            check(&[read("/t/x/a.txt", file("hi"))], &["/t/x/a.txt"]).map(|(r, _)| r),
            Some("/t/x".into())
        );
    }

    #[test]
    fn reads_no_directory_named_by_an_argument_holds_are_not_rebuilt() {
        // Outside what the argument names.
        assert_eq!(
            check(&[read("/etc/hosts", file("x"))], &["/t/x/a.txt"]),
            None
        );
        // A listed directory above the root: a temporary directory's parent lists other things.
        let above = [
            read("/", listed(&[("t", EntryKind::Dir)])),
            read("/t/x", dir()),
        ];
        assert_eq!(check(&above, &["/t/x/y"]), None);
        assert_eq!(
            check(&above[1..], &["/t/x/y"]).map(|(root, _)| root),
            Some("/t/x".into())
        );
        // Relative paths, symlinks in a listing, two reads seeing different files.
        assert_eq!(check(&[read("src/a", file("x"))], &["src/a"]), None);
        assert_eq!(
            check(
                &[read("/t/x", listed(&[("l", EntryKind::Symlink)]))],
                &["/t/x"]
            ),
            None
        );
        assert_eq!(
            check(
                &[read("/t/x/a", file("1")), read("/t/x/a", file("2"))],
                &["/t/x/a"]
            ),
            None
        );
        // Nothing an argument names.
        assert_eq!(check(&[read("/t/x/a", file("1"))], &[]), None);
    }

    #[test]
    fn literals_starting_with_the_root_are_written_under_the_rebuilt_directory() {
        let opening = "\"/w/app/src";
        assert_eq!(
            rewrite(r#"glob_with("/w/app/src/*.rs", o).unwrap()"#, opening),
            r#"glob_with(recorded_files.at("/*.rs"), o).unwrap()"#
        );
        assert_eq!(
            rewrite(r#"Some(std::path::PathBuf::from("/w/app/src"))"#, opening),
            r#"Some(std::path::PathBuf::from(recorded_files.at("")))"#
        );
        // Another directory with the same beginning, a char literal holding a quote, escapes.
        assert_eq!(
            rewrite(r#"f("/w/app/srcs/a", '"', "\"/w/app/src")"#, opening),
            r#"f("/w/app/srcs/a", '"', "\"/w/app/src")"#
        );
        assert_eq!(
            rewrite(r#"g::<'static>("/w/app/src/a\"b")"#, opening),
            r#"g::<'static>(recorded_files.at("/a\"b"))"#
        );
    }

    #[test]
    fn the_files_block_builds_directories_and_files_under_a_fresh_directory() {
        let files: BTreeMap<String, Node> = [
            ("".to_string(), Node::Dir),
            ("/a".to_string(), Node::Dir),
            ("/a/b.txt".to_string(), Node::File(Some(b"hi\n".to_vec()))),
            ("/bin".to_string(), Node::File(Some(vec![0, 255]))),
            ("/gone".to_string(), Node::Missing),
        ]
        .into_iter()
        .collect();
        let block = files_expr(&files, CallId(7));
        assert!(syn::parse_str::<syn::Expr>(&block).is_ok(), "{block}");
        for want in [
            "carve-files-{}-7",
            "std::fs::create_dir_all(files.0.join(\"a\")).unwrap();",
            "std::fs::write(files.0.join(\"a/b.txt\"), \"hi\\n\").unwrap();",
            "std::fs::write(files.0.join(\"bin\"), [0u8, 255u8]).unwrap();",
            "impl Drop for Files",
        ] {
            assert!(block.contains(want), "{want} not in {block}");
        }
        assert!(!block.contains("gone"), "{block}");
    }
}
