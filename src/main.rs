//! The `lwarscope` binary: a thin shell over the library.

mod cli;

use anyhow::Context;
use clap::Parser;
use cli::{Cli, Command};
use lwarscope::capture::{CaptureError, LiveOptions, Source};
use lwarscope::command;
use lwarscope::report::table::Layout;
use lwarscope::text::printable_lines;
use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;

fn main() -> ExitCode {
    // Descriptions first: parsing `-d` looks protocols up in the registry.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Err(e) = lwarscope::proto::described::load_files(&cli::descriptions(&args)) {
        let _ = writeln!(io::stderr(), "error: {}", printable_lines(&e.to_string()));
        return ExitCode::from(2);
    }
    let mut cli = Cli::parse_from(args);
    cli.report.live_savefile = cli.interface.is_some() && cli.write.is_some();
    let result = match &cli.command {
        Some(Command::Check(args)) => check(args),
        Some(Command::Sim(sim)) => simulate(sim).map(|()| 0),
        None => run(&cli),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            // A closed or full standard error must not turn an error into a panic.
            // Shown escaped (file names are escaped where the errors name them;
            // the lines of a filter error are kept).
            let _ = writeln!(io::stderr(), "error: {}", printable_lines(&once(&e)));
            ExitCode::from(2)
        }
    }
}

/// The error and its causes on one line, each said once: a cause whose text
/// the message already holds (a wrapper that prints its source) is not repeated.
fn once(e: &anyhow::Error) -> String {
    let mut msg = e.to_string();
    for cause in e.chain().skip(1) {
        let c = cause.to_string();
        if !msg.contains(&c) {
            msg.push_str(": ");
            msg.push_str(&c);
        }
    }
    msg
}

/// `lwarscope sim [--proto NAME]`: lwar's simulator with all its options, or
/// another protocol's through the registry.
fn simulate(sim: &cli::SimCommand) -> anyhow::Result<()> {
    let protocol = lwarscope::proto::by_name(&sim.proto).ok_or_else(|| {
        anyhow::anyhow!(
            "--proto {}: unknown protocol (known: {})",
            sim.proto,
            lwarscope::proto::REGISTRY
                .iter()
                .map(|p| p.info.title.to_lowercase())
                .collect::<Vec<_>>()
                .join(", ")
        )
    })?;
    if protocol.info.name == "lwar" {
        if sim.args.byte_order.is_some() {
            anyhow::bail!(lwarscope::proto::sim::unsupported("lwar", "--byte-order"));
        }
        return Ok(lwarscope::proto::lwar::sim::run(
            &sim.args,
            &mut io::stderr(),
        )?);
    }
    let title = protocol.info.title;
    let run = protocol
        .sim
        .ok_or_else(|| anyhow::anyhow!("{title} has no simulator yet"))?;
    let mut request = sim.args.request(title).map_err(anyhow::Error::msg)?;
    if sim.args.live {
        // The simulated game, replayed on loopback at the pace it was played:
        // real datagrams for a live capture (`lwarscope -i lo`).
        let dir = tempfile::tempdir()?;
        request.write = dir.path().join("live.pcap");
        request.truth = false;
        let outcome = run(&request).map_err(anyhow::Error::msg)?;
        let _ = writeln!(
            io::stderr(),
            "{title}: {} frames of {} sessions, replayed on loopback in real time",
            outcome.frames,
            outcome.sessions
        );
        let stats =
            lwarscope::proto::replay::run_replay(&lwarscope::proto::replay::ReplayConfig {
                file: request.write.clone(),
                pace: lwarscope::proto::replay::Pace::Capture,
                keep: |_| true,
            })?;
        let _ = writeln!(io::stderr(), "{stats}");
        return Ok(());
    }
    let outcome = run(&request).map_err(anyhow::Error::msg)?;
    let truth = outcome
        .truth
        .map(|t| format!(", ground truth in {}", lwarscope::text::path(&t)))
        .unwrap_or_default();
    let _ = writeln!(
        io::stderr(),
        "{}: {} frames, {} sessions of {title}{truth}",
        lwarscope::text::path(&request.write),
        outcome.frames,
        outcome.sessions
    );
    Ok(())
}

fn check(args: &lwarscope::report::CheckArgs) -> anyhow::Result<u8> {
    let color = args.color.for_stdout();
    Ok(command::check(args, &mut io::stdout().lock(), color)?)
}

