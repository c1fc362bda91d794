//! What the user typed: clap structures, nothing resolved yet.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Parser, Debug)]
#[command(
    name = "carve",
    version,
    about = "Carve Rust unit tests out of real runs of native programs",
    long_about = "carve records a native program under ptrace (arguments and return values of the \
                  selected functions, read through DWARF) into a SQLite trace, then generates Rust \
                  unit tests that replay the recorded calls and assert what they returned."
)]
pub struct Cli {
    /// No progress display (progress is only ever drawn on a terminal, on stderr).
    #[arg(short, long, global = true)]
    pub quiet: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run PROGRAM under the recorder and store its calls in a trace database.
    Record(RecordArgs),
    /// Print a recorded trace as a call tree.
    Show(ShowArgs),
    /// Write Rust tests for the recorded calls.
    Generate(GenerateArgs),
    /// Build, record and carve tests from a built-in example, then run them.
    Demo(DemoArgs),
    /// CI regression gate: re-record PROGRAM and compare it call by call with a baseline trace
    /// (or run carved tests with --tests), exit 1 on divergence.
    Gate(GateArgs),
    /// Line coverage of a run recorded with `record --coverage`: a summary per source file,
    /// and an lcov file with --lcov.
    Coverage(CoverageArgs),
    /// Print a shell completion script for carve (e.g. `carve completions bash >
    /// ~/.local/share/bash-completion/completions/carve`).
    Completions(CompletionsArgs),
    /// Find pseudo-tested functions: run a crate's tests with each reached function forced to
    /// return an extreme value (no rebuild), and say which transformations no test notices, and why.
    Assess(AssessArgs),
    /// Go beyond the run: call sequences over the recorded values and their boundaries, run
    /// in process by a harness built once; keep as tests those that give a function an outcome
    /// the run never had, and report panics on unrecorded inputs as findings.
    Explore(ExploreArgs),
}

#[derive(Args, Debug)]
pub struct ExploreArgs {
    #[arg(long, default_value = "trace.db")]
    pub db: PathBuf,
    /// Directory for the kept tests (a test directory of the crate, usually its tests/).
    #[arg(long)]
    pub out: PathBuf,
    /// The library crate explored (default: the package holding --out).
    #[arg(long = "crate", value_name = "DIR")]
    pub crate_dir: Option<PathBuf>,
    /// Which run (default: the latest).
    #[arg(long)]
    pub run: Option<i64>,
    /// R (random, with replacement), BE (every sequence in order) or BOBW (every sequence
    /// once, in a pseudo-random order).
    #[arg(long, value_enum, default_value_t = ExploreStrategy::Bobw)]
    pub strategy: ExploreStrategy,
    /// Calls per sequence of the strategy (a kept sequence, extended, grows up to twice that).
    #[arg(long, default_value_t = 3, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=64))]
    pub length: u16,
    /// How long to run sequences (not counting the harness build and verification): 60s,
    /// 2m, 500ms (default 10s).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, conflicts_with = "runs")]
    pub budget: Option<std::time::Duration>,
    /// Stop after N sequences instead of a time budget.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub runs: Option<u64>,
    /// Seed of R's draws and of BOBW's permutation.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Run only the strategy's sequences, over the first pools (to compare strategies alone):
    /// no kept sequence extended by one call on the objects and values it used, no later
    /// round on pools grown with more of the crate's literals.
    #[arg(long)]
    pub no_extend: bool,
    /// Write the kept tests without running them.
    #[arg(long)]
    pub no_verify: bool,
    /// How many times verification runs the kept tests.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub verify_runs: u32,
    /// Keep every kept sequence's test; by default, once verified, only those that add a
    /// line, an outcome, a value class or a value fault detected to the carved tests in
    /// --out and to each other stay (each test recorded alone).
    #[arg(long)]
    pub all: bool,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExploreStrategy {
    Random,
    Exhaustive,
    Bobw,
}

/// `60s`, `2m`, `500ms`, or a number of seconds.
fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let t = text.trim();
    let (number, unit) = t.split_at(t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len()));
    let n: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration: write 60s, 2m or 500ms"))?;
    let seconds = match unit {
        "" | "s" => n,
        "ms" => n / 1000.0,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(format!("{text:?}: unknown unit {unit:?} (s, ms, m or h)")),
    };
    if !(seconds > 0.0 && seconds.is_finite()) {
        return Err(format!("{text:?}: the budget must be more than zero"));
    }
    Ok(std::time::Duration::from_secs_f64(seconds))
}

