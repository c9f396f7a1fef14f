//! The C floor of the benchmark (`benches/floor.c`) walks lwar messages by a
//! table of lengths: the table must be the codec's, and the program must
//! print the totals the Rust decode floor (`examples/decode_floor.rs`) prints.

use crate::program;
use lwarscope::capture::{FrameClass, Source};
use lwarscope::proto::lwar::wire::{MessageType, Packet, is_lwar};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The table rows of floor.c: `/* Name */ {id, head, fixed, string, entry},`.
fn c_table() -> Vec<(String, [usize; 5])> {
    let src = std::fs::read_to_string(root().join("benches/floor.c")).unwrap();
    src.lines()
        .filter_map(|l| {
            let l = l.trim();
            let name = l.strip_prefix("/* ")?.split(" */").next()?.to_owned();
            let nums = l.split('{').nth(1)?.split('}').next()?;
            let v: Vec<usize> = nums
                .split(',')
                .map(|n| n.trim().parse().ok())
                .collect::<Option<_>>()?;
            Some((name, v.try_into().ok()?))
        })
        .collect()
}

#[test]
fn the_c_floors_table_is_the_codecs() {
    let table = c_table();
    assert_eq!(table.len(), MessageType::ALL.len(), "{table:?}");
    for (t, (name, row)) in MessageType::ALL.iter().zip(&table) {
        let want = [
            usize::from(t.id()),
            t.header_len(),
            t.fixed_body_len(),
            usize::from(t.has_string()),
            t.entry_len().unwrap_or(0),
        ];
        assert_eq!((name.as_str(), *row), (t.name(), want));
    }
}

/// What examples/decode_floor.rs prints for a file.
fn rust_floor(path: &Path) -> String {
    let mut source = Source::files(&[path]).unwrap();
    let (mut packets, mut messages, mut errors) = (0u64, 0u64, 0u64);
    while let Some(frame) = source.next_frame().unwrap() {
        let FrameClass::Udp(d) = frame.class else {
            continue;
        };
        if !is_lwar(d.payload) {
            continue;
        }
        packets += 1;
        match Packet::new_checked(d.payload) {
            Ok(p) => {
                for m in p.messages() {
                    match m {
                        Ok(_) => messages += 1,
                        Err(_) => errors += 1,
                    }
                }
            }
            Err(_) => errors += 1,
        }
    }
    format!("{packets} lwar packets, {messages} messages, {errors} decode errors\n")
}

/// Builds floor.c as benches/whole.sh does and runs it on the lwar captures
/// of the corpus (those with no IP fragments, which it does not reassemble).
#[test]
fn the_c_floor_prints_the_rust_floors_totals() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("floor");
    let cc = program::program("cc")
        .args(["-O2", "-o"])
        .arg(&bin)
        .arg(root().join("benches/floor.c"))
        .arg("-lpcap")
        .output()
        .expect("cc runs");
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    let files: Vec<PathBuf> = [
        "real-server-clean.pcap",
        "sim-clean.pcap",
        "sim-corrupt.pcap",
        "sim-eight.pcap",
        "sim-ipv6.pcap",
        "sim-reorder.pcap",
        "mixed-lwar-strs.pcap",
        "live-loopback.pcap",
    ]
    .iter()
    .map(|f| root().join("captures").join(f))
    .collect();
    for f in &files {
        let out = Command::new(&bin).arg(f).output().unwrap();
        assert!(out.status.success(), "{}", f.display());
        let c = String::from_utf8(out.stdout).unwrap();
        assert_eq!(c, rust_floor(f), "{}", f.display());
        assert!(!c.starts_with("0 lwar"), "{}: {c}", f.display());
    }
}