fn run(cli: &Cli) -> anyhow::Result<u8> {
    if let Some(listed) = list(cli) {
        return listed;
    }
    // The terminal UI is the default of -i when it can run (a terminal both
    // ways) and no printed output was asked for.
    let on_terminal = io::stdout().is_terminal() && io::stdin().is_terminal();
    if cli.interface.is_some() && cli.report.jobs.is_some() {
        anyhow::bail!("-j applies to capture files (-r), each analysed on its own");
    }
    if cli.tui {
        refuse_with_tui(cli)?;
        return run_tui(cli).map(|()| 0);
    }
    if cli.interface.is_some() && on_terminal && !cli.no_tui && printed_output(cli).is_none() {
        return run_tui(cli).map(|()| 0);
    }
    if cli.interface.is_none() && command::each_file(&cli.report, &cli.read) {
        return report_each(cli);
    }
    report_stream(cli)
}

/// What is listed, not analysed: the man page or a completion script, the
/// interfaces, the registered fields or findings. `None` when nothing is.
fn list(cli: &Cli) -> Option<anyhow::Result<u8>> {
    let written = |out: &mut io::StdoutLock<'_>, r: io::Result<()>| -> anyhow::Result<u8> {
        match r.and_then(|()| out.flush()) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(0),
            r => Ok(r.map(|()| 0)?),
        }
    };
    if let Some(kind) = cli.generate {
        let text = match cli::generate(kind) {
            Ok(text) => text,
            Err(e) => return Some(Err(e.into())),
        };
        let mut out = io::stdout().lock();
        let r = out.write_all(&text);
        return Some(written(&mut out, r));
    }
    if cli.list_interfaces {
        return Some(list_interfaces().map(|()| 0));
    }
    if cli.list_fields || cli.list_findings {
        let mut out = io::stdout().lock();
        let r = match cli.list_fields {
            true => lwarscope::report::list_fields(&mut out),
            false => lwarscope::report::list_findings(&mut out),
        };
        return Some(written(&mut out, r));
    }
    None
}

/// Each file on its own (a directory, a glob, `-j`): its own output in turn.
fn report_each(cli: &Cli) -> anyhow::Result<u8> {
    if cli.write.is_some() {
        anyhow::bail!(
            "-w exports from one stream: name the files without -j, a directory or a glob"
        );
    }
    if cli.merge {
        anyhow::bail!(
            "--merge reads several files as one stream: name the files without -j, a directory or a glob"
        );
    }
    let layout = Layout::for_stdout(cli.report.color.for_stdout());
    let mut out = io::BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    let each = lwarscope::run::fleet::Each {
        file_filter: cli.filter.as_deref(),
        duration: cli.duration,
    };
    stop_fleet_on_signals()?;
    command::report_each(&cli.report, &cli.read, each, layout, &mut out)?;
    Ok(0)
}

/// One stream (a live interface, or the files read one after the other or
/// merged): the report, the packet lines or the export.
fn report_stream(cli: &Cli) -> anyhow::Result<u8> {
    let mut source = open(cli)?;
    if let Some(d) = cli.duration {
        source.stop_after(d);
    }
    stop_on_signals(&source)?;

    let layout = Layout::for_stdout(cli.report.color.for_stdout());
    // Live packet lines appear as they come (and with -l, tshark's option
    // for pipes); otherwise output is buffered.
    let line_by_line = source.is_live() || io::stdout().is_terminal() || cli.report.line_buffered;
    let out = move || -> Box<dyn Write> {
        if line_by_line {
            Box::new(io::LineWriter::new(io::stdout().lock()))
        } else {
            Box::new(io::BufWriter::with_capacity(64 * 1024, io::stdout().lock()))
        }
    };
    // Live, -w is libpcap's savefile (set when the capture opened); with files
    // it exports what the display filter selects.
    let export = match (&cli.write, &cli.interface) {
        (Some(path), None) => Some((path.as_path(), cli.write_format.unwrap_or_default())),
        _ => None,
    };
    command::report(
        &cli.report,
        &mut source,
        &cli.read,
        cli.interface.as_deref(),
        layout,
        export,
        out,
    )?;
    // Files read only in part: the outputs say so, and so does the exit
    // status (128 + the signal, as a shell reports a process it killed).
    if let Some(signal) = source.interrupted_by() {
        let _ = writeln!(
            io::stderr(),
            "lwarscope: interrupted by {} after frame {}: the results cover only the frames read",
            lwarscope::report::signal_name(signal),
            source.counts().frames
        );
        return Ok(128 + signal as u8);
    }
    Ok(0)
}

