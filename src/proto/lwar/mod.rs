//! lwar: the first protocol. Its wire format ([`wire`]), its analysis rules, and
//! its simulator ([`sim`]). The specification and its notes are beside this file
//! (`lwar-network-protocol.txt`, `NOTES.md`).

pub mod sim;
pub mod wire;
