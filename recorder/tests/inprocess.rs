//! The in-process capture path's first layer (issue 15): real programs, patched in process,
//! their records checked against what the program itself computes.

use std::path::{Path, PathBuf};
use std::process::Command;

use carve_recorder::Sharing;

fn build_hotloop(dir: &Path, opt: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/hotloop.c");
    let exe = dir.join(format!("hotloop{opt}"));
    let status = Command::new("cc")
        .args(["-g", opt, "-o"])
        .arg(&exe)
        .arg(&src)
        .status()
        .expect("cc runs");
    assert!(status.success(), "cc {opt} bench/hotloop.c");
    exe
}

/// The checksum line hotloop prints: the wrapping sum of every `mix` return value.
fn checksum(output: &str) -> u64 {
    let line = output
        .lines()
        .find_map(|l| l.strip_prefix("checksum = 0x"))
        .expect("a checksum line");
    u64::from_str_radix(line.trim(), 16).unwrap()
}

fn probe_hotloop(opt: &str, calls: u64, ring: u64, sharing: Sharing) {
    let dir = tempfile::tempdir().unwrap();
    let exe = build_hotloop(dir.path(), opt);
    let native = Command::new(&exe).arg(calls.to_string()).output().unwrap();
    let out = dir.path().join("out.txt");
    let run = carve_recorder::probe_with(
        &exe,
        &[calls.to_string().into()],
        &["mix"],
        Some(&out),
        ring,
        sharing,
    )
    .expect("probe runs");
    assert_eq!(
        run.ring_shared,
        sharing == Sharing::Shared,
        "the ring is read as asked ({sharing:?})"
    );
    let printed = std::fs::read_to_string(&out).unwrap();
    // The program's behaviour is unchanged.
    assert_eq!(run.exit_code, 0);
    assert_eq!(
        printed.as_bytes(),
        native.stdout.as_slice(),
        "same output as a native run"
    );
    assert!(
        run.refused.is_empty(),
        "mix patched in process: {:?}",
        run.refused
    );
    assert_eq!(run.patched, vec!["mix".to_string()]);
    let entries: Vec<_> = run.records.iter().filter(|r| r.entry).collect();
    let exits: Vec<_> = run.records.iter().filter(|r| !r.entry).collect();
    assert_eq!(entries.len() as u64, calls, "one entry record per call");
    assert_eq!(exits.len() as u64, calls, "one exit record per call");
    // Calls alternate entry/exit (mix calls nothing traced) and carry the loop counter.
    for (i, pair) in run.records.chunks(2).enumerate() {
        assert!(pair[0].entry && !pair[1].entry, "record pair {i}: {pair:?}");
        assert_eq!(
            pair[0].args[0], i as u64,
            "mix's first argument is the loop counter"
        );
        assert_eq!(pair[0].thread, pair[1].thread);
    }
    let sum = exits.iter().fold(0u64, |s, r| s.wrapping_add(r.ret[0]));
    assert_eq!(
        sum,
        checksum(&printed),
        "the return values add up to the program's checksum"
    );
}

#[test]
fn every_call_of_an_unoptimized_c_function_is_captured_in_process_with_its_arguments_and_result() {
    // 20,000 calls = 40,000 records of 192 bytes (registers only: `mix` takes a C pointer,
    // which is never followed in process) through a 512 KiB ring: writers wait for the
    // drainer and the ring wraps many times. The ring is shared with carve, read in place.
    probe_hotloop("-O0", 20000, 1 << 19, Sharing::Shared);
}

#[test]
fn a_ring_the_program_keeps_private_is_read_through_system_calls_to_the_same_records() {
    // What carve falls back to when the program cannot share the ring (no memfd_create, say).
    probe_hotloop("-O0", 20000, 1 << 19, Sharing::Private);
}

#[test]
fn a_function_whose_ret_is_a_branch_target_keeps_the_ptrace_path_and_runs_unchanged() {
    // At -O2, `mix`'s loop exits straight onto its one-byte `ret`: no 5-byte patch fits there.
    let dir = tempfile::tempdir().unwrap();
    let exe = build_hotloop(dir.path(), "-O2");
    let native = Command::new(&exe).arg("50").output().unwrap();
    let out = dir.path().join("out.txt");
    let run = carve_recorder::probe(&exe, &["50".into()], &["mix"], Some(&out), 1 << 19).unwrap();
    assert_eq!(
        run.refused,
        vec![(
            "mix".to_string(),
            "a ret preceded by a branch within 5 bytes"
        )]
    );
    assert!(run.records.is_empty() && run.patched.is_empty());
    assert_eq!(run.exit_code, 0);
    assert_eq!(std::fs::read(&out).unwrap(), native.stdout);
}

