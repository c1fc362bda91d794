//! Runs sequences through a built harness: one long-lived process fed a batch at a time on
//! stdin, its answers read on a thread of their own (so a batch never blocks on a full pipe
//! and a sequence that hangs is noticed). A harness that dies or hangs (an abort, a stack
//! overflow, an endless loop) is taken down and started again; the sequence it was running
//! ends as `Crashed` and the rest of the batch runs in the new process.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Duration;

use serde::Serialize;

use crate::error::ExploreError;

/// What one call did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum CallOutcome {
    /// Returned; the result's `Debug` text when it has one, followed, for a call that wrote
    /// into buffers (`&mut [u8]`, `&mut String`), by each buffer's `Debug` text after the call,
    /// each after a [`BUFFER`].
    Returned(Option<String>),
    Panicked(String),
    /// Its receiver's slot was empty: the call could not be made.
    NoReceiver,
}

/// What separates a result's `Debug` text from its buffers' in [`CallOutcome::Returned`]: a
/// control character, which `Debug` never writes as it is (it escapes it in text).
pub const BUFFER: char = '\u{1f}';

/// A returned call's text as (the result's `Debug` text, each buffer's after the call).
pub fn with_buffers(text: &str) -> (&str, Vec<&str>) {
    let mut parts = text.split(BUFFER);
    let result = parts.next().unwrap_or_default();
    (result, parts.collect())
}

/// Why a sequence ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum End {
    Done,
    Panicked,
    NoReceiver,
    /// The state after the last call was reached before by another prefix.
    Redundant,
    /// Its next call would extend a prefix that ended before (panic, empty slot, redundant).
    Skipped,
    /// The harness died or hung in it (why).
    Crashed(String),
}

/// One sequence's answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SeqResult {
    pub calls: Vec<CallOutcome>,
    pub end: End,
    /// (call index, coverage guards it ran first in its harness process), for the calls
    /// that ran some.
    pub guards: Vec<(usize, Vec<u32>)>,
    /// (call index, comparison outcomes it met first in its harness process: site offset
    /// times four plus 0 below, 1 equal, 2 above), for the calls that met some.
    pub compares: Vec<(usize, Vec<u64>)>,
    /// What `Runner::final_states` asks for besides: the objects after the calls and each
    /// result's `Display` text.
    pub states: Final,
}

/// A sequence's objects after its calls and its results' `Display` texts, as
/// `Runner::final_states` answers them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Final {
    /// (object, slot, `Debug` text) of each filled slot.
    pub debug: Vec<(usize, u64, String)>,
    /// (object, slot, `Display` text) of each filled slot whose type has one.
    pub display: Vec<(usize, u64, String)>,
    /// (call index, `Display` text) of each result whose type has one.
    pub results: Vec<(usize, String)>,
    /// (call index, `Display` text of the error) of each `Err` result whose error type has one.
    pub errors: Vec<(usize, String)>,
    /// (object, slot, callable, `Debug` text of its result) of each getter of each filled
    /// slot (`Explorable::getters`).
    pub getters: Vec<(usize, u64, usize, String)>,
    /// What `Runner::operands` asks for: (call index, the operands of each comparison it
    /// made and of each switch's cases, flat: site, operand, operand (a switch's value
    /// first)), for the calls that made some.
    pub operands: Vec<(usize, Vec<u64>)>,
}

/// A running harness.
pub struct Runner {
    bin: PathBuf,
    /// The file `--crate-code` names to the harness (where the crate's own code is).
    crate_code: Option<PathBuf>,
    timeout: Duration,
    live: Option<Live>,
    /// Harness processes started (1 + restarts).
    pub started: u64,
}

struct Live {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Runner {
    /// `timeout`: the longest one sequence may run before it counts as hung.
    pub fn new(bin: &Path, timeout: Duration) -> Runner {
        Runner {
            bin: bin.to_path_buf(),
            crate_code: None,
            timeout,
            live: None,
            started: 0,
        }
    }

    /// Tells each harness process it starts where the crate's own code is (a file of
    /// `start end` lines, hex offsets): it stops tracing comparisons elsewhere.
    pub fn with_crate_code(mut self, file: Option<PathBuf>) -> Runner {
        self.crate_code = file;
        self
    }

