//! The mapped reader (the default for regular files) hands over what libpcap
//! hands over, frame by frame, on every capture of the corpus and on files
//! made to stress the formats; and it reads what libpcap refuses: a pcapng
//! file whose interfaces have different link types.

use crate::common;

use common::{Fx, lwar_payload, write_pcap};
use lwarscope::capture::synth::{Link, udp_frame};
use lwarscope::capture::{CaptureError, FileReader, FrameClass, LinkType, Source, Timestamp};
use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// Reads `path` through both readers in lockstep: every frame (number, time,
/// lengths, link, bytes, class) and the end (or error) must be the same.
/// Returns the number of frames.
fn same_through_both(path: &Path) -> u64 {
    let mut mapped = Source::files_with(&[path], FileReader::Mapped).expect("mapped opens");
    let mut libpcap = Source::files_with(&[path], FileReader::Libpcap).expect("libpcap opens");
    let mut n = 0;
    loop {
        let a = mapped.next_frame();
        let b = libpcap.next_frame();
        match (a, b) {
            (Ok(Some(a)), Ok(Some(b))) => {
                assert_eq!(a, b, "{}: frame {}", path.display(), n + 1);
                n += 1;
            }
            (Ok(None), Ok(None)) => break,
            (Err(a), Err(b)) => {
                match (&a, &b) {
                    // The reasons are worded differently: the mapped reader
                    // says where.
                    (
                        CaptureError::FileRead { packets: p, .. },
                        CaptureError::FileRead { packets: q, .. },
                    ) => assert_eq!(p, q, "{a} / {b}"),
                    _ => assert_eq!(a, b, "{}", path.display()),
                }
                break;
            }
            (a, b) => panic!(
                "{}: after {n} frames the readers differ: mapped {:?}, libpcap {:?}",
                path.display(),
                a.map(|f| f.map(|f| f.number)),
                b.map(|f| f.map(|f| f.number))
            ),
        }
    }
    assert_eq!(mapped.stats(), libpcap.stats(), "{}", path.display());
    n
}

fn corpus() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension()
                .is_some_and(|e| e == "pcap" || e == "pcapng" || e == "cap")
        })
        .collect();
    files.sort();
    files
}

#[test]
fn every_capture_of_the_corpus_reads_the_same_through_both_readers() {
    let files = corpus();
    assert!(files.len() >= 30, "{files:?}");
    let mut frames = 0;
    for f in &files {
        frames += same_through_both(f);
    }
    assert!(frames > 10_000, "{frames}");
}

fn v4() -> (SocketAddr, SocketAddr) {
    (
        "10.0.0.1:50000".parse().unwrap(),
        "10.0.0.2:32422".parse().unwrap(),
    )
}

/// Every frame of the real capture, as (time in ns, bytes).
fn real_frames() -> Vec<(u64, Vec<u8>)> {
    let mut s = Source::files_with(&[common::real_capture()], FileReader::Libpcap).unwrap();
    let mut out = Vec::new();
    while let Some(f) = s.next_frame().unwrap() {
        out.push((f.ts.nanos(), f.data.to_vec()));
    }
    out
}

/// A classic pcap file in the given byte order and precision, written by hand.
fn classic(
    big: bool,
    nanos: bool,
    snaplen: u32,
    link: u32,
    records: &[(u64, u32, &[u8])],
) -> Vec<u8> {
    let w32 = |v: &mut Vec<u8>, x: u32| {
        v.extend_from_slice(&if big {
            x.to_be_bytes()
        } else {
            x.to_le_bytes()
        })
    };
    let w16 = |v: &mut Vec<u8>, x: u16| {
        v.extend_from_slice(&if big {
            x.to_be_bytes()
        } else {
            x.to_le_bytes()
        })
    };
    let mut v = Vec::new();
    w32(&mut v, if nanos { 0xa1b2_3c4d } else { 0xa1b2_c3d4 });
    w16(&mut v, 2);
    w16(&mut v, 4);
    w32(&mut v, 0);
    w32(&mut v, 0);
    w32(&mut v, snaplen);
    w32(&mut v, link);
    for (ts, orig, data) in records {
        let frac = if nanos {
            ts % 1_000_000_000
        } else {
            ts % 1_000_000_000 / 1000
        };
        w32(&mut v, (ts / 1_000_000_000) as u32);
        w32(&mut v, frac as u32);
        w32(&mut v, data.len() as u32);
        w32(&mut v, *orig);
        v.extend_from_slice(data);
    }
    v
}

