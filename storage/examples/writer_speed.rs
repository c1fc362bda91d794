//! How much CPU the background writer spends per stored call, alone (no recorder, no program):
//! the calls of bench/recorder.sh's hot loop (`hotloop::mix(n: u64, s: &str) -> u64`), leaf
//! calls sent as start then end, through `Store::begin_run` and `RunWriter`.
//!
//! Usage: `cargo run --release -p carve-storage --example writer_speed -- [CALLS] [DB]`
//! (defaults 100000 and a temporary file). Prints the process's CPU time (user + system, every
//! thread) and wall time per call; the sending thread's share is building the events.

use std::path::PathBuf;
use std::time::Instant;

use carve_storage::*;

/// CPU time of the whole process (every thread), user + system, in seconds.
fn cpu_seconds() -> f64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage fills the struct it is given; zeroed is a valid rusage.
    let usage = unsafe {
        libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr());
        usage.assume_init()
    };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    t(usage.ru_utime) + t(usage.ru_stime)
}

const WORDS: [&str; 4] = ["alpha", "beta", "gamma", "delta"];

fn main() {
    let mut args = std::env::args().skip(1);
    let calls: u64 = args.next().map_or(100_000, |a| a.parse().expect("CALLS"));
    let dir = tempfile::tempdir().expect("temp dir");
    let db = args
        .next()
        .map_or_else(|| dir.path().join("trace.db"), PathBuf::from);
    let store = Store::create(&db).expect("store");
    let info = RunInfo {
        program: "/bench/hotloop".to_owned(),
        args: vec![calls.to_string()],
        cwd: "/bench".to_owned(),
        pid: 1,
        started_at_ms: 0,
        filters: vec!["hotloop::mix".to_owned()],
        excludes: Vec::new(),
        crates: Vec::new(),
        carve_version: "bench".to_owned(),
        distinct_calls: false,
        features: Vec::new(),
    };
    let mut writer = store.begin_run(&info).expect("run");
    writer.record(TraceEvent::Functions(vec![FunctionInfo {
        id: FunctionId(1),
        path: "hotloop::mix".to_owned(),
        name: "mix".to_owned(),
        linkage_name: Some("_ZN7hotloop3mix17h0123456789abcdefE".to_owned()),
        language: Language::Rust,
        decl_file: Some("/bench/hotloop/src/lib.rs".to_owned()),
        decl_line: Some(7),
        low_pc: 0x1000,
        params: vec![
            ParamInfo {
                name: "n".to_owned(),
                type_name: "u64".to_owned(),
            },
            ParamInfo {
                name: "s".to_owned(),
                type_name: "&str".to_owned(),
            },
        ],
        return_type: Some("u64".to_owned()),
    }]));
    let (cpu0, wall0) = (cpu_seconds(), Instant::now());
    for n in 0..calls {
        let call = CallId(n + 1);
        writer.record(TraceEvent::CallStarted(CallStart {
            call,
            parent: None,
            function: FunctionId(1),
            thread: 4242,
            depth: 0,
            args: vec![
                Arg {
                    name: "n".to_owned(),
                    value: Value::Uint {
                        ty: "u64".to_owned(),
                        value: u128::from(n),
                    },
                },
                Arg {
                    name: "s".to_owned(),
                    value: Value::Str {
                        ty: "&str".to_owned(),
                        value: WORDS[(n % 4) as usize].to_owned(),
                        truncated: false,
                    },
                },
            ],
            objects: Vec::new(),
            at_ns: Some(1000 * n),
        }));
        writer.record(TraceEvent::CallEnded(CallEnd {
            call,
            outcome: Outcome::Returned,
            ret: Some(Value::Uint {
                ty: "u64".to_owned(),
                value: u128::from(n.wrapping_mul(0x9e37_79b9_7f4a_7c15)),
            }),
            after: Vec::new(),
            touches: Vec::new(),
            at_ns: Some(1000 * n + 500),
        }));
    }
    writer.finish().expect("finish");
    let (cpu, wall) = (cpu_seconds() - cpu0, wall0.elapsed().as_secs_f64());
    println!(
        "calls={calls} cpu_us_per_call={:.3} wall_us_per_call={:.3}",
        cpu * 1e6 / calls as f64,
        wall * 1e6 / calls as f64
    );
}
