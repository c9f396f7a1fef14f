//! The `lwarscope sim` command line.

use super::SimError;
use super::live::LiveConfig;
use super::net::{CorruptKind, Faults};
use super::virt::VirtualConfig;
use clap::Args;
use std::net::SocketAddr;
use std::path::PathBuf;

/// A value for each direction: `5%` (both), or `c2s=5%,s2c=1%` (either may be left out).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DirSpec<T> {
    pub c2s: T,
    pub s2c: T,
}

fn parse_dir<T: Copy + Default>(
    s: &str,
    one: fn(&str) -> Result<T, String>,
) -> Result<DirSpec<T>, String> {
    if !s.contains('=') {
        let v = one(s)?;
        return Ok(DirSpec { c2s: v, s2c: v });
    }
    let mut spec = DirSpec::default();
    for part in s.split(',') {
        let (dir, value) = part
            .split_once('=')
            .ok_or_else(|| format!("`{part}`: expected c2s=VALUE or s2c=VALUE"))?;
        match dir.trim() {
            "c2s" => spec.c2s = one(value.trim())?,
            "s2c" => spec.s2c = one(value.trim())?,
            other => return Err(format!("unknown direction `{other}` (c2s or s2c)")),
        }
    }
    Ok(spec)
}

/// A rate: `5%` or `0.05`, between 0 and 1.
pub fn parse_rate(s: &str) -> Result<f64, String> {
    let v = match s.strip_suffix('%') {
        Some(p) => p.parse::<f64>().map(|p| p / 100.0),
        None => s.parse::<f64>(),
    }
    .map_err(|_| format!("`{s}` is not a rate (like 5% or 0.05)"))?;
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("rate `{s}` is not between 0% and 100%"))
    }
}

/// A duration in microseconds: `20ms`, `500us`, `1s`, or a bare number of ms.
pub fn parse_duration(s: &str) -> Result<u64, String> {
    let (num, scale) = if let Some(n) = s.strip_suffix("us") {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix("ms") {
        (n, 1e3)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1e6)
    } else {
        (s, 1e3)
    };
    let v: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a duration (like 20ms, 500us or 1s)"))?;
    if !(0.0..=60e6).contains(&(v * scale)) {
        return Err(format!("duration `{s}` is out of range (0 to 60s)"));
    }
    Ok((v * scale).round() as u64)
}

/// `DURATION` or `FIRST..LAST`, in µs.
fn tap_range(s: &str) -> Result<(u64, u64), String> {
    match s.split_once("..") {
        Some((first, last)) => Ok((parse_duration(first)?, parse_duration(last)?)),
        None => parse_duration(s).map(|d| (d, d)),
    }
}

fn rates(s: &str) -> Result<DirSpec<f64>, String> {
    parse_dir(s, parse_rate)
}

fn delays(s: &str) -> Result<DirSpec<u64>, String> {
    parse_dir(s, parse_duration)
}

