//! Decodes arbitrary bytes through every entry point of the Battlegrounds wire
//! format: the header, the checked packet view and its violations, the typed
//! field walk, the dissector, and `PacketRepr::parse` with a re-encode. Any panic
//! is a bug; so is a disagreement between the view and the owned representation,
//! or a field span outside the packet.

#![no_main]

use libfuzzer_sys::fuzz_target;
use lwarscope::proto::battlegrounds::dissect::Battlegrounds;
use lwarscope::proto::battlegrounds::wire::{
    ByteOrder, Dialect, Header, Packet, PacketRepr, evidence, is_auth, plausible, walk,
};
use lwarscope::proto::dissect::Dissector;
use lwarscope::proto::field::{Field, FieldSink};

struct Spans(usize);

impl FieldSink for Spans {
    fn field(&mut self, f: Field<'_>) {
        self.0 = self.0.max(f.offset + f.len);
    }
}

fuzz_target!(|data: &[u8]| {
    let _ = (is_auth(data), plausible(data), Header::parse(data));
    let mut spans = Spans(0);
    let walked = walk(data, &mut spans);
    assert!(spans.0 <= data.len());
    let parsed = PacketRepr::parse(data);
    match Packet::new_checked(data) {
        Ok(p) => {
            assert!(walked.is_ok());
            let _ = p.violations().count();
            let repr = parsed.expect("the view decoded");
            assert_eq!(repr.to_bytes().expect("decoded lengths fit"), data);
        }
        Err(e) => {
            assert_eq!(parsed, Err(e));
            assert_eq!(walked, Err(e));
            assert!(e.offset() <= data.len());
            let _ = e.to_string();
        }
    }
    // The reference implementation's order: decodes and re-encodes the same.
    if let Ok(p) = PacketRepr::parse_in(data, Dialect::BIG) {
        assert_eq!(p.to_bytes_in(ByteOrder::Big).expect("decoded lengths fit"), data);
    }
    let _ = evidence(data, None);
    let _ = Battlegrounds.messages(data, &mut |m| {
        let _ = (m.token.to_string(), m.text.to_string());
    });
    Battlegrounds.tree(data, &mut |_| {});
});
