//! The `lwarscope` binary: a thin shell over the library.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

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

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result: anyhow::Result<()> = match cli.command {
        Command::Sim(args) => {
            lwarscope::sim::run(&args, &mut std::io::stderr()).map_err(anyhow::Error::from)
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("lwarscope: {e:#}");
            ExitCode::FAILURE
        }
    }
}