#[derive(Args, Debug)]
pub struct AssessArgs {
    /// The crate whose test binaries to assess (`cargo test --no-run` builds them).
    #[arg(long = "crate", value_name = "DIR")]
    pub crate_dir: Option<PathBuf>,
    /// Output format on stdout.
    #[arg(long, value_enum, default_value = "human")]
    pub format: AssessFormat,
    /// Also write a JUnit XML report (undetected transformations are failures) to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Exit 1 when fewer than PCT percent of the transformations run are detected.
    #[arg(long, value_name = "PCT")]
    pub fail_under: Option<f64>,
    /// Seconds a transformed run may take before it is killed (and counted as detected).
    /// Default: 2 s plus 5 times the time the tests it runs took in the recorded run of the
    /// tests as they are, and for each test while it runs, 2 s plus 5 times its own.
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
    /// Assess only functions whose path matches GLOB; repeatable.
    #[arg(long = "filter", value_name = "GLOB")]
    pub filters: Vec<String>,
    /// Do not record the tests again to say why a transformation went undetected.
    #[arg(long, conflicts_with = "write_tests")]
    pub no_diagnosis: bool,
    /// Run the tests N times under each transformation: it is detected or undetected only
    /// when every run agrees, flaky otherwise (a run killed by the timeout is not repeated).
    #[arg(long, default_value_t = 3, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: u32,
    /// For each weak-oracle or no-propagation case, carve a test that catches it into the
    /// `tests/` directory of the function's crate (`carved_assess_*.rs`), kept only when it
    /// passes on the code as it is (--runs times) and fails under the transformation.
    #[arg(long)]
    pub write_tests: bool,
    /// A test binary (built by `cargo test --no-run`) and arguments for it.
    #[arg(last = true, value_name = "TEST_BINARY")]
    pub command: Vec<std::ffi::OsString>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum AssessFormat {
    Human,
    Json,
}

#[derive(Args, Debug)]
pub struct RecordArgs {
    /// Trace database to write (created if missing; each recording adds a run).
    #[arg(long, default_value = "trace.db")]
    pub db: PathBuf,
    /// Trace functions whose demangled path (or bare name) matches GLOB; repeatable.
    /// Default: the program's own code.
    #[arg(long = "filter", value_name = "GLOB")]
    pub filters: Vec<String>,
    /// Do not trace functions matching GLOB; repeatable.
    #[arg(long = "exclude", value_name = "GLOB")]
    pub excludes: Vec<String>,
    /// Trace the functions of crate NAME, in whatever program they are linked (with --filter:
    /// those matching both); repeatable. `carve record --crate mylib -- cargo test` records
    /// each test binary cargo runs and leaves cargo and rustc untraced.
    #[arg(long = "crate", value_name = "NAME")]
    pub crates: Vec<String>,
    /// The cargo features the program's package was built with beyond its defaults, stored
    /// with the run for the tests carved from it (`cargo carve record` fills it in).
    #[arg(skip)]
    pub cargo_features: Vec<String>,
    /// Also record the program's own functions called up to N levels out from a call of a
    /// filtered function (1: its direct callees), e.g. the dependencies a test will mock.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub depth: u32,
    /// Stop recording a function after N calls (its breakpoint is removed, or its in-process
    /// capture skipped; the calls still open get their ends).
    #[arg(long, value_name = "N")]
    pub max_calls_per_function: Option<u64>,
    /// Store every call. By default a call equivalent to an earlier sibling (same function,
    /// arguments, receiver state, outcome, result, effects and calls below it) is counted as a
    /// repeat of that one, not stored again: the trace grows with the program's behaviour, not
    /// with its loops, and `generate` carves the same tests.
    #[arg(long)]
    pub all_calls: bool,
    /// Say so when the trace grows past MB megabytes (and again at each doubling), naming the
    /// function with the most calls and how to record fewer of them; 0: never.
    #[arg(long, default_value_t = 1024, value_name = "MB")]
    pub size_warning: u64,
    /// Pointers followed from an argument or return value.
    #[arg(long, default_value_t = 4)]
    pub max_depth: u32,
    /// Elements read from one sequence (Vec, slice, array).
    #[arg(long, default_value_t = 256)]
    pub max_elements: usize,
    /// Bytes read from one string.
    #[arg(long, default_value_t = 4096)]
    pub max_string: usize,
    /// Experimental: make calls of functions matching GLOB return VALUE without running their
    /// body (integer-returning functions only); repeatable.
    #[arg(long = "force-return", value_name = "GLOB=VALUE")]
    pub force_returns: Vec<String>,
    /// Do not run carve and a single-threaded program on the same CPU (pinning makes each
    /// breakpoint stop several times cheaper; it is undone when the program starts threads).
    #[arg(long)]
    pub no_pin: bool,
    /// Also record which source lines of the selected functions ran (one-shot breakpoints,
    /// at most one stop per line); see them with `carve coverage`.
    #[arg(long)]
    pub coverage: bool,
    /// With --coverage: arm every line again each time the program starts a thread, so each
    /// thread's lines are its own: per-test coverage of a libtest binary run with
    /// --test-threads=1 (each test runs on a thread named after it).
    #[arg(long, requires = "coverage")]
    pub coverage_per_thread: bool,
    /// Also record processes the program forks (each as a run of its own in the same trace);
    /// without it they run untraced.
    #[arg(long)]
    pub follow_forks: bool,
    /// Where calls are captured. `auto` (the default): in the program itself, with no ptrace
    /// stop per call, for every function whose entry and exits the in-process path can patch
    /// and whose values its copies cover; the others keep breakpoints, and carve says how
    /// many when there are any. `inprocess`: the same capture, and carve always says how many
    /// functions use which path. `ptrace`: an entry and a return breakpoint stop per call for
    /// every function.
    #[arg(long, value_enum, default_value_t = Capture::Auto)]
    pub capture: Capture,
    /// Record the program N times into the database (N runs), so `carve gate` can learn which
    /// values change from run to run.
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: u32,
    /// The program to run, then its arguments.
    #[arg(required = true, last = true, value_name = "PROGRAM [ARGS]")]
    pub command: Vec<OsString>,
}

#[derive(Args, Debug)]
pub struct ShowArgs {
    #[arg(long, default_value = "trace.db")]
    pub db: PathBuf,
    /// Which run (default: the latest).
    #[arg(long)]
    pub run: Option<i64>,
    /// Only calls of functions whose path matches GLOB (with their callees).
    #[arg(long, value_name = "GLOB")]
    pub function: Option<String>,
    /// Only this thread id.
    #[arg(long)]
    pub thread: Option<i32>,
    /// text: the call tree; json: every call with its values; chrome-trace: the calls on a
    /// timeline, in the Trace Event Format that Perfetto (ui.perfetto.dev), chrome://tracing
    /// and speedscope open.
    #[arg(long, value_enum, default_value_t = ShowFormat::Text)]
    pub format: ShowFormat,
    /// With --format chrome-trace: every run of the trace on one timeline (each run's process
    /// a track group, placed by when it started), such as the test binaries of one
    /// `carve record -- cargo test`.
    #[arg(long, conflicts_with = "run")]
    pub all_runs: bool,
}

/// `carve record --capture`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Capture {
    Auto,
    Inprocess,
    Ptrace,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShowFormat {
    Text,
    Json,
    ChromeTrace,
}

#[derive(Args, Debug)]
pub struct GenerateArgs {
    #[arg(long, default_value = "trace.db")]
    pub db: PathBuf,
    /// Directory for the test files (usually the crate's tests/).
    #[arg(long)]
    pub out: PathBuf,
    /// The library crate the tests call (default: the package holding --out, else the current directory; a trace whose sources lie elsewhere is refused).
    #[arg(long = "crate", value_name = "DIR")]
    pub crate_dir: Option<PathBuf>,
    /// Directory of tera templates overriding the built-in ones (same file names).
    #[arg(long, value_name = "DIR")]
    pub templates: Option<PathBuf>,
    /// Which run (default: the latest).
    #[arg(long)]
    pub run: Option<i64>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Run the carved tests before keeping them: tests that fail or flake are taken out and
    /// listed in carved_quarantine.md. On by default whenever cargo is available.
    #[arg(long, conflicts_with = "no_verify")]
    pub verify: bool,
    /// Do not run the carved tests before keeping them.
    #[arg(long)]
    pub no_verify: bool,
    /// How many times verification runs each carved test file.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub verify_runs: u32,
    /// One test per recorded call: keep calls equivalent to another (same receiver state,
    /// arguments and mock interactions), which otherwise share one test, no cap per function
    /// unless --max-per-function is given, and every verified test (no distilling). Reads the
    /// whole trace into memory.
    #[arg(long)]
    pub all: bool,
    /// Distil the verified suite (the default; for scripts that say so): each carved test is
    /// run alone under the recorder, and only the tests that reach a library line, an outcome
    /// (variant, error, panic) or a value class of a function no kept test reaches are kept,
    /// then folded into tables and stories (docs/test-quality.md).
    #[arg(long, conflicts_with = "no_distil")]
    pub distil: bool,
    /// Keep every verified test, each as it was carved (no distilling, no folding).
    #[arg(long)]
    pub no_distil: bool,
    /// At most N tests per function (default 100): the first N distinct calls of each function
    /// are planned; the next 10×N become the rows of table-driven tests where their tests differ
    /// only in literal values; the others are counted as skipped `over --max-per-function`.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_per_function: Option<u32>,
    /// For tests of carve: read the whole trace and plan every call (no grouping while
    /// reading, no cap unless --max-per-function is given).
    #[arg(long, hide = true)]
    pub whole_trace: bool,
    /// Do not measure which of the lines the recording reached the carved tests reach (by
    /// default measured after verification when the run was recorded with --coverage).
    #[arg(long)]
    pub no_coverage: bool,
}

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Where to put the example crate, trace and tests (default: a new temporary directory).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// The expression the example program evaluates.
    #[arg(long, default_value = "2*(3+4)-5/2")]
    pub expr: String,
}