    fn start(&mut self) -> Result<&mut Live, ExploreError> {
        if self.live.is_none() {
            let mut command = Command::new(&self.bin);
            if let Some(file) = &self.crate_code {
                command.arg("--crate-code").arg(file);
            }
            let mut child = command
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| ExploreError::io(format!("run {}", self.bin.display()), e))?;
            let stdin = child.stdin.take().ok_or_else(|| harness("no stdin"))?;
            let stdout = child.stdout.take().ok_or_else(|| harness("no stdout"))?;
            let (tx, lines) = mpsc::channel();
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
            self.started += 1;
            self.live = Some(Live {
                child,
                stdin,
                lines,
            });
        }
        self.live.as_mut().ok_or_else(|| harness("not started"))
    }

    /// Takes the harness down (killed if still running) and says how it ended.
    pub(crate) fn stop(&mut self) -> String {
        let Some(mut live) = self.live.take() else {
            return "not running".to_string();
        };
        let _ = live.child.kill();
        match live.child.wait() {
            Ok(status) => describe(status),
            Err(e) => format!("cannot be waited for: {e}"),
        }
    }

    /// Runs `seqs` (call numbers), in order, and gives each one's answers. When the harness
    /// dies or hangs, the sequences it had not answered run again one at a time, so the one
    /// that brings it down is found (answers are flushed per batch, not per sequence).
    pub fn run_batch(&mut self, seqs: &[Vec<u64>]) -> Result<Vec<SeqResult>, ExploreError> {
        self.run_as(seqs, "")
    }

    /// Runs `seqs` whole (no prefix is cut as dead or redundant) and answers, besides each
    /// call's outcome, every object's state after the last call.
    pub fn final_states(&mut self, seqs: &[Vec<u64>]) -> Result<Vec<SeqResult>, ExploreError> {
        self.run_as(seqs, "s")
    }

    /// [`Self::final_states`] of `seqs` in two fresh harness processes of `bin`, answer by
    /// answer: what differs between them (a hash map's order, an address) is not the crate's
    /// behaviour to assert.
    pub fn final_states_twice(
        bin: &Path,
        seqs: &[Vec<u64>],
    ) -> Result<Vec<(SeqResult, SeqResult)>, ExploreError> {
        let timeout = crate::search::SEQUENCE_TIMEOUT;
        let first = Runner::new(bin, timeout).final_states(seqs)?;
        let second = Runner::new(bin, timeout).final_states(seqs)?;
        Ok(first.into_iter().zip(second).collect())
    }

    /// Runs `seqs` whole and answers, besides each call's outcome, the operands of the
    /// comparisons each call made (`Final::operands`).
    pub fn operands(&mut self, seqs: &[Vec<u64>]) -> Result<Vec<SeqResult>, ExploreError> {
        self.run_as(seqs, "v")
    }

    /// `run_batch` with each input line starting with `mode`.
    fn run_as(&mut self, seqs: &[Vec<u64>], mode: &str) -> Result<Vec<SeqResult>, ExploreError> {
        let (mut results, failure) = self.send(seqs, mode)?;
        if failure.is_none() {
            return Ok(results);
        }
        self.stop();
        let mut culprit_found = false;
        while results.len() < seqs.len() {
            let at = results.len();
            if culprit_found {
                let (more, failure) = self.send(&seqs[at..], mode)?;
                results.extend(more);
                if failure.is_none() {
                    break;
                }
                self.stop();
                culprit_found = false;
                continue;
            }
            let (one, failure) = self.send(&seqs[at..=at], mode)?;
            match failure {
                None => results.extend(one),
                Some(why) => {
                    let how = self.stop();
                    results.push(SeqResult {
                        calls: Vec::new(),
                        end: End::Crashed(format!("{why}: {how}")),
                        guards: Vec::new(),
                        compares: Vec::new(),
                        states: Final::default(),
                    });
                    culprit_found = true;
                }
            }
        }
        Ok(results)
    }

    /// Sends `seqs` to the harness and reads its answers, until it stops answering (why).
    fn send(
        &mut self,
        seqs: &[Vec<u64>],
        mode: &str,
    ) -> Result<(Vec<SeqResult>, Option<String>), ExploreError> {
        let mut input = String::new();
        for s in seqs {
            input.push_str(mode);
            let words: Vec<String> = s.iter().map(u64::to_string).collect();
            input.push_str(&words.join(" "));
            input.push('\n');
        }
        let timeout = self.timeout;
        let live = self.start()?;
        let stdin = &mut live.stdin;
        let lines = &live.lines;
        let ((done, failure), broken) = std::thread::scope(|scope| {
            let writer = scope.spawn(move || stdin.write_all(input.as_bytes()).and(stdin.flush()));
            let read = read_answers(lines, seqs.len(), timeout);
            // A harness that died leaves the writer on a broken pipe: it returns.
            (read, writer.join().map_or(true, |r| r.is_err()))
        });
        let failure = failure
            .or_else(|| (broken && done.len() < seqs.len()).then(|| "stopped reading".to_string()));
        Ok((done, failure))
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        self.stop();
    }
}

