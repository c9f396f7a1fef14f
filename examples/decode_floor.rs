//! The decode-only floor of the whole-process benchmark: libpcap reads the
//! capture through [`Source`] and the codec decodes every message of every lwar
//! packet, nothing else. What `lwarscope -r` costs beyond this is tracking and
//! reporting.
//!
//! `cargo run --release --example decode_floor -- [--libpcap] FILE...`: with
//! `--libpcap`, files are read through libpcap rather than the mapped reader.
//! It prints the totals `benches/floor.c` prints for the same files.

use lwarscope::capture::{FileReader, FrameClass, Source};
use lwarscope::proto::lwar::wire::Packet;
use std::hint::black_box;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut files: Vec<String> = std::env::args().skip(1).collect();
    let reader = match files.first().map(String::as_str) {
        Some("--libpcap") => {
            files.remove(0);
            FileReader::Libpcap
        }
        _ => FileReader::Mapped,
    };
    if files.is_empty() {
        eprintln!("usage: decode_floor [--libpcap] FILE...");
        return ExitCode::from(2);
    }
    let mut source = match Source::files_with(&files, reader) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let (mut packets, mut messages, mut errors) = (0u64, 0u64, 0u64);
    loop {
        let frame = match source.next_frame() {
            Ok(Some(frame)) => frame,
            Ok(None) => break,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        };
        let FrameClass::Udp(d) = frame.class else {
            continue;
        };
        if !lwarscope::proto::lwar::wire::is_lwar(d.payload) {
            continue;
        }
        packets += 1;
        match Packet::new_checked(d.payload) {
            Ok(p) => {
                for m in p.messages() {
                    match m {
                        Ok(m) => {
                            black_box(&m);
                            messages += 1;
                        }
                        Err(_) => errors += 1,
                    }
                }
            }
            Err(_) => errors += 1,
        }
    }
    println!("{packets} lwar packets, {messages} messages, {errors} decode errors");
    ExitCode::SUCCESS
}
