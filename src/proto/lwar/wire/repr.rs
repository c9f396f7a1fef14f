//! Owned representations that encode back to bytes: what the simulator and the
//! tests build packets from.

use super::entries::{
    Collision, Input, ORDER, Record, StatsEntry, UpdateCircleEntry, UpdateEntry, UpdatePosEntry,
    UpdateRayEntry,
};
use super::error::DecodeError;
use super::layout::Layout;
use super::message::{
    ADD_ENTITY, ADD_PLAYER, ADD_TYPE_ID, Message, PLAYER_AT, REMOVE_ENTITY, SELECTION_SHIP,
    SELECTION_WEAPONS, SEQNO_AT,
};
use super::packet::{Header, Packet};
use super::types::{HEADER_LEN, Id, MessageType};
use crate::proto::codec::{Wire, counted_len, max_count, write_entries, write_text};

/// An owned message. Strings are raw bytes, so that a test or the fault injector
/// can build invalid UTF-8 or over-long names on purpose.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum MessageRepr {
    Connect {
        seqno: u32,
        name: Vec<u8>,
    },
    Disconnect {
        seqno: u32,
    },
    Join {
        seqno: u32,
        player: Id,
        name: Vec<u8>,
    },
    Leave {
        seqno: u32,
        player: Id,
    },
    Chat {
        seqno: u32,
        player: Id,
        text: Vec<u8>,
    },
    Add {
        seqno: u32,
        entity: Id,
        player: Id,
        type_id: u8,
    },
    Remove {
        seqno: u32,
        entity: Id,
    },
    Selection {
        seqno: u32,
        player: Id,
        ship_type: u8,
        weapon_types: [u8; 4],
    },
    Name {
        seqno: u32,
        player: Id,
        name: Vec<u8>,
    },
    Synced {
        seqno: u32,
    },
    Stats(Vec<StatsEntry>),
    Input(Input),
    Full,
    Collision(Collision),
    Update(Vec<UpdateEntry>),
    UpdatePos(Vec<UpdatePosEntry>),
    UpdateRay(Vec<UpdateRayEntry>),
    UpdateCircle(Vec<UpdateCircleEntry>),
}

impl MessageRepr {
    pub fn msg_type(&self) -> MessageType {
        match self {
            MessageRepr::Connect { .. } => MessageType::Connect,
            MessageRepr::Disconnect { .. } => MessageType::Disconnect,
            MessageRepr::Join { .. } => MessageType::Join,
            MessageRepr::Leave { .. } => MessageType::Leave,
            MessageRepr::Chat { .. } => MessageType::Chat,
            MessageRepr::Add { .. } => MessageType::Add,
            MessageRepr::Remove { .. } => MessageType::Remove,
            MessageRepr::Selection { .. } => MessageType::Selection,
            MessageRepr::Name { .. } => MessageType::Name,
            MessageRepr::Synced { .. } => MessageType::Synced,
            MessageRepr::Stats(_) => MessageType::Stats,
            MessageRepr::Input(_) => MessageType::Input,
            MessageRepr::Full => MessageType::Full,
            MessageRepr::Collision(_) => MessageType::Collision,
            MessageRepr::Update(_) => MessageType::Update,
            MessageRepr::UpdatePos(_) => MessageType::UpdatePos,
            MessageRepr::UpdateRay(_) => MessageType::UpdateRay,
            MessageRepr::UpdateCircle(_) => MessageType::UpdateCircle,
        }
    }

    pub fn is_reliable(&self) -> bool {
        self.msg_type().is_reliable()
    }

    /// The sequence number of a reliable message.
    pub fn seqno(&self) -> Option<u32> {
        match *self {
            MessageRepr::Connect { seqno, .. }
            | MessageRepr::Disconnect { seqno }
            | MessageRepr::Join { seqno, .. }
            | MessageRepr::Leave { seqno, .. }
            | MessageRepr::Chat { seqno, .. }
            | MessageRepr::Add { seqno, .. }
            | MessageRepr::Remove { seqno, .. }
            | MessageRepr::Selection { seqno, .. }
            | MessageRepr::Name { seqno, .. }
            | MessageRepr::Synced { seqno } => Some(seqno),
            _ => None,
        }
    }

