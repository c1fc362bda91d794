//! The crate's API as read from real little crates on disk.

use super::*;
use crate::error::GenerateError;
use crate::read::crate_api::manifest::{find_package_dir, parse_manifest};

fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

#[test]
fn a_parameter_with_one_trait_bound_names_the_trait_a_mock_stands_in_for() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(dir, "Cargo.toml", "[package]\nname = \"shop\"\n");
    write(
        dir,
        "src/lib.rs",
        "pub trait Prices { fn price(&self) -> u32; }\n\
         pub struct Shop<P: Prices> { p: P }\n\
         impl<P: Prices> Shop<P> { pub fn new(p: P) -> Self { Shop { p } } }\n\
         pub struct Pair<A, B> { a: A, b: B }\n\
         impl<A: Clone, B> Pair<A, B> { pub fn new(a: A, b: B) -> Self { Pair { a, b } } }\n\
         pub fn quote(p: &impl Prices) -> u32 { p.price() }\n\
         pub fn both<T>(p: &mut T) -> u32 where T: Prices + Send { p.price() }\n\
         pub fn cloned<T: Prices + Clone>(p: T) -> u32 { p.price() }\n",
    );
    let api = CrateApi::load(dir).unwrap();
    let root = api.module(&[]).unwrap();
    let bound = |f: &FnApi| f.params[0].bound.clone();
    assert_eq!(
        bound(&root.functions["quote"]).as_deref(),
        Some("shop::Prices")
    );
    assert_eq!(
        bound(&root.functions["both"]).as_deref(),
        Some("shop::Prices")
    );
    // Clone is a second bound a mock does not have.
    assert_eq!(bound(&root.functions["cloned"]), None);
    let shop = &root.types["Shop"];
    assert!(shop.generic && !shop.unmockable_generic);
    assert_eq!(
        bound(&shop.functions["new"]).as_deref(),
        Some("shop::Prices")
    );
    assert!(root.types["Pair"].unmockable_generic);
}

#[test]
fn items_of_private_modules_are_reachable_by_the_paths_pub_use_gives_them() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(dir, "Cargo.toml", "[package]\nname = \"shop\"\n");
    write(
        dir,
        "src/lib.rs",
        "mod store; mod util; mod deep;\n\
         pub use store::{Store, open as open_store};\npub use crate::util::*;\n\
         pub use deep::Inner;\n",
    );
    write(dir, "src/store.rs", "pub struct Store; impl Store { pub fn len(&self) -> usize { 0 } }\npub fn open() -> Store { Store }\npub fn hidden() {}\n");
    write(
        dir,
        "src/util.rs",
        "pub fn pad(s: &str) -> String { s.to_string() }\n",
    );
    write(dir, "src/deep.rs", "mod inner; pub use inner::*;\n");
    write(dir, "src/deep/inner.rs", "pub struct Inner;\n");
    let api = CrateApi::load(dir).unwrap();
    let public = |p: &str| api.public_path(p);
    assert_eq!(public("shop::store::Store").as_deref(), Some("shop::Store"));
    assert_eq!(
        public("shop::store::Store::len").as_deref(),
        Some("shop::Store::len")
    );
    assert_eq!(
        public("shop::store::open").as_deref(),
        Some("shop::open_store")
    );
    assert_eq!(public("shop::util::pad").as_deref(), Some("shop::pad"));
    // Through two re-exports: `deep` re-exports `inner`'s items, the root re-exports it.
    assert_eq!(
        public("shop::deep::inner::Inner").as_deref(),
        Some("shop::Inner")
    );
    assert_eq!(public("shop::store::hidden"), None);
    assert!(api.public_type("shop::store::Store").is_some());
}

#[test]
fn manifest_keys_are_read_from_their_sections() {
    let info = parse_manifest(
        "[package]\nname = \"my-crate\" # comment\nversion = \"0.1.0\"\n\n[lib]\nname = 'mine'\npath = \"src/root.rs\"\n[dependencies]\nname = \"x\"\n",
    );
    assert_eq!(info.package_name.as_deref(), Some("my-crate"));
    assert_eq!(info.lib_name.as_deref(), Some("mine"));
    assert_eq!(info.lib_path.as_deref(), Some("src/root.rs"));
    assert!(!info.autotests_off && info.tests.is_empty());
}

