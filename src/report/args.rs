//! The command-line options of the outputs and of `check` (clap derive), for the
//! binary to flatten into its own parser. The engine's own (`-d`, `-o`, `-c`)
//! are the run's: [`crate::run::args::DecodeArgs`].

use crate::run::args::DecodeArgs;
use clap::{Args, ValueEnum};
use std::io::IsTerminal;
use std::path::PathBuf;

/// What the report prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum Format {
    /// Tables for people (or packet lines with --packets).
    #[default]
    Table,
    /// One JSON document: capture, summary, findings (and packets with --packets).
    Json,
    /// JSON lines, streamed: one object per packet, per finding, then the summary.
    Jsonl,
    /// Parquet tables (sessions, findings, intervals) in the directory of
    /// --out, one file per capture per table (needs the `parquet` build feature).
    Parquet,
}

/// When to colour the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum Color {
    /// On a terminal, unless NO_COLOR is set.
    #[default]
    Auto,
    Always,
    Never,
}

impl Color {
    /// Whether to colour a stream that is (or is not) a terminal, given the
    /// value of `NO_COLOR` (set and not empty: no colour in `auto`).
    pub fn enabled_with(self, is_terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
        match self {
            Color::Always => true,
            Color::Never => false,
            Color::Auto => is_terminal && no_color.is_none_or(|v| v.is_empty()),
        }
    }

    /// Whether to colour a stream that is (or is not) a terminal.
    pub fn enabled(self, is_terminal: bool) -> bool {
        self.enabled_with(is_terminal, std::env::var_os("NO_COLOR").as_deref())
    }

    /// Whether to colour standard output.
    pub fn for_stdout(self) -> bool {
        self.enabled(std::io::stdout().is_terminal())
    }
}

/// Output options of `lwarscope -r FILE`.
#[derive(Debug, Clone, Default, Args)]
pub struct ReportArgs {
    /// Print one line per lwar packet (frame, time, source -> destination, ack,
    /// timestamp, messages, findings) instead of the report tables.
    /// Example: lwarscope -r game.pcap --packets
    #[arg(long, help_heading = "Output")]
    pub packets: bool,

    /// With the packet lines: every field of every message, as a tree (implies
    /// --packets). With --format json or jsonl: each message with its typed
    /// fields (`"fields": [{"field": "lwar.input.aim_x", "value": 200}]`).
    /// Example: lwarscope -r game.pcap -V -Y 'frame == 2'
    #[arg(short = 'V', long = "verbose", help_heading = "Output")]
    pub verbose: bool,

    /// With the packet lines: a hex dump of each packet (implies --packets).
    /// Example: lwarscope -r game.pcap -x -Y malformed
    #[arg(short = 'x', long = "hex", help_heading = "Output")]
    pub hex: bool,

