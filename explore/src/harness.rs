//! The harness: one Rust program per crate that runs call sequences in process. In, the
//! explorable calls and their pools; out, the program's source (this file), built once
//! (`build.rs`: what does not compile is taken out) and fed sequences on stdin (`run.rs`).
//!
//! The program reads one sequence a line (call numbers, as `strategy::Space` numbers them)
//! and answers one line per call it ran (`o DEBUG`: returned, with the result's `Debug` when
//! it has one; `u`: returned, no `Debug`; `p MESSAGE`: panicked; `x`: the receiver's slot was
//! empty), each after a line `c G...` when the call ran coverage guards no call ran before in
//! this process (`lines.rs` places them), and a last line `. E` saying why the sequence ended (`d` done, `p` a panic, `x` an
//! empty slot, `r` a state already reached by another prefix: JET's redundancy, judged on the
//! `Debug` text of every object slot; `s` skipped: its next prefix ended that way before, so
//! the harness does not run it again). Each call runs under `catch_unwind`; what the library
//! prints goes to `/dev/null`, the answers to a copy of the original stdout.

pub mod build;
pub mod run;
mod runtime;

use std::fmt::Write as _;

use crate::api::{Callable, Explorable, Made, Pass, PoolKind};
use crate::pools::{harness_literal, Pools};
use crate::strategy::Space;

/// Object slots per type: a method's receiver and a constructor's result each pick one.
pub const SLOTS: u64 = 2;

/// A part of the harness source that can be taken out when it does not compile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The dispatch arm of callable N.
    Arm(usize),
    /// The `Default` start of object type N's slots.
    Default(usize),
    /// Where object type N's slots name its type.
    Slots(usize),
}

/// The harness program and where each part of it lies.
#[derive(Debug, Clone)]
pub struct Source {
    pub text: String,
    /// (part, first line, last line), lines from 1.
    pub parts: Vec<(Part, usize, usize)>,
}

impl Source {
    /// The part holding `line`.
    pub fn part_at(&self, line: usize) -> Option<Part> {
        self.parts
            .iter()
            .find(|(_, a, b)| (*a..=*b).contains(&line))
            .map(|(p, _, _)| *p)
    }
}

/// How the harness numbers the calls of `callables` (`None` as for [`Space::new`]).
pub fn space(callables: &[Callable], pools: &Pools) -> Option<Space> {
    Space::new(callables.iter().map(|c| dims(c, pools)).collect())
}

/// The radix of each index of `c`: receiver slot, each argument's pool, result slot.
pub fn dims(c: &Callable, pools: &Pools) -> Vec<u64> {
    let mut d = Vec::new();
    if c.receiver.is_some() {
        d.push(SLOTS);
    }
    d.extend(c.params.iter().map(|p| match p.kind {
        PoolKind::Object(_) => SLOTS,
        _ => pools.get(&p.kind).len() as u64,
    }));
    if c.makes.is_some() {
        d.push(SLOTS);
    }
    d
}

/// The Rust type of a pool's elements.
fn pool_type(kind: &PoolKind) -> String {
    match kind {
        PoolKind::Scalar(t) => t.clone(),
        PoolKind::Str => "&str".to_string(),
        PoolKind::Slice(t) => format!("&[{t}]"),
        PoolKind::NonZero(t) => format!("std::num::NonZero<{t}>"),
        PoolKind::Option(inner) => format!("Option<{}>", pool_type(inner)),
        PoolKind::Texts => "&[&str]".to_string(),
        PoolKind::Range(t) => format!("(std::ops::Bound<{t}>, std::ops::Bound<{t}>)"),
        PoolKind::Closure(t) => t.clone(),
        PoolKind::Object(_) => "()".to_string(),
    }
}

/// The harness's name for the pool of `kind`.
fn pool_name(pools: &Pools, kind: &PoolKind) -> String {
    let i = pools.by_kind.keys().position(|k| k == kind).unwrap_or(0);
    format!("P{i}")
}

/// Lines of source, counting as they are written.
struct Lines {
    text: String,
    line: usize,
}

