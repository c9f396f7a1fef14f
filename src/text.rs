//! Text that did not come from lwarscope (wire strings, file names, strings of
//! a description) shown safely: on a terminal or in text output a control
//! character (C0, DEL, C1 U+0080-U+009F) is shown escaped (`\u{1b}`, `\n`),
//! never written raw, so a name cannot retitle the window, clear the screen
//! or forge a line of its own; in XML, the characters XML 1.0 forbids are
//! shown the same way, so the document stays well-formed.

use std::fmt;
use std::path::Path;

/// Text from outside, safe on a terminal: control characters (escape
/// sequences that could clear the screen or retitle the window, a newline
/// that would forge a line) are shown escaped, never written raw. Text
/// already shown this way comes out unchanged.
pub fn printable(text: &str) -> impl fmt::Display + '_ {
    fmt::from_fn(move |f| {
        for c in text.chars() {
            if c.is_control() {
                write!(f, "{}", c.escape_default())?;
            } else {
                write!(f, "{c}")?;
            }
        }
        Ok(())
    })
}

/// A message of several lines (a filter error pointing at its column),
/// safe on a terminal: each line as [`printable`] shows it, the newlines
/// between them kept. For messages whose file names are already escaped
/// (the error types escape them): nothing else in them can send a control.
pub fn printable_lines(text: &str) -> impl fmt::Display + '_ {
    fmt::from_fn(move |f| {
        for (i, line) in text.split('\n').enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{}", printable(line))?;
        }
        Ok(())
    })
}

/// A file name, safe on a terminal: as [`printable`] shows it, bytes that
/// are not UTF-8 shown lossily (U+FFFD).
pub fn path(path: &Path) -> impl fmt::Display + '_ {
    fmt::from_fn(move |f| write!(f, "{}", printable(&path.to_string_lossy())))
}

/// Text for XML 1.0 content or attributes: the characters XML 1.0 forbids
/// even as character references (C0 controls but tab, newline and carriage
/// return; U+FFFE and U+FFFF) are shown escaped as [`printable`] shows them;
/// everything else is kept (the XML writer escapes `<`, `&` and quotes).
pub fn xml(text: &str) -> std::borrow::Cow<'_, str> {
    let forbidden = |c: char| matches!(c, '\0'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{e}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}');
    if !text.contains(forbidden) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if forbidden(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_escaped_once() {
        let name = "a\u{1b}]0;t\u{7}\u{1b}[2J\nPASS  k.pcap\u{9b}\u{7f}é";
        let shown = printable(name).to_string();
        assert_eq!(
            shown,
            "a\\u{1b}]0;t\\u{7}\\u{1b}[2J\\nPASS  k.pcap\\u{9b}\\u{7f}é"
        );
        assert_eq!(printable(&shown).to_string(), shown);
    }

    #[test]
    fn lines_keep_their_newlines() {
        let text = "bad filter\n  a\u{1b}[2J\n  ^";
        assert_eq!(
            printable_lines(text).to_string(),
            "bad filter\n  a\\u{1b}[2J\n  ^"
        );
    }

    #[test]
    fn paths_are_lossy_and_escaped() {
        use std::os::unix::ffi::OsStrExt;
        let p = Path::new(std::ffi::OsStr::from_bytes(b"d/\x1b[2J\xff.pcap"));
        assert_eq!(path(p).to_string(), "d/\\u{1b}[2J\u{fffd}.pcap");
    }

    #[test]
    fn xml_keeps_what_xml_allows() {
        assert_eq!(xml("a\tb\nc\u{9b}"), "a\tb\nc\u{9b}");
        assert_eq!(xml("a\u{1b}[2J\u{0}\u{ffff}"), "a\\u{1b}[2J\\u{0}\\u{ffff}");
    }
}
