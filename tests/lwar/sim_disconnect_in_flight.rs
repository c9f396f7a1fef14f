//! A server packet still in flight when the client's Disconnect is captured: the
//! server had not processed the Disconnect, so its Update is no violation. The
//! simulator's ground truth and the analyzer must agree on such a capture, and
//! the capture must really contain the case (or the test proves nothing).

use lwarscope::capture::{FrameClass, Source};
use lwarscope::engine::Summary;
use lwarscope::proto::lwar::Tracker;
use lwarscope::proto::lwar::sim::{Faults, VirtualConfig, run_virtual};
use lwarscope::proto::lwar::wire::{Message, Packet};
use std::collections::HashMap;

#[test]
fn server_packets_in_flight_after_a_disconnect_are_not_violations() {
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("in-flight.pcap");
    let truth_path = dir.path().join("in-flight.truth.json");
    let latency = Faults {
        latency_us: 120_000,
        ..Faults::default()
    };
    let cfg = VirtualConfig {
        c2s: latency,
        s2c: latency,
        ..VirtualConfig::clean(11, 3, 8)
    };
    run_virtual(&cfg, &pcap, Some(&truth_path)).unwrap();

    // The case is there: after a client's Disconnect is captured, the server
    // sends packets whose ack does not cover it, with more than a Leave.
    let mut source = Source::files(&[&pcap]).unwrap();
    let mut tracker = Tracker::default();
    let mut disconnect_of: HashMap<std::net::SocketAddr, u32> = HashMap::new();
    let mut in_flight = 0;
    while let Some(frame) = source.next_frame().unwrap() {
        let FrameClass::Udp(d) = frame.class else {
            continue;
        };
        tracker.observe(&d, &mut ());
        let p = Packet::new_checked(d.payload).unwrap();
        for m in p.messages().map_while(Result::ok) {
            if let Message::Disconnect { seqno, .. } = m.message {
                disconnect_of.entry(d.src).or_insert(seqno);
            }
        }
        if let Some(&seqno) = disconnect_of.get(&d.dst)
            && p.ack() < seqno
            && p.messages()
                .map_while(Result::ok)
                .any(|m| !matches!(m.message, Message::Leave { .. }))
        {
            in_flight += 1;
        }
    }
    assert!(
        in_flight > 0,
        "no server packet was in flight after a Disconnect"
    );
    let mut summary = tracker.finish(&mut ());
    // An estimate, not a count: the truth leaves it out.
    for s in &mut summary.sessions {
        s.c2s.loss = None;
        s.s2c.loss = None;
    }
    // Bytes by message type are not serialised: no truth states them.
    summary.message_bytes = Default::default();

    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&truth_path).unwrap()).unwrap();
    let truth: Summary = serde_json::from_value(doc["summary"].clone()).unwrap();
    assert_eq!(summary, truth);
    assert!(
        !summary.violations.contains_key("after-disconnect"),
        "{:?}",
        summary.violations
    );
}
