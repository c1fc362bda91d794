//! Traces are files people share, so carve treats every string in one as hostile. These tests
//! record real fixtures, then plant code-shaped and terminal-attacking strings in every text
//! column of the trace (and in every string inside its JSON columns), and check that
//! `carve generate --no-verify` writes only the tests it meant to (parsed with `syn`: no item and
//! no identifier came from the trace) and that `carve show` prints nothing a terminal acts on.

mod common;

use std::path::Path;

use common::*;
use proc_macro2::{TokenStream, TokenTree};

/// The identifier every payload tries to smuggle in as code.
const MARKER: &str = "carve_injected";

/// Code-shaped text that ends a comment, a string or a line early, and terminal attacks.
const PAYLOADS: &[&str] = &[
    "\n#![allow(warnings)]\nfn carve_injected() { std::process::exit(77) }\n//",
    "\"); carve_injected(); (\"",
    "*/ fn carve_injected() {} /*",
    "'; carve_injected(); '",
    "x } fn carve_injected() { ",
    "\r\ncarve_injected! {}\r\n",
    "\u{1b}]0;carve_injected\u{7}\u{1b}[2J\u{9b}1m",
    "\u{202e} carve_injected \u{2066}\u{2069}",
    "\\\"; carve_injected(); //",
    "\u{2028}carve_injected()\u{2029}",
];

/// A small deterministic generator, so a failing case names its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn payload(&mut self) -> &'static str {
        PAYLOADS[(self.next() % PAYLOADS.len() as u64) as usize]
    }

    /// `text` with a payload replacing it, or put before, inside or after it.
    fn poison(&mut self, text: &str) -> String {
        let p = self.payload();
        match self.next() % 4 {
            0 => p.to_string(),
            1 => format!("{p}{text}"),
            2 => {
                let mid = text
                    .char_indices()
                    .map(|(i, _)| i)
                    .nth(text.chars().count() / 2)
                    .unwrap_or(text.len());
                format!("{}{p}{}", &text[..mid], &text[mid..])
            }
            _ => format!("{text}{p}"),
        }
    }
}

/// Poisons, with the given chance each, the strings inside a JSON document: not its keys, which
/// name the model's fields, nor the `kind` tags naming a value's variant (a trace with other keys
/// or tags is refused as unreadable: see the seeds that hit what was left).
fn poison_json(value: &mut serde_json::Value, rng: &mut Rng, percent: u64) {
    match value {
        serde_json::Value::String(s) if rng.chance(percent) => *s = rng.poison(s),
        serde_json::Value::Array(items) => {
            for v in items {
                poison_json(v, rng, percent);
            }
        }
        serde_json::Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                if k != "kind" {
                    poison_json(v, rng, percent);
                }
            }
        }
        _ => {}
    }
}