#[test]
fn serde_s_derive_is_found_inline_in_a_table_or_as_serde_derive() {
    let derive = |m: &str| parse_manifest(m).serde_derive;
    assert_eq!(
        derive("[dev-dependencies]\nserde = { version = \"1\", features = [\"derive\"] }\n"),
        Some("serde".to_string())
    );
    assert_eq!(
        derive("[dev-dependencies.serde]\nversion = \"1.0.160\"\nfeatures = [\"derive\"]\n"),
        Some("serde".to_string())
    );
    assert_eq!(
        derive("[dependencies]\nserde = \"1\"\nserde_derive = \"1\"\n"),
        Some("serde_derive".to_string())
    );
    assert_eq!(derive("[dependencies]\nserde = \"1\"\n"), None);
}

#[test]
fn test_targets_are_read_table_by_table() {
    let info = parse_manifest(
        "[package]\nname = \"p\"\nautotests = false\n\n[[test]]\nname = \"a\"\npath = \"tests/x.rs\"\n\n[[test]]\nname = \"b\"\n[dependencies]\npath = \"no\"\n",
    );
    assert!(info.autotests_off);
    let files: Vec<_> = info.tests.iter().map(|t| t.file()).collect();
    assert_eq!(
        files,
        [
            Some("tests/x.rs".to_string()),
            Some("tests/b.rs".to_string())
        ]
    );
}

#[test]
fn modules_are_followed_through_files_and_inline_blocks() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(
        dir,
        "Cargo.toml",
        "[package]\nname = \"my-lib\"\nversion = \"0.1.0\"\n",
    );
    write(
        dir,
        "src/lib.rs",
        "pub mod a; mod hidden; pub mod inline { pub fn f(x: u8) -> u8 { x } pub(crate) fn g() {} }\n\
         #[path = \"elsewhere.rs\"] pub mod moved;\n#[cfg(test)] mod tests { pub fn t() {} }\n\
         pub fn root<'a>(s: &'a str) -> &'a str { s }\n",
    );
    write(dir, "src/a.rs", "#[path = \"gen/made.rs\"] pub mod made; pub mod b; pub type Id = u32; pub type Name<'a> = &'a str; pub fn lookup(id: Id, n: Name) -> Id { id } pub struct P; impl P { pub fn new() -> P { P } pub fn get(&self) -> i32 { 1 } fn private() {} }\n");
    write(dir, "src/a/b/mod.rs", "pub async fn later() {} pub fn id<T>(t: T) -> T { t } pub fn make<T: Default>() -> T { T::default() }\n");
    write(dir, "src/hidden.rs", "pub fn h() {}\n");
    write(dir, "src/elsewhere.rs", "pub fn m() {}\n");
    write(dir, "src/gen/made.rs", "pub fn generated() {}\n");

    let api = CrateApi::load(dir).unwrap();
    assert_eq!(api.crate_name, "my_lib");
    let key = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let root = api.module(&[]).unwrap();
    assert!(root.reachable);
    assert_eq!(
        root.functions["root"].ret,
        DeclType::Ref {
            mutable: false,
            inner: Box::new(DeclType::Str)
        }
    );
    assert!(!api.modules.contains_key(&key(&["tests"])));
    assert!(!api.module(&key(&["hidden"])).unwrap().reachable);
    // A `#[path]` in a non-`mod.rs` file is relative to that file's directory.
    assert!(api.module(&key(&["a", "made"])).unwrap().functions["generated"].public);
    assert!(api.files.contains(&canonical(&dir.join("src/gen/made.rs"))));
    let inline = api.module(&key(&["inline"])).unwrap();
    assert!(inline.functions["f"].public && !inline.functions["g"].public);
    let a = api.module(&key(&["a"])).unwrap();
    let p = &a.types["P"];
    assert!(p.public && !p.generic);
    assert!(!p.functions["new"].has_receiver && p.functions["get"].has_receiver);
    assert!(!p.functions["private"].public);
    let lookup = &a.functions["lookup"];
    assert_eq!(lookup.ret, DeclType::Prim(crate::read::types::Prim::U32));
    assert_eq!(
        lookup.params[1].ty,
        DeclType::Ref {
            mutable: false,
            inner: Box::new(DeclType::Str)
        }
    );
    let b = api.module(&key(&["a", "b"])).unwrap();
    assert_eq!(b.functions["later"].blocker, Some("async"));
    assert_eq!(b.functions["id"].blocker, None);
    assert_eq!(b.functions["make"].blocker, None);
    assert_eq!(b.functions["make"].uninferable_generics, 1);
    assert_eq!(b.functions["id"].uninferable_generics, 0);
    assert!(api
        .module(&key(&["moved"]))
        .unwrap()
        .functions
        .contains_key("m"));
    assert!(api.contains_file(&dir.join("src/a/b/mod.rs")));
    assert!(!api.contains_file(&dir.join("src/main.rs")));
    assert_eq!(
        find_package_dir(&dir.join("src/a/b/mod.rs")).as_deref(),
        Some(dir)
    );
}

