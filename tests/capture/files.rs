//! Capture files: every link type, IPv4 and IPv6, VLANs, fragments, snaplen cuts,
//! pcapng, several files, cut-off files, and the real server's capture.

use crate::common;

use common::*;
use lwarscope::capture::synth::{
    ARPHRD_ETHER, ARPHRD_LOOPBACK, ARPHRD_NETLINK, Link, frame, udp_fragments, udp_frame,
    udp_packet,
};
use lwarscope::capture::{
    CaptureError, DEFAULT_FILTER, IncompleteReason, LinkType, ReassemblyLimits, Source, Timestamp,
};
use std::net::SocketAddr;
use std::path::PathBuf;

fn v4() -> (SocketAddr, SocketAddr) {
    (
        "10.1.2.3:40000".parse().unwrap(),
        "10.9.8.7:32422".parse().unwrap(),
    )
}

fn v6() -> (SocketAddr, SocketAddr) {
    (
        "[2001:db8::1]:40000".parse().unwrap(),
        "[2001:db8::2]:32422".parse().unwrap(),
    )
}

fn tmp(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    (dir, path)
}

#[test]
fn every_link_type_yields_exactly_its_datagrams_over_ipv4_and_ipv6() {
    for link in Link::ALL {
        for (src, dst) in [v4(), v6()] {
            let a = lwar_payload(1, 10);
            let b = lwar_payload(2, 50);
            // lwar on a port that is not lwar's: still lwar.
            let other_port: SocketAddr = SocketAddr::new(dst.ip(), 5353);
            let frames = [
                Fx::whole(1_000, udp_frame(link, src, dst, &a)),
                Fx::whole(1_001, udp_frame(link, dst, src, b"not lwar at all")),
                Fx::whole(1_002, udp_frame(link, src, other_port, &b)),
            ];
            let (_dir, path) = tmp("link.pcap");
            write_pcap(&path, link.link_type(), &frames);
            let run = read_files(&[path]);
            assert!(run.error.is_none(), "{link:?}: {:?}", run.error);
            assert_eq!(
                run.classes(),
                vec![
                    Class::lwar(src, dst, 1, &a),
                    Class::OtherUdp,
                    Class::lwar(src, other_port, 3, &b),
                ],
                "{link:?} {src}"
            );
            let ts: Vec<u64> = run.frames.iter().map(|f| f.ts.nanos()).collect();
            assert_eq!(ts, [1_000_000_000, 1_001_000_000, 1_002_000_000]);
            let c = run.counts();
            assert_eq!((c.frames, c.udp), (3, 3), "{link:?}");
            assert_eq!(run.stats.pcap, None, "no libpcap statistics for files");
            assert_eq!(
                run.frames[0].cap_len as usize,
                frames[0].bytes.len(),
                "{link:?}"
            );
        }
    }
}

