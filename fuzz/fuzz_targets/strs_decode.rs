//! Decodes arbitrary bytes through every entry point of the Starstrike codec: the
//! checked view, its message, violations and field walk, and `PacketRepr::parse`
//! with a re-encode. Any panic is a bug; so is any disagreement between the view
//! and the owned representation.

#![no_main]

use libfuzzer_sys::fuzz_target;
use lwarscope::proto::field::{Field, FieldSink};
use lwarscope::proto::starstrike::wire::{Packet, PacketRepr, walk_fields};

struct Bounds(usize);

impl FieldSink for Bounds {
    fn field(&mut self, f: Field<'_>) {
        assert!(f.offset + f.len <= self.0);
        let _ = f.value.to_string();
    }
}

fuzz_target!(|data: &[u8]| {
    let parsed = PacketRepr::parse(data);
    let walked = walk_fields(data, &mut Bounds(data.len()));
    match Packet::new_checked(data) {
        Ok(p) => {
            assert!(walked.is_ok());
            assert_eq!(parsed.unwrap().to_bytes().unwrap(), data);
            p.for_each_violation(|v| {
                let _ = v.to_string();
            });
            let _ = p.oversize();
        }
        Err(e) => {
            assert_eq!(parsed, Err(e));
            assert_eq!(walked, Err(e));
            let _ = e.to_string();
        }
    }
});