impl Lines {
    fn push(&mut self, s: &str) {
        for l in s.lines() {
            self.text.push_str(l);
            self.text.push('\n');
            self.line += 1;
        }
    }
}

const PRELUDE: &str = r#"#![allow(unused, clippy::all)]
use std::hash::{Hash, Hasher};
use std::io::{BufRead, Write};
use std::os::fd::FromRawFd;

struct Show<'a, T: ?Sized>(&'a T);
trait ViaDebug {
    fn show(&self) -> Option<String>;
}
impl<T: std::fmt::Debug + ?Sized> ViaDebug for Show<'_, T> {
    fn show(&self) -> Option<String> {
        Some(format!("{:?}", self.0))
    }
}
trait NoDebug {
    fn show(&self) -> Option<String>;
}
impl<T: ?Sized> NoDebug for &Show<'_, T> {
    fn show(&self) -> Option<String> {
        None
    }
}
trait ViaDisplay {
    fn text(&self) -> Option<String>;
}
impl<T: std::fmt::Display + ?Sized> ViaDisplay for Show<'_, T> {
    fn text(&self) -> Option<String> {
        Some(self.0.to_string())
    }
}
trait NoDisplay {
    fn text(&self) -> Option<String>;
}
impl<T: ?Sized> NoDisplay for &Show<'_, T> {
    fn text(&self) -> Option<String> {
        None
    }
}
// An error's `Display` text, what its user reads (`Err(e)` whose `E: Display`).
trait ViaErrDisplay {
    fn err_text(&self) -> Option<String>;
}
impl<T, E: std::fmt::Display> ViaErrDisplay for Show<'_, Result<T, E>> {
    fn err_text(&self) -> Option<String> {
        self.0.as_ref().err().map(|e| e.to_string())
    }
}
trait NoErrDisplay {
    fn err_text(&self) -> Option<String>;
}
impl<T: ?Sized> NoErrDisplay for &Show<'_, T> {
    fn err_text(&self) -> Option<String> {
        None
    }
}

// A sequence asked with `s` answers the `Display` text of each result too (`d` lines), and of
// each error it returned (`e` lines): only then, as formatting every result would slow the
// search.
thread_local! {
    static SHOWING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    static SHOWN: std::cell::RefCell<(Option<String>, Option<String>)> =
        const { std::cell::RefCell::new((None, None)) };
}
fn showing() -> bool {
    SHOWING.with(|s| s.get())
}
fn shown(text: Option<String>, error: Option<String>) {
    SHOWN.with(|s| *s.borrow_mut() = (text, error));
}

enum Outcome {
    Returned(Option<String>),
    Panicked(String),
    NoReceiver,
}

/// Whether a reader of files was given a path out of the world: absolute, or through `..`.
fn outside_world(path: &str) -> bool {
    path.starts_with('/') || path.split('/').any(|p| p == "..")
}

fn run(f: impl FnOnce() -> Option<String>) -> Outcome {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(s) => Outcome::Returned(s),
        Err(p) => Outcome::Panicked(
            p.downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "(a panic without a message)".to_string()),
        ),
    }
}

fn digits(mut rest: u64, dims: &[u64]) -> Vec<usize> {
    let mut d = vec![0; dims.len()];
    for (i, &radix) in dims.iter().enumerate().rev() {
        d[i] = (rest % radix) as usize;
        rest /= radix;
    }
    d
}

fn hash(s: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}

extern "C" {
    fn dup(fd: i32) -> i32;
    fn dup2(from: i32, to: i32) -> i32;
}

/// The comparison outcomes first met since the last call, as a `k` line (site offset times
/// four plus the outcome; none when none). The callbacks are in `carve_explore_rt`.
fn new_compares(out: &mut impl Write) {
    answer_line(out, "k", &carve_explore_rt::take_compares());
}

/// The guards first run since the last call, as a `c` line (none when none ran).
fn new_guards(out: &mut impl Write) {
    answer_line(out, "c", &carve_explore_rt::take_guards());
}