#[test]
fn frames_that_are_not_ip_or_not_udp_are_counted_not_decoded() {
    let (src, dst) = v4();
    let tcp = {
        let mut out = Vec::new();
        etherparse::PacketBuilder::ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
            .tcp(1, 2, 3, 4)
            .write_to_vec(&mut out, &lwar_payload(1, 1))
            .unwrap();
        out
    };
    let icmp6 = {
        let mut out = Vec::new();
        etherparse::PacketBuilder::ipv6([0xfe; 16], [0xfd; 16], 64)
            .icmpv6_echo_request(1, 1)
            .write_to_vec(&mut out, b"ping")
            .unwrap();
        out
    };
    let arp = {
        let mut f = frame(Link::Ethernet, &[0u8; 28]);
        f[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
        f
    };
    let mut null_other_family = frame(Link::Null, &udp_packet(src, dst, &lwar_payload(1, 1)));
    null_other_family[0] = 7;
    let mut sll_non_ip = frame(Link::LinuxSll(ARPHRD_ETHER), &[0u8; 40]);
    sll_non_ip[14..16].copy_from_slice(&0x0806u16.to_be_bytes());
    // A netlink message seen on `any`: its protocol field is not an EtherType,
    // even when it reads like IPv4's.
    let mut sll2_netlink = frame(
        Link::LinuxSll2(ARPHRD_NETLINK),
        &udp_packet(src, dst, &lwar_payload(1, 1)),
    );
    sll2_netlink[0..2].copy_from_slice(&0x0800u16.to_be_bytes());
    let mut raw_v5 = udp_packet(src, dst, &lwar_payload(1, 1));
    raw_v5[0] = 0x55;

    let cases: Vec<(LinkType, Vec<u8>, Class)> = vec![
        (
            LinkType::Ethernet,
            frame(Link::Ethernet, &tcp),
            Class::NotUdp,
        ),
        (
            LinkType::Ethernet,
            frame(Link::Vlan(3), &icmp6),
            Class::NotUdp,
        ),
        (LinkType::Ethernet, arp, Class::NotIp),
        (LinkType::Null, null_other_family, Class::NotIp),
        (LinkType::LinuxSll, sll_non_ip, Class::NotIp),
        (LinkType::LinuxSll2, sll2_netlink, Class::NotIp),
        (LinkType::RawIp, raw_v5, Class::Malformed),
    ];
    for (link, bytes, want) in cases {
        let (_dir, path) = tmp("other.pcap");
        write_pcap(&path, link, &[Fx::whole(5, bytes)]);
        let run = read_files(&[path]);
        assert_eq!(run.classes(), vec![want.clone()], "{link:?}");
    }
}

#[test]
fn ipv6_extension_headers_before_udp_are_skipped() {
    let (src, dst) = v6();
    let payload = lwar_payload(4, 20);
    let plain = udp_packet(src, dst, &payload);
    // Insert a hop-by-hop and a destination options header (8 bytes each, PadN).
    let mut p = plain[..40].to_vec();
    p[6] = 0; // next: hop-by-hop
    let ext_len = 16u16;
    let plen = u16::from_be_bytes([plain[4], plain[5]]) + ext_len;
    p[4..6].copy_from_slice(&plen.to_be_bytes());
    p.extend_from_slice(&[60, 0, 1, 4, 0, 0, 0, 0]); // hop-by-hop -> destination options
    p.extend_from_slice(&[17, 0, 1, 4, 0, 0, 0, 0]); // destination options -> UDP
    p.extend_from_slice(&plain[40..]);
    let (_dir, path) = tmp("ext.pcap");
    write_pcap(
        &path,
        LinkType::Ethernet,
        &[Fx::whole(1, frame(Link::Ethernet, &p))],
    );
    let run = read_files(&[path]);
    assert_eq!(run.classes(), vec![Class::lwar(src, dst, 1, &payload)]);
}

#[test]
fn ethernet_padding_and_a_trailing_fcs_are_not_payload() {
    let (src, dst) = v4();
    let payload = lwar_payload(1, 0); // 12 + 5 + 4 + 1 bytes: a short frame
    let mut f = udp_frame(Link::Ethernet, src, dst, &payload);
    f.extend_from_slice(&[0u8; 24]); // padding and FCS
    let (_dir, path) = tmp("pad.pcap");
    write_pcap(&path, LinkType::Ethernet, &[Fx::whole(1, f)]);
    assert_eq!(
        read_files(&[path]).classes(),
        vec![Class::lwar(src, dst, 1, &payload)]
    );
}

/// Fragments of two datagrams, interleaved and out of order, per IP version.
#[test]
fn fragmented_datagrams_are_reassembled_at_their_last_fragment() {
    for (link, (src, dst)) in [
        (Link::Ethernet, v4()),
        (Link::Vlan(9), v6()),
        (Link::LinuxSll2(ARPHRD_ETHER), v4()),
        (Link::LinuxSll2(ARPHRD_LOOPBACK), v4()),
        (Link::LinuxSll(ARPHRD_LOOPBACK), v6()),
    ] {
        let big = lwar_payload(7, 240); // 265 bytes with UDP's header: 3 fragments
        let other = lwar_payload(8, 100);
        let f1 = udp_fragments(src, dst, 0x1234, &big, 104);
        let f2 = udp_fragments(dst, src, 0x99, &other, 72);
        assert_eq!((f1.len(), f2.len()), (3, 2));
        let frames = [
            Fx::whole(1, frame(link, &f1[1])),
            Fx::whole(2, frame(link, &f2[0])),
            Fx::whole(3, frame(link, &f1[0])),
            Fx::whole(4, udp_frame(link, src, dst, &lwar_payload(9, 1))),
            Fx::whole(5, frame(link, &f1[2])),
            Fx::whole(6, frame(link, &f2[1])),
        ];
        let (_dir, path) = tmp("frag.pcap");
        write_pcap(&path, link.link_type(), &frames);
        let run = read_files(&[path]);
        assert_eq!(
            run.classes(),
            vec![
                Class::Fragment,
                Class::Fragment,
                Class::Fragment,
                Class::lwar(src, dst, 4, &lwar_payload(9, 1)),
                Class::lwar(src, dst, 5, &big),
                Class::lwar(dst, src, 6, &other),
            ],
            "{link:?} {src}"
        );
        let c = run.counts();
        assert_eq!(
            (
                c.ip_fragments,
                c.fragment,
                c.reassembled,
                c.incomplete,
                c.udp
            ),
            (5, 3, 2, 0, 3)
        );
        assert!(run.incomplete.is_empty());
    }
}

#[test]
fn incomplete_datagrams_time_out_in_capture_time_and_are_reported() {
    for (src, dst) in [v4(), v6()] {
        let big = lwar_payload(1, 300);
        let frags = udp_fragments(src, dst, 42, &big, 128);
        let other = udp_fragments(src, dst, 43, &big, 128);
        let link = Link::Ethernet;
        // Datagram 42 misses its middle fragment; 30 s after its first one it is
        // given up. Datagram 43 is still incomplete at the end.
        let frames = [
            Fx::whole(0, frame(link, &frags[0])),
            Fx::whole(100, frame(link, &frags[2])),
            Fx::whole(29_000, udp_frame(link, src, dst, &lwar_payload(2, 1))),
            Fx::whole(30_000, frame(link, &other[0])),
            Fx::whole(30_001, udp_frame(link, src, dst, &lwar_payload(3, 1))),
            // Too late: 42 has timed out, this fragment starts a new datagram.
            Fx::whole(30_002, frame(link, &frags[1])),
        ];
        let (_dir, path) = tmp("incomplete.pcap");
        write_pcap(&path, LinkType::Ethernet, &frames);
        let run = read_files(&[path]);
        assert_eq!(
            run.classes()
                .iter()
                .filter(|c| matches!(c, Class::Fragment))
                .count(),
            4
        );
        let c = run.counts();
        assert_eq!(
            (c.ip_fragments, c.reassembled, c.incomplete, c.udp),
            (4, 0, 3, 2)
        );
        let summary: Vec<(u64, u64, u32, IncompleteReason)> = run
            .incomplete
            .iter()
            .map(|d| (d.first_frame, d.last_frame, d.fragments, d.reason))
            .collect();
        assert_eq!(
            summary,
            vec![
                (1, 2, 2, IncompleteReason::TimedOut),
                (4, 4, 1, IncompleteReason::EndOfCapture),
                (6, 6, 1, IncompleteReason::EndOfCapture),
            ],
            "{src}"
        );
        assert_eq!(run.incomplete[0].id, 42);
        assert_eq!(run.incomplete[0].src, src.ip());
    }
}

#[test]
fn reassembly_memory_is_bounded() {
    let (src, dst) = v4();
    let big = lwar_payload(1, 300);
    let link = Link::Ethernet;
    let mut frames = Vec::new();
    for id in 0..10u32 {
        frames.push(Fx::whole(
            u64::from(id),
            frame(link, &udp_fragments(src, dst, id, &big, 128)[0]),
        ));
    }
    let (_dir, path) = tmp("bounded.pcap");
    write_pcap(&path, LinkType::Ethernet, &frames);
    let mut source = Source::files(&[path]).unwrap();
    source.set_reassembly_limits(ReassemblyLimits {
        max_datagrams: 4,
        ..ReassemblyLimits::default()
    });
    let run = drain(source);
    let reasons: Vec<IncompleteReason> = run.incomplete.iter().map(|d| d.reason).collect();
    assert_eq!(reasons[..6], [IncompleteReason::MemoryLimit; 6]);
    assert_eq!(reasons[6..], [IncompleteReason::EndOfCapture; 4]);
    assert_eq!(run.counts().incomplete, 10);
}

#[test]
fn snaplen_cuts_are_truncated_by_capture_not_malformed() {
    for (src, dst) in [v4(), v6()] {
        let link = Link::Ethernet;
        let payload = lwar_payload(5, 100);
        let whole = udp_frame(link, src, dst, &payload);
        let headers = whole.len() - payload.len();
        let mut lying = whole.clone();
        // An IP length beyond the frame, in a frame captured whole.
        if src.is_ipv4() {
            lying[16..18].copy_from_slice(&2000u16.to_be_bytes());
        } else {
            lying[18..20].copy_from_slice(&2000u16.to_be_bytes());
        }
        let frames = [
            // Payload cut after 40 bytes: still lwar, visibly truncated.
            Fx::cut(1, whole.clone(), headers + 40),
            // Cut inside the IP header.
            Fx::cut(2, whole.clone(), 14 + 10),
            // Cut inside the UDP header.
            Fx::cut(3, whole.clone(), headers - 3),
            // Cut before the appId could be read.
            Fx::cut(4, whole.clone(), headers + 2),
            Fx::whole(5, lying),
            Fx::whole(6, whole.clone()),
        ];
        let (_dir, path) = tmp("snap.pcap");
        write_pcap(&path, LinkType::Ethernet, &frames);
        let run = read_files(&[path]);
        assert_eq!(
            run.classes(),
            vec![
                Class::Lwar {
                    frame: 1,
                    src,
                    dst,
                    payload: payload[..40].to_vec(),
                    payload_len: payload.len(),
                },
                Class::Truncated,
                Class::Truncated,
                Class::Truncated,
                Class::Malformed,
                Class::lwar(src, dst, 6, &payload),
            ],
            "{src}"
        );
        assert_eq!(run.frames[0].cap_len as usize, headers + 40);
        assert_eq!(run.frames[0].orig_len as usize, whole.len());
        let c = run.counts();
        // The datagram cut before its appId is UDP to the capture (the engine
        // cannot recognise it): three datagrams, two cut; two frames cut in
        // their headers.
        assert_eq!(
            (c.udp, c.udp_truncated, c.truncated, c.malformed),
            (3, 2, 2, 1)
        );
    }
}

#[test]
fn a_cut_fragment_is_truncated_and_its_datagram_incomplete() {
    let (src, dst) = v4();
    let frags = udp_fragments(src, dst, 5, &lwar_payload(1, 200), 104);
    let last = frame(Link::Ethernet, &frags[2]);
    let frames = [
        Fx::whole(1, frame(Link::Ethernet, &frags[0])),
        Fx::whole(2, frame(Link::Ethernet, &frags[1])),
        Fx::cut(3, last.clone(), last.len() - 5),
    ];
    let (_dir, path) = tmp("cutfrag.pcap");
    write_pcap(&path, LinkType::Ethernet, &frames);
    let run = read_files(&[path]);
    assert_eq!(
        run.classes(),
        vec![Class::Fragment, Class::Fragment, Class::Truncated]
    );
    assert_eq!(run.incomplete.len(), 1);
}

#[test]
fn the_real_server_capture_is_525_lwar_datagrams() {
    let run = read_files(&[real_capture()]);
    assert!(run.error.is_none());
    let vectors = real_server_vectors();
    assert_eq!(run.frames.len(), 525);
    assert_eq!(vectors.len(), 525);
    for (seen, (frame, sport, dport, payload)) in run.frames.iter().zip(&vectors) {
        let Class::Lwar {
            frame: f,
            src,
            dst,
            payload: p,
            payload_len,
        } = &seen.class
        else {
            panic!("frame {frame}: {:?}", seen.class);
        };
        assert_eq!(*f, *frame);
        assert_eq!((src.port(), dst.port()), (*sport, *dport), "frame {frame}");
        assert!(src.ip().is_loopback() && src.is_ipv6(), "frame {frame}");
        assert_eq!(p, payload, "frame {frame}");
        assert_eq!(*payload_len, payload.len());
    }
    // Microsecond file: the timestamps are whole microseconds.
    assert!(run.frames.iter().all(|f| f.ts.nanos() % 1000 == 0));
    assert!(run.frames.windows(2).all(|w| w[0].ts <= w[1].ts));
    assert_eq!(run.counts().udp, 525);
}

#[test]
fn several_files_are_one_stream_with_continuous_frame_numbers() {
    let (src, dst) = v4();
    let (_dir, second) = tmp("second.pcap");
    write_pcap(
        &second,
        LinkType::RawIp,
        &[Fx::whole(9, udp_packet(src, dst, &lwar_payload(1, 1)))],
    );
    let run = read_files(&[real_capture(), second.clone(), real_capture()]);
    assert!(run.error.is_none());
    assert_eq!(run.frames.len(), 1051);
    assert_eq!(
        run.frames[525].class,
        Class::lwar(src, dst, 526, &lwar_payload(1, 1))
    );
    let Class::Lwar { frame, .. } = &run.frames[1050].class else {
        panic!("lwar")
    };
    assert_eq!(*frame, 1051);
}

#[test]
fn pcapng_files_keep_nanosecond_timestamps() {
    let (src, dst) = v6();
    let a = udp_frame(Link::Ethernet, src, dst, &lwar_payload(1, 3));
    let b = udp_frame(Link::Ethernet, dst, src, &lwar_payload(2, 3));
    let ts = 1_700_000_000_123_456_789u64;
    for nanos in [true, false] {
        let (_dir, path) = tmp("x.pcapng");
        std::fs::write(&path, pcapng(1, nanos, &[(ts, &a), (ts + 1, &b)])).unwrap();
        let run = read_files(&[path]);
        assert!(run.error.is_none(), "{:?}", run.error);
        assert_eq!(run.counts().udp, 2);
        let want = if nanos { ts } else { ts / 1000 * 1000 };
        assert_eq!(run.frames[0].ts, Timestamp(want));
    }
}

#[test]
fn a_file_cut_off_mid_record_delivers_what_precedes_and_says_so() {
    let (src, dst) = v4();
    let frames: Vec<Fx> = (0..5)
        .map(|i| {
            Fx::whole(
                i,
                udp_frame(Link::Ethernet, src, dst, &lwar_payload(i as u32, 10)),
            )
        })
        .collect();
    let (dir, path) = tmp("whole.pcap");
    write_pcap(&path, LinkType::Ethernet, &frames);
    let bytes = std::fs::read(&path).unwrap();
    // Classic pcap, cut in the middle of the 4th record's data, then of its header.
    let rec = 16 + frames[0].bytes.len();
    for cut_at in [24 + 3 * rec + 20, 24 + 3 * rec + 7] {
        let cut = dir.path().join("cut.pcap");
        std::fs::write(&cut, &bytes[..cut_at]).unwrap();
        let run = read_files(&[cut, path.clone()]);
        assert_eq!(run.frames.len(), 3);
        assert_eq!(run.counts().udp, 3);
        assert!(
            matches!(&run.error, Some(CaptureError::CutOff { packets: 3, path }) if path.ends_with("cut.pcap")),
            "{:?}",
            run.error
        );
    }
    // pcapng, cut in the middle of the last block.
    let ng = pcapng(1, true, &[(1, &frames[0].bytes), (2, &frames[1].bytes)]);
    let cut = dir.path().join("cut.pcapng");
    std::fs::write(&cut, &ng[..ng.len() - 10]).unwrap();
    let run = read_files(&[cut]);
    assert_eq!(run.frames.len(), 1);
    assert!(
        matches!(run.error, Some(CaptureError::CutOff { packets: 1, .. })),
        "{:?}",
        run.error
    );
}

#[test]
fn opening_errors_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.pcap");
    assert!(matches!(
        Source::files(&[missing]),
        Err(CaptureError::FileNotFound { .. })
    ));
    let text = dir.path().join("text.pcap");
    std::fs::write(&text, "hello, this is not a capture file at all").unwrap();
    assert!(matches!(
        Source::files(&[real_capture(), text]),
        Err(CaptureError::NotPcap { .. })
    ));
    let wifi = dir.path().join("wifi.pcap");
    let mut w = lwarscope::capture::synth::PcapWriter::create(&wifi, LinkType::Ethernet).unwrap();
    w.write(Timestamp(0), &[0u8; 20]);
    w.finish().unwrap();
    let mut bytes = std::fs::read(&wifi).unwrap();
    bytes[20..24].copy_from_slice(&105u32.to_le_bytes()); // 802.11
    std::fs::write(&wifi, bytes).unwrap();
    let err = Source::files(&[wifi]).err().expect("unsupported");
    assert!(
        matches!(err, CaptureError::UnsupportedLinkType { linktype: 105, .. }),
        "{err}"
    );
}