#[test]
fn both_readers_agree_on_every_format_variant_and_every_cut() {
    let dir = tempfile::tempdir().unwrap();
    let frames = real_frames();
    let records: Vec<(u64, u32, &[u8])> = frames
        .iter()
        .map(|(t, d)| (*t, d.len() as u32, d.as_slice()))
        .collect();
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for big in [false, true] {
        for nanos in [false, true] {
            files.push((
                format!("classic-big{big}-nanos{nanos}.pcap"),
                classic(big, nanos, 65535, 1, &records),
            ));
        }
    }
    // A snapshot length smaller than the records (libpcap keeps the first
    // bytes), zero-length records, and time stamps with the sign bit set.
    let (src, dst) = v4();
    let frame = udp_frame(Link::Ethernet, src, dst, &lwar_payload(1, 40));
    files.push((
        "snaplen.pcap".into(),
        classic(
            false,
            false,
            50,
            1,
            &[
                (1_000_000_000, 90, &frame),
                (2_000_000_000, 0, &[]),
                (u64::from(u32::MAX) * 1_000_000_000, 90, &frame[..50]),
            ],
        ),
    ));
    let pairs: Vec<(u64, &[u8])> = frames.iter().map(|(t, d)| (*t, d.as_slice())).collect();
    for nanos in [false, true] {
        files.push((
            format!("real-nanos{nanos}.pcapng"),
            common::pcapng(1, nanos, &pairs),
        ));
    }
    let mut n = 0;
    for (name, bytes) in &files {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        n += same_through_both(&path);
        // Cut anywhere in the first records and the last: the same frames
        // before the cut, the same "cut off" after them.
        let cuts = (1..300).chain(bytes.len().saturating_sub(300)..bytes.len());
        for cut in cuts.filter(|&c| c < bytes.len()) {
            let path = dir.path().join(format!("cut-{cut}-{name}"));
            std::fs::write(&path, &bytes[..cut]).unwrap();
            match (
                Source::files_with(&[&path], FileReader::Mapped),
                Source::files_with(&[&path], FileReader::Libpcap),
            ) {
                (Ok(_), Ok(_)) => {
                    same_through_both(&path);
                }
                // A file cut inside its header: both refuse it.
                (Err(CaptureError::NotPcap { .. }), Err(CaptureError::NotPcap { .. })) => {}
                (a, b) => panic!(
                    "{name} cut at {cut}: mapped {:?}, libpcap {:?}",
                    a.err(),
                    b.err()
                ),
            }
            std::fs::remove_file(&path).unwrap();
        }
    }
    assert!(n > 2000, "{n}");
}

fn block(out: &mut Vec<u8>, big: bool, kind: u32, body: &[u8]) {
    let w32 = |x: u32| {
        if big {
            x.to_be_bytes()
        } else {
            x.to_le_bytes()
        }
    };
    let mut body = body.to_vec();
    while !body.len().is_multiple_of(4) {
        body.push(0);
    }
    let total = 12 + body.len() as u32;
    out.extend_from_slice(&w32(kind));
    out.extend_from_slice(&w32(total));
    out.extend_from_slice(&body);
    out.extend_from_slice(&w32(total));
}

fn shb(out: &mut Vec<u8>, big: bool) {
    let mut b = Vec::new();
    let w = |b: &mut Vec<u8>, x: &[u8], y: &[u8]| b.extend_from_slice(if big { y } else { x });
    w(
        &mut b,
        &0x1a2b_3c4du32.to_le_bytes(),
        &0x1a2b_3c4du32.to_be_bytes(),
    );
    w(&mut b, &1u16.to_le_bytes(), &1u16.to_be_bytes());
    w(&mut b, &0u16.to_le_bytes(), &0u16.to_be_bytes());
    b.extend_from_slice(&[0xff; 8]);
    block(out, big, 0x0a0d_0d0a, &b);
}