/// A Rust program whose functions take and return what capture programs copy: references,
/// `&str`, `&[T]`, `String`, `Vec`, structs holding them, `&mut self`, raw pointers (never
/// followed), values returned in registers and through the hidden pointer.
const VALUES: &str = r#"
pub struct Account { pub owner: String, pub balance: i64, pub history: Vec<i64> }
pub struct Point { pub x: f64, pub y: f64 }
impl Account {
    #[inline(never)] pub fn deposit(&mut self, amount: i64, note: &str) -> i64 {
        self.balance += amount; self.history.push(amount); self.owner.push_str(note); self.balance
    }
    #[inline(never)] pub fn owner(&self) -> &str { let n = self.balance; if n < 0 { "" } else { &self.owner } }
    #[inline(never)] pub fn summary(&self, sep: char) -> String { format!("{}{}{}", self.owner, sep, self.balance) }
}
#[inline(never)] pub fn total(xs: &[u64], scale: u64) -> u64 { let f = scale + 1; xs.iter().sum::<u64>() * (f - 1) }
#[inline(never)] pub fn greet(name: String, times: u32) -> String { let n = times as usize + 1; name.repeat(n - 1) }
#[inline(never)] pub fn raw(p: *const u8, n: usize) -> usize { let k = n + 1; p.is_null() as usize + k - 1 }
#[inline(never)] pub fn mid(a: &Point, b: Point) -> Point { Point { x: (a.x + b.x) / 2.0, y: (a.y + b.y) / 2.0 } }
#[inline(never)] pub fn longest<'a>(words: &Vec<&'a str>) -> &'a str { words.iter().copied().max_by_key(|w| w.len()).unwrap_or("") }
#[inline(never)] pub fn boxed(b: Box<u32>) -> u32 { *b + 1 }
fn main() {
    let mut acc = Account { owner: String::from("ada"), balance: 5, history: vec![5] };
    let mut out = 0i64;
    for i in 0..3 { out += acc.deposit(i * 10, "+"); }
    let o = acc.owner().len();
    let s = acc.summary(':');
    let t = total(&[1, 2, 3, 4], 3);
    let g = greet(String::from("ab"), 3);
    let r = raw(b"xyz".as_ptr(), 2);
    let m = mid(&Point { x: 1.0, y: 2.0 }, Point { x: 3.0, y: 6.0 });
    let words = vec!["a", "abc", "ab"];
    let l = longest(&words);
    let b = boxed(Box::new(41));
    println!("{out} {o} {s} {t} {g} {r} {} {} {l} {b}", m.x, m.y);
}
"#;

const VALUE_FUNCTIONS: [&str; 9] = [
    "deposit", "owner", "summary", "total", "greet", "raw", "mid", "longest", "boxed",
];

