//! The Battlegrounds analysis against the simulator's ground truth
//! (`proto::battlegrounds::sim`): for clean and faulty networks, the findings
//! are exactly what the truth states, by kind and direction, and nothing else.

use lwarscope::engine::{Finding, Observer, TrackerConfig};
use lwarscope::proto::battlegrounds::Tracker;
use lwarscope::proto::battlegrounds::sim::{Config, Faults, Form, Run, run};
use std::collections::BTreeMap;

#[derive(Default)]
struct Collect(Vec<Finding>);

impl Observer for Collect {
    fn finding(&mut self, f: &Finding) {
        self.0.push(*f);
    }
}

/// Findings by (direction, label).
fn analyse(r: &Run) -> (BTreeMap<(String, String), u64>, Tracker) {
    let mut tracker = Tracker::new(TrackerConfig::default());
    let mut c = Collect::default();
    for d in &r.datagrams {
        tracker.observe(&d.as_datagram(), &mut c);
    }
    tracker.finish(&mut c);
    let mut counts = BTreeMap::new();
    for f in &c.0 {
        *counts
            .entry((f.direction.name().to_owned(), f.label().to_string()))
            .or_insert(0) += 1;
    }
    (counts, tracker)
}

/// Both forms: the reference implementation's (the default) and the first
/// notes' little-endian one.
fn check(faults: Faults, seed: u64) {
    for form in [Form::Reference, Form::Little] {
        check_form(faults, seed, form);
    }
}

fn check_form(faults: Faults, seed: u64, form: Form) {
    let cfg = Config {
        seed,
        faults,
        form,
        ..Config::default()
    };
    let r = run(&cfg);
    let t = r.truth;
    let (found, tracker) = analyse(&r);
    let mut expected = BTreeMap::new();
    for (dir, n, label) in [
        ("c2s", t.c2s.duplicates, "duplicate-packet"),
        ("s2c", t.s2c.duplicates, "duplicate-packet"),
        ("c2s", t.c2s.resends, "resend"),
        ("s2c", t.s2c.resends, "resend"),
        ("c2s", t.c2s.sig_gaps, "sig-gap"),
        ("s2c", t.s2c.sig_gaps, "sig-gap"),
        ("c2s", t.c2s.ping_unanswered, "ping-unanswered"),
        ("c2s", t.c2s.pong_not_captured, "pong-not-captured"),
        ("c2s", t.c2s.auth_unanswered, "auth-unanswered"),
    ] {
        if n > 0 {
            expected.insert((dir.to_owned(), label.to_owned()), n);
        }
    }
    assert_eq!(found, expected, "{faults:?} seed {seed} {form:?}");
    let summary = tracker.summary();
    assert_eq!(summary.sessions.len() as u64, t.sessions);
    assert_eq!(
        summary.messages.get("PROP").copied().unwrap_or(0),
        t.s2c.props
    );
    let state = match form {
        Form::Reference => "closed",
        Form::Little => "established",
    };
    for s in &summary.sessions {
        assert_eq!(s.state, state, "{faults:?} {form:?}");
    }
}

#[test]
fn a_clean_network_raises_nothing() {
    let r = run(&Config::default());
    assert!(r.truth.s2c.props > 20);
    check(Faults::default(), 1);
}

#[test]
fn loss_after_the_tap_shows_as_resends() {
    let faults = Faults {
        loss_after_tap: 0.1,
        ..Faults::default()
    };
    for seed in 1..=3 {
        check(faults, seed);
    }
    assert!(
        run(&Config {
            faults,
            ..Config::default()
        })
        .truth
        .s2c
        .resends
            > 10
    );
}

#[test]
fn duplicates_show_as_duplicates() {
    let faults = Faults {
        duplicate: 0.05,
        ..Faults::default()
    };
    for seed in 1..=3 {
        check(faults, seed);
    }
}

#[test]
fn loss_before_the_tap_shows_as_gaps() {
    let faults = Faults {
        loss_before_tap: 0.05,
        ..Faults::default()
    };
    for seed in 1..=3 {
        check(faults, seed);
    }
}

#[test]
fn every_fault_at_once() {
    for (before, after, dup) in [(0.05, 0.05, 0.03), (0.2, 0.2, 0.1)] {
        let faults = Faults {
            loss_before_tap: before,
            loss_after_tap: after,
            duplicate: dup,
        };
        for seed in 1..=12 {
            check(faults, seed);
        }
    }
}

#[test]
fn runs_are_deterministic() {
    let cfg = Config {
        seed: 9,
        faults: Faults {
            loss_before_tap: 0.05,
            loss_after_tap: 0.05,
            duplicate: 0.03,
        },
        ..Config::default()
    };
    let a = run(&cfg);
    let b = run(&cfg);
    assert_eq!(a.datagrams, b.datagrams);
    assert_eq!(a.truth, b.truth);
}

/// Issue 31: one capture with sessions of both byte orders (the reference
/// form's and the first notes' little-endian one, on other client ports)
/// reads each in its own order: no finding, every PROP rebuilt, each
/// session's order in its notes.
#[test]
fn a_capture_with_both_orders_reads_each_session_in_its_own() {
    let be = run(&Config {
        seed: 5,
        ..Config::default()
    });
    let le = run(&Config {
        seed: 5,
        form: Form::Little,
        ..Config::default()
    });
    let mut all: Vec<_> = be.datagrams.clone();
    for d in &le.datagrams {
        let mut d = d.clone();
        for a in [&mut d.src, &mut d.dst] {
            if a.port() != 7777 {
                a.set_port(a.port() + 1000);
            }
        }
        all.push(d);
    }
    all.sort_by_key(|d| d.ts);
    for (i, d) in all.iter_mut().enumerate() {
        d.frame = i as u64 + 1;
    }
    let r = Run {
        datagrams: all,
        truth: be.truth,
    };
    let (found, tracker) = analyse(&r);
    assert!(found.is_empty(), "{found:?}");
    let summary = tracker.summary();
    assert_eq!(summary.sessions.len(), 4);
    assert_eq!(
        summary.messages.get("PROP").copied().unwrap_or(0),
        be.truth.s2c.props + le.truth.s2c.props
    );
    let mut orders: Vec<(String, String)> = tracker
        .sessions()
        .map(|(_, s)| {
            let n = lwarscope::engine::ProtoSession::notes(&s.proto);
            (n[0].1.clone(), n[1].1.clone())
        })
        .collect();
    orders.sort();
    assert_eq!(
        orders,
        [
            (
                "byte order big-endian (from the packets' numbers)".to_owned(),
                "session id 0x1000".to_owned()
            ),
            (
                "byte order big-endian (from the packets' numbers)".to_owned(),
                "session id 0x1001".to_owned()
            ),
            (
                "byte order little-endian (from the packets' numbers)".to_owned(),
                "session id 0x1000".to_owned()
            ),
            (
                "byte order little-endian (from the packets' numbers)".to_owned(),
                "session id 0x1001".to_owned()
            ),
        ]
    );
}
