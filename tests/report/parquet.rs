//! `--format parquet`: a folder of the corpus read back by DuckDB, an
//! independent reader, and checked against `--format json`; the same bytes
//! whatever `-j`; a capture that fails leaves no table file.
//!
//! Built with the `parquet` feature (`cargo test --features parquet`, as CI
//! runs). The DuckDB test needs `python3` with the `duckdb` package
//! (`python3 -m pip install duckdb`; `.ci/run` installs it): without them it
//! fails, it never skips.

#![cfg(feature = "parquet")]

use crate::common;
use crate::program;

use common::lwarscope;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every file under `dir`, relative, with its bytes.
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for table in ["sessions", "findings", "intervals"] {
        let mut files: Vec<_> = std::fs::read_dir(dir.join(table))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for f in files {
            let bytes = std::fs::read(&f).unwrap();
            out.push((f.strip_prefix(dir).unwrap().to_path_buf(), bytes));
        }
    }
    out
}

#[test]
fn a_folder_of_the_corpus_round_trips_through_duckdb() {
    let dir = tempfile::tempdir().unwrap();
    let tables = dir.path().join("tables");
    let out = lwarscope()
        .args(["-r", "captures/", "--format", "parquet", "--out"])
        .arg(&tables)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(
        listed
            .lines()
            .any(|l| l.starts_with("captures/sim-loss.pcap: ") && l.contains("sessions rows")),
        "{listed}"
    );
    let json = dir.path().join("fleet.json");
    let out = lwarscope()
        .args(["-r", "captures/", "--format", "json", "-z", "io,stat,1"])
        .output()
        .unwrap();
    assert!(out.status.success());
    std::fs::write(&json, &out.stdout).unwrap();

    let script = root().join("tests/duckdb_parquet.py");
    let result = program::program("python3")
        .arg(&script)
        .arg(&tables)
        .arg(&json)
        .output()
        .unwrap_or_else(|e| {
            panic!("python3 is needed to read the tables with DuckDB (python3 -m pip install duckdb): {e}")
        });
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(
        result.status.success(),
        "DuckDB disagrees with --format json (is the duckdb package installed? \
         python3 -m pip install duckdb):\n{stderr}"
    );
    let said = String::from_utf8_lossy(&result.stdout);
    assert!(said.contains("agree with --format json"), "{said}");
    println!("{said}");
}

#[test]
fn the_tables_are_the_same_bytes_whatever_j() {
    let dir = tempfile::tempdir().unwrap();
    let mut trees = Vec::new();
    for jobs in ["1", "2", "4"] {
        let out_dir = dir.path().join(format!("j{jobs}"));
        let out = lwarscope()
            .args([
                "-r",
                "captures/",
                "--format",
                "parquet",
                "-j",
                jobs,
                "--out",
            ])
            .arg(&out_dir)
            .output()
            .unwrap();
        assert!(out.status.success());
        trees.push((out.stdout, tree(&out_dir)));
    }
    assert!(!trees[0].1.is_empty());
    assert!(
        trees.iter().all(|t| *t == trees[0]),
        "-j changed the tables"
    );
}

#[test]
fn a_capture_that_fails_leaves_no_table_file() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = dir.path().join("fleet");
    std::fs::create_dir(&fleet).unwrap();
    std::fs::copy(
        root().join("captures/sim-clean.pcap"),
        fleet.join("sim-clean.pcap"),
    )
    .unwrap();
    let whole = std::fs::read(root().join("captures/sim-loss.pcap")).unwrap();
    std::fs::write(fleet.join("cut.pcap"), &whole[..whole.len() / 2 + 7]).unwrap();
    let tables = dir.path().join("tables");
    let out = lwarscope()
        .arg("-r")
        .arg(&fleet)
        .args(["--format", "parquet", "--out"])
        .arg(&tables)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cut.pcap: "), "{stderr}");
    let files = tree(&tables);
    let names: Vec<String> = files.iter().map(|(p, _)| p.display().to_string()).collect();
    assert_eq!(names.len(), 3, "{names:?}");
    assert!(names.iter().all(|n| n.contains("sim-clean-")), "{names:?}");
}

