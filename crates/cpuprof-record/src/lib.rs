//! Recording profiles of Node.js programs: a command run with every Node process it starts
//! profiled ([`command`]), or a running Node process profiled over its inspector ([`attach`]).

pub mod attach;
pub mod command;
