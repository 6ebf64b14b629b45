//! folded stacks input.

use std::io::BufRead;

use cpuprof_model::Profile;

use crate::error::{Origin, ParseError, ParseErrorKind, Span};
use crate::ParseOptions;

/// Parses folded stacks from `reader`.
pub(crate) fn parse(
    reader: impl BufRead + Send,
    origin: &Origin,
    options: &ParseOptions,
) -> Result<Profile, ParseError> {
    let _ = (reader, options);
    Err(ParseErrorKind::Unsupported("folded stacks input is not supported yet").at(origin, Span::None))
}
