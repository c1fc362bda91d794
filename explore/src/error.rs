//! Why exploring stopped: one line naming the thing and the fix.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExploreError {
    #[error("{0}")]
    Generator(#[from] carve_generator::GenerateError),
    #[error("--out {}: not a directory (create it, usually the crate's tests/)", path.display())]
    OutDirNotADirectory { path: PathBuf },
    #[error("no function of crate `{krate}` can be explored: {why}")]
    NothingToExplore { krate: String, why: String },
    #[error("--length {length}: {why}")]
    Length { length: usize, why: String },
    #[error("cannot {what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the explore harness for `{krate}` does not build: {message} (harness in {})", dir.display())]
    HarnessBuild {
        krate: String,
        message: String,
        dir: PathBuf,
    },
    #[error("the explore harness misbehaved: {0}")]
    Harness(String),
    #[error("interrupted: nothing was written")]
    Interrupted,
}

impl ExploreError {
    /// Stopped by the caller (a signal), here or in the generator's verification.
    pub fn is_interrupted(&self) -> bool {
        matches!(
            self,
            ExploreError::Interrupted
                | ExploreError::Generator(carve_generator::GenerateError::Interrupted { .. })
        )
    }

    pub(crate) fn io(what: impl Into<String>, source: std::io::Error) -> ExploreError {
        ExploreError::Io {
            what: what.into(),
            source,
        }
    }
}
