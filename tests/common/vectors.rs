//! The shared real-server vectors (`tests/fixtures/real-server-clean.tsv`, copied
//! from `shared/vectors/`): the UDP payload of each of the 525 frames of
//! `captures/real-server-clean.pcap`, with its ports. One reader for every test
//! and benchmark: integration tests reach it through `common`, benches and the
//! crate's own tests with `#[path]`.
#![allow(dead_code)]

/// One frame of the real server's capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vector {
    pub frame: u64,
    pub src_port: u16,
    pub dst_port: u16,
    pub payload: Vec<u8>,
}

/// Every frame, in capture order.
pub fn real_server() -> Vec<Vector> {
    include_str!("../fixtures/real-server-clean.tsv")
        .lines()
        .skip(1)
        .map(|line| {
            let cols: Vec<&str> = line.split('\t').collect();
            assert_eq!(cols.len(), 4, "a vector has 4 columns: {line}");
            Vector {
                frame: cols[0].parse().expect("frame number"),
                src_port: cols[1].parse().expect("source port"),
                dst_port: cols[2].parse().expect("destination port"),
                payload: hex::decode(cols[3]).expect("payload in hex"),
            }
        })
        .collect()
}

/// Just the payloads, in capture order.
pub fn real_server_payloads() -> Vec<Vec<u8>> {
    real_server().into_iter().map(|v| v.payload).collect()
}
