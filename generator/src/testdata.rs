//! The recorded run of `testdata/rulebook`, a small real program that goes through every rule
//! of the rule families (`act/rules/`, `arrange/rebuild/`, `assert/rules/`): each rule's test
//! carves one of its recorded calls through the rule and checks what the rule decided. The
//! trace was recorded once (`testdata/rulebook/record.sh`); its source paths are pointed at
//! the crate here, as if it had been recorded where it stands.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::OnceLock;

use carve_storage::{Call, CallId, FunctionId, FunctionInfo, Store, Trace};

use crate::act::rules::resolve;
use crate::act::target::{Callable, Target};
use crate::arrange::builder::Builder;
use crate::arrange::context::Ctx;
use crate::arrange::values::strip_ref;
use crate::arrange::wanted::Wanted;
use crate::assert::subject::{Observation, Subject};
use crate::read::crate_api::CrateApi;

/// The crate, its recorded run and what the rules need of it.
pub(crate) struct Rulebook {
    pub(crate) trace: Trace,
    pub(crate) api: CrateApi,
    targets: HashMap<FunctionId, Target>,
    children: HashMap<Option<CallId>, Vec<usize>>,
    none: BTreeMap<CallId, Vec<CallId>>,
    no_cap: BTreeMap<FunctionId, usize>,
}

/// The rulebook, read once per test binary.
pub(crate) fn rulebook() -> &'static Rulebook {
    static ONCE: OnceLock<Rulebook> = OnceLock::new();
    ONCE.get_or_init(Rulebook::load)
}

impl Rulebook {
    fn load() -> Rulebook {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/rulebook");
        let store = Store::open(&dir.join("trace.db")).expect("testdata/rulebook/trace.db opens");
        let run = store.latest_run().unwrap().expect("a recorded run");
        let mut trace = store.load_trace(run).unwrap();
        for f in &mut trace.functions {
            f.decl_file = f.decl_file.as_deref().map(|file| here(&dir, file));
        }
        let api = CrateApi::load(&dir).expect("testdata/rulebook reads");
        let targets = trace
            .functions
            .iter()
            .map(|f| (f.id, resolve(&api, f)))
            .collect();
        let mut children: HashMap<Option<CallId>, Vec<usize>> = HashMap::new();
        for (i, call) in trace.calls.iter().enumerate() {
            children.entry(call.parent).or_default().push(i);
        }
        Rulebook {
            trace,
            api,
            targets,
            children,
            none: BTreeMap::new(),
            no_cap: BTreeMap::new(),
        }
    }

    /// The recorded function at `path`.
    pub(crate) fn function(&self, path: &str) -> &FunctionInfo {
        self.trace
            .functions
            .iter()
            .find(|f| f.path == path)
            .unwrap_or_else(|| panic!("{path} was not recorded"))
    }

    /// The recorded calls of the function at `path`, in recording order.
    pub(crate) fn calls_of(&self, path: &str) -> Vec<&Call> {
        let id = self.function(path).id;
        self.trace
            .calls
            .iter()
            .filter(|c| c.function == id)
            .collect()
    }

    /// How a test calls the function at `path` (it must be callable).
    pub(crate) fn callable(&self, path: &str) -> &Callable {
        match self.targets.get(&self.function(path).id) {
            Some(Target::Callable(c)) => c,
            _ => panic!("{path} is not callable"),
        }
    }