#[test]
fn values_captured_in_process_decode_to_what_the_ptrace_path_records_call_for_call() {
    use carve_storage::{TraceEvent, Value};
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("values.rs");
    std::fs::write(&src, VALUES).unwrap();
    let exe = dir.path().join("values");
    let status = Command::new("rustc")
        .args(["-g", "-C", "opt-level=0", "--edition", "2021", "-o"])
        .arg(&exe)
        .arg(&src)
        .status()
        .expect("rustc runs");
    assert!(status.success());
    let native = Command::new(&exe).output().unwrap();

    // The ptrace path.
    let program = carve_recorder::Program::load(&exe).unwrap();
    let options = carve_recorder::RecordOptions {
        selection: carve_recorder::Selection {
            filters: VALUE_FUNCTIONS.iter().map(|f| format!("*{f}")).collect(),
            ..Default::default()
        },
        output_to: Some(dir.path().join("ptrace.txt")),
        ..Default::default()
    };
    let mut events: Vec<TraceEvent> = Vec::new();
    carve_recorder::Recording::spawn(program, &[], options)
        .unwrap()
        .run(&mut events)
        .unwrap();
    let names: std::collections::HashMap<_, _> = events
        .iter()
        .filter_map(|e| match e {
            TraceEvent::Functions(fs) => Some(fs.iter().map(|f| (f.id, f.name.clone()))),
            _ => None,
        })
        .flatten()
        .collect();
    // (function name, entry?, values) in order, as the probe reports them.
    let mut ptrace: Vec<(String, bool, Vec<carve_storage::Arg>)> = Vec::new();
    let mut open = std::collections::HashMap::new();
    for e in &events {
        match e {
            TraceEvent::CallStarted(c) => {
                let name = names[&c.function].clone();
                open.insert(c.call, name.clone());
                ptrace.push((name, true, c.args.clone()));
            }
            TraceEvent::CallEnded(c) => {
                let mut values = Vec::new();
                if let Some(ret) = &c.ret {
                    values.push(carve_storage::Arg {
                        name: "return".into(),
                        value: ret.clone(),
                    });
                }
                values.extend(c.after.iter().cloned());
                ptrace.push((open[&c.call].clone(), false, values));
            }
            _ => {}
        }
    }

    // The in-process path.
    let out = dir.path().join("inprocess.txt");
    let run = carve_recorder::probe(&exe, &[], &VALUE_FUNCTIONS, Some(&out), 1 << 19).unwrap();
    assert_eq!(run.exit_code, 0);
    assert_eq!(
        std::fs::read(&out).unwrap(),
        native.stdout,
        "output unchanged"
    );
    // The site rule leaves some functions to the ptrace path (a `ret` right after a call, a
    // call right at the break address); the others are compared.
    assert!(
        run.patched.len() >= 6,
        "patched {:?}, refused {:?}",
        run.patched,
        run.refused
    );
    ptrace.retain(|(f, _, _)| run.patched.contains(f));
    // A `Vec<&str>` needs a copy per element (a loop): not covered, left to the ptrace path
    // with the others the programs do not cover.
    assert!(
        run.uncovered.contains(&(
            "longest".to_string(),
            "a sequence of values holding references"
        )),
        "{:?}",
        run.uncovered
    );
    let uncovered: Vec<String> = run.uncovered.iter().map(|(f, _)| f.clone()).collect();
    ptrace.retain(|(f, _, _)| !uncovered.contains(f));
    let inprocess: Vec<(String, bool, Vec<carve_storage::Arg>)> = run
        .records
        .iter()
        .filter(|r| !uncovered.iter().any(|f| f == VALUE_FUNCTIONS[r.function]))
        .map(|r| {
            (
                VALUE_FUNCTIONS[r.function].to_string(),
                r.entry,
                r.values.clone(),
            )
        })
        .collect();
    let ptrace_names: Vec<_> = ptrace.iter().map(|(f, e, _)| (f.as_str(), *e)).collect();
    let inprocess_names: Vec<_> = inprocess.iter().map(|(f, e, _)| (f.as_str(), *e)).collect();
    assert_eq!(
        inprocess_names, ptrace_names,
        "the same calls in the same order"
    );
    for (a, b) in inprocess.iter().zip(&ptrace) {
        assert_eq!(a, b, "same values");
    }
    // Something real was compared: strings behind references, a Vec's elements, a raw
    // pointer left as an address.
    let shown = format!("{inprocess:?}");
    for needle in ["ada+", "history"] {
        assert!(shown.contains(needle), "{needle} in {shown}");
    }
    assert!(
        !shown.contains("Unavailable"),
        "nothing marked not read: {shown}"
    );
    let compared: std::collections::BTreeSet<&str> =
        inprocess.iter().map(|(f, _, _)| f.as_str()).collect();
    assert!(compared.len() >= 5, "compared only {compared:?}");
    // The receiver after `deposit` (read before the frame is torn down) and a String returned
    // through the hidden pointer were among them.
    assert!(inprocess
        .iter()
        .any(|(f, entry, v)| f == "deposit" && !entry && v.iter().any(|a| a.name == "self")));
    assert!(inprocess.iter().any(|(f, entry, v)| f == "summary"
        && !entry
        && matches!(&v[0].value, Value::Str { value, .. } if value == "ada+++:35")));
}