/// `TAG N N...`, when there is an N.
fn answer_line(out: &mut impl Write, tag: &str, items: &[impl std::fmt::Display]) {
    if items.is_empty() {
        return;
    }
    let mut line = String::from(tag);
    for item in items {
        line.push(' ');
        line.push_str(&item.to_string());
    }
    let _ = writeln!(out, "{line}");
}

/// `--pcs`: each guard's address less the executable's load address, one a line.
fn print_pcs() {
    let base = load_base();
    let (beg, end) = carve_explore_rt::pcs();
    let mut out = std::io::BufWriter::new(std::io::stdout());
    let mut p = beg;
    while !p.is_null() && p < end {
        let _ = writeln!(out, "{:x}", unsafe { *p }.wrapping_sub(base));
        p = unsafe { p.add(2) };
    }
    let _ = out.flush();
}

/// Where the executable is loaded (its first mapping).
fn load_base() -> usize {
    let exe = std::fs::canonicalize("/proc/self/exe").unwrap_or_default();
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    maps.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let path = std::path::Path::new(*f.get(5)?);
            (path == exe && *f.get(2)? == "00000000")
                .then(|| usize::from_str_radix(f[0].split('-').next()?, 16).ok())?
        })
        .next()
        .unwrap_or(0)
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("--pcs") {
        print_pcs();
        return;
    }
    carve_explore_rt::set_base(load_base());
    // `--crate-code FILE`: the crate's own code, a `start end` line (hex offsets) per range
    // (a file that cannot be read leaves every comparison traced, as without it).
    let args: Vec<String> = std::env::args().collect();
    let crate_code = (args.iter().position(|a| a == "--crate-code"))
        .and_then(|i| args.get(i + 1))
        .and_then(|f| std::fs::read_to_string(f).ok());
    if let Some(text) = crate_code {
        let ranges = text
            .split_ascii_whitespace()
            .filter_map(|w| u64::from_str_radix(w, 16).ok())
            .collect();
        carve_explore_rt::set_crate_code(ranges);
    }
    // Functions that read files read the world rebuilt from the recording (`world.rs`).
    if let Some(dir) = WORLD {
        if std::env::set_current_dir(dir).is_err() {
            std::process::exit(3);
        }
    }
    std::panic::set_hook(Box::new(|_| {}));
    // Answers go to a copy of stdout; the library's own prints to /dev/null.
    let answers = unsafe { std::fs::File::from_raw_fd(dup(1)) };
    if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
        unsafe { dup2(std::os::fd::AsRawFd::as_raw_fd(&null), 1) };
    }
    let mut out = std::io::BufWriter::new(answers);
    // The prefix that first reached each state (by hash), and the prefixes not to extend.
    let mut first: std::collections::HashMap<u64, u64> = std::collections::HashMap::new();
    let mut dead: std::collections::HashSet<u64> = std::collections::HashSet::new();
    // Answers are flushed when the input runs dry (a batch is done) or every 50 ms, not per
    // sequence: the runner finds the sequence a crash belongs to by running them alone.
    let mut input = std::io::BufReader::with_capacity(1 << 16, std::io::stdin());
    let mut line = String::new();
    let mut flushed = std::time::Instant::now();
    loop {
        if input.buffer().is_empty() || flushed.elapsed().as_millis() >= 50 {
            let _ = out.flush();
            flushed = std::time::Instant::now();
        }
        line.clear();
        match input.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        // `s N N…`: run the calls whole and answer each object's state after them; `v N N…`:
        // run them whole and answer the operands of each call's comparisons.
        let (states, operands, words) = match line.split_at_checked(1) {
            Some(("s", rest)) => (true, false, rest),
            Some(("v", rest)) => (false, true, rest),
            _ => (false, false, line.as_str()),
        };
        let whole = states || operands;
        let calls: Vec<u64> = words
            .split_ascii_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect();
        SHOWING.with(|s| s.set(states));
        let mut st = State::new();
        let mut prefix: u64 = 0xcbf2_9ce4_8422_2325;
        if let Some(k) = st.key() {
            first.entry(hash(&k)).or_insert(prefix);
        }
        let mut end = 'd';
        for (i, &c) in calls.iter().enumerate() {
            let next = (prefix ^ c).wrapping_mul(0x100_0000_01b3);
            if !whole && dead.contains(&next) {
                end = 's';
                break;
            }
            prefix = next;
            carve_explore_rt::note_operands_from_now(operands);
            let outcome = call(&mut st, c);
            carve_explore_rt::note_operands_from_now(false);
            new_guards(&mut out);
            new_compares(&mut out);
            if operands {
                answer_line(&mut out, "v", &carve_explore_rt::take_operands());
            }
            let (text, error) = SHOWN.with(|s| std::mem::take(&mut *s.borrow_mut()));
            for (tag, t) in [("d", text), ("e", error)] {
                if let Some(t) = t.filter(|t| !t.contains('\n')) {
                    let _ = writeln!(out, "{tag} {t}");
                }
            }
            match outcome {
                Outcome::Returned(Some(s)) => {
                    let _ = writeln!(out, "o {}", s.replace('\n', "\\n"));
                }
                Outcome::Returned(None) => {
                    let _ = writeln!(out, "u");
                }
                Outcome::Panicked(m) => {
                    let _ = writeln!(out, "p {:?}", m);
                    end = 'p';
                }
                Outcome::NoReceiver => {
                    let _ = writeln!(out, "x");
                    end = 'x';
                }
            }
            if end == 'd' && i + 1 < calls.len() && !whole {
                if let Some(k) = st.key() {
                    if *first.entry(hash(&k)).or_insert(prefix) != prefix {
                        end = 'r';
                    }
                }
            }
            if end != 'd' {
                if !whole {
                    dead.insert(prefix);
                }
                break;
            }
        }
        if states {
            st.states(&mut out);
        }
        let _ = writeln!(out, ". {end}");
        if first.len() > 4_000_000 || dead.len() > 4_000_000 {
            first.clear();
            dead.clear();
        }
    }
    let _ = out.flush();
}
"#;

