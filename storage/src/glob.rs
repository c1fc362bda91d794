//! Function globs, shared by every command that selects functions (`record --filter`,
//! `show --function`, `gate --ignore`): `*` is any run of characters (including `::`), `?` one
//! character, and a glob without `::` also matches the bare function name. Also the one piece of
//! demangled-path syntax both the recorder and the generator need: matching angle brackets.

/// True when `glob` selects the function with this full `path` and bare `name`. A trait method
/// `<Type as Trait>::method` is also selected as `Type::method` and as `Trait::method`, so that
/// `hex::*` selects `<[u8] as hex::ToHex>::encode_hex` and `<hex::Error as core::cmp::PartialEq>::eq`:
/// a crate's public surface is mostly trait methods (formatting impls excepted).
pub fn matches_function(glob: &str, path: &str, name: &str) -> bool {
    if glob_match(glob, path) || (!glob.contains("::") && glob_match(glob, name)) {
        return true;
    }
    let Some(inner_and_rest) = path.strip_prefix('<') else {
        return false;
    };
    let Some(end) = closing_angle(inner_and_rest) else {
        return false;
    };
    let method = &inner_and_rest[end + 1..];
    let Some((ty, tr)) = inner_and_rest[..end].split_once(" as ") else {
        return false;
    };
    // Formatting impls (`Debug`, `LowerHex`...) run whenever a value is printed and take a
    // `Formatter` no test can pass: like the default selection, a glob selects them only by their
    // own path. `Display` is the exception: it is how a user reads a value (`to_string()`),
    // and its text is recorded when it goes to a `String`.
    if tr.starts_with("core::fmt::") && tr != "core::fmt::Display" {
        return false;
    }
    [ty, tr].iter().any(|owner| {
        let owner = owner.split('<').next().unwrap_or(owner).trim();
        glob_match(glob, &format!("{owner}{method}"))
    })
}

/// In a demangled path, the index of the `>` closing a `<` opened just before `s`
/// (`<abc::B as abc::Asker>::ask`); the `>` of `->` does not count.
pub fn closing_angle(s: &str) -> Option<usize> {
    let mut depth = 1usize;
    for (i, c) in s.char_indices() {
        match c {
            '<' => depth += 1,
            '>' if i > 0 && s[..i].ends_with('-') => {}
            '>' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Glob matching with `*` and `?` over characters (no separator is special).
pub fn glob_match(glob: &str, text: &str) -> bool {
    let g: Vec<char> = glob.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut gi, mut ti) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while ti < t.len() {
        if gi < g.len() && (g[gi] == '?' || g[gi] == t[ti]) {
            gi += 1;
            ti += 1;
        } else if gi < g.len() && g[gi] == '*' {
            star = Some(gi);
            mark = ti;
            gi += 1;
        } else if let Some(s) = star {
            gi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    while gi < g.len() && g[gi] == '*' {
        gi += 1;
    }
    gi == g.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_star_matches_any_run_of_characters_including_path_separators() {
        assert!(glob_match("expr::*", "expr::lexer::is_operator"));
        assert!(glob_match("*::precedence", "expr::parser::precedence"));
        assert!(!glob_match("expr::*", "core::fmt::write"));
    }

    #[test]
    fn a_glob_without_wildcards_matches_only_itself() {
        assert!(glob_match("add", "add"));
        assert!(!glob_match("add", "add_one"));
    }

    #[test]
    fn a_question_mark_matches_one_character() {
        assert!(glob_match("f?b", "fib"));
        assert!(!glob_match("f?b", "fb"));
    }

    #[test]
    fn a_glob_without_colons_also_matches_the_bare_name() {
        assert!(matches_function(
            "next_u32",
            "<dice::OsRandom as dice::RandomSource>::next_u32",
            "next_u32"
        ));
        assert!(matches_function("dice::*", "dice::Dice::roll", "roll"));
        assert!(matches_function(
            "dice::*",
            "<dice::OsRandom as dice::RandomSource>::next_u32",
            "next_u32"
        ));
        assert!(matches_function(
            "hex::*",
            "<[u8] as hex::ToHex>::encode_hex<alloc::string::String>",
            "encode_hex<alloc::string::String>"
        ));
        assert!(matches_function(
            "hex::*",
            "<hex::error::FromHexError as core::fmt::Display>::fmt",
            "fmt"
        ));
        assert!(!matches_function(
            "hex::*",
            "<hex::error::FromHexError as core::fmt::Debug>::fmt",
            "fmt"
        ));
        assert!(!matches_function(
            "hex::*",
            "<alloc::string::String as core::fmt::Display>::fmt",
            "fmt"
        ));
        assert!(!matches_function("dice::roll", "dice::Dice::roll", "roll"));
    }
}