/// The default live filter keeps UDP, VLAN-tagged UDP and every IP fragment of
/// UDP (IPv4 and IPv6), and drops the rest.
#[test]
fn the_default_filter_lets_udp_and_its_fragments_through() {
    let cap = pcap::Capture::dead(pcap::Linktype::ETHERNET).unwrap();
    let bpf = cap.compile(DEFAULT_FILTER, true).expect("compiles");
    for (src, dst) in [v4(), v6()] {
        let payload = lwar_payload(1, 300);
        for link in [Link::Ethernet, Link::Vlan(5)] {
            assert!(bpf.filter(&udp_frame(link, src, dst, &payload)), "{link:?}");
            for f in udp_fragments(src, dst, 1, &payload, 128) {
                assert!(bpf.filter(&frame(link, &f)), "{link:?} {src} fragment");
            }
        }
    }
    let mut tcp = Vec::new();
    etherparse::PacketBuilder::ethernet2([1; 6], [2; 6])
        .ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
        .tcp(1, 2, 3, 4)
        .write_to_vec(&mut tcp, b"x")
        .unwrap();
    assert!(!bpf.filter(&tcp));
}

/// Overlapping fragments: the receiver (Linux, RFC 5722) drops the datagram,
/// so the capture gives it up too, saying why; an exact copy of a fragment is
/// dropped and the datagram kept. Regression: the overlap was merged, the last
/// fragment's bytes winning, and the datagram analysed.
#[test]
fn overlapping_fragments_give_the_datagram_up_and_say_why() {
    for (src, dst) in [v4(), v6()] {
        let link = Link::Ethernet;
        let big = lwar_payload(7, 240);
        let by_104 = udp_fragments(src, dst, 7, &big, 104);
        let by_64 = udp_fragments(src, dst, 7, &big, 64);
        let copied = udp_fragments(src, dst, 8, &big, 104);
        let frames = [
            Fx::whole(1, frame(link, &by_104[0])),
            // Bytes 64..128 over 0..104: an overlap.
            Fx::whole(2, frame(link, &by_64[1])),
            Fx::whole(3, frame(link, &by_104[1])),
            Fx::whole(4, frame(link, &by_104[2])),
            // Datagram 8, its first fragment twice: whole all the same.
            Fx::whole(5, frame(link, &copied[0])),
            Fx::whole(6, frame(link, &copied[0])),
            Fx::whole(7, frame(link, &copied[1])),
            Fx::whole(8, frame(link, &copied[2])),
        ];
        let (_dir, path) = tmp("overlap.pcap");
        write_pcap(&path, LinkType::Ethernet, &frames);
        let run = read_files(std::slice::from_ref(&path));
        assert_eq!(
            run.classes(),
            vec![
                Class::Fragment,
                Class::Malformed,
                Class::Fragment,
                Class::Fragment,
                Class::Fragment,
                Class::Fragment,
                Class::Fragment,
                Class::lwar(src, dst, 8, &big),
            ],
            "{src}"
        );
        let c = run.counts();
        assert_eq!(
            (c.reassembled, c.incomplete, c.duplicate_fragments),
            (1, 1, 1)
        );
        assert_eq!(c.incomplete_by.overlap, 1);
        assert_eq!(run.incomplete[0].reason, IncompleteReason::Overlap);

        // The report says why, in JSON and in the table.
        let out = assert_cmd::Command::cargo_bin("lwarscope")
            .unwrap()
            .args(["-r", path.to_str().unwrap(), "--format", "json"])
            .output()
            .unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["capture"]["incomplete"], 1);
        assert_eq!(doc["capture"]["incomplete_reasons"]["overlap"], 1);
        assert_eq!(doc["capture"]["duplicate_fragments"], 1);
        let out = assert_cmd::Command::cargo_bin("lwarscope")
            .unwrap()
            .args(["-r", path.to_str().unwrap(), "--color", "never"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("of which overlapping fragments"), "{text}");
    }
}

