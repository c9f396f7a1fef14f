//! Every Vessel finding of the analysis contract (`src/proto/vessel/analysis.rs`),
//! each shown on packets encoded here with prost (the wire module's messages).
//!
//! A [`Script`] plays one capture: `v(packet)` and `e(packet)` feed the next
//! frame (16 ms after the previous one, the game's 60 Hz, unless `wait` says
//! otherwise) and return the findings it raised as `(direction, label, frame,
//! seqno)`.

use lwarscope::capture::{Datagram, Timestamp};
use lwarscope::engine::{Finding, Observer, TrackerConfig};
use lwarscope::proto::vessel::Tracker;
use lwarscope::proto::vessel::wire::{EnvironmentToVessel, ShipInput, VesselToEnvironment};
use prost::Message;
use std::net::SocketAddr;

type F = (&'static str, String, u64, Option<u32>);

#[derive(Default)]
struct Collect(Vec<Finding>);

impl Observer for Collect {
    fn finding(&mut self, f: &Finding) {
        self.0.push(*f);
    }
}

struct Script {
    tracker: Tracker,
    vessel: SocketAddr,
    env: SocketAddr,
    frame: u64,
    now_ms: u64,
    all: Vec<Finding>,
}

fn compact(f: &Finding) -> F {
    (f.direction.name(), f.label().to_string(), f.frame, f.seqno)
}

fn f(dir: &'static str, label: &str, frame: u64, seqno: Option<u32>) -> F {
    (dir, label.to_owned(), frame, seqno)
}

fn vp(version: &str, id: &str, sync: u32, left: f32) -> VesselToEnvironment {
    VesselToEnvironment {
        protocol_version: version.into(),
        vessel_id: id.into(),
        sync_number: sync,
        ship_input: Some(ShipInput {
            throttle_left_engine: left,
            throttle_right_engine: 0.5,
            fire_gun: sync.is_multiple_of(2),
            ..Default::default()
        }),
    }
}

fn ep(join: bool, id: &str, sync: u32) -> EnvironmentToVessel {
    EnvironmentToVessel {
        protocol_version: "0.0.2".into(),
        join_status: join,
        vessel_id: id.into(),
        sync_number: sync,
        ship_input: Some(ShipInput::default()),
        ship_sensors: None,
    }
}

fn version_only(v: &str) -> EnvironmentToVessel {
    EnvironmentToVessel {
        protocol_version: v.into(),
        ..Default::default()
    }
}

impl Script {
    fn new() -> Self {
        Script {
            tracker: Tracker::new(TrackerConfig::default()),
            vessel: "10.0.0.1:50000".parse().unwrap(),
            env: "10.0.0.2:39461".parse().unwrap(),
            frame: 0,
            now_ms: 1_000_000,
            all: Vec::new(),
        }
    }

    fn wait(&mut self, ms: u64) -> &mut Self {
        self.now_ms += ms;
        self
    }

    fn raw(&mut self, from_vessel: bool, payload: &[u8]) -> Vec<F> {
        self.frame += 1;
        self.now_ms += 8;
        let (src, dst) = if from_vessel {
            (self.vessel, self.env)
        } else {
            (self.env, self.vessel)
        };
        let d = Datagram::new(
            self.frame,
            Timestamp(self.now_ms * 1_000_000),
            src,
            dst,
            payload,
        );
        let mut c = Collect::default();
        self.tracker.observe(&d, &mut c);
        self.all.extend_from_slice(&c.0);
        c.0.iter().map(compact).collect()
    }

    fn v(&mut self, p: &VesselToEnvironment) -> Vec<F> {
        self.raw(true, &p.encode_to_vec())
    }

    fn e(&mut self, p: &EnvironmentToVessel) -> Vec<F> {
        self.raw(false, &p.encode_to_vec())
    }

    /// A frame number passes without a packet (the tap missed one).
    fn skip(&mut self) {
        self.frame += 1;
        self.now_ms += 8;
    }

    fn finish(&mut self) -> Vec<F> {
        let mut c = Collect::default();
        self.tracker.finish(&mut c);
        self.all.extend_from_slice(&c.0);
        c.0.iter().map(compact).collect()
    }

    fn detail_of(&self, label: &str) -> String {
        self.all
            .iter()
            .find(|f| f.label().to_string() == label)
            .map(|f| f.detail.to_string())
            .unwrap_or_default()
    }

    fn state(&self) -> String {
        let (_, s) = self.tracker.sessions().last().unwrap();
        s.proto.state_of().name().to_owned()
    }

    /// A joined exchange: the vessel joins (no id), the environment issues
    /// "v7", the vessel uses it from its third packet, the environment stops
    /// sending it. `n` rounds from sync `start`; `drop` the frames the tap
    /// misses (by round and side). Returns every finding.
    fn joined(&mut self, start: u32, n: u32, drop: &[(u32, bool)]) -> Vec<F> {
        let mut out = Vec::new();
        let mut used = false;
        for r in 0..n {
            let s = (start + r) % 256;
            let id = if r >= 2 { "v7" } else { "" };
            if drop.contains(&(r, true)) {
                self.skip();
            } else {
                out.extend(self.v(&vp("0.0.2", id, s, 0.5)));
            }
            used |= r >= 2;
            let eid = if used && r >= 3 { "" } else { "v7" };
            if drop.contains(&(r, false)) {
                self.skip();
            } else {
                out.extend(self.e(&ep(true, eid, s)));
            }
        }
        out
    }
}

#[test]
fn a_clean_session_across_the_wrap_raises_only_the_issued_id() {
    let mut s = Script::new();
    let found = s.joined(200, 120, &[]);
    assert_eq!(found, [f("s2c", "vessel-id-issued", 2, None)]);
    assert!(s.finish().is_empty());
    assert_eq!(s.state(), "open");
    assert_eq!(
        s.detail_of("vessel-id-issued"),
        "vesselID issued to a vessel that sent none (a join)"
    );
    let sum = s.tracker.summary();
    assert_eq!(sum.messages.get("vesselToEnvironment"), Some(&120));
    assert_eq!(sum.findings.get("sync-skipped"), None);
}

#[test]
fn tap_misses_alone_are_notes() {
    let mut s = Script::new();
    // The tap misses the vessel's first packet with the id, the
    // environment's first without it, a run of three across the wrap, and
    // the environment's last.
    let drop = [
        (2, true),
        (3, false),
        (54, true),
        (55, true),
        (56, true),
        (55, false),
        (99, false),
    ];
    let mut found = s.joined(200, 100, &drop);
    found.extend(s.finish());
    found.sort_by_key(|x| x.2);
    assert_eq!(
        found,
        [
            f("s2c", "vessel-id-issued", 2, None),
            f("c2s", "sync-skipped", 7, None),
            f("s2c", "sync-skipped", 10, None),
            f("c2s", "sync-skipped", 115, None),
            f("s2c", "sync-skipped", 114, None),
        ]
        .to_vec()
        .tap_sorted()
    );
    assert!(
        s.all
            .iter()
            .all(|f| f.kind.severity() == lwarscope::engine::Severity::Note)
    );
    let details: Vec<_> = s
        .all
        .iter()
        .filter(|f| f.label().to_string() == "sync-skipped")
        .map(|f| f.detail.to_string())
        .collect();
    assert!(
        details.contains(
            &"syncNumbers 254 to 0 (3) not captured: lost before the tap or missed by it (Vessel has no acks to tell)"
                .to_owned()
        ),
        "{details:?}"
    );
}

trait TapSorted {
    fn tap_sorted(self) -> Self;
}
impl TapSorted for Vec<F> {
    fn tap_sorted(mut self) -> Self {
        self.sort_by_key(|x| x.2);
        self
    }
}

#[test]
fn reordered_duplicated_and_malformed() {
    let mut s = Script::new();
    s.joined(0, 10, &[]);
    let a = vp("0.0.2", "v7", 10, 0.5).encode_to_vec();
    let b = vp("0.0.2", "v7", 11, 0.5).encode_to_vec();
    assert!(s.raw(true, &b).is_empty());
    // 10 after 11: out of date; it fills its number.
    assert_eq!(s.raw(true, &a), [f("c2s", "reordered", 22, Some(10))]);
    assert_eq!(s.raw(true, &b), [f("c2s", "duplicate-packet", 23, None)]);
    // Cut in the middle of shipInput: malformed, and no place in the sequence.
    let c = vp("0.0.2", "v7", 12, 0.5).encode_to_vec();
    assert_eq!(
        s.raw(true, &c[..c.len() - 2]),
        [f("c2s", "malformed", 24, None)]
    );
    assert!(s.detail_of("malformed").contains("at offset"));
    assert!(s.v(&vp("0.0.2", "v7", 13, 0.5)).is_empty());
    assert_eq!(s.finish(), [f("c2s", "sync-skipped", 25, None)]);
    assert_eq!(s.detail_of("sync-skipped").split(' ').nth(1), Some("12"));
}

#[test]
fn a_version_mismatch_allows_a_second_then_one_violation() {
    let mut s = Script::new();
    assert!(s.v(&vp("0.0.1", "", 0, 0.5)).is_empty());
    assert_eq!(
        s.e(&version_only("0.0.2")),
        [f("s2c", "version-refused", 2, None)]
    );
    // In flight: within the second.
    for k in 1..30 {
        assert!(s.v(&vp("0.0.1", "", k, 0.5)).is_empty());
        assert!(s.e(&version_only("0.0.2")).is_empty());
    }
    assert_eq!(s.state(), "version-mismatch");
    s.wait(600);
    assert_eq!(
        s.v(&vp("0.0.1", "", 30, 0.5)),
        [f("c2s", "violation/sent-after-refusal", 61, None)]
    );
    assert!(s.v(&vp("0.0.1", "", 31, 0.5)).is_empty());
    // A full reply while the versions differ.
    assert_eq!(
        s.e(&ep(true, "", 5)),
        [f("s2c", "violation/full-reply-on-mismatch", 63, None)]
    );
    assert!(s.finish().is_empty());
    assert_eq!(s.state(), "version-mismatch");
}

#[test]
fn a_denial_that_the_vessel_respects_is_a_note() {
    let mut s = Script::new();
    assert!(s.v(&vp("0.0.2", "", 0, 0.5)).is_empty());
    assert_eq!(s.e(&ep(false, "", 0)), [f("s2c", "join-denied", 2, None)]);
    assert!(s.v(&vp("0.0.2", "", 1, 0.5)).is_empty());
    assert!(s.e(&ep(false, "", 1)).is_empty());
    assert!(s.finish().is_empty());
    assert_eq!(s.state(), "denied");
    // One that goes on: one violation, whatever it sends after.
    let mut s = Script::new();
    s.v(&vp("0.0.2", "", 0, 0.5));
    s.e(&ep(false, "", 0));
    s.wait(1000);
    let mut found = Vec::new();
    for k in 1..20 {
        found.extend(s.v(&vp("0.0.2", "", k, 0.5)));
    }
    assert_eq!(found, [f("c2s", "violation/sent-after-refusal", 3, None)]);
    assert!(
        s.detail_of("violation/sent-after-refusal")
            .contains("after the denial of frame 2")
    );
}

#[test]
fn a_rejoin_with_a_stale_id_gets_a_new_one_and_must_use_it() {
    let mut s = Script::new();
    assert!(s.v(&vp("0.0.2", "old", 0, 0.5)).is_empty());
    assert_eq!(
        s.e(&ep(true, "new", 0)),
        [f("s2c", "vessel-id-issued", 2, None)]
    );
    assert_eq!(
        s.detail_of("vessel-id-issued"),
        "vesselID issued to a vessel that sent another one (frame 1): a rejoin with a new id"
    );
    // In flight with the old id: allowed for a second.
    let mut found = Vec::new();
    for k in 1..=70 {
        found.extend(s.v(&vp("0.0.2", "old", k, 0.5)));
        found.extend(s.e(&ep(true, "new", k)));
    }
    assert_eq!(found, [f("c2s", "violation/wrong-vessel-id", 129, None)]);
    // A vessel that uses it and then goes back.
    let mut s = Script::new();
    s.v(&vp("0.0.2", "old", 0, 0.5));
    s.e(&ep(true, "new", 0));
    assert!(s.v(&vp("0.0.2", "new", 1, 0.5)).is_empty());
    assert!(s.e(&ep(true, "", 1)).is_empty());
    assert_eq!(
        s.v(&vp("0.0.2", "old", 2, 0.5)),
        [f("c2s", "violation/wrong-vessel-id", 5, None)]
    );
    assert!(
        s.detail_of("violation/wrong-vessel-id")
            .contains("after the vessel had used it")
    );
}

#[test]
fn an_id_withdrawn_before_the_vessel_used_it() {
    let mut s = Script::new();
    s.v(&vp("0.0.2", "", 0, 0.5));
    s.e(&ep(true, "v9", 0));
    assert!(s.v(&vp("0.0.2", "", 1, 0.5)).is_empty());
    // The environment stops sending it; the vessel's next two packets lack it.
    assert!(s.e(&ep(true, "", 1)).is_empty());
    assert!(s.v(&vp("0.0.2", "", 2, 0.5)).is_empty());
    assert_eq!(
        s.v(&vp("0.0.2", "", 3, 0.5)),
        [f("s2c", "violation/id-withdrawn", 6, None)]
    );
    // One packet the vessel sent before it took the id, overtaking one the
    // tap missed, is no violation: the next carries it.
    let mut s = Script::new();
    s.v(&vp("0.0.2", "", 0, 0.5));
    s.e(&ep(true, "v9", 0));
    s.skip(); // the vessel's packet 2, with the id: missed by the tap
    assert!(s.e(&ep(true, "", 1)).is_empty());
    assert!(s.v(&vp("0.0.2", "", 1, 0.5)).is_empty()); // sent before it took the id
    assert!(s.v(&vp("0.0.2", "v9", 3, 0.5)).is_empty());
    assert!(s.finish().iter().all(|x| x.1 == "sync-skipped"));
}

#[test]
fn numbers_above_255_and_throttles_out_of_range_are_one_incident_each() {
    let mut s = Script::new();
    assert!(s.v(&vp("0.0.2", "", 0, 0.5)).is_empty());
    assert_eq!(
        s.v(&vp("0.0.2", "", 300, 0.5)),
        [f("c2s", "violation/sync-range", 2, Some(300))]
    );
    assert!(s.v(&vp("0.0.2", "", 301, 0.5)).is_empty());
    // Back in range: next after 0, no gap from the numbers above 255.
    assert!(s.v(&vp("0.0.2", "", 1, 0.5)).is_empty());
    assert_eq!(
        s.v(&vp("0.0.2", "", 2, 1.5)),
        [f("c2s", "violation/throttle-range", 5, None)]
    );
    assert!(s.v(&vp("0.0.2", "", 3, -0.5)).is_empty());
    assert!(s.v(&vp("0.0.2", "", 4, 1.0)).is_empty());
    assert_eq!(
        s.v(&vp("0.0.2", "", 5, f32::NAN)),
        [f("c2s", "violation/throttle-range", 8, None)]
    );
    assert!(s.finish().is_empty());
    assert_eq!(
        s.detail_of("violation/throttle-range"),
        "throttleLeftEngine = 1.5 outside [0, 1]"
    );
}

#[test]
fn a_session_that_stopped_is_closed_one_silent_past_5_s_timed_out() {
    let mut s = Script::new();
    s.joined(0, 10, &[]);
    s.wait(2000);
    // Another session, on other ports, keeps the capture going.
    s.vessel = "10.0.0.3:50001".parse().unwrap();
    s.v(&vp("0.0.2", "", 0, 0.5));
    s.finish();
    let states: Vec<_> = s
        .tracker
        .sessions()
        .map(|(_, x)| x.proto.state_of().name())
        .collect();
    assert_eq!(states, ["closed", "open"]);
    let mut s = Script::new();
    s.joined(0, 10, &[]);
    s.wait(6000);
    s.vessel = "10.0.0.3:50001".parse().unwrap();
    s.v(&vp("0.0.2", "", 0, 0.5));
    s.finish();
    let states: Vec<_> = s
        .tracker
        .sessions()
        .map(|(_, x)| x.proto.state_of().name())
        .collect();
    assert_eq!(states, ["timed-out", "open"]);
}
