//! Helpers shared by the capture tests: lwar payloads, fixture files, and an owned
//! record of what a source yielded.
#![allow(dead_code)]

pub mod vectors;

/// The lwarscope binary, run from the repository's root (where `captures/`
/// is), with a fixed time zone (UTC) and colour left to the terminal test
/// (`NO_COLOR` unset): the same run wherever the tests run.
pub fn lwarscope() -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("lwarscope").unwrap();
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("TZ", "UTC")
        .env_remove("NO_COLOR");
    cmd
}

use lwarscope::capture::synth::PcapWriter;
use lwarscope::capture::{
    CaptureError, CaptureStats, FrameClass, FrameCounts, IncompleteDatagram, LinkType, Source,
    Timestamp,
};
use lwarscope::proto::lwar::wire::{Header, Id, MessageRepr, PacketRepr};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// An lwar packet of chat messages carrying `text_len` bytes of text in all (one
/// message per 200 bytes); `n` makes each packet distinct.
pub fn lwar_payload(n: u32, text_len: usize) -> Vec<u8> {
    let text: Vec<u8> = (0..text_len).map(|i| b'a' + (i % 26) as u8).collect();
    let mut chunks: Vec<&[u8]> = text.chunks(200).collect();
    if chunks.is_empty() {
        chunks.push(&[]);
    }
    PacketRepr {
        header: Header {
            ack: n,
            timestamp: 1000 + n,
        },
        messages: chunks
            .iter()
            .enumerate()
            .map(|(i, t)| MessageRepr::Chat {
                seqno: n + i as u32,
                player: Id::new(1, 2),
                text: t.to_vec(),
            })
            .collect(),
    }
    .to_bytes()
}

/// What a source yielded for one frame, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub number: u64,
    pub ts: Timestamp,
    pub orig_len: u32,
    pub cap_len: u32,
    pub class: Class,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Class {
    Lwar {
        frame: u64,
        src: SocketAddr,
        dst: SocketAddr,
        payload: Vec<u8>,
        payload_len: usize,
    },
    OtherUdp,
    NotUdp,
    NotIp,
    Fragment,
    Truncated,
    Malformed,
}

impl Class {
    pub fn lwar(src: SocketAddr, dst: SocketAddr, frame: u64, payload: &[u8]) -> Class {
        Class::Lwar {
            frame,
            src,
            dst,
            payload: payload.to_vec(),
            payload_len: payload.len(),
        }
    }
}

/// Everything a source gave until its end or first error.
pub struct Run {
    pub frames: Vec<Seen>,
    pub error: Option<CaptureError>,
    pub stats: CaptureStats,
    pub incomplete: Vec<IncompleteDatagram>,
}

impl Run {
    pub fn classes(&self) -> Vec<Class> {
        self.frames.iter().map(|f| f.class.clone()).collect()
    }

    pub fn counts(&self) -> FrameCounts {
        self.stats.counts
    }
}

/// Reads a source to its end, checking the counters' invariants on the way.
pub fn drain(mut source: Source) -> Run {
    let mut frames = Vec::new();
    let error = loop {
        match source.next_frame() {
            Ok(Some(frame)) => {
                // The capture yields every UDP datagram; what the engine then
                // makes of it (lwar by its appId, anything else skipped, a
                // datagram cut before 4 bytes unrecognisable) is the class here.
                let class = match frame.class {
                    FrameClass::Udp(d) if lwarscope::proto::lwar::wire::is_lwar(d.payload) => {
                        Class::Lwar {
                            frame: d.frame,
                            src: d.src,
                            dst: d.dst,
                            payload: d.payload.to_vec(),
                            payload_len: d.payload_len,
                        }
                    }
                    FrameClass::Udp(d) if d.payload.len() < 4 && d.truncated_by_capture() => {
                        Class::Truncated
                    }
                    FrameClass::Udp(_) => Class::OtherUdp,
                    FrameClass::NotUdp => Class::NotUdp,
                    FrameClass::NotIp => Class::NotIp,
                    FrameClass::Fragment => Class::Fragment,
                    FrameClass::Truncated => Class::Truncated,
                    FrameClass::Malformed => Class::Malformed,
                };
                frames.push(Seen {
                    number: frame.number,
                    ts: frame.ts,
                    orig_len: frame.orig_len,
                    cap_len: frame.cap_len,
                    class,
                });
            }
            Ok(None) => break None,
            Err(e) => break Some(e),
        }
    };
    // After the end, the source stays ended.
    assert!(matches!(source.next_frame(), Ok(None)));
    let stats = source.stats();
    let c = stats.counts;
    assert_eq!(
        c.frames,
        c.udp + c.not_udp + c.not_ip + c.fragment + c.truncated + c.malformed + c.filtered,
        "the classes partition the frames: {c:?}"
    );
    assert_eq!(c.frames - c.filtered, frames.len() as u64);
    if c.filtered == 0 {
        for (i, f) in frames.iter().enumerate() {
            assert_eq!(f.number, i as u64 + 1, "frames are numbered from 1");
        }
    }
    Run {
        frames,
        error,
        stats,
        incomplete: source.incomplete().to_vec(),
    }
}