/// IPv6 UDP behind extension headers (hop-by-hop, routing, destination
/// options, authentication, a fragment after one of them), with and without
/// a VLAN tag: the default live filter keeps it, and the dissector finds the
/// datagram. Regression: only a chain starting with 0, 43, 44 or 60 passed,
/// and none behind a VLAN tag.
#[test]
fn the_default_filter_keeps_ipv6_udp_behind_extension_headers() {
    let (src, dst) = v6();
    let payload = lwar_payload(1, 40);
    let plain = lwarscope::capture::synth::udp_packet(src, dst, &payload);
    // An extension header of `len` bytes (a multiple of 8) of type `kind`
    // inserted after the fixed header.
    let with = |kinds: &[(u8, usize)]| {
        let mut ip = plain[..40].to_vec();
        let mut chain = Vec::new();
        for (i, &(kind, len)) in kinds.iter().enumerate() {
            let next = kinds.get(i + 1).map_or(17, |k| k.0);
            let mut h = vec![0u8; len];
            h[0] = next;
            h[1] = if kind == 51 {
                (len / 4 - 2) as u8
            } else {
                (len / 8 - 1) as u8
            };
            if kind == 60 || kind == 0 {
                // PadN over the rest.
                h[2] = 1;
                h[3] = (len - 4) as u8;
            }
            chain.extend_from_slice(&h);
        }
        ip[6] = kinds[0].0;
        let payload_len = u16::from_be_bytes([ip[4], ip[5]]) + chain.len() as u16;
        ip[4..6].copy_from_slice(&payload_len.to_be_bytes());
        ip.extend_from_slice(&chain);
        ip.extend_from_slice(&plain[40..]);
        ip
    };
    let cases = [
        vec![(0u8, 8usize)],
        vec![(43, 8)],
        vec![(60, 8)],
        vec![(51, 16)],
        vec![(0, 8), (60, 8)],
        vec![(60, 8), (51, 16)],
    ];
    let eth = pcap::Capture::dead(pcap::Linktype::ETHERNET).unwrap();
    let on_eth = eth.compile(DEFAULT_FILTER, true).expect("compiles");
    let sll2 = pcap::Capture::dead(pcap::Linktype(276)).unwrap();
    let on_sll2 = sll2
        .compile(lwarscope::capture::DEFAULT_FILTER_NO_VLAN, true)
        .expect("compiles");
    for kinds in &cases {
        let ip = with(kinds);
        for link in [Link::Ethernet, Link::Vlan(5)] {
            let f = frame(link, &ip);
            assert!(on_eth.filter(&f), "{kinds:?} {link:?}: filtered out");
            let class =
                lwarscope::capture::classify_frame(LinkType::Ethernet, &f, false, 1, Timestamp(0));
            assert!(
                matches!(class, lwarscope::capture::FrameClass::Udp(d) if d.payload == &payload[..]),
                "{kinds:?} {link:?}: {class:?}"
            );
        }
        let f = frame(Link::LinuxSll2(ARPHRD_ETHER), &ip);
        assert!(on_sll2.filter(&f), "{kinds:?} SLL2: filtered out");
    }
}

