//! The `lwarscope` binary: a thin shell over the library.

mod cli;

use anyhow::Context;
use clap::Parser;
use cli::{Cli, Command};
use lwarscope::capture::{CaptureError, LiveOptions, Source};
use lwarscope::report::{run, table::Layout};
use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Some(Command::Check(args)) => check(args),
        Some(Command::Sim(args)) => lwarscope::proto::lwar::sim::run(args, &mut io::stderr())
            .map(|()| 0)
            .map_err(Into::into),
        None => run(&cli).map(|()| 0),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn check(args: &lwarscope::report::CheckArgs) -> anyhow::Result<u8> {
    let color = args.color.for_stdout();
    Ok(run::check(args, &mut io::stdout().lock(), color)?)
}

fn run(cli: &Cli) -> anyhow::Result<()> {
    if cli.list_interfaces {
        return list_interfaces();
    }
    if cli.list_fields {
        let mut out = io::stdout().lock();
        return match lwarscope::report::list_fields(&mut out).and_then(|()| out.flush()) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
            r => Ok(r?),
        };
    }
    let on_terminal = std::io::IsTerminal::is_terminal(&std::io::stdout());
    if cli.tui || (cli.interface.is_some() && on_terminal && !cli.no_tui) {
        return run_tui(cli);
    }
    let mut source = open(cli)?;
    if let Some(d) = cli.duration {
        source.stop_after(d);
    }
    stop_on_signals(&source)?;

    let layout = Layout::for_stdout(cli.report.color.for_stdout());
    // Live packet lines appear as they come; otherwise output is buffered.
    let line_by_line = source.is_live() || io::stdout().is_terminal();
    let out = move || -> Box<dyn Write> {
        if line_by_line {
            Box::new(io::LineWriter::new(io::stdout().lock()))
        } else {
            Box::new(io::BufWriter::with_capacity(64 * 1024, io::stdout().lock()))
        }
    };
    run::report(
        &cli.report,
        &mut source,
        &cli.read,
        cli.interface.as_deref(),
        layout,
        out,
    )?;
    Ok(())
}

/// The terminal UI, on the same input.
fn run_tui(cli: &Cli) -> anyhow::Result<()> {
    let source = match &cli.interface {
        Some(_) => lwarscope::tui::Source::Live(live_options(cli)),
        None => lwarscope::tui::Source::Files(cli.read.clone()),
    };
    let options = lwarscope::tui::Options {
        count: cli.report.decode.count,
        decode_as: cli.report.decode.decode_as.clone(),
        duration: cli.duration,
        ..Default::default()
    };
    Ok(lwarscope::tui::run(source, options)?)
}

fn live_options(cli: &Cli) -> LiveOptions {
    LiveOptions {
        interface: cli.interface.clone().unwrap_or_default(),
        filter: cli.filter.clone(),
        snaplen: cli.snaplen,
        buffer_size: cli.buffer_size.map(|kib| kib.saturating_mul(1024)),
        immediate: cli.immediate,
        promiscuous: !cli.no_promiscuous,
        savefile: cli.write.clone(),
    }
}

fn open(cli: &Cli) -> Result<Source, CaptureError> {
    match &cli.interface {
        Some(_) => Source::live(&live_options(cli)),
        None => Source::files(&cli.read),
    }
}

/// Ctrl-C (or SIGTERM) stops the capture cleanly, and the results are printed;
/// a second one exits at once.
fn stop_on_signals(source: &Source) -> anyhow::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])
        .context("installing Ctrl-C handler")?;
    let stop = source.stop_handle();
    std::thread::spawn(move || {
        let mut seen = false;
        for _ in signals.forever() {
            if seen {
                std::process::exit(130);
            }
            seen = true;
            stop.stop();
        }
    });
    Ok(())
}

fn list_interfaces() -> anyhow::Result<()> {
    for (i, iface) in lwarscope::capture::list_interfaces()?.iter().enumerate() {
        let mut flags = Vec::new();
        if iface.up {
            flags.push("Up");
        }
        if iface.running {
            flags.push("Running");
        }
        if iface.loopback {
            flags.push("Loopback");
        }
        let desc = iface
            .description
            .as_deref()
            .map(|d| format!(" ({d})"))
            .unwrap_or_default();
        println!("{}.{}{} [{}]", i + 1, iface.name, desc, flags.join(", "));
    }
    Ok(())
}