/// An interface: link type and, when given, `if_tsresol`.
fn idb(out: &mut Vec<u8>, big: bool, link: u16, tsresol: Option<u8>) {
    let mut b = Vec::new();
    let w16 = |b: &mut Vec<u8>, x: u16| {
        b.extend_from_slice(&if big {
            x.to_be_bytes()
        } else {
            x.to_le_bytes()
        })
    };
    w16(&mut b, link);
    w16(&mut b, 0);
    b.extend_from_slice(&if big {
        0u32.to_be_bytes()
    } else {
        0u32.to_le_bytes()
    });
    if let Some(r) = tsresol {
        w16(&mut b, 9);
        w16(&mut b, 1);
        b.extend_from_slice(&[r, 0, 0, 0]);
        w16(&mut b, 0);
        w16(&mut b, 0);
    }
    block(out, big, 1, &b);
}

fn epb(out: &mut Vec<u8>, big: bool, iface: u32, units: u64, data: &[u8]) {
    let mut b = Vec::new();
    for x in [
        iface,
        (units >> 32) as u32,
        units as u32,
        data.len() as u32,
        data.len() as u32,
    ] {
        b.extend_from_slice(&if big {
            x.to_be_bytes()
        } else {
            x.to_le_bytes()
        });
    }
    b.extend_from_slice(data);
    block(out, big, 6, &b);
}

/// What [`mixed_pcapng`] holds: each frame's time, addresses, payload, link.
type Want = Vec<(Timestamp, SocketAddr, SocketAddr, Vec<u8>, LinkType)>;

/// A pcapng file as a capture on several interfaces gives it: Ethernet, raw
/// IP and Linux cooked (v1 and v2) interfaces, microsecond, nanosecond and
/// binary time stamps, and a second section in the other byte order.
fn mixed_pcapng() -> (Vec<u8>, Want) {
    let (src, dst) = v4();
    let v6src: SocketAddr = "[2001:db8::1]:40000".parse().unwrap();
    let v6dst: SocketAddr = "[2001:db8::2]:32422".parse().unwrap();
    let links = [
        (Link::Ethernet, 1u16, None),
        (Link::RawIp, 101, Some(9u8)),
        (Link::LinuxSll(1), 113, Some(6)),
        (Link::LinuxSll2(772), 276, Some(0x80 | 20)),
    ];
    let mut file = Vec::new();
    let mut want = Vec::new();
    let base = 1_700_000_000u64;
    for (section, big) in [false, true].into_iter().enumerate() {
        shb(&mut file, big);
        for (_, dlt, resol) in links {
            idb(&mut file, big, dlt, resol);
        }
        for i in 0..40u64 {
            let k = (i % 4) as usize;
            let (link, _, resol) = links[k];
            let (s, d) = if i % 2 == 0 {
                (src, dst)
            } else {
                (v6src, v6dst)
            };
            let n = (section as u64 * 40 + i) as u32;
            let payload = lwar_payload(n, 10 + i as usize);
            let frame = udp_frame(link, s, d, &payload);
            // Time stamps in each interface's units: 1/10^6 s by default.
            let ms = (base + n as u64) * 1000 + i;
            let units = match resol {
                None | Some(6) => ms * 1000,
                Some(9) => ms * 1_000_000,
                _ => ((ms as u128) << 20).div_euclid(1000) as u64,
            };
            epb(&mut file, big, k as u32, units, &frame);
            want.push((Timestamp::from_millis(ms), s, d, payload, link.link_type()));
        }
    }
    (file, want)
}

/// A mixed pcapng file ([`mixed_pcapng`]) is read whole; libpcap gives up.
#[test]
fn a_pcapng_file_mixing_link_types_is_read_whole() {
    let (file, want) = mixed_pcapng();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mixed.pcapng");
    std::fs::write(&path, &file).unwrap();

    let mut source = Source::files(&[&path]).unwrap();
    let mut seen = 0;
    while let Some(frame) = source.next_frame().unwrap() {
        let (ts, s, d, payload, link) = &want[seen];
        assert_eq!(frame.link, *link, "frame {}", frame.number);
        // Binary fractions round down to the nanosecond.
        assert!(
            frame.ts <= *ts && ts.since(frame.ts) < 1000,
            "{:?} {ts:?}",
            frame.ts
        );
        let FrameClass::Udp(dg) = frame.class else {
            panic!("frame {} is {:?}", frame.number, frame.class)
        };
        assert_eq!((&dg.src, &dg.dst, dg.payload), (s, d, payload.as_slice()));
        seen += 1;
    }
    assert_eq!(seen, want.len());
    assert_eq!(source.stats().counts.udp, 80);

    // libpcap gives up at the second interface, before the first packet.
    let mut libpcap = Source::files_with(&[&path], FileReader::Libpcap).unwrap();
    let err = loop {
        match libpcap.next_frame() {
            Ok(Some(_)) => {}
            Ok(None) => panic!("libpcap read it all"),
            Err(e) => break e,
        }
    };
    assert!(
        matches!(err, CaptureError::FileRead { packets: 0, .. }),
        "{err}"
    );
}