pub fn read_files(paths: &[PathBuf]) -> Run {
    drain(Source::files(paths).expect("open"))
}

/// A frame to write: its time, bytes, and the length on the wire (for a cut frame).
pub struct Fx {
    pub ts: Timestamp,
    pub bytes: Vec<u8>,
    pub orig_len: Option<usize>,
}

impl Fx {
    pub fn whole(ts_ms: u64, bytes: Vec<u8>) -> Fx {
        Fx {
            ts: Timestamp::from_millis(ts_ms),
            bytes,
            orig_len: None,
        }
    }

    /// The first `keep` bytes of `bytes`, as a snaplen of `keep` captures it.
    pub fn cut(ts_ms: u64, bytes: Vec<u8>, keep: usize) -> Fx {
        let orig = bytes.len();
        Fx {
            ts: Timestamp::from_millis(ts_ms),
            bytes: bytes[..keep].to_vec(),
            orig_len: Some(orig),
        }
    }
}

/// Writes a pcap file with the project's writer.
pub fn write_pcap(path: &Path, link: LinkType, frames: &[Fx]) {
    let mut w = PcapWriter::create(path, link).expect("create pcap");
    for f in frames {
        match f.orig_len {
            Some(orig) => w.write_cut(f.ts, &f.bytes, orig),
            None => w.write(f.ts, &f.bytes),
        }
    }
    w.finish().expect("flush");
}

/// A minimal pcapng file: a section header, one interface (nanosecond
/// timestamps when `nanos`), and an enhanced packet block per frame.
pub fn pcapng(link: u16, nanos: bool, frames: &[(u64, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    // Section header block.
    block(&mut out, 0x0a0d0d0a, |b| {
        b.extend_from_slice(&0x1a2b3c4du32.to_le_bytes());
        b.extend_from_slice(&1u16.to_le_bytes());
        b.extend_from_slice(&0u16.to_le_bytes());
        b.extend_from_slice(&(-1i64).to_le_bytes());
    });
    // Interface description block, with if_tsresol = 9 for nanoseconds.
    block(&mut out, 1, |b| {
        b.extend_from_slice(&link.to_le_bytes());
        b.extend_from_slice(&0u16.to_le_bytes());
        b.extend_from_slice(&262_144u32.to_le_bytes());
        if nanos {
            b.extend_from_slice(&9u16.to_le_bytes());
            b.extend_from_slice(&1u16.to_le_bytes());
            b.extend_from_slice(&[9, 0, 0, 0]);
            b.extend_from_slice(&[0, 0, 0, 0]); // opt_endofopt
        }
    });
    for (ts_ns, data) in frames {
        let units = if nanos { *ts_ns } else { ts_ns / 1000 };
        block(&mut out, 6, |b| {
            b.extend_from_slice(&0u32.to_le_bytes());
            b.extend_from_slice(&((units >> 32) as u32).to_le_bytes());
            b.extend_from_slice(&(units as u32).to_le_bytes());
            b.extend_from_slice(&(data.len() as u32).to_le_bytes());
            b.extend_from_slice(&(data.len() as u32).to_le_bytes());
            b.extend_from_slice(data);
            while b.len() % 4 != 0 {
                b.push(0);
            }
        });
    }
    out
}

fn block(out: &mut Vec<u8>, kind: u32, body: impl FnOnce(&mut Vec<u8>)) {
    let mut b = Vec::new();
    body(&mut b);
    let total = (12 + b.len()) as u32;
    out.extend_from_slice(&kind.to_le_bytes());
    out.extend_from_slice(&total.to_le_bytes());
    out.extend_from_slice(&b);
    out.extend_from_slice(&total.to_le_bytes());
}

/// The 525 (frame, source port, destination port, payload) of the real capture.
pub fn real_server_vectors() -> Vec<(u64, u16, u16, Vec<u8>)> {
    vectors::real_server()
        .into_iter()
        .map(|v| (v.frame, v.src_port, v.dst_port, v.payload))
        .collect()
}

/// [`real_server_vectors`] as datagrams between ports of `ip`, 33 ms apart.
pub fn vector_datagrams(
    vectors: &[(u64, u16, u16, Vec<u8>)],
    ip: std::net::IpAddr,
) -> Vec<lwarscope::capture::Datagram<'_>> {
    vectors
        .iter()
        .map(|(frame, src, dst, payload)| {
            lwarscope::capture::Datagram::new(
                *frame,
                Timestamp::from_millis(*frame * 33),
                SocketAddr::new(ip, *src),
                SocketAddr::new(ip, *dst),
                payload,
            )
        })
        .collect()
}

pub fn real_capture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/real-server-clean.pcap")
}
