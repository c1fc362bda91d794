//! `cargo carve`: carve's command line with what cargo knows. `cargo carve record --test NAME`
//! builds that integration test (or `--example`, `--bin`, `--lib-tests`) with debug info, finds
//! the executable in cargo's `--message-format=json` output and records it as `carve record`
//! would, from the package's directory (where `cargo test` runs tests), selecting the package's
//! own library (`--filter 'CRATE::*'`) unless told otherwise. `generate` writes into the
//! package's `tests/` against the package's library; `assess` assesses the package (as if
//! given `--crate` with its directory); every command's `--db` defaults to
//! `carve/trace.db` in cargo's target directory. The workspace is read with `cargo metadata`.
//!
//! The arguments are carve's own clap definitions (`args.rs`) with the cargo options added, so
//! the two binaries cannot drift apart; resolved, they run through the same commands.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{bail, Context};
use cargo_metadata::{Message, Metadata, MetadataCommand, Package, Target};
use clap::parser::ValueSource;
use clap::{Args, CommandFactory, FromArgMatches};

use crate::args::{Cli, Command as Sub};

static CARGO_CARVE: AtomicBool = AtomicBool::new(false);

/// True in the `cargo-carve` binary (its completions describe its own options).
pub fn is_cargo_carve() -> bool {
    CARGO_CARVE.load(Ordering::SeqCst)
}

/// Which workspace and package (every `cargo carve` command).
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Cargo options")]
pub struct Workspace {
    /// Path to the Cargo.toml of the workspace or package (default: found from the current
    /// directory, as cargo does).
    #[arg(long, value_name = "PATH", global = true)]
    pub manifest_path: Option<PathBuf>,
    /// The package to record or carve tests for (default: the package of the current
    /// directory, or the workspace's only package).
    #[arg(short, long, value_name = "NAME", global = true)]
    pub package: Option<String>,
}

/// What `cargo carve record` builds and how.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Cargo options")]
pub struct Build {
    /// Record the integration test NAME (tests/NAME.rs), run by its libtest harness.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["example", "bin", "lib_tests"])]
    pub test: Option<String>,
    /// Record the example NAME (examples/NAME.rs).
    #[arg(long, value_name = "NAME", conflicts_with_all = ["bin", "lib_tests"])]
    pub example: Option<String>,
    /// Record the binary NAME (default when the package has exactly one binary).
    #[arg(long, value_name = "NAME", conflicts_with = "lib_tests")]
    pub bin: Option<String>,
    /// Record the library's unit tests (`cargo test --lib`).
    #[arg(long)]
    pub lib_tests: bool,
    /// Build with the release profile (with debug info added: CARGO_PROFILE_RELEASE_DEBUG=true).
    #[arg(long)]
    pub release: bool,
    /// Features to activate (space or comma separated; repeatable), as cargo's --features.
    #[arg(short = 'F', long, value_name = "FEATURES")]
    pub features: Vec<String>,
    /// Activate all features.
    #[arg(long)]
    pub all_features: bool,
    /// Do not activate the default feature.
    #[arg(long)]
    pub no_default_features: bool,
}

/// `cargo carve`'s arguments, resolved against the workspace by [`run`].
#[derive(Debug)]
pub struct CargoArgs {
    workspace: Workspace,
    build: Build,
    /// The commands' `--db` was not given.
    default_db: bool,
    /// `generate --out` was not given.
    default_out: bool,
}

/// The `cargo-carve` command: carve's, named for cargo, with the cargo options.
pub fn command() -> clap::Command {
    let cmd = Cli::command()
        .name("cargo-carve")
        .bin_name("cargo carve")
        .about("Carve Rust unit tests out of a cargo package's own tests, examples and binaries");
    Workspace::augment_args(cmd)
        .mut_subcommand("record", |c| {
            Build::augment_args(c)
                .about(
                    "Build an integration test, example or binary of the package with debug info \
                     and record it",
                )
                .mut_arg("command", |a| {
                    a.required(false)
                        .value_name("ARGS")
                        .help("Arguments for the built program (e.g. a libtest filter)")
                })
                .mut_arg("filters", |a| {
                    a.help(
                        "Trace functions whose demangled path (or bare name) matches GLOB; \
                         repeatable. Default: the package's library, 'CRATE::*'",
                    )
                })
                .mut_arg("db", db_help)
        })
        .mut_subcommand("generate", |c| {
            c.mut_arg("out", |a| {
                a.required(false)
                    .default_value("tests")
                    .hide_default_value(true)
                    .help("Directory for the test files [default: the package's tests/]")
            })
            .mut_arg("crate_dir", |a| {
                a.help("The library crate the tests call [default: the package's directory]")
            })
            .mut_arg("db", db_help)
        })
        .mut_subcommand("explore", |c| {
            c.mut_arg("out", |a| {
                a.required(false)
                    .default_value("tests")
                    .hide_default_value(true)
                    .help("Directory for the kept tests [default: the package's tests/]")
            })
            .mut_arg("crate_dir", |a| {
                a.help("The library crate explored [default: the package's directory]")
            })
            .mut_arg("db", db_help)
        })
        .mut_subcommand("assess", |c| {
            c.mut_arg("crate_dir", |a| {
                a.help("The crate whose test binaries to assess [default: the package's directory]")
            })
        })
        .mut_subcommand("show", |c| c.mut_arg("db", db_help))
        .mut_subcommand("coverage", |c| c.mut_arg("db", db_help))
}