/// Bad blocks and records are errors that say what and at which byte, never
/// a panic; the frames before them are delivered.
#[test]
fn bad_blocks_and_records_say_what_and_where() {
    let dir = tempfile::tempdir().unwrap();
    let (src, dst) = v4();
    let frame = udp_frame(Link::Ethernet, src, dst, &lwar_payload(1, 20));
    let read = |name: &str, bytes: &[u8]| {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        common::read_files(&[path])
    };
    // A record claiming 4 GB.
    let mut f = classic(false, false, 0, 1, &[(1, 80, &frame)]);
    f.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0]);
    let run = read("huge.pcap", &f);
    assert_eq!(run.frames.len(), 1);
    let e = run.error.expect("an error").to_string();
    assert!(
        e.contains("read error after 1 packets")
            && e.contains(&format!("record at byte {}", 24 + 16 + frame.len()))
            && e.contains("4294967295"),
        "{e}"
    );
    // A pcapng block whose length is not a multiple of 4, one below the
    // minimum, and one whose trailer disagrees.
    let good = common::pcapng(1, true, &[(1, &frame)]);
    for (what, patch, want) in [
        ("odd", 13u32, "not a multiple of 4"),
        ("short", 8, "less than 12"),
    ] {
        let mut f = good.clone();
        f.extend_from_slice(&6u32.to_le_bytes());
        f.extend_from_slice(&patch.to_le_bytes());
        f.extend_from_slice(&[0; 16]);
        let run = read(&format!("{what}.pcapng"), &f);
        assert_eq!(run.frames.len(), 1, "{what}");
        let e = run.error.expect("an error").to_string();
        assert!(
            e.contains(want) && e.contains(&format!("block at byte {}", good.len())),
            "{e}"
        );
    }
    let mut f = good.clone();
    let n = f.len();
    f[n - 4..].copy_from_slice(&1000u32.to_le_bytes());
    let e = read("trailer.pcapng", &f)
        .error
        .expect("an error")
        .to_string();
    assert!(e.contains("in its trailer"), "{e}");
    // A packet of an interface the section does not describe.
    let mut f = Vec::new();
    shb(&mut f, false);
    idb(&mut f, false, 1, None);
    epb(&mut f, false, 3, 0, &frame);
    let e = read("iface.pcapng", &f)
        .error
        .expect("an error")
        .to_string();
    assert!(e.contains("names interface 3"), "{e}");
    // A cut pcapng block is "cut off", as libpcap says it.
    let run = read("cut.pcapng", &good[..good.len() - 3]);
    assert!(
        matches!(run.error, Some(CaptureError::CutOff { packets: 0, .. })),
        "{:?}",
        run.error
    );
}

#[test]
fn a_capture_filter_applies_to_each_link_type_of_a_pcapng_file() {
    let (src, dst) = v4();
    let mut f = Vec::new();
    shb(&mut f, false);
    idb(&mut f, false, 1, None);
    idb(&mut f, false, 101, None);
    for i in 0..6u32 {
        let port_dst: SocketAddr = if i % 3 == 0 {
            "10.0.0.2:9999".parse().unwrap()
        } else {
            dst
        };
        let link = if i % 2 == 0 {
            Link::Ethernet
        } else {
            Link::RawIp
        };
        let frame = udp_frame(link, src, port_dst, &lwar_payload(i, 10));
        epb(&mut f, false, i % 2, u64::from(i), &frame);
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.pcapng");
    std::fs::write(&path, &f).unwrap();
    let mut source = Source::files(&[&path]).unwrap();
    source.set_file_filter("udp port 32422").unwrap();
    let run = common::drain(source);
    let numbers: Vec<u64> = run.frames.iter().map(|f| f.number).collect();
    assert_eq!(numbers, [2, 3, 5, 6]);
    assert_eq!(run.counts().filtered, 2);
}

/// Writing the corpus' real capture as pcap with the project's own writer and
/// reading it back through the mapped reader gives its frames unchanged.
#[test]
fn the_projects_own_files_read_back_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.pcap");
    let frames: Vec<Fx> = real_frames()
        .into_iter()
        .map(|(t, d)| Fx {
            ts: Timestamp(t),
            bytes: d,
            orig_len: None,
        })
        .collect();
    write_pcap(&path, LinkType::Ethernet, &frames);
    assert_eq!(same_through_both(&path), frames.len() as u64);
}

