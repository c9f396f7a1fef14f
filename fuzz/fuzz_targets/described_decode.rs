//! Decodes arbitrary bytes with every shipped description (and the
//! description parser on arbitrary text): the field walk, the dissector's
//! header, messages and tree. Any panic is a bug; so is a field span outside
//! the packet or a decode error past its end.

#![no_main]

use libfuzzer_sys::fuzz_target;
use lwarscope::proto::described;
use lwarscope::proto::field::{Field, FieldSink};

struct Spans(usize);

impl FieldSink for Spans {
    fn field(&mut self, f: Field<'_>) {
        self.0 = self.0.max(f.offset + f.len);
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = described::parse("fuzz.ksy", text);
    }
    for d in described::loaded() {
        let dis = d.info().dissector;
        let mut spans = Spans(0);
        let _ = dis.fields(data, &mut spans);
        assert!(spans.0 <= data.len());
        let _ = dis.header(data, &mut |_| {});
        let _ = dis.messages(data, &mut |m| {
            let _ = (m.token.to_string(), m.text.to_string());
        });
        dis.tree(data, &mut |_| {});
    }
});