fn db_help(a: clap::Arg) -> clap::Arg {
    a.hide_default_value(true)
        .help("Trace database [default: carve/trace.db in cargo's target directory]")
}

/// Parses `cargo-carve`'s arguments; cargo runs it as `cargo-carve carve ARGS`, so that `carve`
/// is dropped (run directly, `cargo-carve ARGS` works the same).
pub fn parse(args: impl IntoIterator<Item = OsString>) -> anyhow::Result<(Cli, CargoArgs)> {
    CARGO_CARVE.store(true, Ordering::SeqCst);
    let mut args: Vec<OsString> = args.into_iter().collect();
    if args.get(1).is_some_and(|a| a == "carve") {
        args.remove(1);
    }
    let matches = command().get_matches_from(args);
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.format(&mut command()).exit());
    let (name, sub) = matches
        .subcommand()
        .context("no command given: try `cargo carve --help`")?;
    let given = |id: &str| {
        sub.try_get_raw(id).is_ok_and(|v| v.is_some())
            && sub.value_source(id) != Some(ValueSource::DefaultValue)
    };
    let cargo = CargoArgs {
        workspace: Workspace::from_arg_matches(sub)
            .unwrap_or_else(|e| e.format(&mut command()).exit()),
        build: if name == "record" {
            Build::from_arg_matches(sub).unwrap_or_else(|e| e.format(&mut command()).exit())
        } else {
            Build::default()
        },
        default_db: !given("db"),
        default_out: !given("out"),
    };
    Ok((cli, cargo))
}

/// Resolves the cargo defaults and runs the command.
pub fn run(mut cli: Cli, cargo: CargoArgs) -> anyhow::Result<i32> {
    match &mut cli.command {
        Sub::Record(a) => {
            let ws = Resolved::read(&cargo.workspace)?;
            let package = ws.package()?;
            let (built, what, features) = build(package, &cargo.build, cli.quiet)?;
            a.cargo_features = features;
            if !cli.quiet {
                // As cargo's own `Running` line: which executable this is.
                eprintln!(
                    "carve: recording the {what} of package `{}`: {}",
                    package.name,
                    built.display()
                );
            }
            if cargo.default_db {
                a.db = ws.default_db();
                std::fs::create_dir_all(a.db.parent().unwrap_or(Path::new(".")))
                    .with_context(|| format!("creating {}", a.db.display()))?;
            } else {
                a.db = std::path::absolute(&a.db)
                    .with_context(|| format!("--db {}", a.db.display()))?;
            }
            if a.filters.is_empty() {
                if let Some(lib) = package.targets.iter().find(|t| is_library(t)) {
                    a.filters.push(format!("{}::*", crate_name(&lib.name)));
                }
            }
            if cargo.build.lib_tests {
                let args = a.command.clone();
                lib_tests(package, &built, &args, a)?;
            }
            let mut command = vec![built.into_os_string()];
            command.append(&mut a.command);
            a.command = command;
            // As `cargo test` and `cargo run` do: the program runs in the package's directory
            // and can find it in CARGO_MANIFEST_DIR.
            let dir = package_dir(package);
            std::env::set_current_dir(&dir)
                .with_context(|| format!("entering the package directory {}", dir.display()))?;
            std::env::set_var("CARGO_MANIFEST_DIR", &dir);
        }
        Sub::Generate(a) => {
            let (db, out, crate_dir) = (&mut a.db, &mut a.out, &mut a.crate_dir);
            library_defaults(&cargo, "carved tests call", (db, out, crate_dir))?;
        }
        Sub::Explore(a) => {
            let (db, out, crate_dir) = (&mut a.db, &mut a.out, &mut a.crate_dir);
            library_defaults(&cargo, "explored calls go through", (db, out, crate_dir))?;
        }
        // As `cargo test` does: the package of the current directory (or --package,
        // --manifest-path), unless a crate or a test binary is named.
        Sub::Assess(a) if a.crate_dir.is_none() && a.command.is_empty() => {
            let ws = Resolved::read(&cargo.workspace)?;
            a.crate_dir = Some(package_dir(ws.package()?));
        }
        Sub::Show(a) if cargo.default_db => {
            a.db = Resolved::read(&cargo.workspace)?.existing_default_db()?
        }
        Sub::Coverage(a) if cargo.default_db => {
            a.db = Resolved::read(&cargo.workspace)?.existing_default_db()?
        }
        _ => {}
    }
    crate::dispatch(cli.command)
}