fn harness(what: &str) -> ExploreError {
    ExploreError::Harness(what.to_string())
}

fn describe(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("the harness exited with {code}"),
        (_, Some(sig)) => format!("the harness was killed by signal {sig}"),
        _ => "the harness ended".to_string(),
    }
}

/// Reads the answers to `count` sequences; stops early (with why) when the harness stops
/// answering: its output ended, or one sequence took longer than `timeout`.
fn read_answers(
    lines: &Receiver<String>,
    count: usize,
    timeout: Duration,
) -> (Vec<SeqResult>, Option<String>) {
    let mut out = Vec::with_capacity(count);
    let mut calls = Vec::new();
    let mut guards = Vec::new();
    let mut compares = Vec::new();
    let mut states = Final::default();
    while out.len() < count {
        let line = match lines.recv_timeout(timeout) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => {
                let why = format!("no answer within {} s (hung?)", timeout.as_secs());
                return (out, Some(why));
            }
            Err(RecvTimeoutError::Disconnected) => {
                return (out, Some("the harness died".to_string()));
            }
        };
        match parse_line(&line) {
            Some(Answer::Call(c)) => calls.push(c),
            Some(Answer::Guards(g)) => guards.push((calls.len(), g)),
            Some(Answer::Compares(k)) => compares.push((calls.len(), k)),
            Some(Answer::State(o, slot, text)) => states.debug.push((o, slot, text)),
            Some(Answer::Text(o, slot, text)) => states.display.push((o, slot, text)),
            Some(Answer::Shown(text)) => states.results.push((calls.len(), text)),
            Some(Answer::ShownError(text)) => states.errors.push((calls.len(), text)),
            Some(Answer::Getter(o, slot, k, text)) => states.getters.push((o, slot, k, text)),
            Some(Answer::Operands(v)) => states.operands.push((calls.len(), v)),
            Some(Answer::End(end)) => out.push(SeqResult {
                calls: std::mem::take(&mut calls),
                end,
                guards: std::mem::take(&mut guards),
                compares: std::mem::take(&mut compares),
                states: std::mem::take(&mut states),
            }),
            None => return (out, Some(format!("unreadable answer {line:?}"))),
        }
    }
    (out, None)
}

enum Answer {
    Call(CallOutcome),
    /// The guards the next call ran first.
    Guards(Vec<u32>),
    /// The comparison outcomes the next call met first.
    Compares(Vec<u64>),
    /// The operands of the next call's comparisons.
    Operands(Vec<u64>),
    /// An object slot's state after the calls: object, slot, `Debug` text.
    State(usize, u64, String),
    /// The same with the `Display` text.
    Text(usize, u64, String),
    /// The next call's result's `Display` text.
    Shown(String),
    /// The `Display` text of the error the next call returned.
    ShownError(String),
    /// A getter's answer on an object slot after the calls: object, slot, callable, text.
    Getter(usize, u64, usize, String),
    End(End),
}

fn numbers<T: std::str::FromStr>(text: &str) -> Option<Vec<T>> {
    text.split_ascii_whitespace()
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()
}

fn parse_line(line: &str) -> Option<Answer> {
    let (tag, rest) = line.split_at_checked(1)?;
    let rest = rest.strip_prefix(' ').unwrap_or(rest);
    Some(match tag {
        "o" => Answer::Call(CallOutcome::Returned(Some(rest.to_string()))),
        "u" => Answer::Call(CallOutcome::Returned(None)),
        "p" => Answer::Call(CallOutcome::Panicked(unquote(rest))),
        "x" => Answer::Call(CallOutcome::NoReceiver),
        "c" => Answer::Guards(numbers(rest)?),
        "k" => Answer::Compares(numbers(rest)?),
        "v" => Answer::Operands(numbers(rest)?),
        "s" | "t" => {
            let mut parts = rest.splitn(3, ' ');
            let object = parts.next()?.parse().ok()?;
            let slot = parts.next()?.parse().ok()?;
            let text = parts.next()?.to_string();
            match tag {
                "s" => Answer::State(object, slot, text),
                _ => Answer::Text(object, slot, text),
            }
        }
        "d" => Answer::Shown(rest.to_string()),
        "e" => Answer::ShownError(rest.to_string()),
        "g" => {
            let mut parts = rest.splitn(4, ' ');
            let object = parts.next()?.parse().ok()?;
            let slot = parts.next()?.parse().ok()?;
            let callable = parts.next()?.parse().ok()?;
            Answer::Getter(object, slot, callable, parts.next()?.to_string())
        }
        "." => Answer::End(match rest {
            "d" => End::Done,
            "p" => End::Panicked,
            "x" => End::NoReceiver,
            "r" => End::Redundant,
            "s" => End::Skipped,
            _ => return None,
        }),
        _ => return None,
    })
}

