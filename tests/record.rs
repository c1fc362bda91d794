//! `carve record` on real fixture programs: what lands in the trace matches what the programs
//! print about themselves.

mod common;

use carve_storage::{Outcome, ProcessExit, Value};
use common::*;

#[test]
fn expr_calls_are_stored_with_their_arguments_and_return_values() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let out = record(&db, &[], &fixture_bin("expr"), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("2*(3+4)-5/2 = 11.5"),
        "program output passes through"
    );

    let trace = load(&db);
    let precedence = calls_of(&trace, "expr::parser::precedence");
    let star = precedence
        .iter()
        .find(|c| arg(c, "op") == &Value::Char { value: '*' })
        .expect("precedence('*') recorded");
    assert_eq!(star.outcome, Outcome::Returned);
    assert_eq!(star.ret, Some(uint(2, "u8")));

    let apply = calls_of(&trace, "expr::eval::apply");
    let last = apply
        .iter()
        .find(|c| arg(c, "op") == &Value::Char { value: '-' } && arg(c, "lhs") == &float(14.0))
        .expect("apply('-', 14, 2.5) recorded");
    assert_eq!(arg(last, "rhs"), &float(2.5));
    assert_eq!(last.ret, Some(float(11.5)));

    let format = calls_of(&trace, "expr::format_number");
    assert!(format
        .iter()
        .any(|c| arg(c, "v") == &float(11.5)
            && c.ret == Some(string("alloc::string::String", "11.5"))));
    let calculate = calls_of(&trace, "expr::calculate");
    assert!(calculate
        .iter()
        .any(|c| arg(c, "src") == &string("&str", "(1+2)^2") && c.ret == Some(float(9.0))));
}

#[test]
fn nested_calls_keep_their_parent_and_depth() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let out = record(&db, &[], &fixture_bin("expr"), &["1+2"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let trace = load(&db);
    let evaluate = calls_of(&trace, "expr::evaluate")[0];
    let apply = calls_of(&trace, "expr::eval::apply")[0];
    // apply runs inside evaluate, somewhere below it.
    let mut ancestor = apply.parent;
    let mut found = false;
    while let Some(id) = ancestor {
        if id == evaluate.id {
            found = true;
            break;
        }
        ancestor = trace
            .calls
            .iter()
            .find(|c| c.id == id)
            .and_then(|c| c.parent);
    }
    assert!(found, "apply is nested under evaluate");
    assert!(apply.depth > evaluate.depth);
    let main = calls_of(&trace, "expr::main")[0];
    assert_eq!(main.parent, None);
    assert_eq!(main.depth, 0);
    assert_eq!(evaluate.parent, Some(main.id));
    assert!(trace.calls.iter().all(|c| c.thread == trace.run.info.pid));
}

#[test]
fn the_program_exit_code_is_carves_exit_code() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let out = record(&db, &[], &fixture_bin("expr"), &["1+"]);
    let direct = std::process::Command::new(fixture_bin("expr"))
        .arg("1+")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), direct.status.code());
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout(&out),
        stdout(&direct),
        "stdout passes through unchanged"
    );
    let trace = load(&db);
    assert_eq!(trace.run.end.unwrap().exit, ProcessExit::Exited { code: 1 });
}

#[test]
fn c_functions_get_ints_pointers_to_structs_and_strings() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let out = record(&db, &[], &c_basic_bin(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let trace = load(&db);
    let add = calls_of(&trace, "add");
    assert_eq!(arg(add[0], "a"), &int(2, "int"));
    assert_eq!(arg(add[0], "b"), &int(3, "int"));
    assert_eq!(add[0].ret, Some(int(5, "int")));

    let manhattan = calls_of(&trace, "manhattan")[0];
    match arg(manhattan, "p") {
        Value::Ref { target, .. } => match &**target {
            Value::Struct { fields, .. } => {
                assert_eq!(fields[0].value, int(3, "int"));
                assert_eq!(fields[1].value, int(-4, "int"));
            }
            other => panic!("point decoded as {other:?}"),
        },
        other => panic!("pointer decoded as {other:?}"),
    }
    assert_eq!(manhattan.ret, Some(int(7, "int")));
    let children: Vec<_> = trace.children(Some(manhattan.id)).collect();
    assert_eq!(children.len(), 3, "abs_int, abs_int, add");

    let vowels = calls_of(&trace, "count_vowels")[0];
    match arg(vowels, "s") {
        Value::Str { value, .. } => assert_eq!(value, "Recording native programs"),
        other => panic!("string decoded as {other:?}"),
    }
    assert_eq!(vowels.ret, Some(uint(8, "size_t")));
    let average = calls_of(&trace, "average")[0];
    assert_eq!(
        average.ret,
        Some(Value::Float {
            ty: "double".into(),
            bits: 7.25f64.to_bits()
        })
    );
}

#[test]
fn a_segfault_keeps_finished_calls_and_marks_the_open_ones_unfinished() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let out = record(&db, &[], &c_basic_bin(), &["crash"]);
    assert_eq!(
        out.status.code(),
        Some(128 + 11),
        "carve exits like a shell would"
    );
    let trace = load(&db);
    assert_eq!(
        trace.run.end.clone().unwrap().exit,
        ProcessExit::Signaled {
            signal: 11,
            name: "SIGSEGV".into()
        }
    );
    let finished = calls_of(&trace, "sum_then_scale")[0];
    assert_eq!(finished.outcome, Outcome::Returned);
    assert_eq!(finished.ret, Some(int(100, "long int")));
    for open in ["main", "crash_after", "read_through"] {
        assert_eq!(
            calls_of(&trace, open)[0].outcome,
            Outcome::Unfinished,
            "{open}"
        );
    }
}