/// `generate`'s and `explore`'s defaults from the package: the trace in cargo's target
/// directory, its `tests/` (created), its directory as the crate; refused without a library.
fn library_defaults(
    cargo: &CargoArgs,
    what: &str,
    (db, out, crate_dir): (&mut PathBuf, &mut PathBuf, &mut Option<PathBuf>),
) -> anyhow::Result<()> {
    let ws = Resolved::read(&cargo.workspace)?;
    let package = ws.package()?;
    if !package.targets.iter().any(is_library) {
        bail!(
            "package `{}` has no library: {what} a library's public API; choose a package with one (--package NAME)",
            package.name
        );
    }
    if cargo.default_db {
        *db = ws.existing_default_db()?;
    }
    let dir = package_dir(package);
    if cargo.default_out {
        *out = dir.join("tests");
        std::fs::create_dir_all(&*out).with_context(|| format!("creating {}", out.display()))?;
    }
    if crate_dir.is_none() {
        *crate_dir = Some(dir);
    }
    Ok(())
}

/// The workspace as `cargo metadata` describes it, and which package was asked for.
struct Resolved {
    metadata: Metadata,
    workspace: Workspace,
}

impl Resolved {
    fn read(workspace: &Workspace) -> anyhow::Result<Resolved> {
        let mut cmd = MetadataCommand::new();
        cmd.no_deps();
        if let Some(path) = &workspace.manifest_path {
            cmd.manifest_path(path);
        }
        let metadata = cmd
            .exec()
            .map_err(|e| anyhow::anyhow!("{}", e.to_string().trim()))
            .context("reading the workspace with `cargo metadata` (run cargo carve inside a cargo package, or pass --manifest-path)")?;
        Ok(Resolved {
            metadata,
            workspace: workspace.clone(),
        })
    }