#[test]
fn the_interval_is_io_stat_s_and_other_statistics_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let tables = dir.path().join("t");
    let out = lwarscope()
        .args([
            "-r",
            "captures/sim-loss.pcap",
            "--format",
            "parquet",
            "-z",
            "io,stat,0.5",
            "--out",
        ])
        .arg(&tables)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let file = tables
        .join("intervals")
        .join(lwarscope::report::parquet::file_name(Path::new(
            "captures/sim-loss.pcap",
        )));
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
        std::fs::File::open(file).unwrap(),
    )
    .unwrap()
    .build()
    .unwrap();
    let mut rows = 0;
    for batch in reader {
        let batch = batch.unwrap();
        let length = batch
            .column_by_name("interval_s")
            .unwrap()
            .as_any()
            .downcast_ref::<arrow_array::Float64Array>()
            .unwrap();
        assert!(length.values().iter().all(|&s| s == 0.5));
        rows += batch.num_rows();
    }
    assert!(rows > 4, "{rows}");
    for (z, why) in [
        ("conv", "drop the other -z"),
        ("io,stat,1,resend", "without filters"),
    ] {
        let out = lwarscope()
            .args(["-r", "captures/", "--format", "parquet", "--out"])
            .arg(&tables)
            .args(["-z", z])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.starts_with("error: ") && stderr.contains(why),
            "{stderr}"
        );
    }
    let out = lwarscope()
        .args(["-r", "captures/", "--format", "parquet", "-q", "--out"])
        .arg(&tables)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// A disk that fills while the tables are written (here each file may grow
/// only so far: `ulimit -f`, with SIGXFSZ ignored so writes fail with EFBIG as
/// they would with ENOSPC): every capture ends with its three tables or none,
/// and no hidden `.tmp` file is left (before: 33 of them at 4 KiB, and
/// captures with their sessions table and no findings).
#[test]
fn a_full_disk_leaves_whole_captures_and_no_temporary_file() {
    for blocks in [8, 12, 40] {
        let out = tempfile::tempdir().unwrap();
        let script = format!(
            "trap '' XFSZ; ulimit -f {blocks}; exec \"$0\" -r \"$1\" --format parquet --out \"$2\" -j 1"
        );
        let run = std::process::Command::new("sh")
            .arg("-c")
            .arg(script)
            .arg(assert_cmd::cargo::cargo_bin("lwarscope"))
            .arg(root().join("captures"))
            .arg(out.path())
            .output()
            .unwrap();
        assert_eq!(run.status.code(), Some(2), "{blocks} blocks");
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(stderr.contains("File too large"), "{stderr}");
        let mut tables = Vec::new();
        for table in ["sessions", "findings", "intervals"] {
            let mut names = Vec::new();
            for e in std::fs::read_dir(out.path().join(table)).unwrap() {
                let name = e.unwrap().file_name().to_string_lossy().into_owned();
                assert!(!name.ends_with(".tmp"), "{table}/{name} left behind");
                names.push(name);
            }
            names.sort();
            tables.push(names);
        }
        assert_eq!(
            tables[0], tables[1],
            "{blocks} blocks: sessions and findings"
        );
        assert_eq!(
            tables[0], tables[2],
            "{blocks} blocks: sessions and intervals"
        );
        let failed = stderr
            .lines()
            .filter(|l| l.contains("File too large"))
            .count();
        let captures = std::fs::read_dir(root().join("captures"))
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .path()
                    .extension()
                    .is_some_and(|x| x == "pcap")
            })
            .count();
        assert_eq!(tables[0].len() + failed, captures, "{blocks} blocks");
    }
}