    /// Display filter: only packets (and findings) that match EXPR, e.g. 'Join',
    /// 'resend || lost', 'seqno >= 10 && dir == s2c', 'peer == 10.0.0.2:32422',
    /// 'player == 0:1', 'finding == violation/wrong-sender', '!(Input || Update)',
    /// 'ip.src == 10.0.0.0/8', 'time > 30', 'frame in {1 5..9}',
    /// 'lwar.chat.text contains "gg"', 'lwar.name matches "^bot"'.
    /// Fields: type seqno ack ts frame len src dst peer port player finding severity
    /// session dir malformed time, Wireshark's ip.src ip.dst ip.addr udp.port
    /// udp.srcport udp.dstport udp.length frame.number frame.time_relative
    /// frame.time_epoch frame.len frame.cap_len; a protocol's name alone (lwar, strs, bg, vessel...;
    /// !lwar) and udp, ip, ipv6 select its packets;
    /// and every protocol's registered fields by name (`lwar.name == "ann"`,
    /// `lwar.input.aim_x > 200`; see --list-fields); operators == != < > <= >=
    /// (or eq ne lt gt le ge) contains matches (~) in {...} && || ! ( ); `!=` is
    /// `!(==)`. With the table format, -Y implies --packets (--tables prints
    /// the report of what it selects instead); with --format json the
    /// summary counts what it selects.
    #[arg(
        short = 'Y',
        long = "display-filter",
        value_name = "EXPR",
        help_heading = "Output"
    )]
    pub display_filter: Option<String>,

    /// Output format. Example: lwarscope -r game.pcap --format jsonl > game.jsonl
    #[arg(
        long,
        value_enum,
        default_value_t,
        value_name = "FORMAT",
        help_heading = "Output"
    )]
    pub format: Format,

    /// Colour: auto (on a terminal, unless NO_COLOR is set), always, never.
    #[arg(
        long,
        value_enum,
        default_value_t,
        value_name = "WHEN",
        help_heading = "Output"
    )]
    pub color: Color,

    /// Output type, as tshark's -T: `fields` prints one line per packet that
    /// passes -Y with the values of the -e fields (and no tables); `json`
    /// and `ek` print those packets in tshark's JSON shapes (an array;
    /// newline-delimited for Elasticsearch) with lwarscope's layers.
    /// Example: lwarscope -r game.pcap -T fields -e frame.number -e lwar.seqno -E header=y
    /// Example: lwarscope -r game.pcap -T ek -Y lwar | curl -H 'Content-Type: application/x-ndjson' --data-binary @- localhost:9200/_bulk
    #[arg(
        short = 'T',
        value_enum,
        value_name = "TYPE",
        help_heading = "Field output"
    )]
    pub output_type: Option<OutputType>,

    /// A field to print with -T fields (repeatable, in order): any name of
    /// --list-fields, or frame.number, frame.time_epoch, frame.time_relative,
    /// frame.len, frame.cap_len, ip.src, ip.dst, ipv6.src, ipv6.dst, udp.srcport, udp.dstport,
    /// udp.length, lwarscope.session, lwarscope.dir, lwarscope.finding. A field that occurs
    /// several times gives its values joined by the aggregator.
    /// Example: -T fields -e frame.number -e ip.src -e lwar.type
    #[arg(short = 'e', value_name = "FIELD", help_heading = "Field output")]
    pub fields: Vec<String>,

    /// Field output options, as tshark's -E: header=y|n, separator=/t|/s|CHAR
    /// (tab by default), quote=d|s|n, occurrence=f|l|a (first, last, all values
    /// of a repeated field), aggregator=/s|CHAR (`,` by default).
    /// Example: -T fields -e lwar.seqno -E separator=, -E occurrence=l
    #[arg(short = 'E', value_name = "KEY=VALUE", help_heading = "Field output")]
    pub fields_options: Vec<String>,

    /// The time column of packet lines, as tshark's -t: r relative to the first
    /// packet (default), a time of day, ad date and time, d delta from the previous
    /// packet read, dd delta from the previous packet displayed, e epoch seconds, u
    /// UTC time of day, ud UTC date and time. lwarscope does not read the local
    /// time zone: a and ad print UTC, as u and ud.
    /// Example: lwarscope -r game.pcap --packets -t ud
    #[arg(
        short = 't',
        value_enum,
        default_value_t,
        value_name = "FORMAT",
        hide_default_value = true,
        hide_possible_values = true,
        help_heading = "Output"
    )]
    pub time_format: super::fields::TimeFormat,

    /// With --format parquet: the directory the tables are written to
    /// (DIR/sessions/, DIR/findings/, DIR/intervals/, one file per capture
    /// in each; created if missing). -z io,stat,INTERVAL sets the intervals'
    /// length (1 s by default).
    /// Example: lwarscope -r captures/ --format parquet --out tables/
    #[arg(long = "out", value_name = "DIR", help_heading = "Output")]
    pub out: Option<PathBuf>,

    /// Analyse each file on its own, N files at a time, each on its own engine
    /// (default with a directory, a glob or --format parquet: the number of
    /// cores). Without -j, a directory or a glob, several files given by name
    /// are read as one stream. The output is the same whatever N: each file's,
    /// in path order. Example: lwarscope -r 'nightly/**/*.pcap' -j 4 --format jsonl
    #[arg(short = 'j', long = "jobs", value_name = "N", help_heading = "Input")]
    pub jobs: Option<std::num::NonZeroUsize>,

    /// Statistics, as tshark's -z (repeatable), printed after the report (or
    /// alone with -q): io,stat,INTERVAL[,FILTER...] packets, bytes, lost,
    /// resends and ack delay per interval of INTERVAL seconds (0: the whole
    /// capture), per direction, with packets and bytes matching each FILTER;
    /// `conv[,udp][,FILTER]`, the conversations (sessions), with a FILTER the
    /// packets and bytes of each session that match it;
    /// `expert[,error|warn|note][,FILTER]`, the findings from that severity up,
    /// with a FILTER those of the frames that match it. With --format json
    /// they are the document's `statistics`.
    /// Example: lwarscope -r game.pcap -q -z io,stat,1,resend -z expert,warn
    /// Example: lwarscope -r game.pcap -q -z 'conv,frame.time_relative >= 60'
    #[arg(short = 'z', value_name = "STATISTICS", help_heading = "Statistics")]
    pub stats: Vec<super::stats::StatSpec>,

    /// Quiet, as tshark's -q: no report tables, only the -z statistics (or,
    /// with -w, only the export).
    #[arg(short = 'q', long = "quiet", help_heading = "Statistics")]
    pub quiet: bool,

    /// Restrict the report to these sessions (the numbers in its first column;
    /// repeat or separate with commas): the tables, the JSON summary, the -z
    /// statistics, --plot and the packet lines count their packets and
    /// findings only. The engine still follows every session.
    /// Example: lwarscope -r game.pcap --session 2 --format json
    #[arg(long = "session", value_name = "N", value_delimiter = ',')]
    pub sessions: Vec<usize>,

    /// The report of a time window: START..END in seconds from the first
    /// packet (`time` in -Y), either end open (`60..`, `..30`). The tables, the
    /// JSON summary, -z conv and -z expert count the packets within it (and
    /// the findings of their frames: a `lost` counts with its gap); the engine
    /// still analyses every packet, so a resend or a gap inside the window is
    /// judged by what came before it. The packet lines are those within it too.
    /// Example: lwarscope -r game.pcap --window 60..120
    #[arg(long, value_name = "START..END", help_heading = "Statistics")]
    pub window: Option<TimeWindow>,

    /// Print the report's tables for what -Y selects: the sessions, messages
    /// and findings of the packets it matches (with --packets, -V or -x, after
    /// the packet lines). Without --tables, -Y with the table format prints
    /// packet lines only; with --format json the summary always follows -Y.
    /// Example: lwarscope -r game.pcap -Y 'ip.addr == 10.0.0.5' --tables
    #[arg(long, help_heading = "Output")]
    pub tables: bool,

    /// Draw the capture over time as an SVG picture, for a bug report: packets,
    /// resends and lost messages per second and the mean ack delay, a line per
    /// session and direction (the six busiest sessions; --session names
    /// others). Written at the end, beside the report.
    /// Example: lwarscope -r game.pcap --plot game.svg
    #[arg(long, value_name = "FILE.svg", help_heading = "Statistics")]
    pub plot: Option<PathBuf>,

    /// Disable name resolution, as tshark's -n: accepted for tshark's
    /// habits; lwarscope never resolves names (addresses and ports are always
    /// printed as numbers).
    #[arg(short = 'n', help_heading = "Output")]
    pub no_resolve: bool,

    /// Flush standard output after each packet's line (and each JSON line),
    /// as tshark's -l: for piping a live capture's lines into another
    /// program. Lines are flushed this way already when standard output is a
    /// terminal or the capture is live.
    /// Example: lwarscope -i eth0 --packets -l | grep Join
    #[arg(short = 'l', help_heading = "Output")]
    pub line_buffered: bool,

    /// Set by the binary, not by an option: a live capture writes every frame
    /// to a savefile (`-i IFACE -w FILE`), so that `-q` has something to do.
    #[arg(skip)]
    pub live_savefile: bool,

    #[command(flatten)]
    pub decode: DecodeArgs,
}

