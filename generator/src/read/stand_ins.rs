//! Types of the recorded program itself that the library's generic code held
//! (`MaxStack<Score>`, `Score` declared by the program, not the library): a test cannot name
//! them, so it declares a stand-in of the same shape (the recorded fields, the derives a
//! container's bounds ask for) and instantiates the library with it. The library cannot observe
//! more of its type parameter than its bounds, and verification judges the hypothesis that the
//! stand-in's derived impls behave as the program's did. What is collected here is plain data;
//! `act/stand_ins.rs` decides which types get one.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::read::types::Shape;

/// The stand-ins a test may declare, by the recorded path of the type each stands for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct StandIns {
    pub by_path: BTreeMap<String, StandIn>,
}

/// One type of the recorded program, as a test declares it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StandIn {
    /// The recorded path (`app::Score`).
    pub path: String,
    /// The name the test gives it (`Score`).
    pub name: String,
    /// `struct Marker;`.
    pub unit: bool,
    /// The item, with the recorded paths of other stand-ins in its field types (the carved
    /// file spells every such path by the stand-in's name).
    pub definition: String,
}

impl StandIns {
    /// A stand-in's shape: a struct literal with public fields, comparable and debuggable by
    /// derive.
    pub fn shape(&self, path: &str) -> Option<Shape> {
        let s = self.by_path.get(path)?;
        Some(Shape {
            fields_public: true,
            unit: s.unit,
            comparable: true,
            debug: true,
            debug_derived: true,
        })
    }

    /// The stand-ins whose recorded path `source` mentions as a whole path, and those their
    /// fields mention, in path order.
    pub fn used_in(&self, source: &str) -> Vec<&StandIn> {
        let mut used: Vec<&StandIn> = Vec::new();
        let mut texts = vec![source];
        while let Some(text) = texts.pop() {
            for s in self.by_path.values() {
                if !used.iter().any(|u| u.path == s.path)
                    && crate::read::paths::mentions_path(text, &s.path)
                {
                    used.push(s);
                    texts.push(&s.definition);
                }
            }
        }
        used.sort_by(|a, b| a.path.cmp(&b.path));
        used
    }

    /// (recorded path, name): how the carved file spells each.
    pub fn spellings(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = (self.by_path.values())
            .map(|s| (s.path.clone(), s.name.clone()))
            .collect();
        out.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.cmp(b)));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stand_in_is_used_where_its_whole_path_is_written() {
        let mut s = StandIns::default();
        s.by_path.insert(
            "app::Score".into(),
            StandIn {
                path: "app::Score".into(),
                name: "Score".into(),
                unit: false,
                definition: "pub struct Score;".into(),
            },
        );
        s.by_path.insert(
            "app::Game".into(),
            StandIn {
                path: "app::Game".into(),
                name: "Game".into(),
                unit: false,
                definition: "pub struct Game { pub best: app::Score }".into(),
            },
        );
        let names =
            |source| -> Vec<String> { s.used_in(source).iter().map(|u| u.name.clone()).collect() };
        assert_eq!(names("let x = app::Score { a: 1 };"), ["Score"]);
        // A stand-in's field of another stand-in's type declares that one too.
        assert_eq!(names("Stack::<app::Game>::new()"), ["Game", "Score"]);
        assert!(names("let x = app::Scores { a: 1 };").is_empty());
        assert!(names("let x = myapp::Score { a: 1 };").is_empty());
        assert_eq!(s.spellings()[0], ("app::Score".into(), "Score".into()));
        assert!(s
            .shape("app::Score")
            .is_some_and(|sh| sh.comparable && sh.fields_public));
        assert!(s.shape("app::Other").is_none());
    }
}