/// A UDP length below the UDP header's 8 bytes is broken (Linux drops the
/// datagram), in a whole frame or one the snaplen cut, over IPv4 and IPv6,
/// on every path (the layer-by-layer one for plain frames, the general one
/// behind a VLAN tag, a reassembled datagram); only 0 over IPv6 (a jumbogram's
/// length is in the IP header) stands for "the IP length". Regression: any
/// length below 8 was taken as "trust the IP length" and the datagram analysed.
#[test]
fn a_udp_length_below_its_header_is_malformed() {
    let payload = lwar_payload(1, 40);
    for (src, dst) in [v4(), v6()] {
        let ip = udp_packet(src, dst, &payload);
        let udp_at = if src.is_ipv4() { 20 } else { 40 };
        for length in 0u16..8 {
            let mut broken = ip.clone();
            broken[udp_at + 4..udp_at + 6].copy_from_slice(&length.to_be_bytes());
            let jumbo_like = src.is_ipv6() && length == 0;
            for link in [Link::Ethernet, Link::Vlan(5)] {
                let f = frame(link, &broken);
                for cut in [false, true] {
                    let class = lwarscope::capture::classify_frame(
                        LinkType::Ethernet,
                        &f,
                        cut,
                        1,
                        Timestamp(0),
                    );
                    if jumbo_like {
                        assert!(
                            matches!(class, lwarscope::capture::FrameClass::Udp(d) if d.payload == &payload[..]),
                            "{src} length {length} {link:?} cut {cut}: {class:?}"
                        );
                    } else {
                        assert_eq!(
                            class,
                            lwarscope::capture::FrameClass::Malformed,
                            "{src} length {length} {link:?} cut {cut}"
                        );
                    }
                }
            }
        }
        // Reassembled: the length sits in the first fragment.
        let mut frames = Vec::new();
        for (i, mut f) in udp_fragments(src, dst, 9, &lwar_payload(9, 300), 128)
            .into_iter()
            .enumerate()
        {
            if i == 0 {
                let udp_at = if src.is_ipv4() { 20 } else { 48 };
                f[udp_at + 4..udp_at + 6].copy_from_slice(&3u16.to_be_bytes());
            }
            frames.push(Fx::whole(i as u64 + 1, frame(Link::Ethernet, &f)));
        }
        let (_dir, path) = tmp("short-length.pcap");
        write_pcap(&path, LinkType::Ethernet, &frames);
        let run = read_files(std::slice::from_ref(&path));
        assert_eq!(
            run.classes().last(),
            Some(&Class::Malformed),
            "{src}: {:?}",
            run.classes()
        );
    }
}