/// How `check` prints its verdicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum CheckFormat {
    /// A line per file: PASS, FAIL or ERROR, with what was measured.
    #[default]
    Text,
    /// One JSON document with every verdict.
    Json,
}

/// `-T`: what tshark calls the output type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputType {
    /// One line per packet, the values of the -e fields.
    Fields,
    /// One JSON array, a packet per element, in tshark's shape, with
    /// lwarscope's layers (frame, ip, udp, the protocol, lwarscope).
    Json,
    /// Newline-delimited JSON for Elasticsearch's bulk API, as tshark's -T
    /// ek: an index line and a packet line per packet.
    Ek,
}

impl ReportArgs {
    /// True when packets are printed one by one (rather than, or before, the
    /// tables).
    pub fn packet_lines(&self) -> bool {
        self.packets || self.verbose || self.hex || (self.display_filter.is_some() && !self.tables)
    }

    /// The display filter that picks the part of the capture the report
    /// covers: -Y and --window together, or `None` for all of it.
    pub fn selection(&self) -> Option<String> {
        match (&self.display_filter, &self.window) {
            (None, None) => None,
            (Some(y), None) => Some(y.clone()),
            (None, Some(w)) => Some(w.expr()),
            (Some(y), Some(w)) => Some(format!("({y}) && {}", w.expr())),
        }
    }
}