/// Simulate peers (lwar, or --proto NAME) over a faulty network; write a pcap and its ground truth
/// (virtual mode), or run them on loopback sockets in real time (--live).
///
/// Fault rates take one value for both directions (`--loss 5%`) or one per
/// direction (`--loss c2s=5%,s2c=1%`). Faults happen before the capture tap, so
/// the capture shows them; `--tap-miss` drops frames from the capture only.
/// With --live (lwar) the faults apply to the datagrams before they are put on
/// the loopback, which your capture sees (--tap-miss is refused there); a
/// --replay sends a file's datagrams as they are and refuses them all.
#[derive(Debug, Clone, Args)]
#[command(
    after_help = "Examples:\n  lwarscope sim -w clean.pcap --seed 1\n  lwarscope sim -w lossy.pcap --seed 7 --clients 4 --loss c2s=5%,s2c=1% --tap-miss 1%\n  lwarscope sim -w big.pcap --packets 1000000 --no-truth\n  lwarscope sim --live --clients 3 --duration 20\n  lwarscope sim --live --replay big.pcap --pps 200000\n  lwarscope sim --proto starstrike -w strs.pcap --loss 5% --reorder 2%\n  lwarscope sim --proto battlegrounds --live -c 3 -d 20"
)]
pub struct SimArgs {
    /// Write the simulated capture to FILE (and the ground truth to FILE.truth.json, FILE's extension replaced).
    #[arg(
        short = 'w',
        long = "write",
        value_name = "FILE",
        conflicts_with = "live"
    )]
    pub write: Option<PathBuf>,

    /// Run on real UDP sockets on loopback, in real time, instead of writing a capture.
    #[arg(long)]
    pub live: bool,

    /// With --live: run only a server, listening on ADDR (a loopback address).
    #[arg(
        long,
        value_name = "ADDR",
        requires = "live",
        conflicts_with = "connect"
    )]
    pub server: Option<SocketAddr>,

    /// With --live: run only clients, against the server at ADDR (a loopback address).
    #[arg(long, value_name = "ADDR", requires = "live")]
    pub connect: Option<SocketAddr>,

    /// Seed of every random choice: the same seed and flags give the same bytes.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Number of clients; the ninth and later are refused with Full.
    #[arg(short = 'c', long, value_name = "K", default_value_t = 2)]
    pub clients: usize,

    /// Seconds to simulate (virtual) or run (--live) [default: 10, or no limit with --packets].
    #[arg(short = 'd', long, value_name = "SECS")]
    pub duration: Option<f64>,

    /// Stop after N lwar frames are captured (virtual mode).
    #[arg(short = 'n', long, value_name = "N", conflicts_with = "live")]
    pub packets: Option<u64>,

    /// The last K clients crash (go silent) 3 s after they start: the server times them out.
    #[arg(long, value_name = "K", default_value_t = 0)]
    pub crash: usize,

    /// Clients never leave (by default they disconnect gracefully 2.5 s before the end).
    #[arg(long)]
    pub stay: bool,

    /// Use IPv6 loopback (::1) instead of 127.0.0.x.
    #[arg(short = '6', long)]
    pub ipv6: bool,

    /// Datagrams lost before the tap: RATE or c2s=RATE,s2c=RATE.
    #[arg(long, value_name = "RATES", value_parser = rates)]
    pub loss: Option<DirSpec<f64>>,

    /// Datagrams duplicated (an identical copy follows).
    #[arg(long = "dup", value_name = "RATES", value_parser = rates)]
    pub duplicate: Option<DirSpec<f64>>,

    /// Datagrams held back 80-160 ms so that later ones overtake them.
    #[arg(long, value_name = "RATES", value_parser = rates)]
    pub reorder: Option<DirSpec<f64>>,

    /// Datagrams corrupted into one of --corrupt-kinds.
    #[arg(long, value_name = "RATES", value_parser = rates)]
    pub corrupt: Option<DirSpec<f64>>,

    /// Which corruptions to use [default: all].
    #[arg(long, value_name = "KINDS", value_delimiter = ',')]
    pub corrupt_kinds: Vec<CorruptKind>,

    /// Non-lwar UDP datagrams put on the wire (per lwar datagram).
    #[arg(long, value_name = "RATES", value_parser = rates)]
    pub noise: Option<DirSpec<f64>>,

    /// Frames the capture misses (still delivered, like a kernel drop).
    #[arg(long, value_name = "RATES", value_parser = rates)]
    pub tap_miss: Option<DirSpec<f64>>,

    /// One-way delay: DURATION (20ms, 500us) or c2s=DURATION,s2c=DURATION.
    #[arg(long, value_name = "DELAYS", value_parser = delays)]
    pub latency: Option<DirSpec<u64>>,

    /// Extra random delay, uniform between 0 and DURATION.
    #[arg(long, value_name = "DELAYS", value_parser = delays)]
    pub jitter: Option<DirSpec<u64>>,

    /// Put the tap beside the server and the clients DURATION away from it, both
    /// ways, on a fault-free stretch: a client's datagrams cross it before the tap,
    /// the server's after (the faults, --latency and --jitter stay between the server
    /// and the tap: with --latency 0 the tap is where the server is). A range
    /// FIRST..LAST spreads the clients evenly, the first FIRST away, the last LAST.
    /// Example: --latency 0 --tap-to-client 30ms..80ms
    #[arg(long, value_name = "DURATION[..DURATION]", value_parser = tap_range, conflicts_with = "live")]
    pub tap_to_client: Option<(u64, u64)>,

    /// Battlegrounds only: the byte order (and form) its peers speak: be, the
    /// reference implementation's (big-endian, PING/PONG with a seq, CLOSE;
    /// the default), or le, the first notes' little-endian form (the corpus's
    /// bg-*.pcap).
    #[arg(long, value_name = "ORDER", value_enum)]
    pub byte_order: Option<crate::proto::sim::SimByteOrder>,

    /// Do not compute or write the ground truth (for benchmarks).
    #[arg(long)]
    pub no_truth: bool,

    /// With --live: replay the lwar datagrams of FILE on loopback instead of
    /// running peers, as fast as the sockets take them (or at --pps).
    #[arg(long, value_name = "FILE", requires = "live", conflicts_with_all = ["server", "connect"])]
    pub replay: Option<PathBuf>,

    /// With --replay: send N datagrams per second (default: as fast as possible).
    #[arg(long, value_name = "N", requires = "replay", value_parser = clap::value_parser!(u64).range(1..))]
    pub pps: Option<u64>,
}

