//! A recording refused before its program runs (here: a value it cannot force) leaves no
//! process behind. It left the program stopped under ptrace for as long as carve ran: distilling
//! runs each test again with forced values, and a refused force kept one stopped test binary
//! per run until `generate` ended.

use std::process::Command;

use carve_recorder::{ForcedValue, Program, RecordOptions, Recording};
use nix::errno::Errno;
use nix::sys::signal::kill;
use nix::unistd::Pid;

#[test]
fn a_recording_refused_before_the_program_runs_kills_the_program() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("answer.c");
    std::fs::write(
        &src,
        "int answer(void) { return 42; }\nint main(void) { return answer() == 42 ? 0 : 1; }\n",
    )
    .unwrap();
    let exe = dir.path().join("answer");
    let built = Command::new("cc")
        .args(["-g", "-O0", "-o"])
        .arg(&exe)
        .arg(&src)
        .status()
        .expect("cc runs");
    assert!(built.success(), "cc answer.c");
    // carve forces Rust functions only: `answer` is C, so the run is refused before it starts.
    let options = RecordOptions {
        force_returns: vec![("answer".into(), ForcedValue::Bool(true))],
        ..RecordOptions::default()
    };
    let recording = Recording::spawn(Program::load(&exe).unwrap(), &[], options).unwrap();
    let pid = Pid::from_raw(recording.pid());
    let refused = recording.run(&mut ()).unwrap_err();
    assert!(refused.to_string().contains("answer"), "{refused}");
    assert_eq!(
        kill(pid, None),
        Err(Errno::ESRCH),
        "the program is still there"
    );
}
