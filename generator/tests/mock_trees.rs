//! Snapshots of the tests carved for the `abc` and `dao` fixtures from hand-built traces shaped
//! like their recordings: mock trees, receivers rebuilt through constructors, exact results.
//! (The root `tests/mocks.rs` records the real programs and runs what is generated.)

use std::path::{Path, PathBuf};

use carve_generator::{generate, GenerateOptions};
use carve_storage::{
    Arg, Call, CallId, Field, FunctionId, FunctionInfo, Language, Outcome, Run, RunId, RunInfo,
    Trace, Value,
};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures")
        .join(name)
}

fn obj(ty: &str, addr: u64, concrete: &str) -> Value {
    Value::Ref {
        ty: ty.into(),
        addr,
        target: Box::new(Value::Struct {
            ty: concrete.into(),
            fields: vec![],
        }),
    }
}

fn text(ty: &str, s: &str) -> Value {
    Value::Str {
        ty: ty.into(),
        value: s.into(),
        truncated: false,
    }
}

fn int(ty: &str, v: i128) -> Value {
    Value::Int {
        ty: ty.into(),
        value: v,
    }
}

fn uint(v: u128) -> Value {
    Value::Uint {
        ty: "usize".into(),
        value: v,
    }
}

fn field(name: &str, value: Value) -> Field {
    Field {
        name: name.into(),
        value,
    }
}

fn variant(ty: &str, variant: &str, value: Value) -> Value {
    Value::Enum {
        ty: ty.into(),
        variant: variant.into(),
        fields: vec![field("__0", value)],
    }
}

/// Calls as (id, parent, function path, args, ret).
struct Builder {
    functions: Vec<FunctionInfo>,
    calls: Vec<Call>,
}

impl Builder {
    fn new() -> Builder {
        Builder {
            functions: Vec::new(),
            calls: Vec::new(),
        }
    }

    fn call(
        &mut self,
        parent: Option<u64>,
        path: &str,
        args: Vec<(&str, Value)>,
        ret: Option<Value>,
    ) -> u64 {
        let id = self.calls.len() as u64 + 1;
        let function = match self.functions.iter().find(|f| f.path == path) {
            Some(f) => f.id,
            None => {
                let fid = FunctionId(self.functions.len() as u32 + 1);
                self.functions.push(FunctionInfo {
                    id: fid,
                    path: path.into(),
                    name: path.rsplit("::").next().unwrap_or(path).into(),
                    linkage_name: None,
                    language: Language::Rust,
                    decl_file: None,
                    decl_line: None,
                    low_pc: 0,
                    params: vec![],
                    return_type: None,
                });
                fid
            }
        };
        self.calls.push(Call {
            id: CallId(id),
            parent: parent.map(CallId),
            function,
            thread: 1,
            depth: 0,
            args: args
                .into_iter()
                .map(|(name, value)| Arg {
                    name: name.into(),
                    value,
                })
                .collect(),
            outcome: Outcome::Returned,
            ret,
            after: vec![],
            objects: vec![],
            touches: Vec::new(),
        });
        id
    }

