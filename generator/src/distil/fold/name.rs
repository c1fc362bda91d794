//! What folding calls a table (see `fold.rs`): after its function, and what every row's
//! result shares.

use std::collections::BTreeSet;

/// The variant every one of `results` is (`Err` for `Err(..)`, `None`, `true`), when they
/// share one of those a reader names a behaviour by.
pub(super) fn shared_variant<'r>(results: &[&'r str]) -> Option<&'r str> {
    let variant = |r: &'r str| {
        let head = r.split('(').next().unwrap_or_default().trim();
        ["Ok", "Err", "Some", "None", "true", "false"]
            .contains(&head)
            .then_some(head)
    };
    let first = variant(results.first()?)?;
    results
        .iter()
        .all(|r| variant(r) == Some(first))
        .then_some(first)
}

/// `decode_recorded_cases` for a table of `hex::decode`'s tests (`decode_returns_err_cases`
/// when every row's result is an `Err`), apart from the names in `taken`, which it joins: by
/// the type the function is on (`str_width_recorded_cases`), else by the primitive type of the
/// first of `columns` (`format_i16_recorded_cases`, another instance of a generic function),
/// else by a number.
pub(super) fn table_name(
    function_path: &str,
    variant: Option<&str>,
    columns: &[String],
    taken: &mut BTreeSet<String>,
) -> String {
    // The path without what angle brackets hold (`<&[u8] as hex::ToHex>::encode_hex<String>`
    // is `::encode_hex`), then its last segment.
    let outer = crate::naming::without_generics(function_path);
    let last = outer
        .trim_end_matches(':')
        .rsplit("::")
        .next()
        .unwrap_or_default();
    let ident: String = last
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { '_' })
        .collect();
    let ident = ident.trim_matches('_').to_lowercase();
    let ident = if ident.is_empty() { "call" } else { &ident };
    let rest = match variant {
        Some(v) => format!("returns_{}_cases", v.to_lowercase()),
        None => "recorded_cases".to_string(),
    };
    let base = format!("{ident}_{rest}");
    // Another table of a function of that name (`<char as W>::width` and `<str as W>::width`):
    // the type the second is on, before a number.
    let on = function_path
        .strip_prefix('<')
        .and_then(|rest| rest.split_once(" as "))
        .map(|(ty, _)| crate::naming::sanitize_ident(ty))
        .filter(|ty| ty.chars().all(|c| c.is_ascii_lowercase() || c == '_'));
    match on {
        Some(ty) if taken.contains(&base) => crate::naming::apart(format!("{ty}_{base}"), taken),
        _ => crate::naming::apart_by_type(ident, &rest, columns, taken),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_names_come_from_the_function_and_stay_apart() {
        let mut taken: BTreeSet<String> = ["decode_recorded_cases".to_string()].into();
        assert_eq!(
            table_name("hex::decode", None, &[], &mut taken),
            "decode_recorded_cases_2"
        );
        assert_eq!(
            table_name("hex::decode", Some("Err"), &[], &mut taken),
            "decode_returns_err_cases"
        );
        assert_eq!(
            shared_variant(&["Err(E::Odd)", "Err(E::Bad { c: 'x' })"]),
            Some("Err")
        );
        assert_eq!(shared_variant(&["Err(E::Odd)", "Ok(vec![1u8])"]), None);
        assert_eq!(
            table_name("<char as W>::width", None, &[], &mut taken),
            "width_recorded_cases"
        );
        assert_eq!(
            table_name("<str as W>::width", None, &[], &mut taken),
            "str_width_recorded_cases"
        );
        assert_eq!(shared_variant(&["\"0 B\"", "\"1 B\""]), None);
        assert_eq!(
            table_name("<Vec<u8> as hex::FromHex>::from_hex", None, &[], &mut taken),
            "from_hex_recorded_cases"
        );
        assert_eq!(
            table_name(
                "<&[u8] as hex::ToHex>::encode_hex::<String>",
                None,
                &[],
                &mut taken
            ),
            "encode_hex_recorded_cases"
        );
    }

    #[test]
    fn tables_of_a_generic_functions_instances_are_named_by_their_type() {
        // itoa's `Buffer::format` on `i16` and on `u32`: one path, two instances.
        let mut taken: BTreeSet<String> = BTreeSet::new();
        let columns = |ty: &str| vec![ty.to_string(), "&str".to_string()];
        let names: Vec<String> = ["i16", "u32", "u32", "Wide"]
            .iter()
            .map(|ty| table_name("itoa::Buffer::format", None, &columns(ty), &mut taken))
            .collect();
        assert_eq!(
            names,
            [
                "format_recorded_cases",
                "format_u32_recorded_cases",
                "format_recorded_cases_2",
                "format_recorded_cases_3"
            ]
        );
    }
}
