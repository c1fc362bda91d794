//! The `carve` and `cargo-carve` command lines: record a program, show a trace, generate tests,
//! run the demo, gate a new build against a baseline, report line coverage, print shell
//! completions. Both binaries are thin `main`s over this crate; `cargo-carve` only resolves
//! what cargo knows (the package, the built test or example, the target directory) into the
//! same arguments (`cargo.rs`).
//! The only place that prints or reads the environment.

mod args;
mod assess;
mod cargo;
mod carved_coverage;
mod completions;
mod coverage;
mod demo;
mod distil_explored;
mod exit;
mod explore;
mod fault_runs;
mod gate;
mod generate;
mod progress;
mod record;
mod show;
mod size_guard;
mod timeline;

/// `main` of the `carve` binary.
pub fn carve_main() -> ! {
    use clap::Parser;
    let cli = args::Cli::parse();
    finish(run(cli))
}

/// `main` of the `cargo-carve` binary (`cargo carve ...`).
pub fn cargo_carve_main() -> ! {
    let cli = cargo::parse(std::env::args_os());
    finish(cli.and_then(|(cli, cargo)| {
        progress::init(cli.quiet);
        cargo::run(cli, cargo)
    }))
}

fn finish(result: anyhow::Result<i32>) -> ! {
    let code = match result {
        Ok(code) => code,
        Err(e) => {
            progress::clear();
            eprintln!(
                "carve: error: {}",
                carve_storage::terminal_safe(&one_line(&e), &[])
            );
            exit::USAGE
        }
    };
    std::process::exit(code);
}

fn run(cli: args::Cli) -> anyhow::Result<i32> {
    progress::init(cli.quiet);
    dispatch(cli.command)
}

fn dispatch(command: args::Command) -> anyhow::Result<i32> {
    match command {
        args::Command::Record(a) => record::run(a),
        args::Command::Show(a) => show::run(a),
        args::Command::Generate(a) => generate::run(a),
        args::Command::Demo(a) => demo::run(a),
        args::Command::Gate(a) => gate::run(a),
        args::Command::Coverage(a) => coverage::run(a),
        args::Command::Assess(a) => assess::run(a),
        args::Command::Explore(a) => explore::run(a),
        args::Command::Completions(a) => completions::run(a),
    }
}

/// Writes `text` to stdout. A reader that went away (`carve show | head`) is not an error: the
/// rest of the output is simply not wanted.
pub(crate) fn emit(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    // The commands' texts quote traces, which are shared files: nothing in them may act on the
    // terminal (JSON stays valid: the escapes are JSON's own).
    let text = carve_storage::terminal_safe(text, &['\n', '\t']);
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

/// The `carve` executable, for commands that run carve in a child process (`gate` records the
/// new build that way): this executable, or the `carve` installed beside `cargo-carve`, whose
/// `record` takes a program rather than a cargo target.
pub(crate) fn carve_exe() -> anyhow::Result<std::path::PathBuf> {
    use anyhow::Context;
    let me = std::env::current_exe().context("finding the carve executable")?;
    if me.file_stem().is_some_and(|s| s == "cargo-carve") {
        let carve = me.with_file_name("carve");
        anyhow::ensure!(
            carve.is_file(),
            "{} is missing: cargo carve runs it for this command; install both binaries with `cargo install --path .` in carve's repository",
            carve.display()
        );
        return Ok(carve);
    }
    Ok(me)
}

/// An error and its causes on one line, without repeating a cause its parent already quotes.
fn one_line(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}