    /// Sets the sequence number of a reliable message; unreliable ones have none and
    /// are left alone.
    pub fn set_seqno(&mut self, value: u32) {
        match self {
            MessageRepr::Connect { seqno, .. }
            | MessageRepr::Disconnect { seqno }
            | MessageRepr::Join { seqno, .. }
            | MessageRepr::Leave { seqno, .. }
            | MessageRepr::Chat { seqno, .. }
            | MessageRepr::Add { seqno, .. }
            | MessageRepr::Remove { seqno, .. }
            | MessageRepr::Selection { seqno, .. }
            | MessageRepr::Name { seqno, .. }
            | MessageRepr::Synced { seqno } => *seqno = value,
            _ => {}
        }
    }

    /// The number of bytes [`MessageRepr::emit`] writes: its head, its
    /// row's fixed items, then its text or its entries.
    pub fn wire_len(&self) -> usize {
        let t = self.msg_type();
        let l = t.layout();
        let variable = match self {
            MessageRepr::Connect { name, .. }
            | MessageRepr::Join { name, .. }
            | MessageRepr::Name { name, .. } => name.len(),
            MessageRepr::Chat { text, .. } => text.len(),
            MessageRepr::Stats(e) => counted_len(l, e.len()) - l.fixed,
            MessageRepr::Update(e) => counted_len(l, e.len()) - l.fixed,
            MessageRepr::UpdatePos(e) => counted_len(l, e.len()) - l.fixed,
            MessageRepr::UpdateRay(e) => counted_len(l, e.len()) - l.fixed,
            MessageRepr::UpdateCircle(e) => counted_len(l, e.len()) - l.fixed,
            _ => 0,
        };
        t.header_len() + l.fixed + variable
    }

    /// Appends the message's wire bytes, header included, each field at
    /// its row's offset (where the decoder reads it), a text's length and
    /// an entry count where the row puts them (`codec::write_text`,
    /// `write_entries`). A text longer than its length can say (255 bytes)
    /// cannot be encoded: refused loudly in debug builds.
    pub fn emit(&self, out: &mut Vec<u8>) {
        let t = self.msg_type();
        let l = t.layout();
        let start = out.len();
        out.resize(start + self.wire_len(), 0);
        let Some(b) = out.get_mut(start..) else {
            return;
        };
        t.id().put(b, 0, ORDER);
        if let Some(seqno) = self.seqno() {
            seqno.put(b, SEQNO_AT, ORDER);
        }
        let Some(body) = b.get_mut(t.header_len()..) else {
            return;
        };
        let text = |text: &[u8], body: &mut [u8]| {
            debug_assert!(
                text.len() <= u8::MAX as usize,
                "string of {} bytes",
                text.len()
            );
            write_text(l, text, body, ORDER);
        };
        match self {
            MessageRepr::Connect { name, .. } => text(name, body),
            MessageRepr::Disconnect { .. } | MessageRepr::Synced { .. } | MessageRepr::Full => {}
            MessageRepr::Join { player, name, .. } | MessageRepr::Name { player, name, .. } => {
                player.put(body, PLAYER_AT, ORDER);
                text(name, body);
            }
            MessageRepr::Leave { player, .. } => player.put(body, PLAYER_AT, ORDER),
            MessageRepr::Chat {
                player, text: t, ..
            } => {
                player.put(body, PLAYER_AT, ORDER);
                text(t, body);
            }
            MessageRepr::Add {
                entity,
                player,
                type_id,
                ..
            } => {
                entity.put(body, ADD_ENTITY, ORDER);
                player.put(body, ADD_PLAYER, ORDER);
                type_id.put(body, ADD_TYPE_ID, ORDER);
            }
            MessageRepr::Remove { entity, .. } => entity.put(body, REMOVE_ENTITY, ORDER),
            MessageRepr::Selection {
                player,
                ship_type,
                weapon_types,
                ..
            } => {
                player.put(body, PLAYER_AT, ORDER);
                ship_type.put(body, SELECTION_SHIP, ORDER);
                weapon_types.put(body, SELECTION_WEAPONS, ORDER);
            }
            MessageRepr::Stats(e) => entries(l, e, body),
            MessageRepr::Input(input) => input.write(body, ORDER),
            MessageRepr::Collision(c) => c.write(body, ORDER),
            MessageRepr::Update(e) => entries(l, e, body),
            MessageRepr::UpdatePos(e) => entries(l, e, body),
            MessageRepr::UpdateRay(e) => entries(l, e, body),
            MessageRepr::UpdateCircle(e) => entries(l, e, body),
        }
    }
}

