//! The protocols lwarscope understands, each in its own folder: its wire format,
//! its analysis rules and its simulator. Nothing outside `proto/` names a
//! protocol's types; the rest of the crate sees protocols through the registry.

pub mod field;
pub mod lwar;