/// `--window START..END`: seconds from the first packet, either end open.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeWindow {
    pub start: Option<f64>,
    pub end: Option<f64>,
}

impl TimeWindow {
    /// The window as a display filter: `time >= START && time < END`.
    pub fn expr(&self) -> String {
        match (self.start, self.end) {
            (Some(a), Some(b)) => format!("(time >= {a} && time < {b})"),
            (Some(a), None) => format!("time >= {a}"),
            (None, Some(b)) => format!("time < {b}"),
            (None, None) => "time >= 0".to_owned(),
        }
    }
}

/// As given: `60..120`, `60..`, `..30`.
impl std::fmt::Display for TimeWindow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(a) = self.start {
            write!(f, "{a}")?;
        }
        f.write_str("..")?;
        if let Some(b) = self.end {
            write!(f, "{b}")?;
        }
        Ok(())
    }
}

impl std::str::FromStr for TimeWindow {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let usage = "a window is START..END in seconds from the first packet, either end open (60..120, 60.., ..30)";
        let (a, b) = s.split_once("..").ok_or_else(|| usage.to_owned())?;
        let secs = |t: &str| -> Result<Option<f64>, String> {
            let t = t.trim();
            if t.is_empty() {
                return Ok(None);
            }
            match t.parse::<f64>() {
                Ok(v) if v.is_finite() && v >= 0.0 => Ok(Some(v)),
                _ => Err(format!("`{t}` is not a number of seconds: {usage}")),
            }
        };
        let (start, end) = (secs(a)?, secs(b)?);
        match (start, end) {
            (None, None) => Err(format!("`{s}` names no end: {usage}")),
            (Some(a), Some(b)) if b <= a => Err(format!(
                "`{s}` ends before it starts: the end ({b}) must be above the start ({a})"
            )),
            _ => Ok(TimeWindow { start, end }),
        }
    }
}

/// `lwarscope check`: the CI gate.
#[derive(Debug, Clone, Default, Args)]
#[command(after_help = CHECK_EXAMPLES)]
pub struct CheckArgs {
    /// Capture files to check, each on its own: files, directories (every
    /// *.pcap, *.pcapng and *.cap under them, .gz and .zst ones too) or quoted globs
    /// ('captures/**/*.pcap'); each directory or glob in path order.
    #[arg(required = true, value_name = "FILE|DIR|GLOB")]
    pub files: Vec<PathBuf>,

    /// Analyse N files at a time, each on its own engine (default: the number
    /// of cores). The verdicts are the same, in the same order, whatever N.
    #[arg(short = 'j', long = "jobs", value_name = "N")]
    pub jobs: Option<std::num::NonZeroUsize>,

    /// Fail when any of these findings occurs: finding kinds (resend, lost,
    /// malformed, violation...), violation/RULE, or a session outcome
    /// (timed-out, rejected). Comma-separated, repeatable.
    /// Example: --deny malformed,violation,lost
    #[arg(long, value_delimiter = ',', value_name = "KINDS")]
    pub deny: Vec<String>,

    /// Accept a known deviation: findings of this kind or violation rule count in
    /// no rule. Comma-separated, repeatable.
    /// Example: --deny violation --allow lwar.violation.after-disconnect
    #[arg(long, value_delimiter = ',', value_name = "KINDS")]
    pub allow: Vec<String>,

    /// Fail when a count or metric is above a limit: a finding kind, or one of
    /// resend-rate (5% or 0.05), loss (packets lost before the capture, estimated,
    /// worst direction: 2% or 0.02), ack-delay-p50, ack-delay-p95 (ms or 250ms),
    /// jitter (ms), unacked, packets, sessions, timed-out, rejected. Repeatable.
    /// A rate without % is a fraction and must be below 1: loss=5 is refused
    /// (write loss=5%).
    /// Example: --max resend-rate=5% --max reordered=0
    #[arg(long, value_name = "NAME=VALUE")]
    pub max: Vec<String>,

    /// Fail when a count or metric is below a limit (same names as --max).
    /// Example: --min packets=1
    #[arg(long, value_name = "NAME=VALUE")]
    pub min: Vec<String>,

