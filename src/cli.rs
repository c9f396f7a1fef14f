//! Command-line arguments.

use clap::{ArgGroup, Parser, Subcommand, ValueEnum};
use lwarscope::capture::DEFAULT_SNAPLEN;
use lwarscope::report::{CheckArgs, ReportArgs};
use std::path::PathBuf;

/// Analyse UDP game traffic (lwar, Starstrike, Battlegrounds) from capture files
/// or a live interface.
///
/// Each protocol is recognised by its own bytes on any port (lwar's appId,
/// Starstrike's magic "STRS", a Battlegrounds flow's first AUTH), or by a port
/// named with -d; IP fragments are reassembled first. Everything else is
/// counted, not decoded. Described protocols (a .ksy file: Vessel on port 7600,
/// Timewarp on 7711, Starstrike described as strs_ksy, and yours with -X
/// proto:FILE) come after the built-in ones.
#[derive(Debug, Parser)]
#[command(name = "lwarscope", version, max_term_width = 100)]
// -V is the packet tree (as in tshark); the version is --version only.
#[command(disable_version_flag = true)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
#[command(group(
    ArgGroup::new("input")
        .required(true)
        .args(["read", "interface", "list_interfaces", "list_fields", "list_findings", "generate"]),
))]
#[command(after_help = "\
Examples:
  lwarscope -r match.pcap                 analyse a recorded capture: the report
  lwarscope -r a.pcapng b.pcapng          several files, in order, as one stream
  tcpdump -i eth0 -w - udp | lwarscope -r -
  lwarscope -i eth0 -w match.pcap         capture live, and keep every frame
  lwarscope -r match.pcap --packets       one line per packet
  lwarscope -r match.pcap -Y 'resend || lost' -w bug.pcapng
                                          export the frames of those packets
  lwarscope -r mid.pcap -d udp.port==7777,battlegrounds
                                          decode a port as a protocol
  lwarscope --list-fields                 every protocol's fields, for -Y and -e
  lwarscope --list-findings               every finding: its name (for check), group, severity
  lwarscope -X proto:mygame.ksy -r mygame.pcap   a protocol of your own, described
  lwarscope -r match.pcap -V -x -Y 'frame == 2'   every field and the bytes of frame 2
  lwarscope -r match.pcap -Y 'resend || lost'     the packets with those findings
  lwarscope -r match.pcap --window 60..120        the report of the second minute
  lwarscope -r match.pcap -Y 'ip.addr == 10.0.0.5' --tables
                                          the report of one client's packets
  lwarscope -r match.pcap --format jsonl | jq -c 'select(.type == \"finding\")'
  lwarscope -r match.pcap -T fields -e frame.number -e lwar.seqno -E header=y
                                          fields of each packet, tab-separated
  lwarscope -r match.pcap --packets -t ud  packet lines with UTC date and time
  lwarscope check captures/*.pcap --deny malformed,violation,lost --max resend-rate=5%
  lwarscope check captures/ -j 8 --deny lost --junit report.xml
                                          every capture under a folder, 8 at a time
  lwarscope -r 'nightly/**/*.pcap' -j 4 --format jsonl
                                          each capture on its own, in path order
  lwarscope -r captures/ --format parquet --out tables/
                                          Parquet tables (sessions, findings, intervals) for
                                          DuckDB, ClickHouse, Spark or Trino

Many captures: a directory (every *.pcap, *.pcapng, *.cap under it, compressed
.gz or .zst ones too), a quoted
glob, or -j N analyses each file on its own engine, N at a time (default: the
cores), and prints each file's output in path order, the same whatever N.
Files named one by one without -j are read as one stream.

Display filter (-Y): fields type, seqno, ack, ts, frame, len, src, dst, peer, port,
player, finding, severity, session, dir, malformed; operators == != < > <= >= && ||
! and parentheses; message types (Join), finding kinds (resend, violation/<rule>),
directions (c2s) and protocols (lwar, strs, bg, vessel; udp, ip, ipv6; !lwar) stand
alone.

Man page and shell completions: lwarscope --generate man|bash|zsh|fish (docs/cli.md).

Live capture needs root, or the capabilities:
  setcap cap_net_raw,cap_net_admin=eip /path/to/lwarscope

