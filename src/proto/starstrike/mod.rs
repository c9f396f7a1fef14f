//! Starstrike: a client-server UDP game protocol with a 16-bit sequence number
//! per side and a 32-bit acknowledgement bitfield anchored on the sender's own
//! number. Its wire format ([`wire`]); the specification and its notes are beside
//! this file (`starstrike-protocol.md`, `starstrike-NOTES.md`; the notes win).

pub mod wire;
