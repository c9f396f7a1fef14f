//! The estimate of packets lost before the capture point, per direction, against
//! the simulator's ground truth (the loss faults it injected before its tap) on
//! many seeds and loss rates. The error is printed (`--nocapture`) and bounded.

use lwarscope::capture::Source;
use lwarscope::engine::LossEstimate;
use lwarscope::proto::lwar::Tracker;
use lwarscope::proto::lwar::sim::{Faults, VirtualConfig, run_virtual};

/// Lost and expected packets per direction (c2s, s2c): the estimate, and the
/// truth (faults of kind `loss` before the tap; expected = captured + lost).
fn run(seed: u64, c2s: f64, s2c: f64) -> [(LossEstimate, LossEstimate); 2] {
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("loss.pcap");
    let truth_path = dir.path().join("loss.truth.json");
    let cfg = VirtualConfig {
        c2s: Faults {
            loss: c2s,
            ..Faults::default()
        },
        s2c: Faults {
            loss: s2c,
            ..Faults::default()
        },
        ..VirtualConfig::clean(seed, 4, 20)
    };
    run_virtual(&cfg, &pcap, Some(&truth_path)).unwrap();
    let mut source = Source::files(&[&pcap]).unwrap();
    let mut tracker = Tracker::default();
    while let Some(frame) = source.next_frame().unwrap() {
        if let Some(d) = frame.datagram() {
            tracker.observe(d, &mut ());
        }
    }
    let summary = tracker.finish(&mut ());
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&truth_path).unwrap()).unwrap();
    let mut out = [(LossEstimate::default(), LossEstimate::default()); 2];
    for s in &summary.sessions {
        for (i, d) in [&s.c2s, &s.s2c].into_iter().enumerate() {
            let e = d.loss.expect("every direction has an estimate after 20 s");
            out[i].0.lost += e.lost;
            out[i].0.expected += e.expected;
            out[i].1.expected += d.packets;
        }
    }
    for f in doc["faults"].as_array().unwrap() {
        if f["kind"] == "loss" {
            let i = usize::from(f["direction"] == "s2c");
            out[i].1.lost += 1;
            out[i].1.expected += 1;
        }
    }
    out
}

#[test]
fn the_loss_estimate_follows_the_ground_truth() {
    let mut worst: f64 = 0.0;
    let mut total_error = 0.0;
    let mut runs = 0;
    for (c2s, s2c) in [
        (0.0, 0.0),
        (0.02, 0.0),
        (0.0, 0.05),
        (0.05, 0.10),
        (0.10, 0.02),
        (0.20, 0.20),
    ] {
        for seed in 1..=4 {
            for (i, (estimate, truth)) in run(seed, c2s, s2c).into_iter().enumerate() {
                let error = (estimate.fraction() - truth.fraction()).abs();
                println!(
                    "seed {seed} loss c2s={c2s} s2c={s2c} {}: estimated {:.2}% ({}/{}), truth {:.2}% ({}/{}), error {:.2} points",
                    ["c2s", "s2c"][i],
                    estimate.fraction() * 100.0,
                    estimate.lost,
                    estimate.expected,
                    truth.fraction() * 100.0,
                    truth.lost,
                    truth.expected,
                    error * 100.0
                );
                worst = worst.max(error);
                total_error += error;
                runs += 1;
            }
        }
    }
    println!(
        "mean absolute error {:.2} points, worst {:.2} points over {runs} directions",
        total_error / runs as f64 * 100.0,
        worst * 100.0
    );
    assert!(worst < 0.02, "worst error {:.2} points", worst * 100.0);
}

/// Issue 30: a packet overtaken on the way (reordered before the tap) was
/// captured: the gap it left behind counted it as lost, and a capture whose
/// only fault is reordering showed 3 to 8 % loss (`sim-reorder.pcap`: as
/// many lost as reordered). It fills that hole now: no loss, but for two
/// holes the cadence counts where a leaving server stamped a Leave off its
/// tick and sent nothing on the tick between (seed 1, 127.0.0.5:50004:
/// 17 688, 17 700, 17 820 ms; seed 4, 127.0.0.3:50002: 17 556, 17 595,
/// 17 706 ms), which is no reordering: a limit of the cadence's estimate.
#[test]
fn packets_reordered_before_the_tap_are_not_lost() {
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("reorder.pcap");
    let mut reordered = 0;
    let mut lost = 0;
    for seed in 1..=4 {
        let cfg = VirtualConfig {
            c2s: Faults {
                reorder: 0.05,
                ..Faults::default()
            },
            s2c: Faults {
                reorder: 0.05,
                ..Faults::default()
            },
            ..VirtualConfig::clean(seed, 4, 20)
        };
        run_virtual(&cfg, &pcap, None).unwrap();
        let mut source = Source::files(&[&pcap]).unwrap();
        let mut tracker = Tracker::default();
        while let Some(frame) = source.next_frame().unwrap() {
            if let Some(d) = frame.datagram() {
                tracker.observe(d, &mut ());
            }
        }
        let summary = tracker.finish(&mut ());
        for s in &summary.sessions {
            for (d, name) in [(&s.c2s, "c2s"), (&s.s2c, "s2c")] {
                let e = d.loss.expect("an estimate after 20 s");
                reordered += d.findings.get("reordered").copied().unwrap_or(0);
                lost += e.lost;
                println!("seed {seed} {} {name}: {e:?}", s.client);
            }
        }
    }
    assert_eq!((reordered, lost), (594, 2));
}