/// The harness source for `ex`'s callables (`defaults[i]`: start object type i's slots with
/// `Default`).
pub fn source(ex: &Explorable, pools: &Pools, defaults: &[bool]) -> Source {
    let mut l = Lines {
        text: String::new(),
        line: 0,
    };
    let mut parts = Vec::new();
    l.push(&format!(
        "//! carve explore's harness for `{}`. Generated: do not edit.",
        ex.crate_name
    ));
    l.push(PRELUDE);
    // A result the caller picks the collection of is collected into it too (`trait_calls.rs`).
    l.push(crate::trait_calls::COLLECTED);
    let world = ex.world.as_ref().and_then(|w| w.dir.as_ref());
    l.push(&format!(
        "const WORLD: Option<&str> = {};",
        match world {
            Some(dir) => format!("Some({:?})", dir.display().to_string()),
            None => "None".to_string(),
        }
    ));
    for (kind, values) in &pools.by_kind {
        let lits: Vec<String> = values.iter().map(|v| harness_literal(kind, v)).collect();
        l.push(&format!(
            "const {}: &[{}] = &[{}];",
            pool_name(pools, kind),
            pool_type(kind),
            lits.join(", ")
        ));
    }
    l.push("struct State {");
    for (i, o) in ex.objects.iter().enumerate() {
        l.push(&format!("    o{i}: [Option<{}>; {SLOTS}],", o.slot_type()));
        parts.push((Part::Slots(i), l.line, l.line));
    }
    l.push("}");
    for (i, o) in ex.objects.iter().enumerate() {
        l.push(&format!("fn start_o{i}() -> Option<{}> {{", o.slot_type()));
        parts.push((Part::Slots(i), l.line, l.line));
        let start = l.line + 1;
        if defaults.get(i).copied().unwrap_or(false) {
            l.push(&format!(
                "    Some(<{} as Default>::default())\n}}",
                o.slot_type()
            ));
            parts.push((Part::Default(i), start, start));
        } else {
            l.push("    None\n}");
        }
    }
    state_impl(&mut l, ex, &mut parts);
    dispatch(&mut l, ex, pools, &mut parts);
    Source {
        text: l.text,
        parts,
    }
}