Exit status: 0 on success, 2 on an error (the results so far are still printed;
over many files, the other files are still analysed).
`lwarscope check`: 0 every file passes, 1 a rule failed, 2 an error.")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    #[command(flatten)]
    pub report: ReportArgs,

    /// Print the version
    #[arg(long, action = clap::ArgAction::Version)]
    pub version: Option<bool>,

    /// Extension option, tshark-style: `-X proto:FILE` loads a protocol
    /// description (a `.ksy`, see docs/describe-a-protocol.md) beside the
    /// built-in protocols and the shipped descriptions of protocols/ (Vessel,
    /// Timewarp, Starstrike described); repeatable
    #[arg(short = 'X', value_name = "proto:FILE", global = true, value_parser = extension)]
    pub extension: Vec<PathBuf>,

    /// Read capture files (pcap or pcapng, gzip or zstd compressed ones too:
    /// .pcap.gz, .pcapng.zst; `-` for standard input), in order, as one stream
    /// with continuous frame numbers. A directory or a quoted glob
    /// ('captures/**/*.pcap') reads each file on its own instead (see -j)
    #[arg(short = 'r', long = "read", value_name = "FILE", num_args = 1..)]
    pub read: Vec<PathBuf>,

    /// With several -r files: read them merged by capture time, as mergecap
    /// does, rather than one after the other (which warns when time goes
    /// backwards where one file follows another).
    /// Example: lwarscope -r client.pcap server.pcap --merge
    #[arg(long = "merge", requires = "read", conflicts_with = "interface")]
    pub merge: bool,

    /// Capture live on this interface (`any` for all of them; see -D)
    #[arg(short = 'i', long = "interface", value_name = "IFACE")]
    pub interface: Option<String>,

    /// List the interfaces available for live capture, then exit
    #[arg(short = 'D', long = "list-interfaces")]
    pub list_interfaces: bool,

    /// List every protocol's registered fields (for -Y), then exit
    #[arg(long = "list-fields", conflicts_with_all = ["read", "interface", "list_interfaces"])]
    pub list_fields: bool,

    /// List every registered finding, then exit: the name `check --deny`,
    /// `--allow` and `--max` take, its group, its severity and what it means
    #[arg(
        long = "list-findings",
        conflicts_with_all = ["read", "interface", "list_interfaces", "list_fields"]
    )]
    pub list_findings: bool,

    /// Capture filter in libpcap syntax, applied to live traffic and to files
    /// (as tcpdump does). The live default keeps UDP, its IP fragments and IPv6
    /// whose first header is an extension header (`udp or (ip6 and (ip6[6] ==
    /// 0 or ...)) or (vlan and ...)`; without `vlan` on `any` and other links);
    /// protocols are then recognised
    /// on any port. On files there is no default: every frame is read
    #[arg(short = 'f', long = "filter", value_name = "BPF")]
    pub filter: Option<String>,

    /// Bytes kept of each frame (live only). Frames cut shorter than their lwar
    /// payload are reported as truncated by capture
    #[arg(
        short = 's',
        long = "snapshot-length",
        value_name = "BYTES",
        default_value_t = DEFAULT_SNAPLEN,
        value_parser = clap::value_parser!(i32).range(64..=262_144),
        conflicts_with = "read"
    )]
    pub snaplen: i32,

    /// Kernel capture buffer size in KiB (live only; libpcap's default otherwise)
    #[arg(
        short = 'B',
        long = "buffer-size",
        value_name = "KiB",
        value_parser = clap::value_parser!(i32).range(1..=2_097_151),
        conflicts_with = "read"
    )]
    pub buffer_size: Option<i32>,

    /// Deliver each packet as it arrives instead of in blocks of up to 100 ms
    /// (live only). Uses more kernel buffer per packet: raise -B with it
    #[arg(long = "immediate-mode", conflicts_with = "read")]
    pub immediate: bool,

    /// Do not put the interface into promiscuous mode (live only)
    #[arg(short = 'p', long = "no-promiscuous-mode", conflicts_with = "read")]
    pub no_promiscuous: bool,

    /// Stop after this many seconds (fractions allowed; tshark's
    /// `-a duration:SECS` form works too): of wall-clock time for a live
    /// capture, of capture time from the first frame for files
    #[arg(
        short = 'a',
        long = "duration",
        value_name = "SECS",
        value_parser = parse_duration
    )]
    pub duration: Option<std::time::Duration>,

    /// Open the interactive terminal UI (the default for -i on a terminal)
    #[arg(long = "tui", conflicts_with_all = ["no_tui", "list_interfaces", "list_fields"])]
    pub tui: bool,

    /// Never open the terminal UI
    #[arg(long = "no-tui")]
    pub no_tui: bool,

    /// Write frames to FILE. Live: every captured frame, as libpcap saves it
    /// (pcap). With -r: the frames of the packets that pass the display filter
    /// (-Y; every frame without one), whole, with their timestamps and every
    /// fragment of a reassembled datagram, in the format of -F.
    /// Example: lwarscope -r game.pcap -Y 'resend || lost' -w bug.pcapng
    #[arg(short = 'w', long = "write", value_name = "FILE")]
    pub write: Option<PathBuf>,

    /// Live -w: start a new file, as dumpcap does (repeatable):
    /// duration:SECS, filesize:KB, files:N (keep the newest N). Files are named
    /// FILE_00001.pcap, FILE_00002.pcap, ... and switch between two frames.
    /// Example: lwarscope -i any -w match.pcap -b filesize:100000 -b files:10
    #[arg(
        short = 'b',
        long = "ring-buffer",
        value_name = "KEY:VALUE",
        value_parser = parse_ring,
        requires = "write",
        conflicts_with = "read"
    )]
    pub ring_buffer: Vec<String>,

    /// The format of -w with -r: pcapng (the default, as tshark: every link
    /// type, a comment naming the filter) or pcap
    #[arg(
        short = 'F',
        long = "write-format",
        value_enum,
        value_name = "FORMAT",
        requires = "write",
        conflicts_with = "interface"
    )]
    pub write_format: Option<lwarscope::capture::export::ExportFormat>,

    /// Print the man page (roff) or a shell's completion script, generated
    /// from this command line's definition, then exit. Install with, e.g.,
    /// `lwarscope --generate man > /usr/local/share/man/man1/lwarscope.1`
    /// (docs/cli.md has every shell's)
    #[arg(long = "generate", value_enum, value_name = "KIND", hide = true)]
    pub generate: Option<Generate>,
}

