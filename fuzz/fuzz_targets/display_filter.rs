//! The display filter: its parser, and its evaluation on sample sessions and on the payloads after a NUL byte (see `lwarscope::fuzzing::display_filter`).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    lwarscope::fuzzing::display_filter(data);
});