/// Plants payloads in every TEXT column of every table of `db`: plain text columns get them with
/// `percent` chance per row, JSON columns in each string inside.
fn poison_trace(db: &Path, seed: u64, percent: u64) {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let conn = rusqlite::Connection::open(db).unwrap();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for table in tables {
        let columns: Vec<(String, String)> = conn
            .prepare(&format!("PRAGMA table_info({table})"))
            .unwrap()
            .query_map([], |r| Ok((r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        for (column, ty) in columns {
            // Words the schema checks (`exit_kind`, `outcome_kind`, `language`) and the file's
            // format marker keep their values: a trace with others is refused, tested elsewhere.
            if ty != "TEXT"
                || matches!(
                    column.as_str(),
                    "exit_kind" | "outcome_kind" | "language" | "key"
                )
                || table == "carve_meta"
            {
                continue;
            }
            let rows: Vec<(i64, Option<String>)> = conn
                .prepare(&format!("SELECT rowid, {column} FROM {table}"))
                .unwrap()
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            for (rowid, text) in rows {
                let Some(text) = text else { continue };
                let new = match serde_json::from_str::<serde_json::Value>(&text) {
                    Ok(mut json) if text.starts_with(['[', '{', '"']) => {
                        poison_json(&mut json, &mut rng, percent);
                        json.to_string()
                    }
                    _ if rng.chance(percent) => rng.poison(&text),
                    _ => continue,
                };
                conn.execute(
                    &format!("UPDATE {table} SET {column} = ?1 WHERE rowid = ?2"),
                    rusqlite::params![new, rowid],
                )
                .unwrap();
            }
        }
    }
}

/// Every identifier token of `tokens`, however deep (string literals and comments are not
/// identifiers: text inside them cannot run).
fn idents(tokens: TokenStream, out: &mut Vec<String>) {
    for tree in tokens {
        match tree {
            TokenTree::Ident(i) => out.push(i.to_string()),
            TokenTree::Group(g) => idents(g.stream(), out),
            _ => {}
        }
    }
}

/// Checks one carved file: only `use`s, `mock!`s and `#[test] fn`s, the `//!` header as the only
/// attribute, no identifier from a payload, no raw character a terminal or rustc would refuse.
/// Returns the file's test names.
fn check_carved_file(path: &Path, seed: u64) -> Vec<String> {
    let source = std::fs::read_to_string(path).unwrap();
    let context = || format!("seed {seed}, {}:\n{source}", path.display());
    assert!(
        !source.chars().any(|c| (c.is_control() && c != '\n')
            || ('\u{2028}'..='\u{202e}').contains(&c)
            || ('\u{2066}'..='\u{2069}').contains(&c)),
        "a raw control or bidi character in {}",
        context()
    );
    let file = syn::parse_file(&source).unwrap_or_else(|e| panic!("{e}: {}", context()));
    assert!(
        file.attrs.iter().all(|a| a.path().is_ident("doc")),
        "an inner attribute other than the header: {}",
        context()
    );
    let mut tests = Vec::new();
    for item in &file.items {
        match item {
            syn::Item::Use(_) => {}
            syn::Item::Macro(m) if m.mac.path.is_ident("mock") => {}
            syn::Item::Fn(f)
                if f.attrs.iter().any(|a| a.path().is_ident("test"))
                    && f.attrs.iter().all(|a| {
                        a.path().is_ident("test") || a.path().is_ident("should_panic")
                    }) =>
            {
                tests.push(f.sig.ident.to_string());
            }
            other => panic!(
                "an item carve did not mean to write: {}: {}",
                quote::ToTokens::to_token_stream(other),
                context()
            ),
        }
    }
    let mut all = Vec::new();
    idents(quote::ToTokens::to_token_stream(&file), &mut all);
    assert!(
        // (Test names may spell a poisoned value's words, sanitized: `label_returns_carve_injected`.)
        !all.iter().any(|i| i == MARKER),
        "code from the trace became an identifier: {}",
        context()
    );
    tests
}

/// Records `fixture`, then for each seed plants payloads in a copy of the trace and carves it.
fn hostile_traces_carve_only_planned_tests(fixture: &str, seeds: std::ops::Range<u64>) {
    let (_tmp, dir) = copy_fixture(fixture);
    let clean = build_and_record(&dir, fixture, &[]);
    let mut carved_some = false;
    for seed in seeds {
        let db = dir.join(format!("hostile-{seed}.db"));
        std::fs::copy(&clean, &db).unwrap();
        poison_trace(&db, seed, 35);
        let out_dir = dir.join(format!("out-{seed}"));
        std::fs::create_dir_all(&out_dir).unwrap();
        let crate_dir = dir.to_str().unwrap();
        let generated =
            generate_unverified(&db, &out_dir, &["--format", "json", "--crate", crate_dir]);
        let err = stderr(&generated);
        assert!(
            !err.chars().any(|c| c == '\u{1b}' || c == '\u{9b}'),
            "seed {seed}: stderr carries a terminal escape: {err:?}"
        );
        let written: Vec<_> = std::fs::read_dir(&out_dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "rs"))
            .collect();
        eprintln!("seed {seed}: {}", err.trim());
        if !generated.status.success() {
            // Refusing a trace is fine, when it is one line and nothing was written.
            assert_eq!(err.trim().lines().count(), 1, "seed {seed}: {err}");
            assert!(written.is_empty(), "seed {seed}: files written after {err}");
            continue;
        }
        let report: serde_json::Value = serde_json::from_slice(&generated.stdout)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}: {}", stdout(&generated)));
        let mut tests = Vec::new();
        for path in &written {
            tests.extend(check_carved_file(path, seed));
        }
        assert_eq!(
            report["tests_written"].as_u64(),
            Some(tests.len() as u64),
            "seed {seed}: the files hold other tests than the report counts: {tests:?}"
        );
        carved_some |= !tests.is_empty();

        // `carve show` prints the same trace without anything a terminal would act on.
        let show = carve().args(["show", "--db"]).arg(&db).output().unwrap();
        assert!(show.status.success(), "seed {seed}: {}", stderr(&show));
        let text = stdout(&show);
        assert!(
            !text.chars().any(|c| (c.is_control() && c != '\n')
                || ('\u{80}'..='\u{9f}').contains(&c)
                || ('\u{2028}'..='\u{202e}').contains(&c)
                || ('\u{2066}'..='\u{2069}').contains(&c)),
            "seed {seed}: carve show printed a raw control character: {text:?}"
        );
        let json = carve()
            .args(["show", "--format", "json", "--db"])
            .arg(&db)
            .output()
            .unwrap();
        serde_json::from_slice::<serde_json::Value>(&json.stdout)
            .unwrap_or_else(|e| panic!("seed {seed}: show's JSON is no longer JSON: {e}"));
    }
    assert!(
        carved_some,
        "no seed left anything to carve: the test checks nothing"
    );
}

#[test]
fn hostile_strings_in_an_account_trace_never_become_code() {
    hostile_traces_carve_only_planned_tests("account", 1..25);
}

#[test]
fn hostile_strings_in_a_trace_with_mocks_never_become_code() {
    hostile_traces_carve_only_planned_tests("dao", 100..115);
}

/// The reviewer's reproducer: a program path with a newline and Rust code in it. The carved file
/// compiles and its tests pass: the path is only comment text.
#[test]
fn a_program_path_holding_code_stays_a_comment_and_the_tests_still_pass() {
    let (_tmp, dir) = copy_fixture("abc");
    let db = build_and_record(&dir, "abc", &[]);
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute(
        "UPDATE runs SET program = ?1",
        ["/tmp/abc\n#![deny(warnings)]\n#[test] fn carve_injected() { panic!(\"injected\") }\n//"],
    )
    .unwrap();
    drop(conn);
    let summary = generate_into_tests(&dir, &db, &[]);
    assert!(summary.contains("passing after verify"), "{summary}");
    for entry in std::fs::read_dir(dir.join("tests")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|x| x == "rs") {
            let source = std::fs::read_to_string(&path).unwrap();
            assert!(source.starts_with("//! Carved by carve from a recording of `abc\\n#![deny(warnings)]\\n#[test] fn carve_injected()"), "{source}");
            check_carved_file(&path, 0);
        }
    }
    let test = cargo_in(&dir, &["test", "--tests"]);
    assert!(test.status.success(), "{}", stderr(&test));
    assert!(!stdout(&test).contains(MARKER), "{}", stdout(&test));
}