#[derive(Args, Debug)]
pub struct GateArgs {
    /// Baseline trace database (recorded from the known-good build, ideally with --runs 3).
    #[arg(long, value_name = "TRACE.DB", required_unless_present = "tests")]
    pub baseline: Option<PathBuf>,
    /// Instead of recording: run the carved tests (tests/carved_*.rs) of the crate in DIR with
    /// `cargo test` and summarise failures per function.
    #[arg(long, value_name = "DIR", conflicts_with = "baseline")]
    pub tests: Option<PathBuf>,
    /// Trace these functions instead of the baseline's selection; repeatable.
    #[arg(long = "filter", value_name = "GLOB")]
    pub filters: Vec<String>,
    /// Do not trace functions matching GLOB (added to the baseline's excludes); repeatable.
    #[arg(long = "exclude", value_name = "GLOB")]
    pub excludes: Vec<String>,
    /// Do not report divergences in functions matching GLOB (syntax of --filter); repeatable.
    #[arg(long = "ignore", value_name = "GLOB")]
    pub ignore: Vec<String>,
    /// Recording option to repeat when the baseline was recorded with it.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub depth: u32,
    /// Recording option to repeat when the baseline was recorded with it.
    #[arg(long, value_name = "N")]
    pub max_calls_per_function: Option<u64>,
    /// Keep the new recording in this trace database instead of a temporary file.
    #[arg(long, value_name = "TRACE.DB")]
    pub new_db: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = GateFormat::Human)]
    pub format: GateFormat,
    /// Record the program and arguments stored in the baseline's latest run as the new build
    /// (instead of `-- PROGRAM [ARGS]`). A baseline is a file people pass around: without this
    /// flag, what it names never runs.
    #[arg(long, conflicts_with_all = ["command", "tests"])]
    pub rerun_recorded_command: bool,
    /// The new build of the program and its arguments (required with --baseline, unless
    /// --rerun-recorded-command is given).
    #[arg(last = true, value_name = "PROGRAM [ARGS]")]
    pub command: Vec<OsString>,
}