fn state_impl(l: &mut Lines, ex: &Explorable, parts: &mut Vec<(Part, usize, usize)>) {
    l.push("impl State {\n    fn new() -> State {\n        State {");
    for i in 0..ex.objects.len() {
        let starts = vec![format!("start_o{i}()"); SLOTS as usize];
        l.push(&format!("            o{i}: [{}],", starts.join(", ")));
    }
    l.push("        }\n    }\n    fn key(&self) -> Option<String> {\n        let mut k = String::new();");
    for i in 0..ex.objects.len() {
        l.push(&format!(
            "        k.push_str(&(&Show(&self.o{i})).show()?);"
        ));
    }
    l.push("        Some(k)\n    }");
    // Each filled slot's `Debug` as `s OBJECT SLOT TEXT` and `Display` as `t OBJECT SLOT
    // TEXT` (one line: a text that spans lines is not answered).
    l.push("    fn states(&self, out: &mut impl Write) {");
    for i in 0..ex.objects.len() {
        for (tag, via) in [("s", "show"), ("t", "text")] {
            l.push(&format!(
                "        for (j, v) in self.o{i}.iter().enumerate() {{\n            \
                 if let Some(t) = v.as_ref().and_then(|v| (&Show(v)).{via}()).filter(|t| !t.contains('\\n')) {{\n                \
                 let _ = writeln!(out, \"{tag} {i} {{j}} {{t}}\");\n            }}\n        }}"
            ));
        }
        // Each getter's answer as `g OBJECT SLOT CALLABLE TEXT`: its lines are its arm's, so
        // a getter whose call does not compile goes with its arm.
        for k in ex.getters(i) {
            let start = l.line + 1;
            l.push(&format!(
                "        for (j, v) in self.o{i}.iter().enumerate() {{\n            \
                 let Some(v) = v.as_ref() else {{ continue }};\n            \
                 let got = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {{ let r = v.{}(); (&Show(&r)).show() }}));\n            \
                 if let Ok(Some(t)) = got {{ if !t.contains('\\n') {{ let _ = writeln!(out, \"g {i} {{j}} {k} {{t}}\"); }} }}\n        }}",
                ex.callables[k].call
            ));
            parts.push((Part::Arm(k), start, l.line));
        }
    }
    l.push("    }\n}");
}

fn dispatch(l: &mut Lines, ex: &Explorable, pools: &Pools, parts: &mut Vec<(Part, usize, usize)>) {
    let mut starts = Vec::new();
    let mut all_dims = Vec::new();
    let mut next = 0u64;
    for c in &ex.callables {
        let d = dims(c, pools);
        starts.push(next.to_string());
        next += d.iter().product::<u64>();
        let d: Vec<String> = d.iter().map(u64::to_string).collect();
        all_dims.push(format!("&[{}]", d.join(", ")));
    }
    l.push(&format!("const STARTS: &[u64] = &[{}];", starts.join(", ")));
    l.push(&format!(
        "const DIMS: &[&[u64]] = &[{}];",
        all_dims.join(", ")
    ));
    l.push("fn call(st: &mut State, c: u64) -> Outcome {");
    l.push("    let f = STARTS.partition_point(|&s| s <= c) - 1;");
    l.push("    let d = digits(c - STARTS[f], DIMS[f]);");
    l.push("    match f {");
    for (i, c) in ex.callables.iter().enumerate() {
        let start = l.line + 1;
        let reads_files = ex
            .world
            .as_ref()
            .is_some_and(|w| w.readers.contains(&c.path));
        l.push(&arm(i, (c, reads_files), pools));
        parts.push((Part::Arm(i), start, l.line));
    }
    l.push("        _ => unreachable!(),\n    }\n}");
}

