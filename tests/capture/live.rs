//! Live capture on `lo`: lwar datagrams sent between two UDP sockets are each seen
//! and decoded. CI runs as root; these tests fail (never skip) if they cannot
//! capture.

use crate::common;

use common::*;
use lwarscope::capture::{FrameClass, LiveOptions, Source};
use lwarscope::proto::lwar::wire::{MessageType, Packet};
use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

/// Two sockets on one loopback address, and a filter for their traffic only.
fn sockets(addr: &str) -> (UdpSocket, UdpSocket, String) {
    let a = UdpSocket::bind(addr).expect("bind a");
    let b = UdpSocket::bind(addr).expect("bind b");
    let filter = format!(
        "udp and (port {} or port {})",
        a.local_addr().unwrap().port(),
        b.local_addr().unwrap().port()
    );
    (a, b, filter)
}

fn open_lo(filter: &str, savefile: Option<std::path::PathBuf>) -> Source {
    let mut opts = LiveOptions::new("lo");
    opts.filter = Some(filter.to_string());
    opts.savefile = savefile;
    open_with(&opts)
}

fn open_with(opts: &LiveOptions) -> Source {
    let mut source = Source::live(opts).unwrap_or_else(|e| {
        panic!("live capture on lo must work here (run the tests as root): {e}")
    });
    // A safety net so a broken capture fails instead of hanging.
    source.stop_after(Duration::from_secs(20));
    source
}

/// Sends `n` lwar datagrams from `a` to `b` (and one that is not lwar, first),
/// receiving each on `b`.
fn send(a: &UdpSocket, b: &UdpSocket, n: u32) -> Vec<Vec<u8>> {
    let to = b.local_addr().unwrap();
    a.send_to(b"hello, not lwar", to).unwrap();
    let mut buf = [0u8; 2048];
    b.recv_from(&mut buf).unwrap();
    (1..=n)
        .map(|i| {
            let payload = lwar_payload(i, 10 * i as usize);
            a.send_to(&payload, to).unwrap();
            let (len, from) = b.recv_from(&mut buf).unwrap();
            assert_eq!(from, a.local_addr().unwrap());
            assert_eq!(&buf[..len], &payload[..]);
            payload
        })
        .collect()
}

fn capture_and_check(addr: &str, immediate: bool) {
    capture_and_check_on("lo", addr, immediate);
}

fn capture_and_check_on(interface: &str, addr: &str, immediate: bool) {
    let (a, b, filter) = sockets(addr);
    let mut opts = LiveOptions::new(interface);
    opts.filter = Some(filter);
    if immediate {
        // One ring slot per packet of lo's 64 KiB MTU: a larger buffer.
        opts.immediate = true;
        opts.buffer_size = Some(32 << 20);
    }
    let mut source = open_with(&opts);
    assert!(source.is_live());
    let sent = send(&a, &b, 20);
    // The first datagram is not lwar.
    source.stop_after_udp(sent.len() as u64 + 1);
    let mut seen: Vec<(SocketAddr, SocketAddr, Vec<u8>)> = Vec::new();
    let mut chats = 0;
    while let Some(frame) = source.next_frame().expect("read") {
        if let FrameClass::Udp(d) = frame.class
            && lwarscope::proto::lwar::wire::is_lwar(d.payload)
        {
            assert_eq!(d.frame, frame.number);
            assert!(!d.truncated_by_capture());
            let packet = Packet::new_checked(d.payload).expect("decodes");
            for m in packet.messages() {
                let m = m.expect("message decodes");
                assert_eq!(m.message.msg_type(), MessageType::Chat);
                chats += 1;
            }
            seen.push((d.src, d.dst, d.payload.to_vec()));
        }
    }
    let want: Vec<(SocketAddr, SocketAddr, Vec<u8>)> = sent
        .into_iter()
        .map(|p| (a.local_addr().unwrap(), b.local_addr().unwrap(), p))
        .collect();
    assert_eq!(seen, want, "every datagram seen, in order, once");
    assert_eq!(chats, 20);
    let stats = source.stats();
    assert_eq!(stats.counts.udp, 21, "20 lwar datagrams and one other");
    let pcap = stats.pcap.expect("live captures have libpcap statistics");
    assert!(pcap.received >= 21, "{pcap:?}");
    assert_eq!(pcap.dropped_by_kernel, 0);
}

