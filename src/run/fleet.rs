//! Many captures at once: the inputs of a fleet run (files, directories, globs),
//! and a worker pool that analyses them in parallel and hands the results back
//! in input order.
//!
//! Each file is analysed on its own engine by one worker; a worker holds one
//! file at a time, and results that finish ahead of an earlier, slower file
//! wait at most [`WINDOW_PER_WORKER`] files per worker ahead of it, so memory
//! stays bounded whatever the number of files. With one worker the order of
//! the work is the order of the files: `-j 1` is the sequential run, and every
//! `-j N` prints exactly what it prints.

use std::collections::BTreeMap;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, mpsc};
use std::time::Duration;

/// Why the inputs of a run cannot be listed.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("{pattern}: no file matches this pattern", pattern = crate::text::printable(.pattern))]
    NoMatch { pattern: String },
    #[error(
        "{dir}: no capture file (*.pcap, *.pcapng, *.cap, or one of them .gz or .zst) in this directory",
        dir = crate::text::printable(.dir)
    )]
    EmptyDir { dir: String },
    #[error("{pattern}: bad pattern: {message}", pattern = crate::text::printable(.pattern))]
    BadPattern { pattern: String, message: String },
    #[error("{path}: {source}", path = crate::text::printable(.path))]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// The file extensions a directory is searched for (any case).
pub const CAPTURE_EXTENSIONS: [&str; 3] = ["pcap", "pcapng", "cap"];

/// The compressed forms a directory search takes too.
pub const COMPRESSED_EXTENSIONS: [&str; 2] = ["gz", "zst"];

/// One capture of a run: its path, and why it is refused when a folder walk or
/// a glob found it and it is no regular file (a FIFO would stall the run until
/// someone wrote to it; a device or socket is no capture). A file named on its
/// own is read whatever it is: a FIFO named explicitly is a stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    pub path: PathBuf,
    pub refused: Option<&'static str>,
}

impl Input {
    fn named(path: PathBuf) -> Input {
        Input {
            path,
            refused: None,
        }
    }

    /// A file found by a walk or a glob: refused unless it is a regular file
    /// (a symbolic link is followed).
    fn found(path: PathBuf) -> Input {
        use std::os::unix::fs::FileTypeExt;
        let refused = match std::fs::metadata(&path) {
            Ok(m) if m.is_file() => None,
            Ok(m) => Some({
                let t = m.file_type();
                if t.is_fifo() {
                    "not a regular file (a FIFO): not read in a folder walk or a glob, which would wait for a writer; name it on its own to read it as a stream"
                } else if t.is_socket() {
                    "not a regular file (a socket): not read in a folder walk or a glob"
                } else if t.is_block_device() || t.is_char_device() {
                    "not a regular file (a device): not read in a folder walk or a glob"
                } else {
                    "not a regular file: not read in a folder walk or a glob"
                }
            }),
            // Missing (a dangling link) or unreadable: the analysis says why.
            Err(_) => None,
        };
        Input { path, refused }
    }
}

/// True when `arg` names many captures: an existing directory, or a pattern
/// (`*`, `?`, `[`) that is not itself the name of a file.
pub fn names_many(arg: &Path) -> bool {
    arg.is_dir() || (!arg.exists() && is_pattern(arg))
}

fn is_pattern(arg: &Path) -> bool {
    arg.to_string_lossy().contains(['*', '?', '['])
}

