//! The cargo features a recorded program was built with beyond its crate's defaults
//! ([`carve_storage::RunInfo::features`]), as the carved tests need them: which names are
//! trusted into a file and a command line, and the attribute that gates a carved file on them.
//! Verification builds with them through [`crate::Verify::with_features`].

use carve_storage::RunInfo;

/// The recorded features named as cargo names features (letters, digits, `_`, `-`, `+`, `.`);
/// the others are left out, since they are written into the carved files and cargo's command
/// line.
pub fn recorded_features(info: &RunInfo) -> Vec<String> {
    let named = |f: &&String| {
        !f.is_empty()
            && f.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '+' | '.'))
    };
    info.features.iter().filter(named).cloned().collect()
}

/// The attribute that compiles a test file only with `features` (`None`: no feature needed):
/// what the crate's own tests say with `required-features`, said in the file itself, so that a
/// plain `cargo test` still builds.
pub fn features_cfg(features: &[String]) -> Option<String> {
    match features {
        [] => None,
        [one] => Some(format!("#![cfg(feature = \"{one}\")]")),
        many => {
            let each: Vec<String> = many.iter().map(|f| format!("feature = \"{f}\"")).collect();
            Some(format!("#![cfg(all({}))]", each.join(", ")))
        }
    }
}