    fn trace(self, program: &str) -> Trace {
        Trace {
            run: Run {
                id: RunId(1),
                info: RunInfo {
                    program: format!("/fixtures/target/debug/{program}"),
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
            },
            functions: self.functions,
            calls: self.calls,
            objects: vec![],
            file_reads: Vec::new(),
        }
    }
}

fn carve(trace: &Trace, fixture_name: &str) -> (String, String) {
    let out = tempfile::tempdir().unwrap();
    let report = generate(
        trace,
        &GenerateOptions {
            out_dir: out.path().to_path_buf(),
            crate_dir: Some(fixture(fixture_name)),
            templates: None,
            verify: None,
            plan: Default::default(),
            progress: None,
            distil: None,
            interrupt: Default::default(),
        },
    )
    .unwrap();
    let file = std::fs::read_to_string(&report.files[0]).unwrap();
    (file, report.summary_line())
}

const BOX_ANSWERER: &str = "alloc::boxed::Box<dyn abc::Answerer, alloc::alloc::Global>";
const BOX_ASKER: &str = "alloc::boxed::Box<dyn abc::Asker, alloc::alloc::Global>";

#[test]
fn abc_mocks_the_asker_of_c_and_the_answerer_of_b() {
    let mut b = Builder::new();
    let ask = b.call(
        None,
        "<abc::B as abc::Asker>::ask",
        vec![
            ("self", obj("&abc::B", 0x20, "abc::B")),
            ("a", obj("&dyn abc::Answerer", 0x10, "abc::A")),
        ],
        Some(int("i32", 43)),
    );
    let answer = b.call(
        Some(ask),
        "<abc::A as abc::Answerer>::answer",
        vec![("self", obj("&abc::A", 0x10, "abc::A"))],
        Some(int("i32", 42)),
    );
    b.call(
        Some(answer),
        "abc::A::the_answer",
        vec![],
        Some(int("i32", 42)),
    );
    let c = Value::Struct {
        ty: "abc::C".into(),
        fields: vec![
            field("a", obj(BOX_ANSWERER, 1, "abc::A")),
            field("b", obj(BOX_ASKER, 1, "abc::B")),
        ],
    };
    b.call(
        None,
        "abc::C::new",
        vec![
            ("a", obj(BOX_ANSWERER, 1, "abc::A")),
            ("b", obj(BOX_ASKER, 1, "abc::B")),
        ],
        Some(c.clone()),
    );
    let calls = b.call(
        None,
        "abc::C::calls_b_with_a",
        vec![(
            "self",
            Value::Ref {
                ty: "&abc::C".into(),
                addr: 0x7fff,
                target: Box::new(c),
            },
        )],
        Some(variant(
            "core::result::Result<i32, abc::AbcError>",
            "Ok",
            int("i32", 43),
        )),
    );
    let inner_ask = b.call(
        Some(calls),
        "<abc::B as abc::Asker>::ask",
        vec![
            ("self", obj("&abc::B", 1, "abc::B")),
            ("a", obj("&dyn abc::Answerer", 1, "abc::A")),
        ],
        Some(int("i32", 43)),
    );
    b.call(
        Some(inner_ask),
        "<abc::A as abc::Answerer>::answer",
        vec![("self", obj("&abc::A", 1, "abc::A"))],
        Some(int("i32", 42)),
    );
    b.call(
        Some(calls),
        "abc::is_acceptable",
        vec![("answer", int("i32", 43))],
        Some(Value::Bool { value: true }),
    );
    let (file, summary) = carve(&b.trace("abc"), "abc");
    insta::assert_snapshot!("carved_abc", file);
    assert!(
        summary.contains("with mocks: 3 tests (2 mock! blocks)"),
        "{summary}"
    );
}

/// What `get_user_details` (call `get`) asked of its connection: a statement prepared, bound
/// and queried, and the rows it gave read.
fn statement_calls(b: &mut Builder, get: u64) {
    b.call(
        Some(get),
        "<dao::SqliteConnection as dao::Connection>::prepare",
        vec![
            (
                "self",
                obj("&dao::SqliteConnection", 0x100, "dao::SqliteConnection"),
            ),
            (
                "sql",
                text("&str", "SELECT name, occupation FROM people WHERE name = ?"),
            ),
        ],
        Some(obj(
            "alloc::boxed::Box<dyn dao::Statement, alloc::alloc::Global>",
            0x200,
            "dao::SqliteStatement",
        )),
    );
    let stmt = || {
        (
            "self",
            obj("&dao::SqliteStatement", 0x200, "dao::SqliteStatement"),
        )
    };
    b.call(
        Some(get),
        "<dao::SqliteStatement as dao::Statement>::bind",
        vec![stmt(), ("idx", uint(1)), ("value", text("&str", "Gandhi"))],
        None,
    );
    b.call(
        Some(get),
        "<dao::SqliteStatement as dao::Statement>::query",
        vec![stmt()],
        Some(obj(
            "alloc::boxed::Box<dyn dao::Rows, alloc::alloc::Global>",
            0x300,
            "dao::SqliteRows",
        )),
    );
    let rows = || ("self", obj("&dao::SqliteRows", 0x300, "dao::SqliteRows"));
    b.call(
        Some(get),
        "<dao::SqliteRows as dao::Rows>::next",
        vec![rows()],
        Some(Value::Bool { value: true }),
    );
    for (idx, value) in [(0, "Gandhi"), (1, "politics")] {
        b.call(
            Some(get),
            "<dao::SqliteRows as dao::Rows>::get_string",
            vec![rows(), ("idx", uint(idx))],
            Some(text("alloc::string::String", value)),
        );
    }
}

#[test]
fn dao_replays_the_connection_statement_rows_tree() {
    let mut b = Builder::new();
    let conn = || {
        obj(
            "alloc::boxed::Box<dyn dao::Connection, alloc::alloc::Global>",
            0x100,
            "dao::SqliteConnection",
        )
    };
    let dao_value = Value::Struct {
        ty: "dao::DataAccessObject".into(),
        fields: vec![field("conn", conn())],
    };
    b.call(
        None,
        "dao::DataAccessObject::new",
        vec![("conn", conn())],
        Some(dao_value.clone()),
    );
    let get = b.call(
        None,
        "dao::DataAccessObject::get_user_details",
        vec![
            (
                "self",
                Value::Ref {
                    ty: "&dao::DataAccessObject".into(),
                    addr: 0x7fff,
                    target: Box::new(dao_value),
                },
            ),
            ("name", text("&str", "Gandhi")),
        ],
        Some(variant(
            "core::result::Result<dao::User, dao::DaoError>",
            "Ok",
            Value::Struct {
                ty: "dao::User".into(),
                fields: vec![
                    field("name", text("alloc::string::String", "Gandhi")),
                    field("occupation", text("alloc::string::String", "politics")),
                ],
            },
        )),
    );
    b.call(
        Some(get),
        "dao::is_valid_name",
        vec![("name", text("&str", "Gandhi"))],
        Some(Value::Bool { value: true }),
    );
    statement_calls(&mut b, get);
    let (file, summary) = carve(&b.trace("dao"), "dao");
    insta::assert_snapshot!("carved_dao", file);
    assert!(
        summary.contains("with mocks: 2 tests (3 mock! blocks)"),
        "{summary}"
    );
}