#[test]
fn lwar_datagrams_on_ipv4_loopback_are_seen_and_decoded() {
    capture_and_check("127.0.0.1:0", false);
}

#[test]
fn immediate_mode_delivers_every_datagram_too() {
    capture_and_check("127.0.0.1:0", true);
}

#[test]
fn lwar_datagrams_on_ipv6_loopback_are_seen_and_decoded() {
    capture_and_check("[::1]:0", false);
}

#[test]
fn the_savefile_keeps_every_captured_frame() {
    savefile_on("lo");
}

/// `-i any -w`: Linux cooked v2 frames, read back as they were captured.
#[test]
fn the_savefile_of_the_any_device_reads_back() {
    savefile_on("any");
}

fn savefile_on(interface: &str) {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("saved.pcap");
    let (a, b, filter) = sockets("127.0.0.1:0");
    let mut opts = LiveOptions::new(interface);
    opts.filter = Some(filter);
    opts.savefile = Some(saved.clone());
    let mut source = open_with(&opts);
    let sent = send(&a, &b, 5);
    source.stop_after_udp(6);
    let mut frames = 0;
    while source.next_frame().expect("read").is_some() {
        frames += 1;
    }
    drop(source);
    let run = read_files(&[saved]);
    assert_eq!(run.frames.len(), frames);
    let payloads: Vec<Vec<u8>> = run
        .classes()
        .into_iter()
        .filter_map(|c| match c {
            Class::Lwar { payload, .. } => Some(payload),
            _ => None,
        })
        .collect();
    assert_eq!(payloads, sent);
}

#[test]
fn a_stop_ends_a_capture_on_a_quiet_interface() {
    // A filter nothing matches: the source must still end when stopped.
    let mut source = open_lo("udp port 9 and udp port 10", None);
    let stop = source.stop_handle();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        stop.stop();
    });
    assert!(source.next_frame().expect("read").is_none());
    assert!(source.stop_handle().is_stopped());
    assert!(source.stats().pcap.is_some());
}

/// `-i any` gives Linux cooked frames whose ARPHRD type for `lo` is loopback
/// (772): they are read, and the default filter compiles there (no `vlan`).
#[test]
fn lwar_datagrams_on_the_any_device_are_seen_and_decoded() {
    capture_and_check_on("any", "127.0.0.1:0", false);
    capture_and_check_on("any", "[::1]:0", false);
    let source = Source::live(&LiveOptions::new("any"))
        .unwrap_or_else(|e| panic!("the default filter must open on any: {e}"));
    drop(source);
}

/// `-b filesize:KB -b files:N`: the savefile rotates between frames and the
/// oldest files go; the files kept hold the last frames, in order, none lost
/// between two files.
#[test]
fn the_savefile_rotates_by_size_and_keeps_the_newest_files() {
    use lwarscope::capture::rotate::Rotation;
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("ring.pcap");
    let (a, b, filter) = sockets("127.0.0.1:0");
    let mut opts = LiveOptions::new("lo");
    opts.filter = Some(filter);
    opts.savefile = Some(base.clone());
    let mut rotation = Rotation::default();
    rotation.add("filesize:1").unwrap();
    rotation.add("files:3").unwrap();
    opts.rotation = rotation;
    let mut source = open_with(&opts);
    // 20 datagrams of about 600 bytes: each file ends after its second frame.
    let sent = send(&a, &b, 20);
    source.stop_after_udp(21);
    while source.next_frame().expect("read").is_some() {}
    drop(source);
    let mut files: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let names: Vec<_> = files
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
    assert!(
        names
            .iter()
            .all(|n| n.starts_with("ring_") && n.ends_with(".pcap"))
    );
    let payloads: Vec<Vec<u8>> = read_files(&files)
        .classes()
        .into_iter()
        .filter_map(|c| match c {
            Class::Lwar { payload, .. } => Some(payload),
            _ => None,
        })
        .collect();
    assert!(!payloads.is_empty());
    assert_eq!(
        payloads[..],
        sent[sent.len() - payloads.len()..],
        "the newest frames, in order, none missing between files"
    );
}
