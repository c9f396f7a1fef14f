//! Owned representations that encode back to bytes: what the simulator and the
//! tests build packets from.

use super::entries::{
    Collision, Input, ORDER, Record, StatsEntry, UpdateCircleEntry, UpdateEntry, UpdatePosEntry,
    UpdateRayEntry,
};
use super::error::DecodeError;
use super::message::Message;
use super::packet::{Header, Packet};
use super::types::{HEADER_LEN, Id, MessageType};

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

fn push_string(out: &mut Vec<u8>, s: &[u8]) {
    // A string longer than 255 bytes cannot be encoded; the length byte wraps and the
    // decoder would read something else. Refuse loudly in debug builds.
    debug_assert!(s.len() <= u8::MAX as usize, "string of {} bytes", s.len());
    out.push(s.len() as u8);
    out.extend_from_slice(s);
}

fn push_entries<E: Record>(out: &mut Vec<u8>, entries: &[E]) {
    debug_assert!(entries.len() <= u8::MAX as usize);
    out.push(entries.len() as u8);
    for e in entries {
        e.append(out, ORDER);
    }
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

    /// The number of bytes [`MessageRepr::emit`] writes.
    pub fn wire_len(&self) -> usize {
        let t = self.msg_type();
        let variable = match self {
            MessageRepr::Connect { name, .. }
            | MessageRepr::Join { name, .. }
            | MessageRepr::Name { name, .. } => name.len(),
            MessageRepr::Chat { text, .. } => text.len(),
            MessageRepr::Stats(e) => e.len() * StatsEntry::LEN,
            MessageRepr::Update(e) => e.len() * UpdateEntry::LEN,
            MessageRepr::UpdatePos(e) => e.len() * UpdatePosEntry::LEN,
            MessageRepr::UpdateRay(e) => e.len() * UpdateRayEntry::LEN,
            MessageRepr::UpdateCircle(e) => e.len() * UpdateCircleEntry::LEN,
            _ => 0,
        };
        t.header_len() + t.fixed_body_len() + variable
    }

    /// Appends the message's wire bytes, header included.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.push(self.msg_type().id());
        if let Some(seqno) = self.seqno() {
            out.extend_from_slice(&seqno.to_be_bytes());
        }
        match self {
            MessageRepr::Connect { name, .. } => push_string(out, name),
            MessageRepr::Disconnect { .. } | MessageRepr::Synced { .. } | MessageRepr::Full => {}
            MessageRepr::Join { player, name, .. } | MessageRepr::Name { player, name, .. } => {
                out.extend_from_slice(&player.to_bytes());
                push_string(out, name);
            }
            MessageRepr::Leave { player, .. } => out.extend_from_slice(&player.to_bytes()),
            MessageRepr::Chat { player, text, .. } => {
                out.extend_from_slice(&player.to_bytes());
                push_string(out, text);
            }
            MessageRepr::Add {
                entity,
                player,
                type_id,
                ..
            } => {
                out.extend_from_slice(&entity.to_bytes());
                out.extend_from_slice(&player.to_bytes());
                out.push(*type_id);
            }
            MessageRepr::Remove { entity, .. } => out.extend_from_slice(&entity.to_bytes()),
            MessageRepr::Selection {
                player,
                ship_type,
                weapon_types,
                ..
            } => {
                out.extend_from_slice(&player.to_bytes());
                out.push(*ship_type);
                out.extend_from_slice(weapon_types);
            }
            MessageRepr::Stats(e) => push_entries(out, e),
            MessageRepr::Input(input) => input.append(out, ORDER),
            MessageRepr::Collision(c) => c.append(out, ORDER),
            MessageRepr::Update(e) => push_entries(out, e),
            MessageRepr::UpdatePos(e) => push_entries(out, e),
            MessageRepr::UpdateRay(e) => push_entries(out, e),
            MessageRepr::UpdateCircle(e) => push_entries(out, e),
        }
    }
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
