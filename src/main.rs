//! The `lwarscope` binary: a thin shell over the library.

mod cli;

use anyhow::Context;
use clap::Parser;
use cli::Cli;
use lwarscope::capture::{CaptureError, CaptureStats, FrameClass, LiveOptions, Source};
use lwarscope::codec::{MessageType, Packet};
use std::process::ExitCode;
use std::time::{Duration, Instant};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: &Cli) -> anyhow::Result<()> {
    if cli.list_interfaces {
        return list_interfaces();
    }
    let on_terminal = std::io::IsTerminal::is_terminal(&std::io::stdout());
    if cli.tui || (cli.interface.is_some() && on_terminal && !cli.no_tui) {
        return run_tui(cli);
    }
    let mut source = open(cli)?;
    if let Some(n) = cli.count {
        source.stop_after_lwar(n);
    }
    if let Some(d) = cli.duration {
        source.stop_after(d);
    }
    stop_on_signals(&source)?;

    let mut analysis = Analysis::default();
    let result = analyse(&mut source, &mut analysis);
    let stats = source.stats();
    print_summary(&analysis, &stats, &source);
    result?;
    Ok(())
}

/// The terminal UI, on the same input.
fn run_tui(cli: &Cli) -> anyhow::Result<()> {
    let source = match &cli.interface {
        Some(_) => lwarscope::tui::Source::Live(live_options(cli)),
        None => lwarscope::tui::Source::Files(cli.read.clone()),
    };
    let options = lwarscope::tui::Options {
        count: cli.count,
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

/// What the temporary analysis counts: messages by type and decode errors.
#[derive(Debug, Default)]
struct Analysis {
    messages: [u64; MessageType::COUNT],
    decode_errors: u64,
    kernel_drops_warned: u64,
}

/// Runs the capture through the codec. The tracker replaces this.
fn analyse(source: &mut Source, analysis: &mut Analysis) -> Result<(), CaptureError> {
    let live = source.is_live();
    let mut next_check = Instant::now() + Duration::from_secs(1);
    loop {
        let Some(frame) = source.next_frame()? else {
            return Ok(());
        };
        if let FrameClass::Lwar(d) = frame.class {
            match Packet::new_checked(d.payload) {
                Ok(packet) => {
                    for m in packet.messages() {
                        match m {
                            Ok(m) => analysis.messages[m.message.msg_type().ordinal()] += 1,
                            Err(_) => {
                                analysis.decode_errors += 1;
                                break;
                            }
                        }
                    }
                }
                Err(_) => analysis.decode_errors += 1,
            }
        }
        if live && Instant::now() >= next_check {
            next_check = Instant::now() + Duration::from_secs(1);
            warn_drops(source, analysis);
        }
    }
}

/// Tells the user as soon as libpcap reports packets lost before lwarscope saw them.
fn warn_drops(source: &mut Source, analysis: &mut Analysis) {
    if let Some(pcap) = source.stats().pcap {
        let dropped = pcap.dropped_by_kernel + pcap.dropped_by_interface;
        if dropped > analysis.kernel_drops_warned {
            eprintln!(
                "warning: {} packets dropped before analysis so far (kernel {}, interface {})",
                dropped, pcap.dropped_by_kernel, pcap.dropped_by_interface
            );
            analysis.kernel_drops_warned = dropped;
        }
    }
}

fn print_summary(analysis: &Analysis, stats: &CaptureStats, source: &Source) {
    let c = &stats.counts;
    println!("frames              {}", c.frames);
    println!(
        "  lwar datagrams    {} ({} truncated by capture)",
        c.lwar, c.lwar_truncated
    );
    println!("  other UDP         {}", c.other_udp);
    println!("  not UDP           {}", c.not_udp);
    println!("  not IP            {}", c.not_ip);
    println!("  truncated         {}", c.truncated);
    println!("  malformed         {}", c.malformed);
    println!("  fragments held    {}", c.fragment);
    println!(
        "IP fragments        {} ({} datagrams reassembled, {} incomplete)",
        c.ip_fragments, c.reassembled, c.incomplete
    );
    for d in source.incomplete().iter().take(10) {
        println!(
            "  incomplete        {} -> {} id {}: frames {}-{}, {} fragments, {}",
            d.src,
            d.dst,
            d.id,
            d.first_frame,
            d.last_frame,
            d.fragments,
            d.reason.name()
        );
    }
    let messages: Vec<String> = MessageType::ALL
        .iter()
        .filter(|t| analysis.messages[t.ordinal()] > 0)
        .map(|t| format!("{} {}", t.name(), analysis.messages[t.ordinal()]))
        .collect();
    println!(
        "messages            {}",
        if messages.is_empty() {
            "none".to_string()
        } else {
            messages.join(", ")
        }
    );
    println!("decode errors       {}", analysis.decode_errors);
    if let Some(p) = stats.pcap {
        println!(
            "libpcap             received {}, dropped by kernel {}, dropped by interface {}",
            p.received, p.dropped_by_kernel, p.dropped_by_interface
        );
    }
}
