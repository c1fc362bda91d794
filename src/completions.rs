//! `carve completions SHELL`: a completion script written by clap_complete from the same clap
//! definitions the command line parses with (for `cargo-carve`, its own, with the cargo options).

use crate::args::CompletionsArgs;

pub fn run(a: CompletionsArgs) -> anyhow::Result<i32> {
    let (mut command, name) = if crate::cargo::is_cargo_carve() {
        (crate::cargo::command(), "cargo-carve")
    } else {
        (
            <crate::args::Cli as clap::CommandFactory>::command(),
            "carve",
        )
    };
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut command, name, &mut script);
    // Written as clap_complete made it (carve's own text, no trace in it); a reader that went
    // away is not an error.
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(&script).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(0),
    }
}
