//! Every payload of a real lwar server's traffic (`tests/fixtures/real-server-clean.tsv`,
//! copied from `shared/vectors/`) decodes without error or violation, and encodes
//! back to exactly the same bytes.

use lwarscope::proto::lwar::wire::{MessageRepr, MessageType, Packet, PacketRepr};

use crate::common::vectors;

use vectors::real_server as vectors;

#[test]
fn the_fixture_has_every_frame_of_the_capture() {
    let v = vectors();
    assert_eq!(v.len(), 525);
    assert!(v.iter().enumerate().all(|(i, v)| v.frame as usize == i + 1));
    assert!(v.iter().all(|v| v.src_port == 32422 || v.dst_port == 32422));
}

#[test]
fn every_payload_decodes_without_error_or_violation() {
    let mut per_type = [0usize; MessageType::COUNT];
    for v in vectors() {
        let packet =
            Packet::new_checked(&v.payload).unwrap_or_else(|e| panic!("frame {}: {e}", v.frame));
        assert_eq!(packet.oversize(), None, "frame {}", v.frame);
        let mut end = 12;
        for m in packet.messages() {
            let m = m.unwrap_or_else(|e| panic!("frame {}: {e}", v.frame));
            assert_eq!(
                m.offset, end,
                "frame {}: messages are back to back",
                v.frame
            );
            end += m.bytes.len();
            let violations: Vec<_> = m.violations().collect();
            assert!(violations.is_empty(), "frame {}: {violations:?}", v.frame);
            per_type[m.msg_type().ordinal()] += 1;
        }
        assert_eq!(
            end,
            v.payload.len(),
            "frame {}: every byte decoded",
            v.frame
        );
    }
    // The clean session has the handshake, play and a graceful disconnect.
    for t in [
        MessageType::Connect,
        MessageType::Join,
        MessageType::Synced,
        MessageType::Input,
        MessageType::Update,
        MessageType::Disconnect,
        MessageType::Leave,
    ] {
        assert!(per_type[t.ordinal()] > 0, "no {t} in the capture");
    }
}

#[test]
fn every_payload_encodes_back_to_the_same_bytes() {
    for v in vectors() {
        let repr = PacketRepr::parse(&v.payload).unwrap();
        assert_eq!(repr.wire_len(), v.payload.len(), "frame {}", v.frame);
        assert_eq!(repr.to_bytes(), v.payload, "frame {}", v.frame);
        for m in &repr.messages {
            let mut one = Vec::new();
            m.emit(&mut one);
            assert_eq!(one.len(), m.wire_len(), "frame {}: {m:?}", v.frame);
        }
    }
}

#[test]
fn the_first_frames_say_what_the_specification_says() {
    let v = vectors();
    // Frame 1: the client's Connect, seqno 1, name "alice", nothing acked yet.
    let first = PacketRepr::parse(&v[0].payload).unwrap();
    assert_eq!(first.header.ack, 0);
    assert_eq!(
        first.messages,
        vec![MessageRepr::Connect {
            seqno: 1,
            name: b"alice".to_vec()
        }]
    );
    // Frame 2: the server's answer starts with Join seqno 1 and acks the Connect.
    let second = PacketRepr::parse(&v[1].payload).unwrap();
    assert_eq!(second.header.ack, 1);
    assert!(matches!(
        second.messages.first(),
        Some(MessageRepr::Join { seqno: 1, .. })
    ));
}
