//! Object identity through a whole carve (issue 30, shape 0): values a program makes in a loop
//! land in the same stack slot, one after another; each is the object its own producer made,
//! not one object changing state. The carved tests then rebuild each receiver from its own
//! producer, and a one-line change in the function called on them fails a test.

mod common;

use common::*;

const LIB: &str = r#"
/// A version number with an optional pre-release tag; made only by `parse` (private fields),
/// so a test can rebuild one only through the call that produced it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    major: u64,
    minor: u64,
    patch: u64,
    pre: String,
}

impl Version {
    pub fn parse(s: &str) -> Result<Version, String> {
        let (core, pre) = s.split_once('-').unwrap_or((s, ""));
        let parts: Vec<u64> = core
            .split('.')
            .map(|p| p.parse().map_err(|_| format!("bad part {p:?} in {s:?}")))
            .collect::<Result<_, _>>()?;
        match parts[..] {
            [major, minor, patch] => Ok(Version { major, minor, patch, pre: pre.to_string() }),
            _ => Err(format!("{s:?} is not major.minor.patch")),
        }
    }

    pub fn is_pre(&self) -> bool {
        !self.pre.is_empty()
    }

    /// Marks a pre-release as released: a state no `parse` returns, so a test can reach it
    /// only by replaying this call on the right receiver.
    pub fn release(&mut self) {
        self.pre = "released".to_string();
    }

    /// At least `min`, ignoring pre-release tags.
    pub fn satisfies(&self, min: &Version) -> bool {
        (self.major, self.minor, self.patch) >= (min.major, min.minor, min.patch)
    }
}
"#;

const MAIN: &str = r#"
fn main() {
    let min = identity::Version::parse("1.0.0").unwrap();
    for s in ["1.2.3", "0.9.1-beta", "2.0.0", "1.0.0-rc.1"] {
        let mut v = identity::Version::parse(s).unwrap();
        if v.is_pre() {
            v.release();
        }
        println!("{s} satisfies 1.0.0: {}", v.satisfies(&min));
    }
}
"#;

#[test]
fn values_made_in_a_loop_are_rebuilt_from_their_own_producer_and_checked() {
    let c = carve_small_crate("identity", LIB, MAIN, &[]);
    let file = std::fs::read_to_string(c.dir.join("tests/carved_identity.rs")).unwrap();
    // Each receiver of `satisfies` is its own `parse`'s result, with its own `release()`: the
    // last iteration's is rebuilt from "1.0.0-rc.1", not from the first iteration's text.
    assert_carved(
        &file,
        &c.summary,
        &["parse(\"1.0.0-rc.1\")", ".release()", ".satisfies("],
    );
    // `>=` made `>`: "1.0.0-rc.1" no longer satisfies 1.0.0, and a carved test says so.
    assert_pass_then_fail_after(&c.dir, ") >= (min.major", ") > (min.major", "satisfies");
}
