//! The rules file of `check` (TOML) and the expected result (`--expect`, JSON) (see `lwarscope::fuzzing::rules_file`).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    lwarscope::fuzzing::rules_file(data);
});