/// Writes counted entries where the row puts them (at most 255: refused
/// loudly in debug builds).
fn entries<E: Record>(l: &Layout, e: &Vec<E>, body: &mut [u8]) {
    debug_assert!(e.len() <= max_count(l), "{} entries", e.len());
    write_entries(l, e, body, ORDER);
}

impl From<&Message<'_>> for MessageRepr {
    fn from(m: &Message<'_>) -> Self {
        match *m {
            Message::Connect { seqno, name } => MessageRepr::Connect {
                seqno,
                name: name.as_bytes().to_vec(),
            },
            Message::Disconnect { seqno } => MessageRepr::Disconnect { seqno },
            Message::Join {
                seqno,
                player,
                name,
            } => MessageRepr::Join {
                seqno,
                player,
                name: name.as_bytes().to_vec(),
            },
            Message::Leave { seqno, player } => MessageRepr::Leave { seqno, player },
            Message::Chat {
                seqno,
                player,
                text,
            } => MessageRepr::Chat {
                seqno,
                player,
                text: text.as_bytes().to_vec(),
            },
            Message::Add {
                seqno,
                entity,
                player,
                type_id,
            } => MessageRepr::Add {
                seqno,
                entity,
                player,
                type_id,
            },
            Message::Remove { seqno, entity } => MessageRepr::Remove { seqno, entity },
            Message::Selection {
                seqno,
                player,
                ship_type,
                weapon_types,
            } => MessageRepr::Selection {
                seqno,
                player,
                ship_type,
                weapon_types,
            },
            Message::Name {
                seqno,
                player,
                name,
            } => MessageRepr::Name {
                seqno,
                player,
                name: name.as_bytes().to_vec(),
            },
            Message::Synced { seqno } => MessageRepr::Synced { seqno },
            Message::Stats(e) => MessageRepr::Stats(e.iter().collect()),
            Message::Input(i) => MessageRepr::Input(i),
            Message::Full => MessageRepr::Full,
            Message::Collision(c) => MessageRepr::Collision(c),
            Message::Update(e) => MessageRepr::Update(e.iter().collect()),
            Message::UpdatePos(e) => MessageRepr::UpdatePos(e.iter().collect()),
            Message::UpdateRay(e) => MessageRepr::UpdateRay(e.iter().collect()),
            Message::UpdateCircle(e) => MessageRepr::UpdateCircle(e.iter().collect()),
        }
    }
}

/// An owned packet: header and messages.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PacketRepr {
    pub header: Header,
    pub messages: Vec<MessageRepr>,
}

impl PacketRepr {
    /// Decodes a whole packet, failing on the first error.
    pub fn parse(bytes: &[u8]) -> Result<Self, DecodeError> {
        let packet = Packet::new_checked(bytes)?;
        let messages = packet
            .messages()
            .map(|m| m.map(|view| MessageRepr::from(&view.message)))
            .collect::<Result<_, _>>()?;
        Ok(PacketRepr {
            header: packet.header(),
            messages,
        })
    }

    /// The number of bytes [`PacketRepr::emit_into`] writes.
    pub fn wire_len(&self) -> usize {
        HEADER_LEN
            + self
                .messages
                .iter()
                .map(MessageRepr::wire_len)
                .sum::<usize>()
    }

    /// Appends the packet's wire bytes. No size limit is applied: use
    /// [`super::PacketBuilder`] to fill packets as the specification says.
    pub fn emit_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.header.to_bytes());
        for m in &self.messages {
            m.emit(out);
        }
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.wire_len());
        self.emit_into(&mut out);
        out
    }
}
