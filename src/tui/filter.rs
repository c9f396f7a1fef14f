//! The display filter, as the packet list applies it: the report's expression
//! language ([`crate::report::Filter`]), evaluated on rows decoded from the store.

use super::model::Row;
use crate::capture::Datagram;
use crate::codec::Packet;
use crate::report::Filter;
use crate::track::{Finding, PacketEvent};
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

/// A parsed display filter and its text.
#[derive(Debug, Clone)]
pub struct DisplayFilter {
    text: String,
    filter: Filter,
}

impl DisplayFilter {
    /// Parses an expression; the error says what is wrong and where, in one line.
    pub fn parse(text: &str) -> Result<Self, String> {
        let filter = Filter::parse(text).map_err(|e| e.to_string())?;
        Ok(DisplayFilter {
            text: text.to_owned(),
            filter,
        })
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn matches(&self, ctx: &PacketCtx<'_>) -> bool {
        let (src, dst) = ctx.addresses;
        let datagram = Datagram {
            frame: ctx.row.frame,
            ts: ctx.row.ts,
            src,
            dst,
            payload: ctx.payload,
            payload_len: usize::from(ctx.row.len),
        };
        self.filter.matches(&PacketEvent {
            datagram: &datagram,
            session: ctx.row.session as usize,
            direction: ctx.row.direction(),
            decoded: Packet::new_checked(ctx.payload),
            findings: ctx.findings,
        })
    }
}