/// The expression a harness arm passes for pool value `pool[index]` handed over as `pass`.
fn argument(pool: &str, index: &str, kind: &PoolKind, pass: Pass) -> String {
    let at = format!("{pool}[{index}]");
    match (pass, kind) {
        (Pass::Value, _) => at,
        (Pass::Ref, _) => format!("&{at}"),
        (Pass::Owned, PoolKind::Str) => format!("{at}.to_string()"),
        (Pass::Owned, _) => format!("{at}.to_vec()"),
        (Pass::RefOwned, PoolKind::Str) => format!("&{at}.to_string()"),
        (Pass::RefOwned, _) => format!("&{at}.to_vec()"),
        (Pass::MutOwned, PoolKind::Str) => format!("&mut {at}.to_string()"),
        (Pass::MutOwned, _) => format!("&mut {at}.to_vec()"),
        (Pass::Unsized, _) => format!("{at}.to_vec().into_iter().filter(|_| true)"),
    }
}

/// One dispatch arm: the arguments from the pools, the receiver from its slot, the call under
/// `catch_unwind`, the result's `Debug`, and the made object into its slot.
fn arm(i: usize, (c, reads_files): (&Callable, bool), pools: &Pools) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "        // {}", c.path);
    let _ = writeln!(s, "        {i} => {{");
    let mut target = c.call.clone();
    let (mut args, mut borrowed) = arguments((c, reads_files), pools);
    // A receiver taken by value goes first, as in a test (`a.into_x(a.clone())` does not
    // compile): an argument from its slot then finds it empty.
    let by_value = c.receiver.is_some_and(|r| r.by_value);
    if by_value {
        borrowed.splice(0..0, args.drain(..));
    }
    for line in args {
        let _ = writeln!(s, "{line}");
    }
    if let Some(r) = c.receiver {
        let get = match (r.by_value, r.mutable) {
            (true, _) => "take",
            (false, true) => "as_mut",
            (false, false) => "as_ref",
        };
        let _ = writeln!(
            s,
            "            let Some(recv) = st.o{}[d[0]].{get}() else {{ return Outcome::NoReceiver }};",
            r.object
        );
        // An operator's receiver is the place it assigns to: `(*recv) += a0`.
        target = match c.is_operator() {
            true => format!("(*recv).{}", c.call),
            false => format!("recv.{}", c.call),
        };
    }
    for line in borrowed {
        let _ = writeln!(s, "{line}");
    }
    let digit = usize::from(c.receiver.is_some()) + c.params.len();
    let buffers: Vec<usize> = (c.params.iter().enumerate())
        .filter(|(_, p)| p.pass == Pass::MutOwned)
        .map(|(k, _)| k)
        .collect();
    let args: Vec<String> = (0..c.params.len())
        .map(|k| match buffers.contains(&k) {
            true => format!("&mut a{k}"),
            false => format!("a{k}"),
        })
        .collect();
    // The result's text, then what each buffer holds after the call (see `run::BUFFER`).
    let shown_buffers: String = buffers
        .iter()
        .map(|k| format!(".map(|t| format!(\"{{t}}\\u{{1f}}{{:?}}\", a{k}))"))
        .collect();
    let call = c.written(&target, &args);
    match c.makes {
        None => {
            let _ = writeln!(
                s,
                "            run(|| {{ let r = {call}; if showing() {{ shown((&Show(&r)).text(), (&Show(&r)).err_text()); }} (&Show(&r)).show(){shown_buffers} }})"
            );
        }
        Some((object, made)) => {
            let keep = match made.shape() {
                Made::Result => "r.ok()",
                Made::Option => "r",
                _ => "Some(r)",
            };
            let _ = writeln!(s, "            let mut made = None;");
            let _ = writeln!(
                s,
                "            let o = run(|| {{ let r = {call}; let s = (&Show(&r)).show(){shown_buffers}; if showing() {{ shown((&Show(&r)).text(), (&Show(&r)).err_text()); }} made = {keep}; s }});"
            );
            let _ = writeln!(
                s,
                "            if let Some(v) = made {{ st.o{object}[d[{digit}]] = Some(v); }}"
            );
            let _ = writeln!(s, "            o");
        }
    }
    let _ = writeln!(s, "        }}");
    s
}

