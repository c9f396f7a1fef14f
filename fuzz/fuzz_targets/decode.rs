//! Decodes arbitrary bytes through every entry point of the codec: the checked
//! packet view, its messages, violations, field lists, displays and tokens, and
//! `PacketRepr::parse` with a re-encode. Any panic is a bug; so is any
//! disagreement between the view and the owned representation.

#![no_main]

use libfuzzer_sys::fuzz_target;
use lwarscope::proto::lwar::wire::{HEADER_LEN, Packet, PacketRepr};
use std::fmt::Write;

fuzz_target!(|data: &[u8]| {
    let parsed = PacketRepr::parse(data);
    let packet = match Packet::new_checked(data) {
        Ok(packet) => packet,
        Err(e) => {
            assert_eq!(e.offset(), 0);
            assert_eq!(parsed, Err(e));
            let _ = e.to_string();
            return;
        }
    };
    let mut out = String::new();
    let _ = packet.oversize();
    let _ = packet.header_fields();
    write!(out, "{}", packet.summary()).unwrap();

    let mut messages = packet.messages();
    let mut end = HEADER_LEN;
    let mut first_error = None;
    for item in messages.by_ref() {
        match item {
            Ok(view) => {
                assert_eq!(view.offset, end, "messages are back to back");
                assert!(!view.bytes.is_empty());
                end += view.bytes.len();
                for v in view.violations() {
                    assert_eq!(v.offset(), view.offset);
                    write!(out, "{v} {}", v.kind()).unwrap();
                }
                let fields = view.fields();
                assert!(
                    fields
                        .iter()
                        .all(|f| f.span.start >= view.offset && f.span.end <= end)
                );
                write!(out, "{} {}", view.message.token(), view.text()).unwrap();
            }
            Err(e) => {
                assert_eq!(
                    e.offset(),
                    end,
                    "the error is where the next message starts"
                );
                assert!(e.offset() < data.len());
                write!(out, "{e} {}", e.kind()).unwrap();
                first_error = Some(e);
            }
        }
    }
    match (parsed, first_error) {
        (Ok(repr), None) => {
            assert_eq!(end, data.len());
            assert_eq!(messages.undecoded(), None);
            assert_eq!(repr.wire_len(), data.len());
            assert_eq!(repr.to_bytes(), data, "re-encoding gives the same bytes");
        }
        (Err(e), Some(first)) => {
            assert_eq!(e, first);
            assert_eq!(
                messages.undecoded(),
                Some((e.offset(), &data[e.offset()..]))
            );
        }
        (parsed, first) => panic!("parse gave {parsed:?}, the view's first error is {first:?}"),
    }
});
