//! The same seed and flags give byte-identical captures and ground truths.

use lwarscope::proto::lwar::sim::{Faults, VirtualConfig, run_virtual};

fn faulty(seed: u64) -> VirtualConfig {
    let f = Faults {
        loss: 0.03,
        duplicate: 0.03,
        reorder: 0.03,
        corrupt: 0.03,
        noise: 0.02,
        tap_miss: 0.02,
        latency_us: 5_000,
        jitter_us: 3_000,
    };
    let mut cfg = VirtualConfig::clean(seed, 4, 6);
    cfg.c2s = f;
    cfg.s2c = f;
    cfg
}

fn run(cfg: &VirtualConfig, dir: &std::path::Path, name: &str) -> (Vec<u8>, Vec<u8>) {
    let pcap = dir.join(format!("{name}.pcap"));
    let truth = dir.join(format!("{name}.truth.json"));
    run_virtual(cfg, &pcap, Some(&truth)).unwrap();
    (std::fs::read(pcap).unwrap(), std::fs::read(truth).unwrap())
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let a = run(&faulty(42), dir.path(), "a");
    let b = run(&faulty(42), dir.path(), "b");
    assert!(a.0 == b.0, "pcaps differ");
    assert!(a.1 == b.1, "truths differ");
    let c = run(&faulty(43), dir.path(), "c");
    assert!(a.0 != c.0);
}

#[test]
fn packets_limit_stops_at_exactly_that_many_lwar_frames() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = VirtualConfig::clean(1, 3, 1);
    cfg.duration_ms = None;
    cfg.packets = Some(5000);
    let pcap = dir.path().join("n.pcap");
    let stats = run_virtual(&cfg, &pcap, None).unwrap();
    assert_eq!(stats.lwar_frames, 5000);
    assert_eq!(stats.frames, 5000);
    let mut cap = pcap::Capture::from_file(&pcap).unwrap();
    let mut n = 0;
    while cap.next_packet().is_ok() {
        n += 1;
    }
    assert_eq!(n, 5000);
}