impl SimArgs {
    /// These options as the request another protocol's simulator takes
    /// (`sim --proto NAME`); options only lwar's simulator has are refused by
    /// name, never ignored.
    pub fn request(&self, protocol: &str) -> Result<crate::proto::sim::SimRequest, String> {
        use crate::proto::sim::{Rates, SimRequest, unsupported};
        let lwar_only = [
            (self.server.is_some(), "--server"),
            (self.connect.is_some(), "--connect"),
            (self.packets.is_some(), "--packets"),
            (self.crash > 0, "--crash"),
            (self.stay, "--stay"),
            (self.ipv6, "--ipv6"),
            (!self.corrupt_kinds.is_empty(), "--corrupt-kinds"),
            (self.noise.is_some(), "--noise"),
            (self.latency.is_some(), "--latency"),
            (self.jitter.is_some(), "--jitter"),
            (self.tap_to_client.is_some(), "--tap-to-client"),
            (self.replay.is_some(), "--replay"),
        ];
        if let Some((_, option)) = lwar_only.iter().find(|(set, _)| *set) {
            return Err(unsupported(protocol, option));
        }
        // Live, the game is simulated into a file first, then replayed.
        let write = match (&self.write, self.live) {
            (Some(w), _) => w.clone(),
            (None, true) => PathBuf::new(),
            (None, false) => {
                return Err(format!(
                    "give -w FILE.pcap for the {protocol} capture, or --live"
                ));
            }
        };
        let rates = |s: &Option<DirSpec<f64>>| {
            let d = s.unwrap_or_default();
            Rates {
                c2s: d.c2s,
                s2c: d.s2c,
            }
        };
        let duration_ms = self
            .duration_ms(Some(10_000))
            .map_err(|e| e.to_string())?
            .unwrap_or(10_000);
        Ok(SimRequest {
            write,
            truth: !self.no_truth,
            seed: self.seed,
            clients: self.clients,
            duration_ms,
            loss: rates(&self.loss),
            duplicate: rates(&self.duplicate),
            reorder: rates(&self.reorder),
            corrupt: rates(&self.corrupt),
            tap_miss: rates(&self.tap_miss),
            byte_order: self.byte_order,
        })
    }

    fn faults(&self) -> (Faults, Faults) {
        let pick = |s: &Option<DirSpec<f64>>| s.unwrap_or_default();
        let pickd = |s: &Option<DirSpec<u64>>| s.unwrap_or_default();
        let (loss, dup, reorder, corrupt, noise, miss) = (
            pick(&self.loss),
            pick(&self.duplicate),
            pick(&self.reorder),
            pick(&self.corrupt),
            pick(&self.noise),
            pick(&self.tap_miss),
        );
        let (lat, jit) = (pickd(&self.latency), pickd(&self.jitter));
        let c2s = Faults {
            loss: loss.c2s,
            duplicate: dup.c2s,
            reorder: reorder.c2s,
            corrupt: corrupt.c2s,
            noise: noise.c2s,
            tap_miss: miss.c2s,
            latency_us: lat.c2s,
            jitter_us: jit.c2s,
        };
        let s2c = Faults {
            loss: loss.s2c,
            duplicate: dup.s2c,
            reorder: reorder.s2c,
            corrupt: corrupt.s2c,
            noise: noise.s2c,
            tap_miss: miss.s2c,
            latency_us: lat.s2c,
            jitter_us: jit.s2c,
        };
        (c2s, s2c)
    }

    fn duration_ms(&self, default: Option<u64>) -> Result<Option<u64>, SimError> {
        match self.duration {
            Some(d) if d.is_finite() && d > 0.0 && d <= 1e7 => Ok(Some((d * 1000.0) as u64)),
            Some(d) => Err(SimError::Config(format!(
                "--duration {d}: give a positive number of seconds"
            ))),
            None => Ok(default),
        }
    }

