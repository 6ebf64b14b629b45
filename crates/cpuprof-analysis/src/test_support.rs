//! What the crate's tests build profiles with.

use cpuprof_model::{Frame, Func, FuncKind, ProfileBuilder, StackId, StrId};

/// A top-level stack of one function `name`.
pub(crate) fn stack(b: &mut ProfileBuilder, name: &str, kind: FuncKind) -> StackId {
    let name = b.intern(name);
    let func = b.func(Func { name, file: StrId::EMPTY, line: None, column: None, kind, tier: None, library: None });
    let frame = b.frame(Frame { func, line: None, column: None });
    b.stack(None, frame)
}
