//! Progress on stderr while carve works (indicatif): calls recorded and their rate, tests
//! carved, verification runs. Drawn only when stderr is a terminal and `--quiet` was not given;
//! otherwise every function here does nothing, so pipes, CI logs and tests see no progress.
//! The recorder and the generator never print: the recorder's calls are counted by a sink
//! wrapped around the store's writer, which the bar polls; the generator reports its steps
//! through `carve_generator::Progress`.

use std::io::IsTerminal;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use carve_storage::{TraceEvent, TraceSink};
use indicatif::{HumanCount, ProgressBar, ProgressStyle};

static ENABLED: AtomicBool = AtomicBool::new(false);
/// The bar on screen, so an error can clear it before its line is printed.
static SHOWN: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// Decides once, from `--quiet` and whether stderr is a terminal, if progress is drawn.
pub fn init(quiet: bool) {
    ENABLED.store(!quiet && std::io::stderr().is_terminal(), Ordering::SeqCst);
}

fn enabled() -> bool {
    ENABLED.load(Ordering::SeqCst)
}

/// Takes the bar on screen away (before an error line, or when a step ends).
pub fn clear() {
    if let Some(bar) = SHOWN.lock().ok().and_then(|mut s| s.take()) {
        bar.finish_and_clear();
    }
}

fn show(bar: ProgressBar) -> ProgressBar {
    bar.enable_steady_tick(Duration::from_millis(120));
    if let Ok(mut shown) = SHOWN.lock() {
        if let Some(old) = shown.replace(bar.clone()) {
            old.finish_and_clear();
        }
    }
    bar
}

fn spinner(template: &str) -> ProgressBar {
    let bar = ProgressBar::new_spinner();
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    show(bar)
}

/// Calls recorded so far, shared by the sinks of a recording (the program's run and the runs
/// of its followed children) and read by the bar.
#[derive(Clone, Default)]
pub struct CallCounter(Arc<AtomicU64>);

/// A sink counting the calls that pass through it on their way to `inner`: one relaxed atomic
/// add per call, no lock, no system call, so the tracer's hot path stays as it was.
pub struct Counting<S> {
    pub inner: S,
    calls: CallCounter,
}

impl<S: TraceSink> TraceSink for Counting<S> {
    fn record(&mut self, event: TraceEvent) {
        if matches!(event, TraceEvent::CallStarted(_)) {
            self.calls.0.fetch_add(1, Ordering::Relaxed);
        }
        self.inner.record(event);
    }
}

/// The recording's bar, polling a [`CallCounter`]; cleared when dropped.
pub struct Recording {
    calls: CallCounter,
    stop: Arc<AtomicBool>,
    poller: Option<std::thread::JoinHandle<()>>,
}

impl Recording {
    /// Starts the bar (when progress is drawn) for the recording of `program`.
    pub fn start(program: &str) -> Recording {
        let calls = CallCounter::default();
        let stop = Arc::new(AtomicBool::new(false));
        let poller = enabled().then(|| {
            let bar = spinner("{spinner} recording {prefix}: {msg}, {elapsed}");
            let name = Path::new(program)
                .file_name()
                .map_or(program.into(), |n| n.to_string_lossy());
            bar.set_prefix(carve_storage::terminal_safe(&name, &[]).into_owned());
            let (calls, stop) = (calls.clone(), stop.clone());
            std::thread::spawn(move || {
                let started = Instant::now();
                while !stop.load(Ordering::Relaxed) {
                    let n = calls.0.load(Ordering::Relaxed);
                    let secs = started.elapsed().as_secs_f64();
                    let rate = if secs > 0.0 { n as f64 / secs } else { 0.0 };
                    bar.set_message(format!(
                        "{} calls ({}/s)",
                        HumanCount(n),
                        HumanCount(rate as u64)
                    ));
                    std::thread::sleep(Duration::from_millis(100));
                }
                clear();
            })
        });
        Recording {
            calls,
            stop,
            poller,
        }
    }

    /// `sink`, counting its calls for the bar.
    pub fn count<S: TraceSink>(&self, sink: S) -> Counting<S> {
        Counting {
            inner: sink,
            calls: self.calls.clone(),
        }
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(poller) = self.poller.take() {
            let _ = poller.join();
        }
    }
}

/// A spinner counting items read (`generate` reading a run's calls); cleared when dropped.
pub struct Counter {
    bar: Option<ProgressBar>,
}

impl Counter {
    pub fn start(what: &str) -> Counter {
        Counter {
            bar: enabled().then(|| {
                let bar = spinner("{spinner} {prefix}: {human_pos}");
                bar.set_prefix(what.to_string());
                bar
            }),
        }
    }

    pub fn inc(&self) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }
}

impl Drop for Counter {
    fn drop(&mut self) {
        if self.bar.is_some() {
            clear();
        }
    }
}

/// What the generator reports, drawn as a line (tests carved) and then a bar over the
/// verification runs. `None` when progress is not drawn.
pub fn generation() -> Option<carve_generator::Progress> {
    if !enabled() {
        return None;
    }
    let bar: Mutex<Option<ProgressBar>> = Mutex::new(None);
    Some(carve_generator::Progress::new(move |step| {
        use carve_generator::Step;
        let Ok(mut bar) = bar.lock() else { return };
        match step {
            Step::Carved { tests, files } => {
                clear();
                let line = spinner("{spinner} {msg}");
                line.set_message(format!("carved {tests} tests into {files} files"));
                *bar = Some(line);
            }
            Step::Verifying { file, done, total } => {
                let b = bar.get_or_insert_with(|| spinner("{msg}"));
                if b.length() != Some(*total as u64) {
                    b.set_length(*total as u64);
                    b.set_style(
                        ProgressStyle::with_template(
                            "{spinner} verifying {msg}: run {pos}/{len} {wide_bar} {elapsed}",
                        )
                        .unwrap_or_else(|_| ProgressStyle::default_bar()),
                    );
                }
                b.set_position(*done as u64);
                b.set_message(carve_storage::terminal_safe(file, &[]).into_owned());
            }
            _ => {}
        }
    }))
}
