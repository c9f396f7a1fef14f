//! Battlegrounds' timing metrics on the session (`BgSession`): the server's
//! answer time (MOVE_OP to the MOVE_EVENT echoing it) and the message
//! completion time (first block to the ack of the last), on the corpus, whose
//! simulator puts its tap half-way along a 20 ms link and answers at once. The
//! PING->PONG round trip is the client direction's ack delay (shown by the
//! report's `ack p50/95` column).

use lwarscope::capture::{FrameClass, Source};
use lwarscope::engine::TrackerConfig;
use lwarscope::proto::battlegrounds::Tracker;
use lwarscope::proto::battlegrounds::analysis::Durations;
use serde_json::Value;
use std::path::Path;

const MS: u64 = 1_000_000;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Answer and completion times over the capture's sessions.
fn metrics(stem: &str) -> (Vec<Durations>, Vec<Durations>) {
    let pcap = root().join("captures").join(format!("{stem}.pcap"));
    let mut tracker = Tracker::new(TrackerConfig::default());
    let mut source = Source::files(&[&pcap]).unwrap();
    while let Some(frame) = source.next_frame().unwrap() {
        if let FrameClass::Udp(d) = frame.class {
            tracker.observe(&d, &mut ());
        }
    }
    let (mut answer, mut completion) = (Vec::new(), Vec::new());
    for (_, s) in tracker.sessions() {
        answer.push(s.proto.answer);
        completion.push(s.proto.completion);
    }
    (answer, completion)
}

fn truth(stem: &str) -> Value {
    let path = root().join("captures").join(format!("{stem}.truth.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn clean_capture_answers_in_one_round_trip_and_completes_every_message() {
    let (answer, completion) = metrics("bg-clean");
    println!("answer {answer:?}\ncompletion {completion:?}");
    assert_eq!(answer.len(), 2);
    for a in &answer {
        assert!(a.samples > 40, "{a:?}");
        // Tap to server and back: 20 ms, the server answering at once.
        assert_eq!(a.min_ns / MS, 20, "{a:?}");
        assert!(a.max_ns < 25 * MS, "{a:?}");
        assert!(a.mean_ns().unwrap() / MS == 20, "{a:?}");
    }
    // Every PROP the server sent was acked whole, each in one round trip.
    let samples: u64 = completion.iter().map(|c| c.samples).sum();
    assert_eq!(samples, truth("bg-clean")["s2c"]["props"].as_u64().unwrap());
    for c in &completion {
        assert!(c.min_ns >= 20 * MS && c.max_ns < 25 * MS, "{c:?}");
    }
}

#[test]
fn lossy_capture_completes_later_than_one_round_trip() {
    let (answer, completion) = metrics("bg-loss");
    println!("answer {answer:?}\ncompletion {completion:?}");
    // A resent block completes its message after the 300 ms resend timeout.
    assert!(
        completion.iter().any(|c| c.max_ns > 300 * MS),
        "{completion:?}"
    );
    // Every PROP rebuilt was acked whole in this capture.
    let samples: u64 = completion.iter().map(|c| c.samples).sum();
    assert_eq!(samples, truth("bg-loss")["s2c"]["props"].as_u64().unwrap());
    for a in &answer {
        assert!(a.samples > 0 && a.min_ns / MS == 20, "{a:?}");
    }
}

#[test]
fn a_big_message_completes_once_every_block_is_acked() {
    let (_, completion) = metrics("bg-bigmsg");
    println!("completion {completion:?}");
    let samples: u64 = completion.iter().map(|c| c.samples).sum();
    assert_eq!(
        samples,
        truth("bg-bigmsg")["s2c"]["props"].as_u64().unwrap()
    );
}

#[test]
fn no_sample_no_mean() {
    assert_eq!(Durations::default().mean_ns(), None);
}
