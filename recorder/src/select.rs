//! Which functions to trace: `--filter` / `--exclude` globs on demangled paths and `--crate`
//! names, defaulting to the program's own code (not the standard library, not dependencies,
//! not `Debug`/`Display` formatting impls).

use crate::dwarf::FunctionEntry;

/// What the user asked to trace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// Globs (`*` any run of characters, `?` one); empty means "the program's own code".
    pub filters: Vec<String>,
    pub excludes: Vec<String>,
    /// `--crate`: only functions of these crates (as paths spell them: `my_lib` for `my-lib`),
    /// in whatever program they are linked; with `filters`, functions matching both.
    pub crates: Vec<String>,
    /// Also record calls of the program's own functions up to this many levels out from a call
    /// of a filtered function (1: what the filtered functions call directly).
    pub depth: u32,
}

impl Selection {
    /// True when `f` should get a breakpoint: it matches, or it may be called within `depth`.
    pub fn selects(&self, f: &FunctionEntry) -> bool {
        let reachable = self.depth > 0 && self.is_own(f);
        (self.matches(f) || reachable) && !self.excluded(f)
    }

    /// True when every call of `f` is recorded (not only those within `depth` of one).
    pub fn matches(&self, f: &FunctionEntry) -> bool {
        let included = match (self.filters.is_empty(), self.crates.is_empty()) {
            (true, true) => self.is_own(f),
            (true, false) => self.in_crates(&f.path) && !is_formatting_impl(&f.path),
            (false, crates_empty) => {
                self.filters.iter().any(|g| matches_function(g, f))
                    && (crates_empty || self.in_crates(&f.path))
            }
        };
        included && !self.excluded(f)
    }

    fn in_crates(&self, path: &str) -> bool {
        crates_of(path)
            .iter()
            .any(|c| self.crates.iter().any(|want| want.replace('-', "_") == *c))
    }

    fn is_own(&self, f: &FunctionEntry) -> bool {
        f.own_code && !is_formatting_impl(&f.path)
    }

    fn excluded(&self, f: &FunctionEntry) -> bool {
        self.excludes.iter().any(|g| matches_function(g, f))
    }
}

/// The crates a demangled function path belongs to: the first segment of a plain path
/// (`my_lib::parse`, `my_lib::Stack<u8>::push`), and for a trait method `<A as B>::m` the
/// crates of both `A` and `B` (the impl lives in one of them). Generic instances of other
/// crates' functions (`core::ptr::drop_in_place::<my_lib::X>`) are not `my_lib`'s.
pub(crate) fn crates_of(path: &str) -> Vec<&str> {
    fn first_segment(s: &str) -> &str {
        let s = s.trim_start_matches(['<', '&', '*', '(', '[', ' ']);
        let s = ["mut ", "const ", "dyn ", "impl "]
            .iter()
            .fold(s, |s, p| s.strip_prefix(p).unwrap_or(s));
        let end = s
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(s.len());
        &s[..end]
    }
    let Some(inner) = path.strip_prefix('<') else {
        return vec![first_segment(path)];
    };
    let Some(close) = carve_storage::closing_angle(inner) else {
        return vec![first_segment(inner)];
    };
    let qualified = &inner[..close];
    // ` as ` at nesting level 0 splits the self type from the trait.
    let mut level = 0i32;
    let bytes = qualified.as_bytes();
    for i in 0..bytes.len() {
        match bytes[i] {
            b'<' | b'(' | b'[' => level += 1,
            b'>' | b')' | b']' => level -= 1,
            b' ' if level == 0 && qualified[i..].starts_with(" as ") => {
                return vec![
                    first_segment(&qualified[..i]),
                    first_segment(&qualified[i + 4..]),
                ];
            }
            _ => {}
        }
    }
    vec![first_segment(qualified)]
}

/// A glob matches a function by its full path (`expr::lexer::*`) or, for globs without `::`,
/// by its bare name (`precedence`).
fn matches_function(glob: &str, f: &FunctionEntry) -> bool {
    carve_storage::matches_function(glob, &f.path, &f.name)
}

fn is_formatting_impl(path: &str) -> bool {
    path.starts_with('<') && path.contains(" as core::fmt::")
}

#[cfg(test)]
mod tests {
    use super::crates_of;

    #[test]
    fn a_functions_crate_is_its_first_segment_or_either_side_of_a_trait_impl() {
        assert_eq!(crates_of("my_lib::parse"), ["my_lib"]);
        assert_eq!(crates_of("my_lib::Stack<u8>::push"), ["my_lib"]);
        assert_eq!(
            crates_of("<my_lib::Money as core::ops::arith::Add>::add"),
            ["my_lib", "core"]
        );
        assert_eq!(
            crates_of("<alloc::vec::Vec<other::X> as my_lib::Total>::total"),
            ["alloc", "my_lib"]
        );
        assert_eq!(
            crates_of("<&my_lib::A as other::T>::m"),
            ["my_lib", "other"]
        );
        assert_eq!(crates_of("core::ptr::drop_in_place::<my_lib::X>"), ["core"]);
        assert_eq!(crates_of("count_vowels"), ["count_vowels"]);
    }
}