#[test]
fn a_type_only_impls_show_is_not_declared_but_nameable_where_reachable() {
    use crate::read::types::TypeFacts;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(dir, "Cargo.toml", "[package]\nname = \"flags\"\n");
    // `bitflags!` defines `Options`; syn sees only the macro call and the impl (a macro with a
    // repetition is not expanded, as one from another crate is not).
    write(
        dir,
        "src/lib.rs",
        "macro_rules! make { ($($n:ident)*) => { $(pub struct $n(pub u32);)* } }\nmake!(Options);\nimpl Options { pub fn bits(&self) -> u32 { self.0 } }\nstruct Hidden;\nmod inner { pub struct Deep; }\n",
    );
    let api = CrateApi::load(dir).unwrap();
    assert!(api.declared_type("flags::Options").is_none());
    assert!(api.unseen_type_nameable("flags::Options"));
    assert!(api.declared_type("flags::Hidden").is_some());
    assert!(!api.unseen_type_nameable("flags::Hidden"));
    // In a private module, a macro-made type would not be reachable either.
    assert!(!api.unseen_type_nameable("flags::inner::Made"));
    assert!(!api.unseen_type_nameable("other::Options"));
}

#[test]
fn a_crate_without_a_library_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), "Cargo.toml", "[package]\nname = \"bin-only\"\n");
    write(tmp.path(), "src/main.rs", "fn main() {}\n");
    let err = CrateApi::load(tmp.path()).unwrap_err();
    assert!(matches!(err, GenerateError::NoLibrary { .. }), "{err}");
}

#[test]
fn a_trait_with_a_supertrait_a_mock_cannot_implement_is_not_mockable() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(dir, "Cargo.toml", "[package]\nname = \"sealed\"\n");
    write(
        dir,
        "src/lib.rs",
        "mod private { pub trait Sealed {} }\n\
         pub trait Float: private::Sealed { fn bits(&self) -> u64; }\n\
         pub trait Shown: Clone { fn show(&self) -> String; }\n\
         pub trait Repo: std::fmt::Debug + Send + Sync { fn get(&self) -> u32; }\n",
    );
    let api = CrateApi::load(dir).unwrap();
    let root = api.module(&[]).unwrap();
    assert_eq!(root.traits["Float"].blocker, Some("supertrait"));
    assert_eq!(root.traits["Shown"].blocker, Some("supertrait"));
    assert_eq!(
        root.traits["Repo"].blocker, None,
        "mockall's mocks are Debug, Send and Sync"
    );
}

#[test]
fn methods_and_types_the_crates_own_macros_make_are_declared() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(dir, "Cargo.toml", "[package]\nname = \"rng\"\n");
    write(
        dir,
        "src/lib.rs",
        "macro_rules! int { ($t:tt) => { pub fn $t(&mut self, n: $t) -> $t { n } } }\nmacro_rules! unit { ($n:ident) => { #[derive(Debug)] pub struct $n; } }\npub struct Rng;\nimpl Rng { int!(u8); int!(u64); }\npub mod kinds { unit!(Fast); }\n",
    );
    let api = CrateApi::load(dir).unwrap();
    let rng = &api.modules[&Vec::<String>::new()].types["Rng"];
    assert_eq!(
        rng.functions.keys().collect::<Vec<_>>(),
        ["u64", "u8"],
        "the methods `int!` makes"
    );
    assert!(rng.functions["u8"].mut_receiver);
    // A macro is in scope in the modules below the one defining it.
    assert!(api.declared_type("rng::kinds::Fast").is_some());
}