/// Checks that `source` gives the frames of [`mixed_pcapng`], then its end.
fn reads_as_wanted(source: &mut Source, want: &Want, what: &str) {
    let mut seen = 0;
    while let Some(frame) = source.next_frame().unwrap() {
        let (ts, s, d, payload, link) = &want[seen];
        assert_eq!(frame.link, *link, "{what}: frame {}", frame.number);
        assert!(frame.ts <= *ts && ts.since(frame.ts) < 1000, "{what}");
        let FrameClass::Udp(dg) = frame.class else {
            panic!("{what}: frame {} is {:?}", frame.number, frame.class)
        };
        assert_eq!(
            (&dg.src, &dg.dst, dg.payload),
            (s, d, payload.as_slice()),
            "{what}"
        );
        seen += 1;
    }
    assert_eq!(seen, want.len(), "{what}");
}

/// The mixed pcapng file compressed (gzip, zstd) and through a pipe (standard
/// input, compressed or not): read whole, every interface with its link type,
/// as the file read in place. A cut stream delivers what precedes the cut and
/// says so; a corrupt one says why. Regression: these went to libpcap, which
/// refuses the second link type before the first packet.
#[test]
fn a_mixed_pcapng_stream_or_compressed_file_is_read_whole() {
    let (plain, want) = mixed_pcapng();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&plain).unwrap();
    let gz = gz.finish().unwrap();
    let zst = zstd::encode_all(&plain[..], 1).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in [("mixed.pcapng.gz", &gz), ("mixed.pcapng.zst", &zst)] {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let mut source = Source::files(&[&path]).unwrap();
        reads_as_wanted(&mut source, &want, name);
        assert_eq!(source.stats().counts.udp, 80);

        // Cut inside the second section's packets: the frames before the
        // cut, then a cut-off error that counts them.
        let cut_plain = &plain[..plain.len() - 100];
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(cut_plain).unwrap();
        let cut = dir.path().join(format!("cut-{name}"));
        std::fs::write(&cut, gz.finish().unwrap()).unwrap();
        let mut source = Source::files(&[&cut]).unwrap();
        let mut n = 0;
        let err = loop {
            match source.next_frame() {
                Ok(Some(_)) => n += 1,
                Ok(None) => panic!("{name}: no cut seen"),
                Err(e) => break e,
            }
        };
        assert!(n >= 78, "{name}: {n}");
        assert!(
            matches!(err, CaptureError::CutOff { packets, .. } if packets == n),
            "{name}: {err}"
        );
    }
    // A gzip stream whose checksum is wrong: every frame, then the stream's
    // error.
    let path = dir.path().join("corrupt.pcapng.gz");
    let mut bad = gz.clone();
    let crc = bad.len() - 8;
    for b in &mut bad[crc..crc + 4] {
        *b ^= 0x5a;
    }
    std::fs::write(&path, &bad).unwrap();
    let mut source = Source::files(&[&path]).unwrap();
    let err = loop {
        match source.next_frame() {
            Ok(Some(_)) => {}
            Ok(None) => panic!("corrupt gzip read to its end"),
            Err(e) => break e,
        }
    };
    assert!(err.to_string().contains("gzip"), "{err}");

    // Standard input, a pipe: plain, then gzip.
    for (what, bytes) in [("plain", plain.clone()), ("gzip", gz.clone())] {
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("lwarscope"))
            .args(["-r", "-", "--format", "json"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || {
            // A few bytes at a time: the reader sees the stream as it comes.
            for piece in bytes.chunks(97) {
                if stdin.write_all(piece).is_err() {
                    return;
                }
            }
        });
        let out = child.wait_with_output().unwrap();
        writer.join().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{what}: {stderr}");
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["capture"]["frames"], 80, "{what}: {stderr}");
    }
}