    /// `--package`, else the package whose directory holds `--manifest-path` or the current
    /// directory, else the workspace's only package (cargo's own rule).
    fn package(&self) -> anyhow::Result<&Package> {
        let members = self.metadata.workspace_packages();
        let names = || {
            members
                .iter()
                .map(|p| p.name.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        if let Some(name) = &self.workspace.package {
            return members
                .iter()
                .find(|p| p.name.as_str() == name)
                .copied()
                .with_context(|| {
                    format!(
                        "no package `{name}` in the workspace at {}: choose one of {}",
                        self.metadata.workspace_root,
                        names()
                    )
                });
        }
        let here = match &self.workspace.manifest_path {
            Some(path) => std::path::absolute(path)?
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default(),
            None => std::env::current_dir()?,
        };
        let here = here.canonicalize().unwrap_or(here);
        let nearest = members
            .iter()
            .filter(|p| here.starts_with(package_dir(p)))
            .max_by_key(|p| package_dir(p).components().count());
        match (nearest, members.as_slice()) {
            (Some(p), _) => Ok(p),
            (None, [only]) => Ok(only),
            _ => bail!(
                "the workspace at {} has {} packages ({}): choose one with --package NAME",
                self.metadata.workspace_root,
                members.len(),
                names()
            ),
        }
    }

    fn default_db(&self) -> PathBuf {
        self.metadata
            .target_directory
            .as_std_path()
            .join("carve/trace.db")
    }

    /// The default trace, which a command reading it needs to exist.
    fn existing_default_db(&self) -> anyhow::Result<PathBuf> {
        let db = self.default_db();
        if !db.is_file() {
            bail!(
                "no trace at {}: record one first (`cargo carve record --test NAME`), or pass --db",
                db.display()
            );
        }
        Ok(db)
    }
}

fn package_dir(p: &Package) -> PathBuf {
    p.manifest_path
        .parent()
        .map(|d| d.as_std_path().to_path_buf())
        .unwrap_or_default()
}

fn is_library(t: &Target) -> bool {
    t.is_lib() || t.is_rlib() || t.is_dylib()
}

/// A target's crate name as paths spell it (`my-lib` is `my_lib`).
fn crate_name(target: &str) -> String {
    target.replace('-', "_")
}

/// What to build, checked against the package's targets.
enum Wanted<'p> {
    Test(&'p Target),
    Example(&'p Target),
    Bin(&'p Target),
    LibTests(&'p Target),
}

fn choose<'p>(package: &'p Package, b: &Build) -> anyhow::Result<Wanted<'p>> {
    let of = |kind: fn(&Target) -> bool| -> Vec<&'p Target> {
        package.targets.iter().filter(|t| kind(t)).collect()
    };
    let list = |targets: &[&Target]| {
        if targets.is_empty() {
            "none".to_string()
        } else {
            targets
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    let find = |name: &str, kind: fn(&Target) -> bool, what: &str, flag: &str| {
        let targets = of(kind);
        targets
            .iter()
            .find(|t| t.name == name)
            .copied()
            .with_context(|| {
                format!(
                    "package `{}` has no {what} `{name}`: its {what}s are {}; choose one with --{flag} NAME",
                    package.name,
                    list(&targets)
                )
            })
    };
    if let Some(name) = &b.test {
        return Ok(Wanted::Test(find(
            name,
            Target::is_test,
            "integration test",
            "test",
        )?));
    }
    if let Some(name) = &b.example {
        return Ok(Wanted::Example(find(
            name,
            Target::is_example,
            "example",
            "example",
        )?));
    }
    if let Some(name) = &b.bin {
        return Ok(Wanted::Bin(find(name, Target::is_bin, "binary", "bin")?));
    }
    if b.lib_tests {
        return match of(is_library).first() {
            Some(lib) => Ok(Wanted::LibTests(lib)),
            None => bail!(
                "package `{}` has no library, so no --lib-tests: choose --test, --example or --bin",
                package.name
            ),
        };
    }
    match of(Target::is_bin).as_slice() {
        [only] => Ok(Wanted::Bin(only)),
        _ => bail!(
            "choose what of package `{}` to record: --test NAME (integration tests: {}), --example NAME (examples: {}), --bin NAME (binaries: {}) or --lib-tests",
            package.name,
            list(&of(Target::is_test)),
            list(&of(Target::is_example)),
            list(&of(Target::is_bin))
        ),
    }
}

/// `--lib-tests`: refuses a library with no unit test (or none its filter keeps), before
/// anything is recorded, and leaves the test harness's own `main` (rustc writes it into the
/// library's root) out of the recording unless the library declares a `main` of its own.
fn lib_tests(
    package: &Package,
    harness: &Path,
    args: &[std::ffi::OsString],
    a: &mut crate::args::RecordArgs,
) -> anyhow::Result<()> {
    let Some(lib) = package.targets.iter().find(|t| is_library(t)) else {
        return Ok(());
    };
    let listed = Command::new(harness)
        .arg("--list")
        .args(args)
        .current_dir(package_dir(package))
        .stdin(std::process::Stdio::null())
        .output()
        .with_context(|| format!("listing the unit tests of {}", harness.display()))?;
    let tests = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .filter(|l| l.ends_with(": test"))
        .count();
    if listed.status.success() && tests == 0 {
        let filter = if args.is_empty() {
            String::new()
        } else {
            let words: Vec<_> = args.iter().map(|a| a.to_string_lossy()).collect();
            format!(" matching `{}`", words.join(" "))
        };
        bail!(
            "the library of package `{}` has no unit tests{filter} (#[test] functions in {}): nothing for --lib-tests to record; record what does call it instead: --test NAME (integration tests: {}), --example NAME (examples: {}) or --bin NAME (binaries: {})",
            package.name,
            lib.src_path.as_str(),
            names(package, Target::is_test),
            names(package, Target::is_example),
            names(package, Target::is_bin),
        );
    }
    let declares_main =
        std::fs::read_to_string(&lib.src_path).map_or(true, |source| source.contains("fn main("));
    if !declares_main {
        a.excludes.push(format!("{}::main", crate_name(&lib.name)));
    }
    Ok(())
}

/// The names of the package's targets of a kind, or `none`.
fn names(package: &Package, kind: fn(&Target) -> bool) -> String {
    let names: Vec<&str> = package
        .targets
        .iter()
        .filter(|t| kind(t))
        .map(|t| t.name.as_str())
        .collect();
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

/// Builds what `b` asks for with debug info; returns the executable cargo reported, what it
/// is ("integration test `it`") and the features it was built with beyond the package's
/// defaults.
fn build(
    package: &Package,
    b: &Build,
    quiet: bool,
) -> anyhow::Result<(PathBuf, String, Vec<String>)> {
    let wanted = choose(package, b)?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(&cargo);
    let (target, describe) = match &wanted {
        Wanted::Test(t) => {
            cmd.args(["test", "--no-run", "--test", &t.name]);
            (t, format!("integration test `{}`", t.name))
        }
        Wanted::LibTests(t) => {
            cmd.args(["test", "--no-run", "--lib"]);
            (t, "library's unit tests".to_string())
        }
        Wanted::Example(t) => {
            cmd.args(["build", "--example", &t.name]);
            (t, format!("example `{}`", t.name))
        }
        Wanted::Bin(t) => {
            cmd.args(["build", "--bin", &t.name]);
            (t, format!("binary `{}`", t.name))
        }
    };
    cmd.arg("--manifest-path")
        .arg(package.manifest_path.as_std_path())
        // `name@version`: a package whose name another version in the graph shares (a
        // dev-dependency's own itertools) is ambiguous by its name alone.
        .args([
            "--package",
            &format!("{}@{}", package.name, package.version),
        ])
        .arg("--message-format=json-render-diagnostics");
    // The recorder needs full debug info: the release profile has none, and a package may have
    // turned the dev profile's down. `true` is the dev profile's own default, so a package that
    // kept it is not rebuilt.
    if b.release {
        cmd.arg("--release")
            .env("CARGO_PROFILE_RELEASE_DEBUG", "true");
    } else {
        cmd.env("CARGO_PROFILE_DEV_DEBUG", "true");
    }
    for f in &b.features {
        cmd.args(["--features", f]);
    }
    // What the target itself requires (`required-features`), as `cargo test` would otherwise
    // refuse to build it.
    if !target.required_features.is_empty() && !b.all_features {
        cmd.args(["--features", &target.required_features.join(",")]);
    }
    if b.all_features {
        cmd.arg("--all-features");
    }
    if b.no_default_features {
        cmd.arg("--no-default-features");
    }
    if quiet {
        cmd.arg("--quiet");
    }
    let mut child = cmd
        .stdout(Stdio::piped())
        .spawn()
        .with_context(|| format!("running {}", Path::new(&cargo).display()))?;
    let stdout = child.stdout.take().context("reading cargo's output")?;
    let mut found: Option<PathBuf> = None;
    let mut features = Vec::new();
    for message in Message::parse_stream(BufReader::new(stdout)) {
        let Message::CompilerArtifact(artifact) =
            message.context("reading cargo's JSON messages")?
        else {
            continue;
        };
        let ours = artifact.package_id == package.id
            && artifact.target.name == target.name
            && artifact.target.kind == target.kind
            && artifact.profile.test == matches!(wanted, Wanted::Test(_) | Wanted::LibTests(_));
        if let (true, Some(exe)) = (ours, artifact.executable) {
            found = Some(exe.into_std_path_buf());
            features = beyond_defaults(package, &artifact.features);
        }
    }
    let status = child.wait().context("waiting for cargo")?;
    if !status.success() {
        bail!(
            "building the {describe} of package `{}` failed ({status}): see cargo's messages above",
            package.name
        );
    }
    let exe = found.with_context(|| {
        format!(
            "cargo built the {describe} of package `{}` but reported no executable for it",
            package.name
        )
    })?;
    Ok((exe, describe, features))
}

/// The features of `enabled` that the package's `default` feature does not turn on (itself
/// or through the features it names), in cargo's order.
fn beyond_defaults(package: &Package, enabled: &[String]) -> Vec<String> {
    let mut defaults = BTreeSet::from(["default".to_string()]);
    let mut todo = vec!["default".to_string()];
    while let Some(feature) = todo.pop() {
        for named in package.features.get(&feature).into_iter().flatten() {
            // `dep:x` and `x/feature` name dependencies, not features of the package.
            if !named.contains([':', '/']) && defaults.insert(named.clone()) {
                todo.push(named.clone());
            }
        }
    }
    enabled
        .iter()
        .filter(|f| !defaults.contains(*f))
        .cloned()
        .collect()
}
