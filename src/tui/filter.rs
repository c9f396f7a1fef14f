//! The display filter, as the packet list applies it.
//!
//! Placeholder until the report's filter is merged: words that must all match,
//! each a message type, a finding kind, or a direction.

use super::model::Row;
use crate::codec::{MessageType, Packet};
use crate::track::{Finding, FindingKind};
use std::net::SocketAddr;

/// What a filter sees of one packet.
pub struct PacketCtx<'a> {
    pub row: &'a Row,
    /// The payload as captured.
    pub payload: &'a [u8],
    /// Source and destination.
    pub addresses: (SocketAddr, SocketAddr),
    /// The findings raised on the packet.
    pub findings: &'a [Finding],
}

/// A parsed display filter.
#[derive(Debug, Clone)]
pub struct DisplayFilter {
    text: String,
    words: Vec<Word>,
}

#[derive(Debug, Clone, Copy)]
enum Word {
    Msg(MessageType),
    Kind(FindingKind),
    Dir(bool),
}

impl DisplayFilter {
    /// Parses an expression; the error says what is wrong, in one line.
    pub fn parse(text: &str) -> Result<Self, String> {
        let words = text
            .split_whitespace()
            .map(|w| {
                if let Some(t) = MessageType::ALL
                    .iter()
                    .find(|t| t.name().eq_ignore_ascii_case(w))
                {
                    Ok(Word::Msg(*t))
                } else if let Some(k) = FindingKind::from_name(w) {
                    Ok(Word::Kind(k))
                } else if w == "c2s" || w == "s2c" {
                    Ok(Word::Dir(w == "s2c"))
                } else {
                    Err(format!("unknown word `{w}`"))
                }
            })
            .collect::<Result<_, _>>()?;
        Ok(DisplayFilter {
            text: text.to_owned(),
            words,
        })
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn matches(&self, ctx: &PacketCtx<'_>) -> bool {
        self.words.iter().all(|w| match *w {
            Word::Msg(t) => Packet::new_checked(ctx.payload).is_ok_and(|p| {
                p.messages()
                    .map_while(Result::ok)
                    .any(|m| m.msg_type() == t)
            }),
            Word::Kind(k) => ctx.findings.iter().any(|f| f.kind == k),
            Word::Dir(s2c) => {
                (ctx.row.direction() == crate::track::Direction::ServerToClient) == s2c
            }
        })
    }
}