/// The first printed-output option given (`--packets`, `-V`, `-x`, `--format`),
/// if any.
fn printed_output(cli: &Cli) -> Option<&'static str> {
    let r = &cli.report;
    [
        (r.packets, "--packets"),
        (r.verbose, "-V"),
        (r.hex, "-x"),
        (r.format != lwarscope::report::Format::Table, "--format"),
        (r.output_type.is_some(), "-T"),
        (r.out.is_some(), "--out"),
        (!r.stats.is_empty(), "-z"),
        (r.plot.is_some(), "--plot"),
        (!r.sessions.is_empty(), "--session"),
        (r.window.is_some(), "--window"),
        (r.tables, "--tables"),
        (r.quiet, "-q"),
    ]
    .into_iter()
    .find_map(|(set, flag)| set.then_some(flag))
}

/// `--tui` with options that cannot apply to it: refused by name rather than
/// dropped.
fn refuse_with_tui(cli: &Cli) -> anyhow::Result<()> {
    if let Some(flag) = printed_output(cli) {
        anyhow::bail!("{flag} applies to printed output, not to --tui");
    }
    if cli.write.is_some() && cli.interface.is_none() {
        anyhow::bail!("-w with -r exports from a printed run (--no-tui), not from the terminal UI");
    }
    if cli.interface.is_none() && command::each_file(&cli.report, &cli.read) {
        anyhow::bail!(
            "the terminal UI reads one stream: name the files, without -j, a directory or a glob"
        );
    }
    if !io::stdin().is_terminal() || !io::stdout().is_terminal() {
        anyhow::bail!("the terminal UI needs a terminal on standard input and output");
    }
    Ok(())
}

/// The terminal UI, on the same input.
fn run_tui(cli: &Cli) -> anyhow::Result<()> {
    let source = match &cli.interface {
        Some(_) => lwarscope::tui::Source::Live(live_options(cli)),
        None => lwarscope::tui::Source::Files(cli.read.clone()),
    };
    let options = lwarscope::tui::Options {
        decode: cli.report.decode.clone(),
        duration: cli.duration,
        filter: cli.report.display_filter.clone(),
        file_filter: cli.filter.clone().filter(|_| cli.interface.is_none()),
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
        rotation: cli
            .ring_buffer
            .iter()
            .fold(Default::default(), |mut r, spec| {
                // Each condition was checked when the command line was parsed.
                let _ = lwarscope::capture::rotate::Rotation::add(&mut r, spec);
                r
            }),
    }
}

fn open(cli: &Cli) -> Result<Source, CaptureError> {
    match &cli.interface {
        Some(_) => Source::live(&live_options(cli)),
        None => {
            let mut source = Source::files(&cli.read)?;
            source.set_merge(cli.merge);
            if let Some(f) = &cli.filter {
                source.set_file_filter(f)?;
            }
            Ok(source)
        }
    }
}

/// Ctrl-C (or SIGTERM) stops the capture cleanly, and the results are printed;
/// a second one exits at once.
fn stop_on_signals(source: &Source) -> anyhow::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    // A hang-up (a closed terminal or ssh session) ends a capture as Ctrl-C
    // does, as tcpdump does: results printed, the savefile complete.
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
        .context("installing Ctrl-C handler")?;
    let stop = source.stop_handle();
    std::thread::spawn(move || {
        let mut seen = false;
        for signal in signals.forever() {
            if seen {
                std::process::exit(128 + signal);
            }
            seen = true;
            stop.stop_by_signal(signal);
        }
    });
    Ok(())
}

/// A fleet run (`-r DIR`, `-j`, `--format parquet`) stopped by a signal: the
/// table files being written are removed (no hidden `.tmp` is left), the run
/// says what stopped it, and exits with 128 + the signal.
fn stop_fleet_on_signals() -> anyhow::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
        .context("installing Ctrl-C handler")?;
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            lwarscope::report::remove_temporaries();
            let _ = writeln!(
                io::stderr(),
                "lwarscope: interrupted by {}: the files not yet reported were not analysed",
                lwarscope::report::signal_name(signal)
            );
            std::process::exit(128 + signal);
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
