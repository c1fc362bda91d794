//! What else a test's code says, for telling apart tests whose names are still one after
//! what they show, their arguments, what the outcome depended on and how long their
//! arrangements are: the type arguments of the instance called (`SmallVec::<[u32; 8]>::new`
//! → `u32_8`: `small_vec_new_returns_small_vec_for_u32_8`, not `…_small_vec_2`) and the
//! functions the arrangement calls (`byte_size.display().si()`: `to_string_returns_0_b_after_si`
//! beside the test of `byte_size.display()`, not `to_string_returns_0_b_2`).

use super::slug::snake_words;

/// The type arguments of the first turbofish in `exprs` (the call first, then the
/// arrangement's), as words of a name: `smallvec::SmallVec::<[&str; 4]>::new` → `str_4`.
pub(crate) fn instance<'a>(exprs: impl IntoIterator<Item = &'a str>) -> Option<String> {
    exprs.into_iter().find_map(|e| {
        let start = e.find("::<")? + 3;
        let mut depth = 1usize;
        let end = e[start..].char_indices().find_map(|(i, c)| {
            match c {
                '<' => depth += 1,
                '>' => depth -= 1,
                _ => {}
            }
            (depth == 0).then_some(start + i)
        })?;
        Some(snake_words(&e[start..end])).filter(|w| !w.is_empty())
    })
}

/// The function each expression of an arrangement calls, as a word of a name, in order and
/// once each: `bytesize::ByteSize(0u64)`, `byte_size.display()`, `display_2.si()` →
/// `byte_size`, `display`, `si`.
pub(crate) fn arranged<'a>(exprs: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for e in exprs {
        let Some(open) = e.find('(') else { continue };
        let head = &e[..open];
        // The turbofish of a generic call is not its name.
        let head = without_generics(head);
        let name = head.rsplit(['.', ':']).next().unwrap_or(&head);
        let word = snake_words(name);
        if !word.is_empty() && !out.contains(&word) {
            out.push(word);
        }
    }
    out
}

/// `path` without what stands between angle brackets: `a::B::<[u32; 8]>::new` → `a::B::::new`,
/// `<&[u8] as hex::ToHex>::encode_hex<String>` → `::encode_hex`.
pub(crate) fn without_generics(path: &str) -> String {
    let mut depth = 0usize;
    path.chars()
        .filter(|c| {
            match c {
                '<' => depth += 1,
                '>' => depth = depth.saturating_sub(1),
                _ => return depth == 0,
            }
            false
        })
        .collect()
}

/// Of `mine`, the words not every one of `group` holds: what tells a test from the others of
/// its name (empty for the one whose arrangement the others only extend).
pub(crate) fn own<'a>(mine: &'a [String], group: &[&[String]]) -> Vec<&'a str> {
    mine.iter()
        .filter(|w| !group.iter().all(|g| g.contains(w)))
        .map(String::as_str)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_instance_is_told_by_its_type_arguments() {
        assert_eq!(
            instance(["smallvec::SmallVec::<[&str; 4]>::new()"]).as_deref(),
            Some("str_4")
        );
        assert_eq!(
            instance(["buffer.format(7u64)", "lib::halve::<Vec<u8>>(x)"]).as_deref(),
            Some("vec_u8")
        );
        assert_eq!(instance(["lib::halve(4u32)"]), None);
    }

    #[test]
    fn an_arrangement_is_told_by_the_functions_it_calls() {
        let exprs = [
            "bytesize::ByteSize(0u64)",
            "byte_size.display()",
            "display_2.si()",
            "smallvec::SmallVec::<[u32; 8]>::new()",
            "display.si()",
            "7u32",
        ];
        assert_eq!(
            arranged(exprs),
            ["byte_size", "display", "si", "new"].map(String::from)
        );
    }

    #[test]
    fn a_test_is_told_by_the_words_the_others_do_not_all_hold() {
        let plain = vec!["byte_size".to_string(), "display".to_string()];
        let si = vec![
            "byte_size".to_string(),
            "display".to_string(),
            "si".to_string(),
        ];
        let group: [&[String]; 2] = [&plain, &si];
        assert!(own(&plain, &group).is_empty());
        assert_eq!(own(&si, &group), ["si"]);
    }
}