#[test]
fn an_enums_variants_without_fields_are_read_in_order() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(dir, "Cargo.toml", "[package]\nname = \"diff\"\n");
    write(
        dir,
        "src/lib.rs",
        "pub enum Algorithm { Myers, Patience, Lcs }\n\
         pub enum Change { Keep, Put(u8), Move { from: u8 }, #[doc(hidden)] Secret, \
         #[non_exhaustive] Later, Last }\n",
    );
    let api = CrateApi::load(dir).unwrap();
    let root = api.module(&[]).unwrap();
    assert_eq!(root.types["Algorithm"].values, ["Myers", "Patience", "Lcs"]);
    // Variants with fields, hidden or non-exhaustive ones are not written as they are.
    assert_eq!(root.types["Change"].values, ["Keep", "Last"]);
}

#[test]
fn associated_consts_of_the_type_and_bitflags_flags_are_values_written_as_they_are() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(dir, "Cargo.toml", "[package]\nname = \"md\"\n");
    write(
        dir,
        "src/lib.rs",
        "pub struct Level(u8);\n\
         impl Level {\n    pub const LOW: Level = Level(1);\n    pub const HIGH: Self = Level(9);\n    \
         pub const COUNT: usize = 2;\n    const SECRET: Level = Level(0);\n}\n\
         bitflags::bitflags! {\n    /// Options.\n    #[derive(Debug, Clone, Copy, PartialEq)]\n    \
         pub struct Options: u32 {\n        const ENABLE_TABLES = 1 << 1;\n        \
         /// Footnotes.\n        const ENABLE_FOOTNOTES = 1 << 2;\n        \
         #[doc(hidden)]\n        const INTERNAL = 1 << 9;\n    }\n\n    \
         pub(crate) struct Private: u8 {\n        const A = 1;\n    }\n}\n",
    );
    let api = CrateApi::load(dir).unwrap();
    let root = api.module(&[]).unwrap();
    assert_eq!(root.types["Level"].values, ["LOW", "HIGH"]);
    let options = &root.types["Options"];
    assert!(options.public && options.declared && options.is_struct);
    // Its one field is the macro's private bits: no literal builds it.
    assert!(options.fields.iter().all(|f| !f.public) && !options.fields.is_empty());
    assert!(options.traits.contains("Copy"), "{:?}", options.traits);
    assert_eq!(
        options.values,
        ["ENABLE_TABLES", "ENABLE_FOOTNOTES", "empty()", "all()"]
    );
    // A second struct of the same invocation, `pub(crate)`: known, not public.
    assert!(!root.types["Private"].public);
    assert_eq!(root.types["Private"].values, ["A", "empty()", "all()"]);
}

#[test]
fn a_display_impl_reading_the_formatters_options_is_noted() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(dir, "Cargo.toml", "[package]\nname = \"sizes\"\n");
    write(
        dir,
        "src/lib.rs",
        "use std::fmt;\npub struct Padded(u64);\npub struct Plain(u64);\n\
         impl fmt::Display for Padded {\n    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {\n        \
         match f.width() {\n            Some(w) => write!(f, \"{:>w$}\", self.0),\n            \
         None => write!(f, \"{}\", self.0),\n        }\n    }\n}\n\
         impl fmt::Display for Plain {\n    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {\n        \
         write!(f, \"{}\", self.0)\n    }\n}\n",
    );
    let api = CrateApi::load(dir).unwrap();
    let root = api.module(&[]).unwrap();
    assert!(root.types["Padded"].display_reads_options);
    assert!(!root.types["Plain"].display_reads_options);
    assert!(root.types["Plain"].traits.contains("Display"));
}
