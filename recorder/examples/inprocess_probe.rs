//! Benchmark helper for the in-process path's first layer (issue 15): runs PROGRAM ARGS with
//! FUNCTION patched in process and prints how many records were captured, how many drains it
//! took and the wall time. bench/recorder.sh compares it with the native run.
//!
//!     cargo run --release -p carve-recorder --example inprocess_probe -- FUNCTION PROGRAM [ARGS…]
//!
//! With `--sites PROGRAM CRATE`, prints instead how many of CRATE's functions in PROGRAM the
//! in-process path can patch, and why the others keep the ptrace path.
fn main() {
    let all: Vec<_> = std::env::args_os().skip(1).collect();
    if all.first().is_some_and(|a| a == "--sites") {
        sites(all[1..].to_vec());
        return;
    }
    let mut args = all.into_iter();
    let (Some(function), Some(program)) = (args.next(), args.next()) else {
        eprintln!("usage: inprocess_probe FUNCTION PROGRAM [ARGS...]");
        std::process::exit(2);
    };
    let rest: Vec<_> = args.collect();
    let function = function.to_string_lossy().into_owned();
    let start = std::time::Instant::now();
    let run = carve_recorder::probe(
        std::path::Path::new(&program),
        &rest,
        &[function.as_str()],
        Some(std::path::Path::new("/dev/null")),
        std::env::var("RING_BYTES")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(1 << 22),
    );
    let elapsed = start.elapsed();
    match run {
        Ok(run) => {
            let entries = run.records.iter().filter(|r| r.entry).count();
            println!(
                "records={} entries={} drains={} empty_polls={} refused={:?} exit={} seconds={:.6}",
                run.records.len(),
                entries,
                run.drains,
                run.empty_polls,
                run.refused,
                run.exit_code,
                elapsed.as_secs_f64()
            );
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}

fn sites(args: Vec<std::ffi::OsString>) {
    let [program, krate] = args.as_slice() else {
        eprintln!("usage: inprocess_probe --sites PROGRAM CRATE");
        std::process::exit(2);
    };
    let prefix = format!("{}::", krate.to_string_lossy());
    let verdicts = carve_recorder::patchable(std::path::Path::new(program), |f| {
        f.path.starts_with(&prefix) || f.path.contains(&format!("<{prefix}"))
    })
    .unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(1);
    });
    let mut reasons = std::collections::BTreeMap::<&str, usize>::new();
    for (_, v) in &verdicts {
        *reasons.entry(v.unwrap_or("patchable")).or_default() += 1;
    }
    let ok = reasons.get("patchable").copied().unwrap_or(0);
    if std::env::var_os("SITES_VERBOSE").is_some() {
        for (f, v) in &verdicts {
            if let Some(why) = v {
                println!("{f}: {why}");
            }
        }
    }
    println!(
        "functions={} patchable={ok} reasons={reasons:?}",
        verdicts.len()
    );
}