#[derive(Args, Debug)]
pub struct CoverageArgs {
    #[arg(long, default_value = "trace.db")]
    pub db: PathBuf,
    /// Which run (default: the latest).
    #[arg(long)]
    pub run: Option<i64>,
    /// Also write the coverage in the lcov format to FILE (for genhtml, Codecov, editors).
    #[arg(long, value_name = "FILE")]
    pub lcov: Option<PathBuf>,
    /// Also list, per thread, the lines it reached and their functions (per test, for a
    /// libtest binary recorded with --coverage-per-thread and run with --test-threads=1).
    #[arg(long)]
    pub by_thread: bool,
    #[arg(long, value_enum, default_value_t = CoverageFormat::Human)]
    pub format: CoverageFormat,
}

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to write completions for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoverageFormat {
    Human,
    Json,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum GateFormat {
    Human,
    Json,
    Junit,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_read_seconds_minutes_and_milliseconds() {
        let secs = |t: &str| parse_duration(t).map(|d| d.as_secs_f64());
        assert_eq!(secs("60s"), Ok(60.0));
        assert_eq!(secs("2m"), Ok(120.0));
        assert_eq!(secs("500ms"), Ok(0.5));
        assert_eq!(secs("7"), Ok(7.0));
        assert!(parse_duration("0s").unwrap_err().contains("more than zero"));
        assert!(parse_duration("ten")
            .unwrap_err()
            .contains("not a duration"));
        assert!(parse_duration("3d").unwrap_err().contains("unknown unit"));
    }

    #[test]
    fn explore_takes_a_budget_or_a_number_of_runs_not_both() {
        let parse = |args: &[&str]| {
            Cli::try_parse_from([&["carve", "explore", "--out", "t"], args].concat())
        };
        assert!(parse(&["--budget", "5s"]).is_ok());
        assert!(parse(&["--runs", "100"]).is_ok());
        assert!(parse(&["--budget", "5s", "--runs", "100"]).is_err());
        assert!(parse(&["--length", "0"]).is_err());
    }
}
