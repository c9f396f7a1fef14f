//! The two-thread pipeline allocates nothing per packet (a test binary of
//! its own: it sets `LWARSCOPE_THREADS` in its environment).

use assert_cmd::Command;
use std::path::PathBuf;

mod counting_alloc;

/// Reading a capture of 60 000 packets on two threads allocates no more
/// than on one (the engine's sessions and findings), plus a bounded number
/// for the batches and the thread: nothing per packet.
#[test]
fn the_pipeline_allocates_nothing_per_packet() {
    use lwarscope::capture::Source;
    use lwarscope::report::Analysis;
    use lwarscope::run::drive;
    let dir = tempfile::tempdir().unwrap();
    let pcap: PathBuf = dir.path().join("game.pcap");
    let out = Command::cargo_bin("lwarscope")
        .unwrap()
        .args([
            "sim",
            "-n",
            "60000",
            "-c",
            "4",
            "--seed",
            "5",
            "--no-truth",
            "-w",
        ])
        .arg(&pcap)
        .output()
        .unwrap();
    assert!(out.status.success());
    let count = |threads: &str| {
        // SAFETY: this binary's only test sets it, before the threads it starts.
        unsafe { std::env::set_var("LWARSCOPE_THREADS", threads) };
        let mut source = Source::files(&[&pcap]).unwrap();
        let mut analysis = Analysis::new(());
        let before = counting_alloc::allocations_of_all_threads();
        drive(&mut source, &mut analysis, None, None).unwrap();
        let after = counting_alloc::allocations_of_all_threads();
        assert_eq!(analysis.recognised(), 60_000);
        after - before
    };
    let (one, two) = (count("1"), count("2"));
    assert!(
        two < one + 100,
        "{one} allocations on one thread, {two} on two, for 60 000 packets"
    );

    // The outputs whose parts the reader thread renders ahead
    // (`run::ahead`): the same, every packet written.
    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: lwarscope::report::ReportArgs,
    }
    let fields = [
        "-T",
        "fields",
        "-e",
        "frame.number",
        "-e",
        "lwar.seqno",
        "-e",
        "lwar.type",
    ];
    for options in [
        &["--format", "jsonl"][..],
        &["--packets"],
        &["-V", "-x"],
        &fields,
    ] {
        let args = <Cli as clap::Parser>::parse_from(
            std::iter::once("lwarscope").chain(options.iter().copied()),
        )
        .args;
        let count = |threads: &str| {
            // SAFETY: as above.
            unsafe { std::env::set_var("LWARSCOPE_THREADS", threads) };
            let mut source = Source::files(&[&pcap]).unwrap();
            let layout = lwarscope::report::table::Layout {
                width: 100,
                color: false,
            };
            let before = counting_alloc::allocations_of_all_threads();
            lwarscope::command::report(
                &args,
                &mut source,
                std::slice::from_ref(&pcap),
                None,
                layout,
                None,
                std::io::sink,
            )
            .unwrap();
            counting_alloc::allocations_of_all_threads() - before
        };
        let (one, two) = (count("1"), count("2"));
        assert!(
            two < one + 100,
            "{options:?}: {one} allocations on one thread, {two} on two, for 60 000 packets"
        );
    }
}