    /// What a rebuild rule is asked for the receiver of call `n` (in recording order) of the
    /// method at `path`: an object of `type_path` in the state the call found it in, bound to
    /// `receiver`.
    pub(crate) fn receiver(&self, path: &str, n: usize, type_path: &'static str) -> Wanted<'_> {
        let call = self.calls_of(path)[n];
        Wanted {
            state: strip_ref(call.arg("self").expect("a method call")),
            object: call.object("self"),
            type_path,
            before: call.id,
            var: "receiver",
            mutable: false,
        }
    }

    /// What the rules of `arrange/rebuild.rs` decided for the receiver of call `n` of the
    /// method at `path`: the rule that built it, or why none did.
    pub(crate) fn decided(
        &self,
        path: &str,
        n: usize,
        type_path: &'static str,
    ) -> Result<&'static str, &'static str> {
        let w = self.receiver(path, n, type_path);
        crate::arrange::rebuild::decide(&self.cx(), &mut Builder::default(), w)
    }

    /// The receiver of call `n` of the method at `path` rebuilt by the rules of
    /// `arrange/rebuild.rs` (`direct`: only those of `rebuild/directly.rs`): the rule that built
    /// it, the setup it wrote and the checks of the arrangement.
    pub(crate) fn rebuilt(
        &self,
        path: &str,
        n: usize,
        type_path: &'static str,
        direct: bool,
    ) -> Rebuilt {
        let cx = self.cx();
        let mut b = Builder::default();
        let w = self.receiver(path, n, type_path);
        let rule = if direct {
            crate::arrange::rebuild::directly::decide(&cx, &mut b, w)
        } else {
            crate::arrange::rebuild::decide(&cx, &mut b, w)
        };
        Rebuilt {
            rule: rule.expect("rebuilt"),
            setup: b.setup.iter().map(|s| s.expr.clone()).collect(),
            checks: b
                .checks
                .iter()
                .map(|c| format!("{} == {}", c.actual, c.expected))
                .collect(),
        }
    }

    /// Call `n` of the function at `path` observed by the rules of `assert/rules/`: the rule
    /// that decided, what it observed, and the test it added checks to.
    pub(crate) fn observe(&self, path: &str, n: usize) -> (&'static str, Observation, Builder) {
        self.observe_in(path, n, false)
    }

    /// [`Rulebook::observe`] as the second round of verification carves a call whose test
    /// failed: with the recording's checks only (`Ctx::weak_oracles`).
    pub(crate) fn observe_weak(
        &self,
        path: &str,
        n: usize,
    ) -> (&'static str, Observation, Builder) {
        self.observe_in(path, n, true)
    }

    fn observe_in(&self, path: &str, n: usize, weak: bool) -> (&'static str, Observation, Builder) {
        let call = self.calls_of(path)[n];
        let panicked = match &call.outcome {
            carve_storage::Outcome::Panicked { message } => Some(message.as_deref()),
            _ => None,
        };
        let cx = self.cx();
        cx.weak_oracles.set(weak);
        let subject = Subject {
            cx: &cx,
            call,
            target: self.callable(path),
            panicked,
        };
        let mut b = Builder::default();
        let (rule, observed) =
            crate::assert::rules::decide(&subject, &mut b).expect("the result is observed");
        (rule, observed, b)
    }

    /// The argument named `name` of call `n` of the function at `path`, built by the argument
    /// rule `rule` alone (as the tested call's argument): what it made, and the test it added to.
    pub(crate) fn arg(
        &self,
        path: &str,
        n: usize,
        name: &str,
        rule: crate::arrange::args::Rule,
    ) -> (crate::arrange::args::Verdict, Builder) {
        use crate::arrange::args::{Place, Site};
        let cx = self.cx();
        let call = self.calls_of(path)[n];
        let api = &self.callable(path).api;
        let arg = call.args.iter().find(|a| a.name == name);
        let param = api.params.iter().find(|p| p.name == name);
        let (Some(arg), Some(param)) = (arg, param) else {
            panic!("{path} has no recorded and declared argument {name}")
        };
        let same = |addr| addr;
        let site = Site {
            cx: &cx,
            call,
            arg,
            param,
            callee: &api.ident,
            place: Place::Tested,
            moved: &same,
        };
        let mut b = Builder::default();
        (rule(&site, &mut b), b)
    }

    /// The recording as the rules query it.
    pub(crate) fn cx(&self) -> Ctx<'_> {
        Ctx::new(
            &self.trace,
            &self.api,
            &self.targets,
            &self.children,
            &self.none,
            &self.no_cap,
            (
                crate::arrange::rebuild::rebuild,
                crate::arrange::rebuild::stored_fields::written_avoiding,
            ),
        )
    }
}

/// Each check of `effects` as (actual, expected, observed kind): what a rule's test compares.
pub(crate) fn rows(effects: &[crate::body::Effect]) -> Vec<(&str, &str, Option<&str>)> {
    effects
        .iter()
        .map(|e| (e.actual.as_str(), e.expected.as_str(), e.observe.as_deref()))
        .collect()
}

/// What the rebuild rules wrote for an object (see [`Rulebook::rebuilt`]).
pub(crate) struct Rebuilt {
    pub(crate) rule: &'static str,
    pub(crate) setup: Vec<String>,
    pub(crate) checks: Vec<String>,
}

/// `file` as recorded (under a temporary copy of the crate), under `dir` instead.
fn here(dir: &Path, file: &str) -> String {
    match file.find("/src/") {
        Some(at) => dir.join(&file[at + 1..]).display().to_string(),
        None => file.to_string(),
    }
}

/// A run of `/bin/app`, for tests that make traces by hand.
pub(crate) fn run() -> carve_storage::Run {
    carve_storage::Run {
        id: carve_storage::RunId(1),
        info: carve_storage::RunInfo {
            program: "/bin/app".into(),
            args: vec![],
            cwd: "/".into(),
            pid: 1,
            started_at_ms: 0,
            filters: vec![],
            excludes: vec![],
            crates: vec![],
            carve_version: "0".into(),
            distinct_calls: false,
            features: Vec::new(),
        },
        end: None,
    }
}

/// A recorded Rust function `id` at `path`, without parameters or a return type.
pub(crate) fn function(id: u32, path: &str) -> FunctionInfo {
    FunctionInfo {
        id: FunctionId(id),
        path: path.into(),
        name: path.rsplit("::").next().unwrap_or(path).into(),
        linkage_name: None,
        language: carve_storage::Language::Rust,
        decl_file: None,
        decl_line: None,
        low_pc: 0,
        params: vec![],
        return_type: None,
    }
}