/// A baseline is a file people pass around: `carve gate` never runs the command stored in it
/// unless asked to by name. Given no `-- PROGRAM`, it prints the stored command (quoted as a
/// shell would take it, with nothing a terminal acts on) and asks for the program or for
/// `--rerun-recorded-command`, in one line; `cargo carve gate` alike.
#[test]
fn gate_never_runs_the_command_a_baseline_names_unless_asked_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("baseline.db");
    let recorded = record(&db, &[], &c_basic_bin(), &[]);
    assert!(recorded.status.success(), "{}", stderr(&recorded));
    let marker = tmp.path().join("PWNED");
    let script = format!(
        "touch '{}'; printf '\\033]0;owned\\007'\u{1b}[2J",
        marker.display()
    );
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute(
        "UPDATE runs SET program = '/bin/sh', args = ?1",
        [serde_json::json!(["-c", script]).to_string()],
    )
    .unwrap();
    drop(conn);

    let carve_gate = carve()
        .args(["gate", "--baseline"])
        .arg(&db)
        .output()
        .unwrap();
    let cargo_carve_gate = std::process::Command::new(env!("CARGO_BIN_EXE_cargo-carve"))
        .args(["carve", "gate", "--baseline"])
        .arg(&db)
        .output()
        .unwrap();
    for out in [carve_gate, cargo_carve_gate] {
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(stdout(&out).is_empty(), "{}", stdout(&out));
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 1, "one line: {err}");
        let line = lines[0];
        assert!(line.starts_with("carve: error: "), "{line}");
        assert!(
            line.contains(&format!(
                "/bin/sh -c 'touch '\\''{}'\\''; printf ",
                marker.display()
            )),
            "the stored command, quoted: {line}"
        );
        assert!(line.contains("\\u001b[2J"), "{line}");
        assert!(!line.contains('\u{1b}'), "{line}");
        assert!(line.contains("-- PROGRAM"), "{line}");
        assert!(line.contains("--rerun-recorded-command"), "{line}");
        assert!(!marker.exists(), "the baseline's command ran");
    }
}

/// With `--rerun-recorded-command` the program path comes from the baseline, and `carve record`
/// names it in its summary: escaped there like every text from a trace (here a real program
/// whose file name holds an OSC sequence, so the recording itself works).
#[test]
fn a_rerun_baseline_command_reaches_the_terminal_escaped() {
    let tmp = tempfile::tempdir().unwrap();
    let program = tmp.path().join("c\u{1b}]0;owned\u{7}basic");
    std::fs::copy(c_basic_bin(), &program).unwrap();
    let db = tmp.path().join("baseline.db");
    let recorded = record(&db, &[], &program, &[]);
    assert!(recorded.status.success(), "{}", stderr(&recorded));
    assert!(
        stderr(&recorded).contains("c\\u001b]0;owned\\u0007basic"),
        "{}",
        stderr(&recorded)
    );
    let gated = carve()
        .args(["gate", "--rerun-recorded-command", "--baseline"])
        .arg(&db)
        .output()
        .unwrap();
    let err = stderr(&gated);
    assert_eq!(gated.status.code(), Some(0), "{err}");
    assert!(err.contains("c\\u001b]0;owned\\u0007basic"), "{err}");
    for out in [&recorded, &gated] {
        assert!(!stderr(out).contains('\u{1b}'), "{}", stderr(out));
        assert!(!stderr(out).contains('\u{7}'), "{}", stderr(out));
    }
}