/// The summary line says how the program ended as a sentence: "the program was killed by
/// SIGSEGV", and for a run ended by an exec, "it called exec to run ..." (probe row 28: "the
/// program killed by", "it the program called exec").
#[test]
fn the_summary_says_how_the_program_ended_in_a_sentence() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let crashed = record(&db, &[], &c_basic_bin(), &["crash"]);
    assert_eq!(crashed.status.code(), Some(128 + 11));
    let summary = stderr(&crashed);
    assert!(
        summary.contains("; the program was killed by SIGSEGV\n"),
        "{summary}"
    );

    // A program that execs c_basic from inside a traced call: two runs, one line each.
    let execs = compiled(
        tmp.path(),
        "execs.c",
        "cc",
        &["-g", "-O0"],
        "#include <unistd.h>\n\
         int go(const char *path) { execl(path, path, (char *)0); return 1; }\n\
         int main(int argc, char **argv) { return go(argv[1]); }\n",
    );
    let db = tmp.path().join("exec.db");
    let out = record(&db, &[], &execs, &[c_basic_bin().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let summary = stderr(&out);
    assert!(
        summary.contains(&format!(
            "as run 1: 2 calls; it called exec to run {}",
            c_basic_bin().display()
        )),
        "{summary}"
    );
    assert!(summary.contains("as run 2: "), "{summary}");
    assert!(summary.contains("; it exited with 0\n"), "{summary}");
    for wrong in [
        "it the program",
        "the program killed",
        "the program the program",
    ] {
        assert!(!summary.contains(wrong), "{summary}");
    }
}

#[test]
fn a_panic_inside_a_traced_call_marks_it_panicked_and_recording_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let out = record(&db, &[], &fixture_bin("mouse"), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let trace = load(&db);
    let question = calls_of(&trace, "mouse::UltimateAnswer::question")[0];
    assert_eq!(
        question.outcome,
        Outcome::Panicked {
            message: Some("not implemented: the question is not known yet".into())
        }
    );
    let answer = calls_of(&trace, "mouse::Mouse::answer_the_question")[0];
    assert_eq!(
        answer.ret,
        Some(string("alloc::string::String", "The answer is 42"))
    );
    // Calls after the caught panic are still recorded.
    let main = calls_of(&trace, "mouse::main")[0];
    let last_child = trace.children(Some(main.id)).last().unwrap();
    assert!(last_child.id > question.id);
    assert_eq!(main.outcome, Outcome::Returned);
}

#[test]
fn every_thread_is_traced_and_calls_are_attributed_to_their_thread() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let out = record(
        &db,
        &["--filter", "threads::fib", "--filter", "threads::checksum"],
        &fixture_bin("threads"),
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let printed = stdout(&out);
    let trace = load(&db);
    let fib = calls_of(&trace, "threads::fib");
    assert_eq!(fib.len(), 8, "one fib per worker thread");
    let mut threads: Vec<i32> = fib.iter().map(|c| c.thread).collect();
    threads.sort();
    threads.dedup();
    assert_eq!(threads.len(), 8, "each on its own thread");
    assert!(!threads.contains(&trace.run.info.pid));
    for call in fib {
        let (Value::Uint { value: n, .. }, Some(Value::Uint { value: r, .. })) =
            (arg(call, "n"), &call.ret)
        else {
            panic!("fib call {call:?}");
        };
        assert!(
            printed.contains(&format!("fib({n}) = {r}")),
            "fib({n}) = {r} printed by the program"
        );
    }
    assert_eq!(calls_of(&trace, "threads::checksum").len(), 8);
}

#[test]
fn filters_select_functions_by_glob_and_excludes_remove_them() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let out = record(
        &db,
        &["--filter", "expr::lexer::*", "--exclude", "*::peek"],
        &fixture_bin("expr"),
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let trace = load(&db);
    assert!(trace
        .functions
        .iter()
        .all(|f| f.path.starts_with("expr::lexer::")));
    assert!(trace.functions.iter().all(|f| !f.path.ends_with("::peek")));
    assert!(!calls_of(&trace, "expr::lexer::is_operator").is_empty());
}

#[test]
fn max_calls_per_function_stops_recording_a_function_after_n_calls() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let out = record(
        &db,
        &["--max-calls-per-function", "2"],
        &fixture_bin("expr"),
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let trace = load(&db);
    assert_eq!(calls_of(&trace, "expr::lexer::is_number_char").len(), 2);
    assert_eq!(calls_of(&trace, "expr::parser::precedence").len(), 2);
}

#[test]
fn show_prints_the_call_tree_with_values() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let out = record(&db, &[], &c_basic_bin(), &[]);
    assert!(out.status.success());
    let shown = carve().args(["show", "--db"]).arg(&db).output().unwrap();
    assert!(shown.status.success(), "{}", stderr(&shown));
    let text = stdout(&shown);
    assert!(text.contains("add(a: 2, b: 3) = 5"), "{text}");
    assert!(
        // The struct behind the pointer is object #1 of the run.
        text.contains("manhattan(p#1: &point { x: 3, y: -4 }) {"),
        "{text}"
    );
    assert!(
        text.contains("  abs_int(v: -4) = 4"),
        "nested calls are indented: {text}"
    );
    assert!(
        text.contains("count_vowels(s: \"Recording native programs\") {"),
        "{text}"
    );

    let only = carve()
        .args([
            "show",
            "--function",
            "manhattan",
            "--format",
            "json",
            "--db",
        ])
        .arg(&db)
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&only.stdout).expect("json");
    assert_eq!(
        json["calls"].as_array().unwrap().len(),
        4,
        "manhattan and its three callees"
    );
}

#[test]
fn field_effects_on_self_and_mut_arguments_are_recorded_after_the_call() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let out = record(&db, &[], &fixture_bin("account"), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let printed = stdout(&out);
    assert!(printed.contains("alice.balance() = 7734"), "{printed}");
    let trace = load(&db);
    let transfer = calls_of(&trace, "account::Account::transfer")[0];
    let balance = |v: &Value| match v {
        Value::Ref { target, .. } => balance_of(target),
        other => balance_of(other),
    };
    assert_eq!(
        balance(transfer.arg("self").unwrap()),
        10734,
        "alice before"
    );
    assert_eq!(balance(transfer.arg("other").unwrap()), 2550, "bob before");
    assert_eq!(
        balance(transfer.after("self").unwrap()),
        7734,
        "alice after"
    );
    assert_eq!(balance(transfer.after("other").unwrap()), 5550, "bob after");
    // A method taking &self has its receiver recorded after the call too (unchanged).
    let reads = calls_of(&trace, "account::Account::balance");
    assert!(reads.iter().all(|c| c.after("self").is_some()));
}

fn balance_of(v: &Value) -> i128 {
    match v {
        Value::Struct { fields, .. } => {
            match &fields.iter().find(|f| f.name == "balance").unwrap().value {
                Value::Int { value, .. } => *value,
                other => panic!("balance is {other:?}"),
            }
        }
        other => panic!("account is {other:?}"),
    }
}

