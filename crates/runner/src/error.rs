//! The runner's error: a usage error (what the user asked for cannot be
//! done: exit 2 in the CLI), a failure, or either with context. Displayed
//! with its sources joined by `: ` (as `anyhow`'s `{:#}` does), the messages
//! read as they did when this code lived in the binary.

/// An error from planning or running a probe.
#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    /// What was asked for cannot be done here (a refused O_DIRECT, a test
    /// file that would overwrite data): the CLI exits with status 2.
    #[error("{0}")]
    Usage(String),
    /// The measurement failed.
    #[error("{0}")]
    Failed(String),
    /// A kernel failed.
    #[error(transparent)]
    Probe(#[from] hwcal_probes::ProbeError),
    /// `msg`, caused by `source`.
    #[error("{msg}")]
    Context {
        msg: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
}

impl RunnerError {
    /// Whether this is a usage error (exit status 2), here or in a cause.
    pub fn is_usage(&self) -> bool {
        match self {
            RunnerError::Usage(_) => true,
            RunnerError::Failed(_) | RunnerError::Probe(_) => false,
            RunnerError::Context { source, .. } => source
                .downcast_ref::<RunnerError>()
                .is_some_and(RunnerError::is_usage),
        }
    }
}

/// The runner's result type.
pub type Result<T, E = RunnerError> = std::result::Result<T, E>;

/// Attach a message to an error, as `anyhow::Context` does.
pub trait Context<T> {
    fn context(self, msg: impl Into<String>) -> Result<T>;
    fn with_context<S: Into<String>>(self, f: impl FnOnce() -> S) -> Result<T>;
}

impl<T, E: std::error::Error + Send + Sync + 'static> Context<T> for std::result::Result<T, E> {
    fn context(self, msg: impl Into<String>) -> Result<T> {
        self.map_err(|e| RunnerError::Context {
            msg: msg.into(),
            source: Box::new(e),
        })
    }
    fn with_context<S: Into<String>>(self, f: impl FnOnce() -> S) -> Result<T> {
        self.map_err(|e| RunnerError::Context {
            msg: f().into(),
            source: Box::new(e),
        })
    }
}

/// Return a usage error (exit status 2 in the CLI).
#[macro_export]
macro_rules! usage {
    ($($t:tt)*) => {
        return Err($crate::RunnerError::Usage(format!($($t)*)))
    };
}

/// A missing value as a failure with `msg`.
impl<T> Context<T> for Option<T> {
    fn context(self, msg: impl Into<String>) -> Result<T> {
        self.ok_or_else(|| RunnerError::Failed(msg.into()))
    }
    fn with_context<S: Into<String>>(self, f: impl FnOnce() -> S) -> Result<T> {
        self.ok_or_else(|| RunnerError::Failed(f().into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The message with its causes, as `anyhow`'s `{:#}` prints it.
    fn chain(e: &dyn std::error::Error) -> String {
        let mut s = e.to_string();
        let mut cur = e.source();
        while let Some(c) = cur {
            s += &format!(": {c}");
            cur = c.source();
        }
        s
    }

    #[test]
    fn context_reads_like_anyhow_and_keeps_usage() {
        let io: std::result::Result<(), _> = Err(std::io::Error::other("disk full"));
        let e = io.context("writing the test file").unwrap_err();
        assert_eq!(chain(&e), "writing the test file: disk full");
        assert!(!e.is_usage());
        let u: Result<()> = Err(RunnerError::Usage("--bs 3: too small".into()));
        let e = u.context("probe io").unwrap_err();
        assert_eq!(chain(&e), "probe io: --bs 3: too small");
        assert!(e.is_usage());
        let none: Option<u32> = None;
        assert_eq!(none.context("no curve").unwrap_err().to_string(), "no curve");
    }
}
