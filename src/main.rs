//! The `carve` command line: record a program, show a trace, generate tests, run the demo, gate
//! a new build against a baseline, report line coverage.
//! The only place that prints or reads the environment.

mod args;
mod assess;
mod coverage;
mod demo;
mod exit;
mod gate;
mod generate;
mod record;
mod show;

use clap::Parser;

fn main() {
    let cli = args::Cli::parse();
    let code = match run(cli) {
        Ok(code) => code,
        Err(e) => {
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
    match cli.command {
        args::Command::Record(a) => record::run(a),
        args::Command::Show(a) => show::run(a),
        args::Command::Generate(a) => generate::run(a),
        args::Command::Demo(a) => demo::run(a),
        args::Command::Gate(a) => gate::run(a),
        args::Command::Coverage(a) => coverage::run(a),
        args::Command::Assess(a) => assess::run(a),
    }
}

/// Writes `text` to stdout. A reader that went away (`carve show | head`) is not an error: the
/// rest of the output is simply not wanted.
pub fn emit(text: &str) -> anyhow::Result<()> {
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