#[test]
fn a_forced_return_skips_the_body_and_the_program_sees_the_chosen_value() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let out = record(
        &db,
        &["--force-return", "expr::parser::precedence=9"],
        &fixture_bin("expr"),
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let printed = stdout(&out);
    assert!(printed.contains("precedence('*') = 9"), "{printed}");
    assert!(printed.contains("precedence('+') = 9"), "{printed}");
    // The rest of the program is unaffected.
    assert!(printed.contains("apply('^', 2, 10) = 1024"), "{printed}");
    let trace = load(&db);
    let calls = calls_of(&trace, "expr::parser::precedence");
    assert!(!calls.is_empty());
    for c in calls {
        assert_eq!(c.ret, Some(uint(9, "u8")));
        assert_eq!(
            trace.children(Some(c.id)).count(),
            0,
            "the body did not run"
        );
    }
}

#[test]
fn forcing_a_function_that_does_not_return_an_integer_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let out = record(
        &db,
        &["--force-return", "expr::format_number=1"],
        &fixture_bin("expr"),
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("only on functions returning an integer"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn trait_objects_are_recorded_as_their_concrete_type() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let out = record(&db, &[], &fixture_bin("mouse"), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let trace = load(&db);
    let call = calls_of(&trace, "mouse::Mouse::answer_the_question")[0];
    match call.arg("planet").unwrap() {
        Value::Ref { ty, target, .. } => {
            assert!(ty.contains("dyn mouse::Planet"), "{ty}");
            assert_eq!(target.type_name(), "mouse::Earth");
        }
        other => panic!("planet recorded as {other:?}"),
    }
}

#[test]
fn return_values_match_what_the_program_prints_for_every_abi_case() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let out = record(
        &db,
        &["--filter", "returns::*", "--exclude", "returns::main"],
        &fixture_bin("returns"),
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    // The program prints `call = {:?}` per line; carve's rendering names enum types
    // (`Shape::Rect(4, 5)`) where Debug does not (`Rect(4, 5)`).
    let printed: Vec<String> = stdout(&out)
        .lines()
        .map(|l| l.split_once(" = ").unwrap().1.to_string())
        .collect();
    let trace = load(&db);
    let recorded: Vec<String> = trace
        .children(None)
        .map(|c| {
            c.ret
                .as_ref()
                .map(|v| v.to_string().replace("Error::", "").replace("Shape::", ""))
                .unwrap_or_default()
        })
        .collect();
    assert_eq!(recorded, printed);
}

/// Compiles c_basic with `flags` into `dir`.
fn c_basic_with(dir: &std::path::Path, name: &str, flags: &[&str]) -> std::path::PathBuf {
    let bin = dir.join(name);
    let status = std::process::Command::new("cc")
        .args(flags)
        .arg("-o")
        .arg(&bin)
        .arg(repo().join("fixtures/c_basic/c_basic.c"))
        .status()
        .unwrap();
    assert!(status.success());
    bin
}

#[test]
fn dwarf_4_binaries_are_recorded_like_dwarf_5_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = c_basic_with(tmp.path(), "c4", &["-g", "-gdwarf-4", "-O0"]);
    let db = tmp.path().join("t.db");
    let out = record(&db, &[], &bin, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let trace = load(&db);
    let add = calls_of(&trace, "add");
    assert_eq!(arg(add[0], "a"), &int(2, "int"));
    assert_eq!(add[0].ret, Some(int(5, "int")));
}

#[test]
fn an_optimised_build_records_what_is_left_and_never_crashes_the_program() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = c_basic_with(tmp.path(), "c2", &["-g", "-O2"]);
    let db = tmp.path().join("t.db");
    let out = record(&db, &[], &bin, &[]);
    let direct = std::process::Command::new(&bin).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), stdout(&direct));
    let trace = load(&db);
    // At -O2 most functions are inlined; the ones still called are recorded, and any value the
    // optimiser threw away is stored as unavailable rather than guessed.
    assert!(!trace.calls.is_empty());
    for call in &trace.calls {
        for a in &call.args {
            if let Value::Int { .. } | Value::Uint { .. } = a.value {
                continue;
            }
            assert!(
                !matches!(&a.value, Value::Opaque { .. }),
                "{} of {:?} was guessed: {:?}",
                a.name,
                call.function,
                a.value
            );
        }
    }
}

#[test]
fn depth_records_callees_up_to_n_levels_out_from_the_filtered_function() {
    let tmp = tempfile::tempdir().unwrap();
    let paths = |depth: &str| -> Vec<(String, u32)> {
        let db = tmp.path().join(format!("d{depth}.db"));
        let args = ["--filter", "account::Account::transfer", "--depth", depth];
        let out = record(&db, &args, &fixture_bin("account"), &[]);
        assert!(out.status.success(), "{}", stderr(&out));
        let trace = load(&db);
        let first = calls_of(&trace, "account::Account::transfer")[0].id;
        // The first transfer and everything recorded under it, with nesting depth.
        let mut under = vec![first];
        let mut out = Vec::new();
        for c in &trace.calls {
            if c.id == first || c.parent.is_some_and(|p| under.contains(&p)) {
                under.push(c.id);
                out.push((trace.function(c.function).unwrap().path.clone(), c.depth));
            }
        }
        out
    };
    let names = |v: &[(String, u32)]| {
        v.iter()
            .map(|(p, _)| p.rsplit("::").next().unwrap().to_string())
            .collect::<Vec<_>>()
    };

    assert_eq!(names(&paths("0")), ["transfer"]);
    assert_eq!(names(&paths("1")), ["transfer", "withdraw", "deposit"]);
    let two = paths("2");
    assert_eq!(
        names(&two),
        [
            "transfer",
            "withdraw",
            "is_valid_amount",
            "can_withdraw",
            "deposit",
            "is_valid_amount"
        ]
    );
    // can_withdraw's own call of is_valid_amount is three levels out: not recorded, and not
    // mistaken for a direct callee of anything recorded.
    assert!(two.iter().all(|(_, d)| *d <= 2));
}

