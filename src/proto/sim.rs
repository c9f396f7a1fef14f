//! What `lwarscope sim --proto NAME` asks of a protocol's simulator: the options
//! every simulator understands, in plain values. lwar's simulator has its own,
//! richer command line (`proto::lwar::sim::SimArgs`); the other protocols take
//! this request and refuse, by name, an option they cannot simulate.

use std::path::PathBuf;

/// A fault rate per direction, each in `0.0..=1.0`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Rates {
    pub c2s: f64,
    pub s2c: f64,
}

impl Rates {
    pub fn is_zero(&self) -> bool {
        self.c2s == 0.0 && self.s2c == 0.0
    }
}

/// A simulation to run and write as a capture.
#[derive(Debug, Clone, PartialEq)]
pub struct SimRequest {
    /// The capture to write; its ground truth goes beside it as
    /// `FILE.truth.json` (extension replaced) unless `truth` is false.
    pub write: PathBuf,
    pub truth: bool,
    /// Every random choice follows from it: the same request gives the same bytes.
    pub seed: u64,
    pub clients: usize,
    /// Play time, in ms.
    pub duration_ms: u64,
    /// Datagrams lost before the capture tap (the capture shows the gap).
    pub loss: Rates,
    /// Datagrams duplicated by the network.
    pub duplicate: Rates,
    /// Datagrams delayed past later ones.
    pub reorder: Rates,
    /// Datagrams whose bytes are damaged.
    pub corrupt: Rates,
    /// Frames the capture misses (delivered, not captured).
    pub tap_miss: Rates,
    /// The byte order the peers speak, for a protocol that has two
    /// (Battlegrounds); `None`: the simulator's default. A simulator of a
    /// protocol with one refuses it.
    pub byte_order: Option<SimByteOrder>,
}

/// A byte order a simulator's peers speak (`sim --byte-order be|le`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SimByteOrder {
    /// Big-endian.
    Be,
    /// Little-endian.
    Le,
}

/// What a simulation did, for the one line `sim` prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimOutcome {
    /// Frames written.
    pub frames: u64,
    pub sessions: usize,
    /// Where the ground truth went, if written.
    pub truth: Option<PathBuf>,
}

/// A protocol's simulator, as the registry names it.
pub type SimFn = fn(&SimRequest) -> Result<SimOutcome, String>;

/// The error for an option a simulator does not model.
pub fn unsupported(protocol: &str, option: &str) -> String {
    format!("{option} is not simulated for {protocol}")
}
