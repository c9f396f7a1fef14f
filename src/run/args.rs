//! The arguments of the run itself, whatever its output: how the engine is
//! set up (`-d`, `-o`, `-c`). The report (`ReportArgs`) and `check` flatten
//! them into their own options; the terminal UI takes them as they are.

use clap::Args;

/// How datagrams are taken for a protocol, beyond what each protocol recognises
/// by itself.
#[derive(Debug, Clone, Default, Args)]
pub struct DecodeArgs {
    /// Decode UDP traffic from or to a port as a protocol, whatever its bytes
    /// (tshark's Decode As; repeatable). For a protocol recognised only by its
    /// handshake, in a capture that starts mid-session.
    /// Example: lwarscope -r mid.pcap -d udp.port==4000,battlegrounds
    #[arg(
        short = 'd',
        long = "decode-as",
        value_name = "udp.port==N,PROTO",
        help_heading = "Decoding"
    )]
    pub decode_as: Vec<crate::proto::DecodeAs>,

    /// Set a protocol preference, tshark's form (repeatable):
    /// bg.byte_order:be|le|auto (Battlegrounds' byte order; auto, the
    /// default, decides each session's from its own bytes).
    /// Example: lwarscope -r old.pcap -o bg.byte_order:le
    #[arg(
        short = 'o',
        long = "option",
        value_name = "NAME:VALUE",
        help_heading = "Decoding"
    )]
    pub preferences: Vec<crate::engine::Preference>,

    /// Stop after this many datagrams of a known protocol
    #[arg(short = 'c', long = "count", value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..), help_heading = "Decoding")]
    pub count: Option<u64>,
}

impl DecodeArgs {
    /// The engine these options ask for.
    pub fn engine(&self) -> crate::engine::Engine {
        let mut engine = crate::proto::engine_with(
            crate::proto::config_with(&self.preferences),
            &self.decode_as,
        );
        if let Some(n) = self.count {
            engine.stop_after(n);
        }
        engine
    }
}