/// The files of a run's arguments, in order: a file as given (a missing one is
/// left for the analysis to report, with the others), a directory as every
/// capture file under it, a glob (`captures/**/*.pcap`) as the files it
/// matches; each directory or glob sorted by path. A glob that matches nothing,
/// or a directory without captures, is an error.
pub fn expand(args: &[PathBuf]) -> Result<Vec<Input>, InputError> {
    let mut files = Vec::new();
    for arg in args {
        if arg.is_dir() {
            let before = files.len();
            walk(arg, &mut files)?;
            if files.len() == before {
                return Err(InputError::EmptyDir {
                    dir: arg.display().to_string(),
                });
            }
            files[before..].sort_by(|a, b| a.path.cmp(&b.path));
        } else if !arg.exists() && is_pattern(arg) {
            let pattern = arg.to_string_lossy().into_owned();
            let options = glob::MatchOptions {
                case_sensitive: true,
                require_literal_separator: true,
                require_literal_leading_dot: false,
            };
            let paths = glob::glob_with(&pattern, options).map_err(|e| InputError::BadPattern {
                pattern: pattern.clone(),
                message: e.msg.to_owned(),
            })?;
            let before = files.len();
            for path in paths {
                let path = path.map_err(|e| InputError::Read {
                    path: e.path().display().to_string(),
                    source: std::io::Error::new(e.error().kind(), e.error().to_string()),
                })?;
                if path.is_dir() {
                    walk(&path, &mut files)?;
                } else {
                    files.push(Input::found(path));
                }
            }
            if files.len() == before {
                return Err(InputError::NoMatch { pattern });
            }
            files[before..].sort_by(|a, b| a.path.cmp(&b.path));
            dedup_sorted(&mut files, before);
        } else {
            files.push(Input::named(arg.clone()));
        }
    }
    Ok(files)
}

/// Removes the repeats of a sorted tail (a glob's directory and its files).
fn dedup_sorted(files: &mut Vec<Input>, from: usize) {
    let mut tail = files.split_off(from);
    tail.dedup();
    files.extend(tail);
}

/// Every capture file under `dir`, recursively (symbolic links to
/// directories are not followed, so a loop cannot trap the walk).
fn walk(dir: &Path, files: &mut Vec<Input>) -> Result<(), InputError> {
    let read = |source| InputError::Read {
        path: dir.display().to_string(),
        source,
    };
    for entry in std::fs::read_dir(dir).map_err(read)? {
        let entry = entry.map_err(read)?;
        let path = entry.path();
        let kind = entry.file_type().map_err(read)?;
        if kind.is_dir() {
            walk(&path, files)?;
        } else if is_capture_name(&path) {
            files.push(Input::found(path));
        }
    }
    Ok(())
}

fn is_capture_name(path: &Path) -> bool {
    let ext = |p: &Path, list: &[&str]| {
        p.extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| list.iter().any(|c| e.eq_ignore_ascii_case(c)))
    };
    if ext(path, &COMPRESSED_EXTENSIONS) {
        return ext(&path.with_extension(""), &CAPTURE_EXTENSIONS);
    }
    ext(path, &CAPTURE_EXTENSIONS)
}

/// The default number of workers: the cores this process may use.
pub fn default_jobs() -> NonZeroUsize {
    std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN)
}

/// How many files each worker may run ahead of the oldest file not yet
/// handed back.
pub const WINDOW_PER_WORKER: usize = 4;

/// Runs `work` on every index below `n` on `jobs` threads, and calls `emit`
/// with each result in index order, on the calling thread, as soon as it and
/// every earlier one are done.
pub fn run_in_order<T: Send>(
    n: usize,
    jobs: NonZeroUsize,
    work: impl Fn(usize) -> T + Sync,
    mut emit: impl FnMut(usize, T),
) {
    let jobs = jobs.get().min(n.max(1));
    let window = jobs * WINDOW_PER_WORKER;
    // The next index to take, and the first not yet emitted.
    let state = Mutex::new((0usize, 0usize));
    let turn = Condvar::new();
    let (tx, rx) = mpsc::channel::<(usize, T)>();
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            let tx = tx.clone();
            let (state, turn, work) = (&state, &turn, &work);
            scope.spawn(move || {
                if jobs > 1 {
                    super::pipeline::mark_shared_worker();
                }
                loop {
                    let i = {
                        let mut s = state.lock().unwrap_or_else(|p| p.into_inner());
                        while s.0 < n && s.0 >= s.1 + window {
                            s = turn.wait(s).unwrap_or_else(|p| p.into_inner());
                        }
                        if s.0 >= n {
                            return;
                        }
                        s.0 += 1;
                        s.0 - 1
                    };
                    if tx.send((i, work(i))).is_err() {
                        return;
                    }
                }
            });
        }
        drop(tx);
        let mut pending = BTreeMap::new();
        let mut next = 0;
        for (i, result) in rx {
            pending.insert(i, result);
            while let Some(result) = pending.remove(&next) {
                emit(next, result);
                next += 1;
                state.lock().unwrap_or_else(|p| p.into_inner()).1 = next;
                turn.notify_all();
            }
        }
    });
}

