//! The cargo commands verification runs and the files it rewrites: `cargo ARGS` in the crate
//! with a timeout and the caller's interrupt, both pipes read while it runs; a carved file read
//! back and written again (through a temporary file) as an edit changes it.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::error::GenerateError;
use crate::interrupt::Interrupt;
use crate::render::write;
use crate::verify::repair;

/// How to verify.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verify {
    /// The cargo to run (the CLI passes `$CARGO` or `cargo`).
    pub cargo: PathBuf,
    /// How many times each test file runs; a test must pass every time.
    pub runs: u32,
    /// Longest one `cargo test` of one file may take.
    pub timeout: Duration,
    /// Cargo features every command turns on beyond the crate's defaults. `generate` adds
    /// those the recorded program was built with ([`carve_storage::RunInfo::features`]).
    pub features: Vec<String>,
}

impl Verify {
    /// These settings, building with `features` too (each once, in order).
    pub fn with_features(&self, features: &[String]) -> Verify {
        let mut all: Vec<String> = self.features.iter().chain(features).cloned().collect();
        all.sort();
        all.dedup();
        Verify {
            features: all,
            ..self.clone()
        }
    }
}

/// Writes `file` again (through a temporary file) as `edit` changes its source; an edit that
/// fails is a bug in the generated code, named with the file.
pub(crate) fn rewrite(
    out_dir: &Path,
    file: &str,
    edit: impl FnOnce(&str) -> Result<String, String>,
) -> Result<(), GenerateError> {
    let source = read_back(out_dir, file)?;
    let repaired = edit(&source).map_err(|message| GenerateError::InvalidGeneratedCode {
        file: file.to_string(),
        message,
    })?;
    write::write_all(out_dir, &[(file.to_string(), repaired)])?;
    Ok(())
}

/// Writes `file` again (through a temporary file) without the top-level items in `names`.
pub(crate) fn rewrite_without(
    out_dir: &Path,
    file: &str,
    names: &BTreeSet<String>,
) -> Result<(), GenerateError> {
    rewrite(out_dir, file, |source| {
        let left = repair::remove_items(source, names)?;
        Ok(crate::render::hoist::without_unused_consts(&left))
    })
}

pub(crate) fn read_back(out_dir: &Path, file: &str) -> Result<String, GenerateError> {
    let path = out_dir.join(file);
    std::fs::read_to_string(&path).map_err(|source| GenerateError::Verify {
        what: format!("cannot read {} back", path.display()),
        source: Some(source),
    })
}

/// What one cargo command printed, and whether it succeeded.
pub(crate) struct CargoRun {
    pub(crate) success: bool,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// Runs `cargo ARGS` in `crate_dir`; `None` when it took longer than the timeout (it is killed).
/// When the caller interrupts generation, cargo is killed and the error says so.
pub(crate) fn run_cargo(
    crate_dir: &Path,
    args: &[&str],
    (v, interrupt): (&Verify, Interrupt),
) -> Result<Option<CargoRun>, GenerateError> {
    let features = v.features.join(",");
    let args: Vec<&str> = match args.split_first() {
        Some((sub, rest)) if !features.is_empty() => [*sub, "--features", &features]
            .into_iter()
            .chain(rest.iter().copied())
            .collect(),
        _ => args.to_vec(),
    };
    let command = format!("{} {}", v.cargo.display(), args.join(" "));
    let mut cargo = Command::new(&v.cargo);
    cargo.args(&args);
    run_in(crate_dir, cargo, &command, (v, interrupt))
}

/// Runs `program` (described as `command`) in `crate_dir` with both pipes read while it runs;
/// `None` when it took longer than `v.timeout` (it is killed). When the caller interrupts
/// generation, the program is killed and the error says so.
pub(crate) fn run_in(
    crate_dir: &Path,
    mut program: Command,
    command: &str,
    (v, interrupt): (&Verify, Interrupt),
) -> Result<Option<CargoRun>, GenerateError> {
    let mut child = program
        .current_dir(crate_dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| GenerateError::Verify {
            what: format!("cannot run {command} in {}", crate_dir.display()),
            source: Some(source),
        })?;
    // Read both pipes while waiting: a run printing more than a pipe holds would otherwise
    // block on its write and never exit.
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let start = Instant::now();
    let status = loop {
        if interrupt.is_set() {
            let _ = child.kill();
            let _ = child.wait();
            return Err(GenerateError::Interrupted {
                out_dir: crate_dir.to_path_buf(),
            });
        }
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() > v.timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Ok(None);
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(source) => {
                return Err(GenerateError::Verify {
                    what: format!("waiting for {command}"),
                    source: Some(source),
                })
            }
        }
    };
    // A Ctrl-C reaches cargo too: its failure then says nothing about the tests.
    if interrupt.is_set() {
        return Err(GenerateError::Interrupted {
            out_dir: crate_dir.to_path_buf(),
        });
    }
    Ok(Some(CargoRun {
        success: status.success(),
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    }))
}

/// Reads `pipe` to its end on a thread of its own, as text.
fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// `cargo test --no-run` of the carved file's test target `stem`, with the messages
/// verification reads (which tests failed to compile, and why).
pub(crate) fn build_args(stem: &str) -> [&str; 7] {
    [
        "test",
        "--no-run",
        "--test",
        stem,
        "--message-format=json",
        "--color",
        "never",
    ]
}

/// Each test target cargo built, with its executable, from `cargo test --no-run
/// --message-format=json`'s messages (`compiler-artifact` with an `executable`), in the
/// order cargo reported them.
pub fn test_executables(cargo_json: &str) -> Vec<(String, PathBuf)> {
    let mut found: Vec<(String, PathBuf)> = Vec::new();
    for line in cargo_json.lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if message["reason"] != "compiler-artifact" {
            continue;
        }
        let (Some(name), Some(exe)) = (
            message["target"]["name"].as_str(),
            message["executable"].as_str(),
        ) else {
            continue;
        };
        if !found.iter().any(|(n, _)| n == name) {
            found.push((name.to_string(), PathBuf::from(exe)));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_executable_is_the_one_built_for_the_target() {
        let json = concat!(
            r#"{"reason":"compiler-artifact","target":{"name":"url"},"executable":null}"#,
            "\n",
            r#"{"reason":"compiler-artifact","target":{"name":"carved_app"},"executable":"/t/debug/deps/carved_app-1f"}"#,
            "\n",
            r#"{"reason":"build-finished","success":true}"#,
        );
        let found = test_executables(json);
        let of = |stem: &str| {
            found
                .iter()
                .find(|(t, _)| t == stem)
                .map(|(_, e)| e.clone())
        };
        assert_eq!(
            of("carved_app"),
            Some(PathBuf::from("/t/debug/deps/carved_app-1f"))
        );
        assert_eq!(of("url"), None);
    }
}