/// What `--generate` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Generate {
    /// The man page, lwarscope.1 (roff), by clap_mangen.
    Man,
    /// Completions for bash, by clap_complete (and the shells below).
    Bash,
    Zsh,
    Fish,
    Elvish,
    Powershell,
}

/// `--generate KIND`: the man page or the completion script, as bytes.
pub fn generate(kind: Generate) -> std::io::Result<Vec<u8>> {
    use clap::CommandFactory;
    use clap_complete::Shell;
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    let shell = match kind {
        Generate::Man => {
            clap_mangen::Man::new(cmd).render(&mut out)?;
            return Ok(out);
        }
        Generate::Bash => Shell::Bash,
        Generate::Zsh => Shell::Zsh,
        Generate::Fish => Shell::Fish,
        Generate::Elvish => Shell::Elvish,
        Generate::Powershell => Shell::PowerShell,
    };
    clap_complete::generate(shell, &mut cmd, "lwarscope", &mut out);
    Ok(out)
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Simulate peers of a protocol (--proto, lwar by default) over a faulty network: write a pcap with its ground
    /// truth, or run them live on loopback
    Sim(Box<SimCommand>),
    /// The CI gate: analyse each capture file and judge it by rules
    /// (exit 0 every file passes, 1 a rule failed, 2 an error)
    Check(Box<CheckArgs>),
}

/// `lwarscope sim`: a protocol's simulator. lwar's options are the command line
/// of every simulator; another protocol takes those it models and refuses the
/// rest by name.
#[derive(Debug, clap::Args)]
pub struct SimCommand {
    /// The protocol to simulate: lwar, starstrike, battlegrounds (a registered
    /// protocol's name or title)
    #[arg(long = "proto", value_name = "NAME", default_value = "lwar")]
    pub proto: String,

    #[command(flatten)]
    pub args: lwarscope::proto::lwar::sim::SimArgs,
}

/// One `-b` condition, checked (the conditions are combined into a
/// `Rotation` when the capture opens).
fn parse_ring(arg: &str) -> Result<String, String> {
    lwarscope::capture::rotate::Rotation::default().add(arg)?;
    Ok(arg.to_owned())
}

/// Seconds, as a positive decimal number, optionally prefixed `duration:`.
fn parse_duration(arg: &str) -> Result<std::time::Duration, String> {
    let s = arg.strip_prefix("duration:").unwrap_or(arg);
    let secs: f64 = s
        .parse()
        .map_err(|_| format!("'{s}' is not a number of seconds"))?;
    if !(secs > 0.0 && secs.is_finite()) {
        return Err(format!("'{s}' is not a positive number of seconds"));
    }
    std::time::Duration::try_from_secs_f64(secs).map_err(|e| e.to_string())
}

/// `proto:FILE`: the description file.
fn extension(s: &str) -> Result<PathBuf, String> {
    s.strip_prefix("proto:")
        .filter(|f| !f.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| format!("`{s}`: the only extension option is proto:FILE"))
}

/// The description files of `-X proto:FILE` in the raw arguments: they must be
/// loaded before the arguments are parsed (`-d` names protocols).
pub fn descriptions(args: &[std::ffi::OsString]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut it = args.iter().skip(1);
    while let Some(a) = it.next() {
        let Some(a) = a.to_str() else { continue };
        if a == "--" {
            break;
        }
        let value = if a == "-X" {
            it.next().and_then(|v| v.to_str())
        } else {
            a.strip_prefix("-X")
        };
        if let Some(f) = value.and_then(|v| extension(v).ok()) {
            out.push(f);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_arguments_are_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn durations_parse() {
        assert_eq!(
            parse_duration("1.5").unwrap(),
            std::time::Duration::from_millis(1500)
        );
        assert_eq!(
            parse_duration("duration:2").unwrap(),
            std::time::Duration::from_secs(2)
        );
        assert!(parse_duration("0").is_err());
        assert!(parse_duration("soon").is_err());
    }
}
