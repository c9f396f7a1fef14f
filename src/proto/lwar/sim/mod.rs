//! The simulator: lwar peers that follow the specification, a fault-injecting
//! network between them, and the ground truth of what an analyzer must report.
//!
//! - [`Server`] and [`Client`] are transport-agnostic state machines: they are
//!   driven by a clock in milliseconds and by incoming datagrams, and produce
//!   [`Outgoing`] datagrams, encoded only through the shared [`crate::proto::lwar::wire`].
//! - [`net`] is the virtual network and its capture tap (its module docs give the
//!   exact fault and tap model).
//! - [`run_virtual`] runs peers on a virtual clock, deterministic for a seed, and
//!   writes a pcap and its ground truth ([`truth`]); [`live::run_live`] runs the
//!   same peers on real UDP sockets on loopback, through the same faults.
//!
//! [`SimArgs`] is the `lwarscope sim` command line; [`run`] executes it.

mod args;
mod client;
pub mod live;
pub mod net;
mod pcap_out;
mod reliable;
pub mod server;
pub mod truth;
mod virt;

pub use args::{DirSpec, SimArgs, parse_duration, parse_rate};
pub use client::{Client, ClientPlan, ClientState};
pub use net::{CorruptKind, Faults, Network};
pub use reliable::Channel;
pub use server::Server;
pub use virt::{LoggedClient, RunStats, VirtualConfig, run_logged, run_virtual};

use std::net::SocketAddr;

/// A datagram a peer sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    pub to: SocketAddr,
    pub payload: Vec<u8>,
}

/// Why the simulator stopped.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("{path}: cannot write the capture: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
    #[error("pcap: {0}")]
    Pcap(#[from] pcap::Error),
    #[error("cannot build a frame: {0}")]
    Frame(String),
    #[error("cannot write the ground truth: {0}")]
    Json(#[from] serde_json::Error),
    #[error("invalid configuration: {0}")]
    Config(String),
    #[error("{0} is not a loopback address: live simulation stays on loopback")]
    NotLoopback(SocketAddr),
}

/// Runs `lwarscope sim` with these arguments; a one-line summary goes to `log`.
pub fn run(args: &SimArgs, log: &mut dyn std::io::Write) -> Result<(), SimError> {
    if let Some(file) = &args.replay {
        if let Some(option) = args.refused_by_replay() {
            return Err(SimError::Config(format!(
                "{option} cannot apply with --replay: the file's datagrams are sent as they are"
            )));
        }
        let config = crate::proto::replay::ReplayConfig {
            file: file.clone(),
            pace: args.pps.map_or(
                crate::proto::replay::Pace::AsFast,
                crate::proto::replay::Pace::Pps,
            ),
            keep: super::wire::is_lwar,
        };
        let stats = crate::proto::replay::run_replay(&config)
            .map_err(|e| SimError::Config(e.to_string()))?;
        writeln!(log, "{stats}")?;
        return Ok(());
    }
    if args.live {
        let stats = live::run_live(&args.live_config()?, log)?;
        writeln!(log, "{stats}")?;
        return Ok(());
    }
    let Some(path) = &args.write else {
        return Err(SimError::Config("give -w FILE.pcap, or --live".into()));
    };
    let config = args.virtual_config()?;
    let truth = (!args.no_truth).then(|| truth_path(path));
    let stats = run_virtual(&config, path, truth.as_deref())?;
    writeln!(log, "{}: {stats}", crate::text::path(path))?;
    Ok(())
}

/// `FILE.pcap` -> `FILE.truth.json`.
pub fn truth_path(pcap: &std::path::Path) -> std::path::PathBuf {
    pcap.with_extension("truth.json")
}
