//! The usage errors found after clap's own checks.

/// A bad argument found after clap's own checks (exit code 2).
#[derive(Debug)]
pub(crate) struct UsageError(pub(crate) String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// A usage error that offers a list to choose from (the functions an ambiguous pattern names):
/// the head, then each choice on a line of its own, each already escaped for the terminal.
#[derive(Debug)]
pub(crate) struct UsageChoices {
    pub(crate) head: String,
    pub(crate) choices: Vec<String>,
}

impl std::fmt::Display for UsageChoices {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.head)?;
        for choice in &self.choices {
            write!(f, "\n{choice}")?;
        }
        Ok(())
    }
}

impl std::error::Error for UsageChoices {}

/// Whether `err` is a usage error (exit code 2).
pub(crate) fn is_usage(err: &anyhow::Error) -> bool {
    err.downcast_ref::<UsageError>().is_some() || err.downcast_ref::<UsageChoices>().is_some()
}