/// The lines that take a call's arguments, from the pools (a reader of files refuses a path
/// out of its world, `world.rs`) or from object slots: those taken before the receiver is
/// borrowed, and those after.
fn arguments((c, reads_files): (&Callable, bool), pools: &Pools) -> (Vec<String>, Vec<String>) {
    // The receiver's digit comes first; the arguments, and object arguments that are clones,
    // are taken before the receiver is borrowed (`recv += a0` with both from one type's slots).
    let first_param = usize::from(c.receiver.is_some());
    let mut args = Vec::new();
    let mut borrowed = Vec::new();
    for (k, p) in c.params.iter().enumerate() {
        let digit = first_param + k;
        if let PoolKind::Object(o) = p.kind {
            // From the slot, like a receiver: an empty one ends the sequence.
            let (get, lines) = match p.pass {
                Pass::Ref => ("as_ref()", &mut borrowed),
                _ => ("clone()", &mut args),
            };
            lines.push(format!(
                "            let Some(a{k}) = st.o{o}[d[{digit}]].{get} else {{ return Outcome::NoReceiver }};"
            ));
            continue;
        }
        let pool = pool_name(pools, &p.kind);
        let value = argument(&pool, &format!("d[{digit}]"), &p.kind, p.pass);
        match value.strip_prefix("&mut ") {
            // A buffer the call writes into: owned here, lent to the call, shown after it.
            Some(owned) if p.pass == Pass::MutOwned => {
                args.push(format!("            let mut a{k} = {owned};"));
            }
            _ => args.push(format!("            let a{k} = {value};")),
        }
        if reads_files && p.kind == PoolKind::Str {
            args.push(format!(
                "            if outside_world(&a{k}) {{ return Outcome::NoReceiver }}"
            ));
        }
    }
    (args, borrowed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata;

    fn gauge() -> (Explorable, Pools) {
        let ex = testdata::gauge_api(vec![testdata::getter("level", "u8")]);
        (ex, testdata::pools(Vec::new()))
    }

    #[test]
    fn each_callable_gets_an_arm_and_its_lines_are_known() {
        let (ex, pools) = gauge();
        let src = source(&ex, &pools, &[true]);
        assert!(src.text.contains("const P0: &[u8] = &[0u8, u8::MAX];"));
        assert!(src
            .text
            .contains("const DIMS: &[&[u64]] = &[&[2, 2], &[2]];"));
        assert!(src.text.contains("let r = g::Gauge::new(a0);"));
        assert!(src.text.contains("let r = recv.level();"));
        let lines: Vec<&str> = src.text.lines().collect();
        // The getter's lines: its arm, and its answer after a sequence asked with `s`.
        let texts: Vec<(usize, String)> = (src.parts.iter())
            .filter(|p| p.0 == Part::Arm(1))
            .map(|(_, a, b)| (*a, lines[a - 1..*b].join("\n")))
            .collect();
        assert_eq!(texts.len(), 2);
        let (a, arm) = &texts[1];
        assert!(
            arm.contains("g::Gauge::level") && arm.contains("recv.level()"),
            "{arm}"
        );
        assert!(texts[0].1.contains("let r = v.level();"), "{}", texts[0].1);
        assert_eq!(src.part_at(*a), Some(Part::Arm(1)));
        assert!(src.parts.iter().any(|p| p.0 == Part::Default(0)));
        assert!(syn::parse_file(&src.text).is_ok(), "{}", src.text);
    }

    #[test]
    fn a_type_without_default_starts_with_empty_slots() {
        let (ex, pools) = gauge();
        let src = source(&ex, &pools, &[false]);
        assert!(src
            .text
            .contains("fn start_o0() -> Option<g::Gauge> {\n    None\n}"));
        assert!(!src.parts.iter().any(|p| p.0 == Part::Default(0)));
    }
}