#[test]
fn objects_keep_their_identity_across_calls_and_know_their_constructor() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let out = record(&db, &[], &fixture_bin("account"), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let trace = load(&db);
    let transfer = calls_of(&trace, "account::Account::transfer")[0];
    let (alice, bob) = (
        transfer.object("self").unwrap(),
        transfer.object("other").unwrap(),
    );
    assert_ne!(alice, bob, "two accounts, two objects");
    // alice's earlier deposit was made on the same object.
    let deposit = calls_of(&trace, "account::Account::deposit")[0];
    assert_eq!(deposit.object("self"), Some(alice));
    // Each was made by the constructor call that returned its opening balance.
    let object = |id| trace.objects.iter().find(|o| o.id == id).unwrap();
    let opening = |id| {
        let made_by = object(id).created_by.expect("constructor known");
        let ctor = trace.calls.iter().find(|c| c.id == made_by).unwrap();
        assert_eq!(
            trace.function(ctor.function).unwrap().path,
            "account::Account::new"
        );
        ctor.arg("amount").cloned()
    };
    assert_eq!(opening(alice), Some(int(10000, "i64")));
    assert_eq!(opening(bob), Some(int(2550, "i64")));
    assert_eq!(object(alice).type_name, "account::Account");

    let shown = carve()
        .args(["show", "--function", "account::Account::transfer", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(
        stdout(&shown).contains(&format!("self#{}: &Account", alice.0)),
        "{}",
        stdout(&shown)
    );
}

/// Records `c_basic MODE` and checks how the run ended and that finished calls survived.
fn ended_inside_a_call(mode: &str, code: i32, exit: ProcessExit) -> carve_storage::Trace {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let out = record(&db, &[], &c_basic_bin(), &[mode]);
    assert_eq!(out.status.code(), Some(code), "{}", stderr(&out));
    let trace = load(&db);
    assert_eq!(trace.run.end.clone().unwrap().exit, exit);
    let finished = calls_of(&trace, "sum_then_scale")[0];
    assert_eq!(finished.outcome, Outcome::Returned);
    assert_eq!(finished.ret, Some(int(100, "long int")));
    trace
}

#[test]
fn an_abort_inside_a_traced_call_keeps_the_trace_and_says_so() {
    let trace = ended_inside_a_call(
        "abort",
        128 + 6,
        ProcessExit::Signaled {
            signal: 6,
            name: "SIGABRT".into(),
        },
    );
    assert_eq!(
        calls_of(&trace, "end_inside")[0].outcome,
        Outcome::Unfinished
    );
}

#[test]
fn exit_called_inside_a_traced_call_ends_the_run_with_its_code() {
    let trace = ended_inside_a_call("exit", 3, ProcessExit::Exited { code: 3 });
    assert_eq!(
        calls_of(&trace, "end_inside")[0].outcome,
        Outcome::Unfinished
    );
    assert_eq!(calls_of(&trace, "main")[0].outcome, Outcome::Unfinished);
}

#[test]
fn a_sigkill_inside_a_traced_call_keeps_the_trace_and_says_so() {
    let trace = ended_inside_a_call(
        "kill",
        128 + 9,
        ProcessExit::Signaled {
            signal: 9,
            name: "SIGKILL".into(),
        },
    );
    assert_eq!(
        calls_of(&trace, "end_inside")[0].outcome,
        Outcome::Unfinished
    );
}

#[test]
fn a_program_that_closes_stdout_is_still_traced() {
    let trace = ended_inside_a_call("close", 0, ProcessExit::Exited { code: 0 });
    let last_add = calls_of(&trace, "add").into_iter().last().unwrap();
    assert_eq!(arg(last_add, "a"), &int(20, "int"));
    assert_eq!(last_add.ret, Some(int(42, "int")));
    assert_eq!(calls_of(&trace, "main")[0].outcome, Outcome::Returned);
}

#[test]
fn cyclic_and_huge_values_are_recorded_within_the_limits_and_marked() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = rustc_program(
        tmp.path(),
        "g",
        "2021",
        r#"
use std::cell::RefCell;
use std::rc::Rc;
pub struct Node { pub id: u32, pub next: RefCell<Option<Rc<Node>>> }
#[inline(never)]
pub fn ring_len(start: &Rc<Node>) -> usize {
    let mut n = 1;
    let mut cur = start.next.borrow().clone().unwrap();
    while cur.id != start.id { n += 1; let nx = cur.next.borrow().clone().unwrap(); cur = nx; }
    n
}
#[inline(never)]
pub fn total(v: &[u64]) -> u64 { v.iter().sum() }
fn main() {
    let a = Rc::new(Node { id: 1, next: RefCell::new(None) });
    let b = Rc::new(Node { id: 2, next: RefCell::new(Some(a.clone())) });
    *a.next.borrow_mut() = Some(b.clone());
    println!("{}", ring_len(&a));
    let big: Vec<u64> = (0..1_000_000).collect();
    println!("{}", total(&big));
}
"#,
    );
    let db = tmp.path().join("t.db");
    let out = record(
        &db,
        &["--filter", "g::ring_len", "--filter", "g::total"],
        &bin,
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "2\n499999500000\n");
    let trace = load(&db);

    let total = calls_of(&trace, "g::total")[0];
    assert_eq!(total.ret, Some(uint(499999500000, "u64")));
    match arg(total, "v") {
        Value::Seq {
            elems, truncated, ..
        } => {
            assert!(*truncated, "a million elements are cut and marked");
            assert_eq!(elems.len(), 256);
        }
        other => panic!("the slice was recorded as {other:?}"),
    }
    // The ring a -> b -> a is followed only to the depth limit, and marked as not exact.
    let ring = calls_of(&trace, "g::ring_len")[0];
    assert_eq!(ring.ret, Some(uint(2, "usize")));
    assert!(!arg(ring, "start").is_exact());
}

/// Records a fixture's main with the default selection; returns what it printed and the trace.
fn record_fixture(name: &str) -> (String, carve_storage::Trace) {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let out = record(&db, &[], &fixture_bin(name), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    (stdout(&out), load(&db))
}

#[test]
fn abc_records_the_answer_through_both_trait_objects() {
    let (printed, trace) = record_fixture("abc");
    assert!(printed.contains("c.calls_b_with_a() = Ok(43)"), "{printed}");
    let call = calls_of(&trace, "abc::C::calls_b_with_a")[0];
    assert_eq!(
        call.ret.as_ref().map(|v| v.to_string()).as_deref(),
        Some("Ok(43)")
    );
    // The nested calls went through the trait objects to the concrete A and B.
    let kids: Vec<&str> = trace
        .children(Some(call.id))
        .map(|c| trace.function(c.function).unwrap().path.as_str())
        .collect();
    assert!(kids.contains(&"<abc::B as abc::Asker>::ask"), "{kids:?}");
}

#[test]
fn dao_records_the_user_and_the_sql_that_reached_the_connection() {
    let (printed, trace) = record_fixture("dao");
    assert!(
        printed.contains(
            r#"get_user_details("Gandhi") = User { name: "Gandhi", occupation: "politics" }"#
        ),
        "{printed}"
    );
    let call = calls_of(&trace, "dao::DataAccessObject::get_user_details")[0];
    assert_eq!(arg(call, "name"), &string("&str", "Gandhi"));
    assert_eq!(
        call.ret.as_ref().map(|v| v.to_string()).as_deref(),
        Some(r#"Ok(User { name: "Gandhi", occupation: "politics" })"#)
    );
    let prepare = trace
        .calls
        .iter()
        .find(|c| {
            c.parent == Some(call.id)
                && trace
                    .function(c.function)
                    .unwrap()
                    .path
                    .ends_with("::prepare")
        })
        .expect("prepare is called under get_user_details");
    assert_eq!(
        arg(prepare, "sql"),
        &string("&str", "SELECT name, occupation FROM people WHERE name = ?")
    );
}

#[test]
fn dice_records_the_rolls_the_program_printed() {
    let (printed, trace) = record_fixture("dice");
    let rolls: Vec<String> = printed
        .lines()
        .filter_map(|l| l.strip_prefix("roll -> "))
        .map(str::to_string)
        .collect();
    // roll_sum rolls too; the printed rolls are the first, direct ones.
    let recorded: Vec<String> = calls_of(&trace, "dice::Dice::roll")
        .iter()
        .take(rolls.len())
        .map(|c| c.ret.as_ref().unwrap().to_string())
        .collect();
    assert_eq!(recorded, rolls);
}

#[test]
fn ping_records_connectivity_across_a_child_process() {
    let (printed, trace) = record_fixture("ping");
    assert!(printed.contains("localhost: connected = true"), "{printed}");
    let connected: Vec<String> = calls_of(&trace, "ping::ConnectivityDetector::is_connected")
        .iter()
        .map(|c| c.ret.as_ref().unwrap().to_string())
        .collect();
    assert_eq!(connected, ["true", "false"]);
    assert_eq!(trace.run.end.unwrap().exit, ProcessExit::Exited { code: 0 });
}

#[test]
fn versioned_set_records_versions_as_field_effects_on_one_object() {
    let (printed, trace) = record_fixture("versioned_set");
    assert!(printed.contains("a.add(3) = true"), "{printed}");
    let adds = calls_of(&trace, "versioned_set::VersionedSet::add");
    let first = adds[0];
    assert_eq!(arg(first, "x"), &int(3, "i32"));
    assert_eq!(first.ret, Some(Value::Bool { value: true }));
    // a's version goes from 0 to 1 with its first add, and the next adds are on the same object.
    let version = |v: &Value| v.to_string();
    assert!(version(first.arg("self").unwrap()).contains("version: 0"));
    assert!(version(first.after("self").unwrap()).contains("version: 1"));
    assert_eq!(adds[1].object("self"), first.object("self"));
}

#[test]
fn follow_forks_records_a_forked_child_as_a_run_of_its_own() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let out = record(&db, &["--follow-forks"], &c_basic_bin(), &["fork"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("child: add(7, 8) = 15"));
    assert!(
        stderr(&out).contains("recorded forked child"),
        "{}",
        stderr(&out)
    );
    let store = carve_storage::Store::open(&db).unwrap();
    let runs = store.runs().unwrap();
    assert_eq!(runs.len(), 2, "the parent's run and the child's");
    let parent = store.load_trace(runs[0].id).unwrap();
    let child = store.load_trace(runs[1].id).unwrap();
    assert_ne!(parent.run.info.pid, child.run.info.pid);
    let adds = |t: &carve_storage::Trace| -> Vec<(Value, Option<Value>)> {
        calls_of(t, "add")
            .iter()
            .filter(|c| arg(c, "a") == &int(7, "int") || arg(c, "a") == &int(1, "int"))
            .map(|c| (arg(c, "a").clone(), c.ret.clone()))
            .collect()
    };
    assert_eq!(adds(&child), [(int(7, "int"), Some(int(15, "int")))]);
    assert_eq!(adds(&parent), [(int(1, "int"), Some(int(2, "int")))]);
    assert_eq!(child.run.end.unwrap().exit, ProcessExit::Exited { code: 0 });
}

#[test]
fn without_follow_forks_a_forked_child_runs_untraced_and_unharmed() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let out = record(&db, &[], &c_basic_bin(), &["fork"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("child: add(7, 8) = 15"));
    let store = carve_storage::Store::open(&db).unwrap();
    assert_eq!(store.runs().unwrap().len(), 1);
    let trace = load(&db);
    assert!(calls_of(&trace, "add")
        .iter()
        .all(|c| arg(c, "a") != &int(7, "int")));
}

/// `carve show` of a fresh recording of `fixture`.
fn shown(fixture: &str, extra: &[&str]) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let out = record(&db, extra, &fixture_bin(fixture), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let shown = carve().args(["show", "--db"]).arg(&db).output().unwrap();
    assert!(shown.status.success(), "{}", stderr(&shown));
    stdout(&shown)
}

#[test]
fn show_marks_a_panicking_call_with_its_message() {
    let text = shown("mouse", &[]);
    assert!(
        text.lines().any(|l| l
            .trim_start_matches(|c| c != ']')
            .contains("} !! panicked: not implemented: the question is not known yet")),
        "{text}"
    );
    assert!(
        text.contains("mouse::UltimateAnswer::question(self#"),
        "{text}"
    );
}

#[test]
fn show_nests_a_recursive_call_chain_by_depth() {
    let text = shown("expr", &["--filter", "expr::eval::Evaluator::eval"]);
    // eval calls itself: each level is indented two more spaces inside its caller's block.
    let depth_of = |l: &str| {
        l.split("] ")
            .nth(1)
            .map(|rest| rest.len() - rest.trim_start().len())
    };
    let evals: Vec<usize> = text
        .lines()
        .filter(|l| l.contains("expr::eval::Evaluator::eval("))
        .filter_map(depth_of)
        .collect();
    assert!(
        evals.contains(&0) && evals.contains(&2) && evals.contains(&4),
        "{text}"
    );
}

#[test]
fn show_attributes_calls_to_each_of_eight_threads() {
    let text = shown("threads", &["--filter", "threads::fib"]);
    let mut tids: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("threads::fib("))
        .filter_map(|l| l.split(']').next())
        .collect();
    tids.sort();
    tids.dedup();
    assert_eq!(tids.len(), 8, "{text}");
}

#[test]
fn hash_maps_sets_and_vec_deques_are_recorded_by_their_contents() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = rustc_program(
        tmp.path(),
        "hm",
        "2021",
        r#"
use std::collections::{HashMap, HashSet, VecDeque};
#[inline(never)]
pub fn count(m: &HashMap<String, u32>, s: &HashSet<u8>, q: &VecDeque<i32>) -> usize {
    m.len() + s.len() + q.len()
}
fn main() {
    let mut m = HashMap::new();
    m.insert("two".to_string(), 2u32);
    m.insert("one".to_string(), 1);
    let s: HashSet<u8> = [3, 1, 2].into_iter().collect();
    let mut q = VecDeque::with_capacity(4);
    q.push_back(1);
    q.push_back(2);
    q.push_front(0);
    q.push_back(3);
    println!("{}", count(&m, &s, &q));
}
"#,
    );
    let db = tmp.path().join("t.db");
    let out = record(&db, &["--filter", "hm::count"], &bin, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let trace = load(&db);
    let call = calls_of(&trace, "hm::count")[0];
    let shown = |name: &str| match arg(call, name) {
        Value::Ref { target, .. } => target.to_string(),
        other => panic!("{name} recorded as {other:?}"),
    };
    // Entries sorted, so the same contents always read the same (hash order is per process).
    assert_eq!(shown("m"), r#"[("one", 1), ("two", 2)]"#);
    assert_eq!(shown("s"), "[1, 2, 3]");
    // The ring buffer in logical order, not storage order.
    assert_eq!(shown("q"), "[0, 1, 2, 3]");
    assert_eq!(call.ret, Some(uint(9, "usize")));
}

#[test]
fn btree_maps_and_sets_are_recorded_in_key_order_across_node_levels() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = rustc_program(
        tmp.path(),
        "bt",
        "2021",
        r#"
use std::collections::{BTreeMap, BTreeSet};
#[inline(never)]
pub fn size(m: &BTreeMap<u32, String>, s: &BTreeSet<i64>) -> usize { m.len() + s.len() }
fn main() {
    // 30 entries: more than one node (11 keys each), so internal nodes are walked too.
    let m: BTreeMap<u32, String> = (1..=30).rev().map(|i| (i * 10, format!("w{i}"))).collect();
    let s: BTreeSet<i64> = [5, -3, 9].into_iter().collect();
    println!("{}", size(&m, &s));
}
"#,
    );
    let db = tmp.path().join("t.db");
    let out = record(&db, &["--filter", "bt::size"], &bin, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let trace = load(&db);
    let call = calls_of(&trace, "bt::size")[0];
    let target = |name: &str| match arg(call, name) {
        Value::Ref { target, .. } => (**target).clone(),
        other => panic!("{name} recorded as {other:?}"),
    };
    let Value::Seq {
        elems, truncated, ..
    } = target("m")
    else {
        panic!("the map is a sequence of entries");
    };
    assert!(!truncated);
    let keys: Vec<String> = elems
        .iter()
        .map(|e| match e {
            Value::Tuple { elems, .. } => elems[0].to_string(),
            other => panic!("entry {other:?}"),
        })
        .collect();
    let expected: Vec<String> = (1..=30).map(|i| (i * 10).to_string()).collect();
    assert_eq!(keys, expected);
    assert_eq!(elems[0].to_string(), r#"(10, "w1")"#);
    assert_eq!(target("s").to_string(), "[-3, 5, 9]");
}

#[test]
fn panics_outside_panic_fmt_keep_their_message_too() {
    let tmp = tempfile::tempdir().unwrap();
    // Edition 2015: panic!("literal") goes through begin_panic::<&str>, not panic_fmt.
    let bin = rustc_program(
        tmp.path(),
        "p",
        "2015",
        r#"
#[inline(never)] pub fn literal() -> u8 { panic!("it is 2015 here") }
#[inline(never)] pub fn any() -> u8 { std::panic::panic_any("a payload of any kind") }
fn main() {
    std::panic::set_hook(Box::new(|_| {}));
    let _ = std::panic::catch_unwind(|| literal());
    let _ = std::panic::catch_unwind(|| any());
}
"#,
    );
    let db = tmp.path().join("t.db");
    let out = record(
        &db,
        &["--filter", "p::literal", "--filter", "p::any"],
        &bin,
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let trace = load(&db);
    let message = |f: &str| match &calls_of(&trace, f)[0].outcome {
        Outcome::Panicked { message } => message.clone(),
        other => panic!("{f} ended {other:?}"),
    };
    assert_eq!(message("p::literal").as_deref(), Some("it is 2015 here"));
    assert_eq!(message("p::any").as_deref(), Some("a payload of any kind"));
}

/// `next_token` opens with `while let Some(c) = self.peek()`: the loop jumps back to the very
/// instruction the entry breakpoint sits on. Those jumps are not calls.
#[test]
fn a_loop_at_the_top_of_a_function_is_not_taken_for_new_calls() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let out = record(&db, &[], &fixture_bin("expr"), &["1 + 2"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let trace = load(&db);
    let tokenize = calls_of(&trace, "expr::lexer::Lexer::tokenize")[0];
    let next: Vec<_> = calls_of(&trace, "expr::lexer::Lexer::next_token")
        .into_iter()
        .filter(|c| c.parent == Some(tokenize.id))
        .collect();
    // "1", "+", "2", then the end: the spaces are skipped inside the calls that read past them.
    assert_eq!(next.len(), 4, "{next:#?}");
    assert!(next.iter().all(|c| c.outcome == Outcome::Returned));
    let pos_before: Vec<u128> = next
        .iter()
        .map(|c| match arg(c, "self") {
            Value::Ref { target, .. } => match target.as_ref() {
                Value::Struct { fields, .. } => {
                    match &fields.iter().find(|f| f.name == "pos").unwrap().value {
                        Value::Uint { value, .. } => *value,
                        other => panic!("pos: {other:?}"),
                    }
                }
                other => panic!("self: {other:?}"),
            },
            other => panic!("self: {other:?}"),
        })
        .collect();
    assert_eq!(pos_before, [0, 1, 3, 5]);
}

/// `carve record --db DB -- pauses ARGS...` with stdin, stdout and stderr piped.
fn record_pauses(db: &std::path::Path, args: &[&str]) -> std::process::Child {
    record_pauses_with(db, &[], args)
}

/// [`record_pauses`] with carve options `flags`.
fn record_pauses_with(db: &std::path::Path, flags: &[&str], args: &[&str]) -> std::process::Child {
    use std::process::Stdio;
    carve()
        .arg("record")
        .arg("--db")
        .arg(db)
        .args(flags)
        .arg("--")
        .arg(fixture_bin("pauses"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("carve runs")
}

fn read_line(from: &mut impl std::io::BufRead) -> String {
    let mut line = String::new();
    from.read_line(&mut line).expect("a line");
    line
}

fn signal_carve(child: &std::process::Child, signal: nix::sys::signal::Signal) {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), signal).unwrap();
}

#[test]
fn sigterm_to_carve_reaches_the_program_and_the_run_is_closed_with_every_call() {
    use std::io::BufReader;
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let mut carve = record_pauses(&db, &["steps", "1000", "5"]);
    let mut out = BufReader::new(carve.stdout.take().unwrap());
    // The program did its 1000 steps and now waits on stdin (kept open) inside `main`.
    assert!(read_line(&mut out).starts_with("ready"));
    // Kept open until carve has ended: `wait_with_output` would close it at once, and a program
    // reading the end of its input before the forwarded SIGTERM reaches it exits 0 (seen on a
    // loaded machine: carve's handler ran after the close).
    let stdin = carve.stdin.take();
    signal_carve(&carve, nix::sys::signal::Signal::SIGTERM);
    let done = carve.wait_with_output().unwrap();
    drop(stdin);
    let err = stderr(&done);
    assert_eq!(done.status.code(), Some(128 + 15), "{err}");
    assert!(err.contains("killed by SIGTERM"), "{err}");

    let trace = load(&db);
    match &trace.run.end.as_ref().expect("the run was closed").exit {
        ProcessExit::Signaled { signal, .. } => assert_eq!(*signal, 15),
        other => panic!("expected SIGTERM, got {other:?}"),
    }
    let steps = calls_of(&trace, "pauses::step");
    assert_eq!(steps.len(), 1000);
    assert!(steps.iter().all(|c| c.outcome == Outcome::Returned));
    let main = calls_of(&trace, "pauses::main");
    assert_eq!(main.len(), 1);
    assert_eq!(main[0].outcome, Outcome::Unfinished);
    let conn = rusqlite::Connection::open(&db).unwrap();
    let (threads, exited): (i64, i64) = conn
        .query_row(
            "SELECT count(*), sum(exited) FROM threads WHERE run_id = ?1",
            [trace.run.id.0],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((threads, exited), (1, 1));
}

/// On the ptrace path: the program stops at every call, so it cannot run ahead of carve. With
/// the in-process capture (the default) it runs on between carve's death and its own, and the
/// ring's records not yet drained are lost too (docs/user-guide.md, "Durability").
#[test]
fn kill_9_of_carve_loses_at_most_the_documented_batch_of_calls() {
    use std::io::{BufRead, BufReader, Write};
    // docs/user-guide.md: "a kill -9 of carve loses at most the last 2,000 events".
    const BOUND: usize = 2000;
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let mut carve = record_pauses_with(
        &db,
        &["--capture", "ptrace"],
        &["steps", "0", "100000000", "echo"],
    );
    let mut out = BufReader::new(carve.stdout.take().unwrap());
    assert!(read_line(&mut out).starts_with("ready"));
    carve.stdin.take().unwrap().write_all(b"go\n").unwrap();
    // Every 256 steps the program prints how many it finished: the last number printed is a
    // lower bound of the steps it did.
    let mut finished = 0usize;
    let mut lines = out.lines();
    while finished < 200_000 {
        finished = lines
            .next()
            .expect("the program runs")
            .unwrap()
            .parse()
            .unwrap();
    }
    carve.kill().unwrap(); // SIGKILL; the program dies with carve (PTRACE_O_EXITKILL)
    if let Some(last) = lines
        .map_while(Result::ok)
        .filter_map(|l| l.parse().ok())
        .last()
    {
        finished = last;
    }
    carve.wait().unwrap();

    let trace = load(&db);
    let recorded = calls_of(&trace, "pauses::step").len();
    assert!(
        finished <= recorded + BOUND,
        "the program finished {finished} steps, the trace holds {recorded}: {} lost",
        finished - recorded
    );
}

#[test]
fn another_process_holding_the_write_lock_pauses_the_recording_and_loses_no_call() {
    use std::io::{BufRead, BufReader, Write};
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let mut carve = record_pauses(&db, &["steps", "1000", "20000"]);
    let mut out = BufReader::new(carve.stdout.take().unwrap());
    assert!(read_line(&mut out).starts_with("ready"));
    // The run exists; another process takes the write lock, and the program goes on.
    let other = rusqlite::Connection::open(&db).unwrap();
    other
        .busy_timeout(std::time::Duration::from_secs(60))
        .unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    carve.stdin.take().unwrap().write_all(b"go\n").unwrap();
    let mut err = BufReader::new(carve.stderr.take().unwrap());
    let mut first = read_line(&mut err);
    if first.contains("captured in process") {
        // `step` is in process, `main` is not: carve says so before the program runs.
        first = read_line(&mut err);
    }
    assert!(
        first.contains("waiting for another process to release its write lock")
            && first.contains(&db.display().to_string()),
        "{first}"
    );
    // Only once carve said it waits is the lock given back.
    other.execute_batch("COMMIT").unwrap();
    let rest: Vec<String> = err.lines().map_while(Result::ok).collect();
    let status = carve.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{rest:?}");
    assert_eq!(rest.len(), 1, "one summary line after the notice: {rest:?}");
    assert!(rest[0].starts_with("carve: recorded"), "{rest:?}");
    assert!(read_line(&mut out).starts_with("done"));

    let trace = load(&db);
    let steps = calls_of(&trace, "pauses::step");
    assert_eq!(steps.len(), 21_000);
    assert!(steps.iter().all(|c| c.outcome == Outcome::Returned));
    assert!(steps.iter().all(|c| c.ret.is_some()));
    assert_eq!(
        calls_of(&trace, "pauses::main")[0].outcome,
        Outcome::Returned
    );
}

#[test]
fn process_exit_while_other_threads_are_inside_traced_calls_leaves_them_unfinished() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    let out = record(
        &db,
        &[],
        &fixture_bin("pauses"),
        &["exit-while-holding", "3"],
    );
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let trace = load(&db);
    let holds = calls_of(&trace, "pauses::hold");
    assert_eq!(holds.len(), 3);
    for call in holds {
        assert_eq!(call.outcome, Outcome::Unfinished, "{call:?}");
    }
}

/// A trace that grows past `--size-warning` says so while the program runs, naming the function
/// that fills it and the options that record less; a small trace says nothing.
#[test]
fn a_growing_trace_names_its_hottest_function_and_how_to_record_fewer() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("t.db");
    // 100,000 calls of `mix` store ~20 MB: past 1 MB, and several doublings after it.
    let out = record(
        &db,
        &["--size-warning", "1"],
        &fixture_bin("hotloop"),
        &["100000"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("has grown to")).collect();
    assert!(!warnings.is_empty(), "{err}");
    for w in &warnings {
        assert!(w.contains("calls of `hotloop::mix`"), "{err}");
        assert!(w.contains("--max-calls-per-function N"), "{err}");
        assert!(w.contains("--exclude 'hotloop::mix'"), "{err}");
    }
    // One warning per doubling: each size lies in a higher power-of-two band than the last.
    let sizes: Vec<u64> = warnings
        .iter()
        .map(|w| {
            let mb = w.split("has grown to ").nth(1).unwrap();
            mb.split(' ').next().unwrap().parse().unwrap()
        })
        .collect();
    let bands: Vec<u32> = sizes.iter().map(|mb| mb.ilog2()).collect();
    assert!(bands.windows(2).all(|p| p[1] > p[0]), "{sizes:?}");

    let small = tmp.path().join("small.db");
    let out = record(&small, &[], &fixture_bin("hotloop"), &["1000"]);
    assert!(!stderr(&out).contains("has grown to"), "{}", stderr(&out));
}

/// A function passed as a generic argument is a zero-sized function item, which DWARF types as
/// a pointer to its signature (`fn(u32) -> u32`): the bytes beside it are no value of it. The
/// function is the one the instance's call shim for that signature calls (`recorder/src/dwarf/
/// fn_items.rs`), in both capture modes; an instance that never calls its item has no such
/// shim, and the item is recorded as not read. A real function pointer keeps its address.
#[test]
fn a_function_item_argument_is_named_by_what_its_instance_calls_and_a_function_pointer_is_read() {
    const LIB: &str = r#"
pub fn double(x: u32) -> u32 {
    x * 2
}

pub fn apply_ptr(f: fn(u32) -> u32, x: u32) -> u32 {
    f(x)
}

pub fn apply_item<F: Fn(u32) -> u32>(f: F, x: u32) -> u32 {
    f(x)
}

pub fn hold_item<F: Fn(u32) -> u32>(f: F) -> usize {
    std::mem::size_of_val(&f)
}
"#;
    const MAIN: &str = r#"
fn main() {
    println!("{} {}", fnitem::apply_ptr(fnitem::double, 3), fnitem::apply_item(fnitem::double, 4));
    println!("{}", fnitem::hold_item(fnitem::double));
}
"#;
    let c = record_small_crate("fnitem", LIB, MAIN, &["--filter", "fnitem::*"]);
    for capture in ["inprocess", "ptrace"] {
        let db = c.tmp.path().join(format!("{capture}.db"));
        let out = record(
            &db,
            &["--filter", "fnitem::*", "--capture", capture],
            &c.dir.join("target/debug/fnitem"),
            &[],
        );
        assert!(out.status.success(), "{}", stderr(&out));
        let shown = stdout(&output_within(
            carve().args(["show", "--db"]).arg(&db),
            RECORD_LIMIT,
        ));
        let line = |f: &str| -> String {
            shown
                .lines()
                .find(|l| l.contains(f))
                .unwrap_or_else(|| panic!("{f} in {shown}"))
                .to_string()
        };
        assert!(
            line("fnitem::apply_ptr(").contains("f: 0x"),
            "{capture}: {shown}"
        );
        assert!(
            line("fnitem::apply_item(").contains("f: fnitem::double, x: 4"),
            "{capture}: {shown}"
        );
        assert!(
            line("fnitem::hold_item(")
                .contains("unavailable (a zero-sized function item: no bytes name the function)"),
            "{capture}: {shown}"
        );
    }
}

/// A selected function every call of which the compiler inlined (`#[inline(always)]`, inlined
/// even in a debug build) has no code of its own to stop in: `carve record` says so, naming it,
/// and names no function that has code of its own.
#[test]
fn a_selected_function_only_inlined_into_its_callers_is_named_as_such() {
    const LIB: &str = r#"
pub struct Size(pub u64);

impl Size {
    #[inline(always)]
    pub fn as_kib(&self) -> u64 {
        self.0 / 1024
    }

    pub fn bytes(&self) -> u64 {
        self.0
    }
}
"#;
    const MAIN: &str = r#"
fn main() {
    let s = inlined::Size(4096);
    println!("{} {}", s.as_kib(), s.bytes());
}
"#;
    let c = record_small_crate("inlined", LIB, MAIN, &["--filter", "inlined::*"]);
    let said = stderr(&c.recorded);
    assert!(c.recorded.status.success(), "{said}");
    assert!(
        said.contains(
            "carve: 1 selected function is only inlined into its callers in this program \
             (`inlined::Size::as_kib`): the recorder cannot stop in it, so no call of it is \
             recorded or carved"
        ),
        "{said}"
    );
    let trace = load(&c.db);
    let paths: Vec<&str> = trace.functions.iter().map(|f| f.path.as_str()).collect();
    assert!(paths.contains(&"inlined::Size::bytes"), "{paths:?}");
    assert!(!paths.iter().any(|p| p.contains("as_kib")), "{paths:?}");
}

const PROBED_LIB: &str = r#"
/// One of ten thousand squares, from a table the function builds on its stack: a frame over
/// a page, which a debug build probes page by page before its prologue spills `i`.
pub fn square_at(i: usize) -> u64 {
    let mut table = [0u64; 10_000];
    for (n, slot) in table.iter_mut().enumerate() {
        *slot = (n * n) as u64;
    }
    table[i % 10_000]
}
"#;

const PROBED_MAIN: &str = r#"fn main() {
    println!("{}", probed::square_at(615));
}
"#;

/// The breakpoint of a function whose frame is probed page by page was the probe's loop (the
/// second line row, of line 0): it stopped there once per page, before the prologue spilled the
/// argument, and `i` was read as a return address (pulldown-cmark's `get_entity::{{closure}}`).
/// It is now the next row of a line: one call, its argument as given.
#[test]
fn an_argument_of_a_function_whose_frame_is_probed_page_by_page_is_read_after_its_spill() {
    let c = record_small_crate("probed", PROBED_LIB, PROBED_MAIN, &[]);
    assert!(c.recorded.status.success(), "{}", stderr(&c.recorded));
    let trace = load(&c.db);
    let calls = calls_of(&trace, "probed::square_at");
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(arg(calls[0], "i"), &uint(615, "usize"), "{calls:?}");
    assert_eq!(calls[0].ret, Some(uint(378_225, "u64")), "{calls:?}");
}
