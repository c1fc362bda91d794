//! Distilling's value faults, run (`carve_generator`'s `distil/faults.rs` says which): one test
//! binary run per fault, with every test that asks for it named (`NAME... --exact
//! --test-threads=1`) and the fault's function forced by the recorder to answer the fault's
//! value at each call, as `carve assess` forces one. libtest's `test NAME ... FAILED` says
//! which tests detect it. A test that hangs past its own limit is killed and detects it, as
//! does the test running when the binary crashes; the tests after it run again without it.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use carve_generator::{libtest, Fault, FaultValue};
use carve_recorder::{ForcedValue, Program, RecordOptions, Recording, Selection};

/// A test to run with a fault, and how long it may run before it counts as hung.
pub(crate) type Timed = (String, Duration);

/// The faults each test detected, and how many runs that took: `asked` names, per fault, the
/// tests that ask for it. A fault the recorder refuses (its function not found, a value its
/// return type cannot take) is detected by none.
pub(crate) fn detected(
    program: &Program,
    asked: &BTreeMap<Fault, Vec<Timed>>,
) -> (BTreeMap<String, BTreeSet<Fault>>, usize) {
    let mut out: BTreeMap<String, BTreeSet<Fault>> = BTreeMap::new();
    let mut runs = 0;
    for (fault, tests) in asked {
        let mut left: Vec<Timed> = tests.clone();
        while !left.is_empty() {
            runs += 1;
            let Ok(output) = run_with(program, fault, &left) else {
                break;
            };
            let results = libtest::results(&output);
            // The test running when the binary was killed or crashed: it detects the fault.
            let running = carve_assess::running_test(&output);
            let mut unknown = Vec::new();
            let asked_now = left.len();
            for (test, limit) in left {
                let failed = match results.get(&test) {
                    Some(passed) => !passed,
                    None if running.as_deref() == Some(test.as_str()) => true,
                    None => {
                        unknown.push((test, limit));
                        continue;
                    }
                };
                if failed {
                    out.entry(test).or_default().insert(fault.clone());
                }
            }
            // Nothing told apart (the binary ran none of them): stop rather than loop.
            if running.is_none() && unknown.len() == asked_now {
                break;
            }
            left = unknown;
        }
    }
    (out, runs)
}

/// libtest's output of `tests` run with `fault` forced, the running test killed once it
/// passes its limit.
fn run_with(program: &Program, fault: &Fault, tests: &[Timed]) -> anyhow::Result<String> {
    let value = match fault.value {
        FaultValue::Bool(b) => ForcedValue::Bool(b),
        FaultValue::None => ForcedValue::None,
        FaultValue::Int { forced, .. } => ForcedValue::Int(forced),
        FaultValue::Empty => ForcedValue::Empty,
        FaultValue::OkUnit => ForcedValue::Ok(Box::new(ForcedValue::Unit)),
        FaultValue::Undone => ForcedValue::Unit,
    };
    let output = tempfile::NamedTempFile::new()?;
    let options = RecordOptions {
        selection: Selection {
            filters: vec![fault.function.clone()],
            excludes: Vec::new(),
            crates: Vec::new(),
            depth: 0,
        },
        force_returns: vec![(fault.function.clone(), value)],
        entries_only: true,
        output_to: Some(output.path().to_path_buf()),
        ..RecordOptions::default()
    };
    let mut args: Vec<OsString> = tests.iter().map(|(t, _)| t.into()).collect();
    args.extend(["--exact".into(), "--test-threads=1".into()]);
    let recording = Recording::spawn(program.clone(), &args, options)?;
    let pid = nix::unistd::Pid::from_raw(recording.pid());
    let limits: BTreeMap<String, Duration> = tests.iter().cloned().collect();
    let path = output.path().to_path_buf();
    let (done, wait) = mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        let mut current: Option<(String, Instant)> = None;
        while let Err(mpsc::RecvTimeoutError::Timeout) = wait.recv_timeout(POLL) {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let now = carve_assess::running_test(&text);
            if current.as_ref().map(|c| &c.0) != now.as_ref() {
                current = now.map(|t| (t, Instant::now()));
            }
            if let Some((test, since)) = &current {
                if limits
                    .get(test)
                    .is_some_and(|limit| since.elapsed() > *limit)
                {
                    let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
                    return;
                }
            }
        }
    });
    // A fault's run is judged by what libtest printed, not by what it records.
    let ran = recording.run(&mut ());
    let _ = done.send(());
    let _ = watchdog.join();
    let text = std::fs::read_to_string(output.path())?;
    // A run the recorder lost after the program started still says, in libtest's lines, how
    // far it got; one refused before it started says nothing.
    if ran.is_err() && text.is_empty() {
        ran?;
    }
    Ok(text)
}

/// How often the watchdog looks at which test is running.
const POLL: Duration = Duration::from_millis(50);
