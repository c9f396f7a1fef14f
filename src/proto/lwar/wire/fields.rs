//! lwar's typed field walk ([`Packet::walk_fields`]): what the display
//! filter's `lwar.*` names, field output and JSON read, a visitor of the
//! layout (`layout.rs`, which registers the fields, [`super::FIELDS`]). The
//! walk borrows from the packet and allocates nothing.
//!
//! Names follow the specification's labels in snake case, under the message
//! they belong to where the same label means different things (`lwar.input.frame`
//! is the input's frame number); fields every message type shares (`type`,
//! `seqno`, `player`, `entity`, `name`) have one name.

use super::error::DecodeError;
use super::layout::{self, F, FIELDS, HEADER, field};
use super::message::{self, MessageView};
use super::packet::Packet;
use crate::proto::field::{Field, FieldSink, Value, group_key};
use crate::proto::layout::{ToSink, items_defs};

impl MessageView<'_> {
    /// Walks the message's fields: a `lwar.message` node, then its fields in
    /// wire order; nothing if the sink takes none of its type's fields.
    pub fn walk_fields(&self, sink: &mut dyn FieldSink) {
        let t = self.msg_type();
        if !sink.wants_any(group_key(t.layout()), &|each| {
            message::message_defs(t, each)
        }) {
            return;
        }
        sink.enter(Field {
            def: field(F::MESSAGE),
            index: None,
            offset: self.offset,
            len: self.bytes.len(),
            value: Value::None,
        });
        message::walk(t, self.bytes, self.offset, &mut ToSink::new(sink, &FIELDS));
        sink.leave();
    }
}

impl Packet<'_> {
    /// Walks every field of the packet in wire order: the header, then each
    /// message; the first message that does not decode ends the walk with its
    /// error.
    pub fn walk_fields(&self, sink: &mut dyn FieldSink) -> Result<(), DecodeError> {
        if sink.wants_any(group_key(&HEADER), &|each| items_defs(&HEADER, each)) {
            layout::walk_header(self.bytes(), &mut ToSink::new(sink, &FIELDS));
        }
        for m in self.messages() {
            m?.walk_fields(sink);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::lwar::wire::{
        FIELDS, Header, Id, MessageRepr, MessageType, PacketRepr, UpdateEntry,
    };

    fn packet(messages: Vec<MessageRepr>) -> Vec<u8> {
        let repr = PacketRepr {
            header: Header {
                ack: 3,
                timestamp: 1000,
            },
            messages,
        };
        let mut out = Vec::new();
        repr.emit_into(&mut out);
        out
    }

    /// Every field as `name[index]@offset+len=value`, nodes with `{` and `}`.
    #[derive(Default)]
    struct Dump(Vec<String>);
    impl FieldSink for Dump {
        fn field(&mut self, f: Field<'_>) {
            let index = f.index.map(|i| format!("[{i}]")).unwrap_or_default();
            self.0.push(format!(
                "{}{index}@{}+{}={}",
                f.def.name, f.offset, f.len, f.value
            ));
        }
        fn enter(&mut self, node: Field<'_>) {
            self.field(node);
            self.0.push("{".into());
        }
        fn leave(&mut self) {
            self.0.push("}".into());
        }
    }

    #[test]
    fn the_walk_names_every_byte_once_in_wire_order() {
        let bytes = packet(vec![
            MessageRepr::Join {
                seqno: 2,
                player: Id::new(0, 1),
                name: b"ann".to_vec(),
            },
            MessageRepr::Update(vec![UpdateEntry {
                entity: Id::new(1, 2),
                x: -5,
                y: 7,
                orientation: 90,
                health: 100,
            }]),
        ]);
        let p = Packet::new_checked(&bytes).unwrap();
        let mut d = Dump::default();
        p.walk_fields(&mut d).unwrap();
        let want = [
            "lwar.app_id@0+4=0xf27087c5",
            "lwar.ack@4+4=3",
            "lwar.timestamp@8+4=1000",
            "lwar.message@12+13=",
            "{",
            "lwar.type@12+1=Join (3)",
            "lwar.seqno@13+4=2",
            "lwar.player@17+4=0:1",
            "lwar.name_len@21+1=3",
            "lwar.name@22+3=\"ann\"",
            "}",
            "lwar.message@25+13=",
            "{",
            "lwar.type@25+1=Update (110)",
            "lwar.num@26+1=1",
            "lwar.update[0]@27+11=",
            "{",
            "lwar.entity@27+4=1:2",
            "lwar.x@31+2=-5",
            "lwar.y@33+2=7",
            "lwar.update.orientation@35+2=90",
            "lwar.update.health@37+1=100",
            "}",
            "}",
        ];
        assert_eq!(d.0, want);
        assert_eq!(MessageType::Update.id(), 110);
    }

    #[test]
    fn a_message_that_does_not_decode_ends_the_walk_with_its_error() {
        let mut bytes = packet(vec![MessageRepr::Synced { seqno: 1 }]);
        bytes.push(0xee); // no such message type
        let p = Packet::new_checked(&bytes).unwrap();
        let mut d = Dump::default();
        let e = p.walk_fields(&mut d).unwrap_err();
        assert_eq!(e.offset(), 17);
        assert!(
            d.0.contains(&"lwar.type@12+1=Synced (10)".to_owned()),
            "{:?}",
            d.0
        );
    }

    /// Takes only `lwar.seqno`: says so for each group asked.
    #[derive(Default)]
    struct SeqnoOnly {
        got: Vec<String>,
        asked: usize,
    }
    impl FieldSink for SeqnoOnly {
        fn field(&mut self, f: Field<'_>) {
            self.got
                .push(format!("{}@{}={}", f.def.name, f.offset, f.value));
        }
        fn wants_any(&mut self, _key: usize, defs: &crate::proto::field::GroupDefs<'_>) -> bool {
            self.asked += 1;
            let mut any = false;
            defs(&mut |d| any |= d.name == "lwar.seqno");
            any
        }
    }

    /// A sink that takes only some fields gets the groups that hold them,
    /// and the walk skips the rest whole: no header, no Update (which has
    /// no seqno), no entries, each group asked once.
    #[test]
    fn the_walk_skips_the_groups_a_sink_does_not_want() {
        let bytes = packet(vec![
            MessageRepr::Update(vec![UpdateEntry::default(); 3]),
            MessageRepr::Synced { seqno: 4 },
            MessageRepr::Stats(vec![Default::default(); 2]),
        ]);
        let p = Packet::new_checked(&bytes).unwrap();
        let mut s = SeqnoOnly::default();
        p.walk_fields(&mut s).unwrap();
        assert_eq!(
            s.got,
            [
                "lwar.message@47=",
                "lwar.type@47=Synced (10)",
                "lwar.seqno@48=4"
            ]
        );
        // The header, each of the three messages.
        assert_eq!(s.asked, 4);
    }

    #[test]
    fn field_names_are_unique_and_namespaced() {
        let mut names: Vec<_> = FIELDS.iter().map(|f| f.name).collect();
        assert!(names.iter().all(|n| n.starts_with("lwar.")));
        names.sort();
        names.dedup();
        assert_eq!(names.len(), FIELDS.len());
    }
}
