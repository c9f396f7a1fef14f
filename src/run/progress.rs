//! A progress bar on standard error for long files, only when standard error is a
//! terminal: silent in pipes, CI logs and tests.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// Files smaller than this are read too fast for a bar to help.
pub const MIN_BYTES: u64 = 32 * 1024 * 1024;

/// Progress through the bytes of a capture file.
pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// A bar for a file of `total` bytes; hidden unless standard error is a
    /// terminal and the file is at least [`MIN_BYTES`].
    pub fn for_file(name: &str, total: u64) -> Self {
        let shown = std::io::stderr().is_terminal() && total >= MIN_BYTES;
        Self::new(name, total, shown)
    }

    /// A bar drawn on standard error when `shown`, else a hidden one.
    pub fn new(name: &str, total: u64, shown: bool) -> Self {
        let target = if shown {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(Some(total), target);
        if let Ok(style) = ProgressStyle::with_template(
            "{prefix} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
        ) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_prefix(name.to_owned());
        Progress { bar }
    }

    /// One bar for a whole fleet run: files done of `files`; hidden unless
    /// standard error is a terminal and there is more than one file.
    pub fn for_files(files: usize) -> Self {
        let shown = std::io::stderr().is_terminal() && files > 1;
        let target = if shown {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(Some(files as u64), target);
        if let Ok(style) =
            ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} files, eta {eta}")
        {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_prefix("analysing");
        Progress { bar }
    }

    /// One more file done.
    pub fn inc(&self) {
        self.bar.inc(1);
    }

    pub fn is_hidden(&self) -> bool {
        self.bar.is_hidden()
    }

    /// Bytes read so far.
    pub fn set(&self, bytes: u64) {
        self.bar.set_position(bytes);
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_when_asked_or_small() {
        assert!(Progress::new("x", 10, false).is_hidden());
        assert!(Progress::for_file("x", MIN_BYTES - 1).is_hidden());
        assert!(Progress::for_files(1).is_hidden());
    }
}