    /// Rules from a TOML file: `deny = ["lost"]`, and tables `[max]` and `[min]`
    /// of NAME = VALUE. Flags add to it.
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,

    /// Compare the result with an expected one: a simulator's ground truth
    /// (captures/*.truth.json of lwar, Starstrike, Battlegrounds, Vessel, described
    /// protocols, the mixed capture; the -d it names applies) or a JSON summary
    /// (as in `--format json` output, its "summary" member, or a bare summary
    /// object). Every count the file states must be equal.
    #[arg(long, value_name = "FILE.json")]
    pub expect: Option<PathBuf>,

    /// Also write the verdicts as JUnit XML, for CI systems.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,

    /// How to print the verdicts: text (a line per file), or json (one
    /// document: each file's rules with what was measured, and the totals).
    /// Example: lwarscope check game.pcap --max resend-rate=5% --format json
    #[arg(long, value_enum, default_value_t, value_name = "FORMAT")]
    pub format: CheckFormat,

    /// Colour the verdicts: auto, always, never.
    #[arg(long, value_enum, default_value_t, value_name = "WHEN")]
    pub color: Color,

    /// Decode UDP traffic from or to a port as a protocol (tshark's Decode As;
    /// repeatable). Example: -d udp.port==4000,battlegrounds
    #[arg(short = 'd', long = "decode-as", value_name = "udp.port==N,PROTO")]
    pub decode_as: Vec<crate::proto::DecodeAs>,

    /// Set a protocol preference (tshark's form; repeatable):
    /// bg.byte_order:be|le|auto. Example: -o bg.byte_order:le
    #[arg(short = 'o', long = "option", value_name = "NAME:VALUE")]
    pub preferences: Vec<crate::engine::Preference>,

    /// Judge a time window of each file: START..END in seconds from its first
    /// packet, either end open (`60..`, `..30`), as `-r --window` counts it
    /// (the engine still analyses every packet; the rules see the packets
    /// within it and the findings of their frames). Example: --window 10..
    /// leaves out the first ten seconds (a warm-up).
    #[arg(long, value_name = "START..END")]
    pub window: Option<TimeWindow>,
}

const CHECK_EXAMPLES: &str = "\
Exit status: 0 every file passes, 1 a rule failed, 2 an error (e.g. unreadable file;
the other files are still checked). A capture with no packet of a known protocol (a
game on another port, a capture begun after the handshake) is an error, with what to
try (-d udp.port==N,PROTO), not a pass: --min packets=0 accepts it, --min packets=1
fails it as a rule.

Examples:
  lwarscope check captures/*.pcap --deny malformed,violation,lost
  lwarscope check captures/ -j 8 --deny lost --junit report.xml
                                          every capture under a folder, 8 at a time
  lwarscope check 'nightly/**/*.pcapng' --max resend-rate=5%
  lwarscope check game.pcap --max resend-rate=5% --max reordered=0 --junit report.xml
  lwarscope check game.pcap --rules ci/lwar-rules.toml
  lwarscope check game.pcap --expect expected.json
  lwarscope check game.pcap --window 10.. --max resend-rate=5%
                                          the rules after the first ten seconds
  lwarscope check captures/real-server-clean.pcap --deny violation,timed-out \\
      --allow lwar.violation.after-disconnect

A rules file:
  deny = [\"malformed\", \"violation\"]
  allow = [\"lwar.violation.after-disconnect\"]
  [max]
  resend-rate = \"5%\"
  ack-delay-p95 = \"250ms\"
  reordered = 0
  [min]
  packets = 1";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_follows_the_flag_and_the_terminal() {
        assert!(Color::Always.enabled(false));
        assert!(!Color::Never.enabled(true));
        assert!(!Color::Auto.enabled(false));
        let set = Some(std::ffi::OsStr::new("1"));
        let empty = Some(std::ffi::OsStr::new(""));
        assert!(Color::Auto.enabled_with(true, None));
        assert!(Color::Auto.enabled_with(true, empty));
        assert!(!Color::Auto.enabled_with(true, set));
        assert!(Color::Always.enabled_with(false, set));
    }

    #[test]
    fn any_packet_option_implies_packet_lines() {
        let mut a = ReportArgs::default();
        assert!(!a.packet_lines());
        a.verbose = true;
        assert!(a.packet_lines());
        let a = ReportArgs {
            display_filter: Some("Join".into()),
            ..Default::default()
        };
        assert!(a.packet_lines());
    }
}