/// What the capture options of `lwarscope -r` set on each file of a fleet run.
#[derive(Debug, Clone, Copy, Default)]
pub struct Each<'a> {
    /// The capture filter, `-f`.
    pub file_filter: Option<&'a str>,
    /// `-a`: capture time read of each file, from its first frame.
    pub duration: Option<Duration>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_order_whatever_the_workers() {
        for jobs in [1, 2, 3, 8] {
            let mut seen = Vec::new();
            run_in_order(
                50,
                NonZeroUsize::new(jobs).unwrap(),
                |i| {
                    // Early files take longest: later ones finish first.
                    std::thread::sleep(std::time::Duration::from_micros(((50 - i) * 20) as u64));
                    i * 2
                },
                |i, r| seen.push((i, r)),
            );
            let want: Vec<_> = (0..50).map(|i| (i, i * 2)).collect();
            assert_eq!(seen, want, "-j {jobs}");
        }
        let mut none = 0;
        run_in_order(0, NonZeroUsize::MIN, |i| i, |_, _| none += 1);
        assert_eq!(none, 0);
    }

    #[test]
    fn workers_run_at_most_a_window_ahead_of_a_slow_file() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let emitted = AtomicUsize::new(0);
        let ahead = AtomicUsize::new(0);
        let jobs = NonZeroUsize::new(2).unwrap();
        run_in_order(
            200,
            jobs,
            |i| {
                if i % 50 == 0 {
                    // A slow file: the others must wait for it, not pile up.
                    std::thread::sleep(std::time::Duration::from_millis(30));
                }
                let done = emitted.load(Ordering::SeqCst);
                ahead.fetch_max(i.saturating_sub(done), Ordering::SeqCst);
            },
            |i, ()| emitted.store(i + 1, Ordering::SeqCst),
        );
        let max = ahead.load(Ordering::SeqCst);
        assert!(max < 2 * WINDOW_PER_WORKER, "{max} files ahead");
    }

    #[test]
    fn directories_and_globs_expand_sorted() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir(d.join("sub")).unwrap();
        for f in [
            "b.pcap",
            "a.PCAPNG",
            "notes.txt",
            "notes.txt.gz",
            "sub/c.cap",
            "sub/a.pcap",
            "sub/d.pcap.gz",
            "sub/e.pcapng.zst",
        ] {
            std::fs::write(d.join(f), b"").unwrap();
        }
        let paths = |got: Vec<Input>| {
            assert!(got.iter().all(|i| i.refused.is_none()));
            got.into_iter().map(|i| i.path).collect::<Vec<_>>()
        };
        let got = paths(expand(&[d.to_path_buf()]).unwrap());
        let want: Vec<PathBuf> = [
            "a.PCAPNG",
            "b.pcap",
            "sub/a.pcap",
            "sub/c.cap",
            "sub/d.pcap.gz",
            "sub/e.pcapng.zst",
        ]
        .iter()
        .map(|f| d.join(f))
        .collect();
        assert_eq!(got, want);
        let got = paths(expand(&[d.join("**/*.pcap")]).unwrap());
        assert_eq!(got, [d.join("b.pcap"), d.join("sub/a.pcap")]);
        // A plain file is kept as given, even a missing one, in argument order.
        let got = paths(expand(&[d.join("z.pcap"), d.join("sub/*.cap")]).unwrap());
        assert_eq!(got, [d.join("z.pcap"), d.join("sub/c.cap")]);
        let e = expand(&[d.join("*.none")]).unwrap_err();
        assert!(
            e.to_string().ends_with("no file matches this pattern"),
            "{e}"
        );
        let empty = tempfile::tempdir().unwrap();
        assert!(matches!(
            expand(&[empty.path().to_path_buf()]),
            Err(InputError::EmptyDir { .. })
        ));
        assert!(matches!(
            expand(&[d.join("[")]),
            Err(InputError::BadPattern { .. })
        ));
        assert!(names_many(d));
        assert!(names_many(&d.join("*.pcap")));
        assert!(!names_many(&d.join("b.pcap")));
    }
}
