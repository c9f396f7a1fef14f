//! The `lwarscope` binary: a thin shell over the library.

use anyhow::Result;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "lwarscope",
    version,
    about = "Analyzer and dissector for the lwar UDP game protocol"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate lwar peers over a faulty network: write a pcap with its ground truth, or run live on loopback.
    Sim(lwarscope::sim::SimArgs),
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Sim(args) => lwarscope::sim::run(&args, &mut std::io::stderr())?,
    }
    Ok(())
}
