//! pprof input.

use std::io::BufRead;

use cpuprof_model::Profile;

use crate::error::{Origin, ParseError, ParseErrorKind, Span};
use crate::ParseOptions;

/// Parses pprof from `reader`.
pub(crate) fn parse(
    reader: impl BufRead + Send,
    origin: &Origin,
    options: &ParseOptions,
) -> Result<Profile, ParseError> {
    let _ = (reader, options);
    Err(ParseErrorKind::Unsupported("pprof input is not supported yet").at(origin, Span::None))
}
