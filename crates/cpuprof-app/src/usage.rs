//! Usage errors: a request that cannot be answered as asked (the command line's exit code 2).

/// A bad option, found once the front end's own checks passed (exit code 2).
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// A usage error that offers a list to choose from (the functions an ambiguous pattern names):
/// the head, then each choice on a line of its own, each already escaped for the terminal.
#[derive(Debug)]
pub struct UsageChoices {
    pub head: String,
    pub choices: Vec<String>,
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
pub fn is_usage(err: &anyhow::Error) -> bool {
    err.downcast_ref::<UsageError>().is_some() || err.downcast_ref::<UsageChoices>().is_some()
}