    /// The virtual run these arguments describe.
    pub fn virtual_config(&self) -> Result<VirtualConfig, SimError> {
        let (c2s, s2c) = self.faults();
        let kinds = self.corrupt_kinds();
        let default = if self.packets.is_some() {
            None
        } else {
            Some(10_000)
        };
        let config = VirtualConfig {
            seed: self.seed,
            clients: self.clients,
            duration_ms: self.duration_ms(default)?,
            packets: self.packets,
            crash: self.crash,
            stay: self.stay,
            ipv6: self.ipv6,
            c2s,
            s2c,
            corrupt_kinds: kinds,
            tap_to_client_us: self.tap_to_client.unwrap_or((0, 0)),
        };
        config.validate()?;
        Ok(config)
    }

    /// The live run these arguments describe. The faults apply live; what
    /// cannot (the tap's misses: the tap is the user's capture) is refused.
    pub fn live_config(&self) -> Result<LiveConfig, SimError> {
        if self.tap_miss.is_some() {
            return Err(SimError::Config(
                "--tap-miss cannot apply with --live: the tap is your capture (lwarscope -i lo), \
                 which misses only what the kernel drops"
                    .into(),
            ));
        }
        if self.crash > self.clients {
            return Err(SimError::Config(format!(
                "--crash {} is more than --clients {}",
                self.crash, self.clients
            )));
        }
        let (c2s, s2c) = self.faults();
        Ok(LiveConfig {
            server: self.server,
            connect: self.connect,
            clients: self.clients,
            duration_ms: self.duration_ms(Some(10_000))?.unwrap_or(10_000),
            seed: self.seed,
            ipv6: self.ipv6,
            crash: self.crash,
            stay: self.stay,
            c2s,
            s2c,
            corrupt_kinds: self.corrupt_kinds(),
        })
    }

    /// The options a replay cannot apply (it sends the file's datagrams as
    /// they are): the first one given, by name.
    pub fn refused_by_replay(&self) -> Option<&'static str> {
        let options = [
            (self.loss.is_some(), "--loss"),
            (self.duplicate.is_some(), "--dup"),
            (self.reorder.is_some(), "--reorder"),
            (self.corrupt.is_some(), "--corrupt"),
            (!self.corrupt_kinds.is_empty(), "--corrupt-kinds"),
            (self.noise.is_some(), "--noise"),
            (self.tap_miss.is_some(), "--tap-miss"),
            (self.latency.is_some(), "--latency"),
            (self.jitter.is_some(), "--jitter"),
            (self.crash > 0, "--crash"),
            (self.stay, "--stay"),
            (self.ipv6, "--ipv6"),
            (self.duration.is_some(), "--duration"),
        ];
        options.iter().find(|(set, _)| *set).map(|(_, name)| *name)
    }

    fn corrupt_kinds(&self) -> Vec<CorruptKind> {
        let mut kinds = if self.corrupt_kinds.is_empty() {
            CorruptKind::ALL.to_vec()
        } else {
            self.corrupt_kinds.clone()
        };
        kinds.sort();
        kinds.dedup();
        kinds
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_and_delays_parse_per_direction() {
        assert_eq!(parse_rate("5%"), Ok(0.05));
        assert_eq!(parse_rate("0.5"), Ok(0.5));
        assert!(parse_rate("150%").is_err());
        assert!(parse_rate("x").is_err());
        let r = rates("c2s=5%,s2c=1%").unwrap();
        assert_eq!((r.c2s, r.s2c), (0.05, 0.01));
        let r = rates("s2c=2%").unwrap();
        assert_eq!((r.c2s, r.s2c), (0.0, 0.02));
        assert!(rates("up=5%").is_err());
        assert_eq!(parse_duration("20ms"), Ok(20_000));
        assert_eq!(parse_duration("500us"), Ok(500));
        assert_eq!(parse_duration("1s"), Ok(1_000_000));
        assert_eq!(parse_duration("3"), Ok(3_000));
        assert!(parse_duration("-1ms").is_err());
        assert_eq!(tap_range("50ms"), Ok((50_000, 50_000)));
        assert_eq!(tap_range("30ms..80ms"), Ok((30_000, 80_000)));
        assert!(tap_range("30ms..").is_err());
    }
}
