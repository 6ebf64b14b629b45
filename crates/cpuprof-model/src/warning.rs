//! Warnings about an input, in the library's words, with the setting that acts on them.

use std::fmt;

use crate::SourceFormat;

/// A reading setting that would read an input otherwise: the field of the same name in
/// `cpuprof_parse::ParseOptions`. Errors and warnings name it so that a front end can say how
/// to set it (the CLI names its flag); libraries never name flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Setting {
    /// `format`: name the input's format; `Some`: this one is likely (or leave it to be
    /// recognised from the content).
    Format(Option<SourceFormat>),
    /// `profile_id`: which CPU profile of a Chrome trace to read.
    ProfileId,
    /// `sample_type`: which pprof sample type to weigh by.
    SampleType,
    /// `symbols_root`: where the libraries a tick log names are found.
    SymbolsRoot,
    /// `max_input_size`: how much of an input is read.
    MaxInputSize,
}

/// Something the parser had to work around, one sentence for the user (see [`crate::Meta`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// The sentence.
    pub message: String,
    /// The setting to change to act on it, if one would.
    pub setting: Option<Setting>,
}

impl Warning {
    /// A warning that no setting acts on.
    pub fn new(message: impl Into<String>) -> Self {
        Warning { message: message.into(), setting: None }
    }

    /// A warning that `setting` acts on.
    pub fn with_setting(message: impl Into<String>, setting: Setting) -> Self {
        Warning { message: message.into(), setting: Some(setting) }
    }
}

impl From<String> for Warning {
    fn from(message: String) -> Self {
        Warning::new(message)
    }
}

/// A warning reads as its sentence (`warning.contains(…)`).
impl std::ops::Deref for Warning {
    type Target = str;

    fn deref(&self) -> &str {
        &self.message
    }
}

/// The sentence alone (a front end adds how to change the setting).
impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
