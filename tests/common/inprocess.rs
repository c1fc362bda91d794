//! Helpers of the in-process differential check (issue 15): record a program through both
//! capture paths and compare the runs through `carve show --format json`
//! (tests/inprocess_record.rs, tests/inprocess_more_fixtures.rs).

use std::path::Path;

use serde_json::Value as Json;

use super::*;

/// Records `program args` with `--capture MODE`; returns carve's output and the run as JSON.
pub fn recorded(
    dir: &Path,
    mode: &str,
    program: &Path,
    args: &[&str],
    extra: &[&str],
) -> (std::process::Output, Json) {
    let db = dir.join(format!("{mode}.db"));
    // Every call stored: the two paths are compared call for call, repeats included.
    let mut flags = vec!["--capture", mode, "--all-calls"];
    flags.extend_from_slice(extra);
    let out = record(&db, &flags, program, args);
    let shown = output_within(
        carve().args(["show", "--format", "json", "--db"]).arg(&db),
        RECORD_LIMIT,
    );
    assert!(shown.status.success(), "carve show: {shown:?}");
    (out, serde_json::from_slice(&shown.stdout).unwrap())
}

/// The run's calls without what differs from run to run whatever the path (times, pids):
/// thread ids become their order of first appearance.
pub fn calls(run: &Json) -> Vec<Json> {
    fn strip(v: &Json, tids: &mut Vec<i64>) -> Json {
        match v {
            Json::Object(m) => Json::Object(
                m.iter()
                    .filter(|(k, _)| !k.ends_with("_ns"))
                    .map(|(k, v)| {
                        let v = if k == "thread" {
                            let t = v.as_i64().unwrap();
                            let i = tids.iter().position(|x| *x == t).unwrap_or_else(|| {
                                tids.push(t);
                                tids.len() - 1
                            });
                            Json::from(i)
                        } else {
                            strip(v, tids)
                        };
                        (k.clone(), v)
                    })
                    .collect(),
            ),
            Json::Array(a) => Json::Array(a.iter().map(|x| strip(x, tids)).collect()),
            other => other.clone(),
        }
    }
    let mut tids = Vec::new();
    run["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| strip(c, &mut tids))
        .collect()
}

/// The calls (as [`calls`] gives them) of the function whose path is `path`.
pub fn calls_of_fn(run: &Json, path: &str) -> Vec<Json> {
    let id = run["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == path)
        .unwrap_or_else(|| panic!("{path} was traced"))["id"]
        .clone();
    calls(run)
        .into_iter()
        .filter(|c| c["function"] == id)
        .collect()
}

/// How many functions `--capture inprocess` said it captures in process.
pub fn in_process_count(stderr: &[u8]) -> usize {
    let text = String::from_utf8_lossy(stderr);
    let line = text
        .lines()
        .find(|l| l.contains("captured in process"))
        .unwrap_or_else(|| panic!("no capture line in {text}"));
    line.trim_start_matches("carve: ")
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// Records fixture `fixture` with `args` through both paths and checks what must not differ
/// whatever the program's values: the exit code, the program's output, and that something was
/// captured in process. Returns the ptrace run's output and both runs as JSON.
pub fn both_paths(fixture: &str, args: &[&str]) -> (std::process::Output, Json, Json) {
    both_paths_of(fixture, &fixture_bin(fixture), args, |out| {
        String::from_utf8_lossy(out).into_owned()
    })
}

/// [`both_paths`] for any `program` (`label` names it in failures), whose output must be the
/// same through both paths once `output` has kept what stays the same from run to run.
pub fn both_paths_of(
    label: &str,
    program: &Path,
    args: &[&str],
    output: fn(&[u8]) -> String,
) -> (std::process::Output, Json, Json) {
    let dir = tempfile::tempdir().unwrap();
    let (p_out, p) = recorded(dir.path(), "ptrace", program, args, &[]);
    let (i_out, i) = recorded(dir.path(), "inprocess", program, args, &[]);
    assert_eq!(
        i_out.status.code(),
        p_out.status.code(),
        "{label}: exit code"
    );
    assert_eq!(
        output(&i_out.stdout),
        output(&p_out.stdout),
        "{label}: the program's output"
    );
    assert!(
        in_process_count(&i_out.stderr) > 0,
        "{label}: something was captured in process: {}",
        String::from_utf8_lossy(&i_out.stderr)
    );
    (p_out, p, i)
}

pub fn same_trace(fixture: &str, args: &[&str]) {
    let (_, p, i) = both_paths(fixture, args);
    assert_same_trace(fixture, &p, &i);
}

/// The two runs hold the same calls, call for call (times and pids aside), and the same
/// function table.
pub fn assert_same_trace(label: &str, p: &Json, i: &Json) {
    let (pc, ic) = (calls(p), calls(i));
    assert_eq!(pc.len(), ic.len(), "{label}: number of calls");
    for (n, (a, b)) in pc.iter().zip(&ic).enumerate() {
        assert_eq!(a, b, "{label}: call {n} differs");
    }
    assert_eq!(p["functions"], i["functions"], "{label}: function table");
}

/// Each call as (function path, depth, outcome, thread by order of appearance): what stays the
/// same between two recordings of a program whose values do not.
pub fn shape(run: &Json) -> Vec<(String, i64, String, usize)> {
    let paths: std::collections::HashMap<i64, String> = run["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["id"].as_i64().unwrap(),
                f["path"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let mut tids = Vec::new();
    run["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let t = c["thread"].as_i64().unwrap();
            let thread = tids.iter().position(|x| *x == t).unwrap_or_else(|| {
                tids.push(t);
                tids.len() - 1
            });
            (
                paths[&c["function"].as_i64().unwrap()].clone(),
                c["depth"].as_i64().unwrap(),
                c["outcome"]["kind"].as_str().unwrap().to_owned(),
                thread,
            )
        })
        .collect()
}