/// A panic message as the harness quoted it with `{:?}`, back to its text (the escapes
/// `Debug` writes for a `String`).
pub fn unquote(quoted: &str) -> String {
    let inner = quoted
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(quoted);
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('0') => out.push('\0'),
            Some('u') => {
                let code: String = chars.by_ref().skip(1).take_while(|&c| c != '}').collect();
                if let Some(ch) = u32::from_str_radix(&code, 16).ok().and_then(char::from_u32) {
                    out.push(ch);
                }
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panic_messages_come_back_as_written() {
        for msg in [
            "attempt to add with overflow",
            "a \"quoted\"\nline\t\\ é \u{1b}",
        ] {
            assert_eq!(unquote(&format!("{msg:?}")), msg);
        }
    }

    /// A shell script standing in for a harness: answers every sequence with its first call
    /// number, and dies on a sequence starting with 1.
    #[test]
    fn a_harness_that_dies_costs_only_the_sequence_it_was_running() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("h.sh");
        std::fs::write(
            &bin,
            "#!/bin/sh\nwhile read c rest; do\n  [ \"$c\" = 1 ] && kill -9 $$\n  \
             echo \"o $c\"\n  echo '. d'\ndone\n",
        )
        .unwrap();
        std::fs::set_permissions(&bin, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let mut r = Runner::new(&bin, Duration::from_secs(5));
        let got = r.run_batch(&[vec![0], vec![1], vec![2], vec![3]]).unwrap();
        assert_eq!(got.len(), 4);
        assert_eq!(got[0].calls, [CallOutcome::Returned(Some("0".into()))]);
        assert!(
            matches!(&got[1].end, End::Crashed(why) if why.contains("signal 9")),
            "{got:?}"
        );
        assert_eq!(got[2].calls, [CallOutcome::Returned(Some("2".into()))]);
        assert_eq!(got[3].end, End::Done, "the rest runs in a new harness");
        assert_eq!(r.started, 3, "the batch, the culprit alone, then the rest");
    }

    #[test]
    fn the_guards_a_call_ran_first_go_with_that_call() {
        let (tx, rx) = mpsc::channel();
        for line in ["c 4 9", "k 41", "o 1", "o 2", "c 12", "p \"boom\"", ". p"] {
            tx.send(line.to_string()).unwrap();
        }
        let (got, failure) = read_answers(&rx, 1, Duration::from_secs(1));
        assert_eq!(failure, None);
        assert_eq!(got[0].guards, vec![(0, vec![4, 9]), (2, vec![12])]);
        assert_eq!(got[0].compares, vec![(0, vec![41])]);
        assert_eq!(got[0].calls.len(), 3);
        assert_eq!(got[0].end, End::Panicked);
    }

    #[test]
    fn the_states_after_a_sequence_go_with_it_text_operands_and_all() {
        let (tx, rx) = mpsc::channel();
        let answers = [
            "u",
            "d 3 of 8",
            "v 16 3 8 16 3 255",
            "o Gauge { level: 3 }",
            "e level too high",
            "s 0 1 Gauge { level: 3 }",
            "s 1 0 ",
            "t 0 1 3 of 8",
            "g 0 1 4 0.5",
            ". d",
            "u",
            ". d",
        ];
        for line in answers {
            tx.send(line.to_string()).unwrap();
        }
        let (got, failure) = read_answers(&rx, 2, Duration::from_secs(1));
        assert_eq!(failure, None);
        let states = Final {
            debug: vec![
                (0, 1, "Gauge { level: 3 }".to_string()),
                (1, 0, String::new()),
            ],
            display: vec![(0, 1, "3 of 8".to_string())],
            results: vec![(1, "3 of 8".to_string())],
            errors: vec![(2, "level too high".to_string())],
            getters: vec![(0, 1, 4, "0.5".to_string())],
            operands: vec![(1, vec![16, 3, 8, 16, 3, 255])],
        };
        assert_eq!(got[0].states, states);
        assert_eq!(got[1].states, Final::default());
    }
}
