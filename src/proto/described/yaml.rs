//! A YAML document as a tree with the line and column of every node, built from
//! `yaml-rust2`'s parser events. Only what a `.ksy` needs: mappings with
//! scalar keys, sequences, scalars. Anchors, aliases and tags are refused (the
//! subset has no use for them).
//!
//! **Bounds.** The parser's events are read one by one (never through
//! `yaml-rust2`'s recursive loader), so nothing recurses on the document's
//! shape: mappings and lists nested more than [`MAX_DEPTH`] deep (block or
//! flow) are refused at the node that goes past it, and a mapping of more
//! than [`MAX_KEYS`] keys at the key past it. Duplicate keys are found in a
//! hash set, in time linear in the number of keys.

use std::collections::HashSet;
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// Mappings and lists nested inside one another, at most (a `.ksy` needs
/// about ten: `types`, a type, its `seq`, a field, its `type`'s `cases`...).
pub const MAX_DEPTH: usize = 32;

/// Keys of one mapping, at most: an enum of every 16-bit value fits.
pub const MAX_KEYS: usize = 65_536;

/// Where a node starts: 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pos {
    pub line: usize,
    pub col: usize,
}

impl Pos {
    fn of(m: Marker) -> Pos {
        // yaml-rust2's markers: lines from 1, columns from 0.
        Pos {
            line: m.line(),
            col: m.col() + 1,
        }
    }
}

/// A node of the document.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub pos: Pos,
    pub value: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A scalar as written; `quoted` when it was in quotes (so `"1"` is text).
    Scalar {
        text: String,
        quoted: bool,
    },
    Seq(Vec<Node>),
    /// Keys in document order, each with its position.
    Map(Vec<(String, Pos, Node)>),
}

impl Node {
    pub fn as_map(&self) -> Option<&[(String, Pos, Node)]> {
        match &self.value {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    pub fn as_seq(&self) -> Option<&[Node]> {
        match &self.value {
            Value::Seq(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }

    /// What kind of node it is, for error messages.
    pub fn noun(&self) -> &'static str {
        match &self.value {
            Value::Scalar { .. } => "a scalar",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }
}

/// A YAML error: where, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlError {
    pub pos: Pos,
    pub msg: String,
}

enum Frame {
    Seq(Pos, Vec<Node>),
    /// Its entries, the keys seen (for duplicates), and the key waiting for
    /// its value.
    Map(
        Pos,
        Vec<(String, Pos, Node)>,
        HashSet<String>,
        Option<(String, Pos)>,
    ),
}

#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    root: Option<Node>,
    error: Option<YamlError>,
    documents: usize,
}

impl Builder {
    fn fail(&mut self, pos: Pos, msg: impl Into<String>) {
        if self.error.is_none() {
            self.error = Some(YamlError {
                pos,
                msg: msg.into(),
            });
        }
    }

    fn push(&mut self, node: Node) {
        match self.stack.last_mut() {
            None => self.root = Some(node),
            Some(Frame::Seq(_, items)) => items.push(node),
            Some(Frame::Map(_, entries, keys, key)) => match key.take() {
                Some((k, kpos)) => entries.push((k, kpos, node)),
                None => match node.value {
                    Value::Scalar { text, .. } => {
                        if keys.len() >= MAX_KEYS {
                            let msg = format!(
                                "a mapping of more than {MAX_KEYS} keys: split it (an enum lists at most {MAX_KEYS} values)"
                            );
                            return self.fail(node.pos, msg);
                        }
                        let twice = !keys.insert(text.clone());
                        let msg =
                            twice.then(|| format!("key `{text}` appears twice in this mapping"));
                        *key = Some((text, node.pos));
                        if let Some(msg) = msg {
                            self.fail(node.pos, msg);
                        }
                    }
                    _ => self.fail(node.pos, "a mapping key must be a scalar"),
                },
            },
        }
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        if self.error.is_some() {
            return;
        }
        let pos = Pos::of(mark);
        match ev {
            Event::DocumentStart => {
                self.documents += 1;
                if self.documents > 1 {
                    self.fail(
                        pos,
                        "more than one YAML document: put one description per file",
                    );
                }
            }
            Event::Alias(_) => self.fail(
                pos,
                "YAML aliases (*name) are not supported: write the value out",
            ),
            Event::Scalar(text, style, anchor, tag) => {
                if anchor != 0 {
                    return self.fail(
                        pos,
                        "YAML anchors (&name) are not supported: write the value out",
                    );
                }
                if tag.is_some() {
                    return self.fail(pos, "YAML tags (!tag) are not supported: remove the tag");
                }
                let quoted = !matches!(style, TScalarStyle::Plain);
                self.push(Node {
                    pos,
                    value: Value::Scalar { text, quoted },
                });
            }
            Event::SequenceStart(anchor, tag) | Event::MappingStart(anchor, tag)
                if anchor != 0 || tag.is_some() =>
            {
                self.fail(
                    pos,
                    "YAML anchors and tags are not supported: write the value out",
                )
            }
            Event::SequenceStart(..) | Event::MappingStart(..) if self.stack.len() >= MAX_DEPTH => {
                self.fail(
                    pos,
                    format!(
                        "mappings and lists nested more than {MAX_DEPTH} deep: a description needs far fewer"
                    ),
                )
            }
            Event::SequenceStart(..) => self.stack.push(Frame::Seq(pos, Vec::new())),
            Event::MappingStart(..) => {
                let keys = HashSet::new();
                self.stack.push(Frame::Map(pos, Vec::new(), keys, None))
            }
            Event::SequenceEnd => {
                if let Some(Frame::Seq(p, items)) = self.stack.pop() {
                    self.push(Node {
                        pos: p,
                        value: Value::Seq(items),
                    });
                }
            }
            Event::MappingEnd => {
                if let Some(Frame::Map(p, entries, _, _)) = self.stack.pop() {
                    self.push(Node {
                        pos: p,
                        value: Value::Map(entries),
                    });
                }
            }
            _ => {}
        }
    }
}

/// Parses one YAML document.
pub fn parse(text: &str) -> Result<Node, YamlError> {
    let mut builder = Builder::default();
    let mut parser = Parser::new_from_str(text);
    // Event by event, not `Parser::load`: it recurses once per level of
    // nesting, and a deep document overflowed the stack there.
    while builder.error.is_none() {
        match parser.next_token() {
            Ok((Event::StreamEnd, _)) => break,
            Ok((ev, mark)) => builder.on_event(ev, mark),
            Err(e) => {
                let m = *e.marker();
                return Err(YamlError {
                    pos: Pos::of(m),
                    msg: format!("not valid YAML: {}", e.info()),
                });
            }
        }
    }
    if let Some(e) = builder.error {
        return Err(e);
    }
    builder.root.ok_or(YamlError {
        pos: Pos { line: 1, col: 1 },
        msg: "the file is empty: a description starts with `meta:`".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_one_based_lines_and_columns() {
        let n = parse("meta:\n  id: x\nseq:\n  - id: a\n    type: u1\n").unwrap();
        let m = n.as_map().unwrap();
        assert_eq!(m[0].0, "meta");
        assert_eq!(m[0].1, Pos { line: 1, col: 1 });
        let meta = m[0].2.as_map().unwrap();
        assert_eq!(meta[0].1, Pos { line: 2, col: 3 });
        let seq = m[1].2.as_seq().unwrap();
        let a = seq[0].as_map().unwrap();
        assert_eq!(a[1].0, "type");
        assert_eq!(a[1].1, Pos { line: 5, col: 5 });
        assert_eq!(a[1].2.pos, Pos { line: 5, col: 11 });
    }

    #[test]
    fn anchors_aliases_tags_and_duplicate_keys_are_refused_with_their_place() {
        let e = parse("a: &x 1\nb: *x\n").unwrap_err();
        assert_eq!((e.pos.line, e.pos.col), (1, 7), "the anchored value");
        assert!(e.msg.contains("anchors"), "{}", e.msg);
        let e = parse("a: 1\na: 2\n").unwrap_err();
        assert_eq!(e.pos.line, 2);
        assert!(e.msg.contains("`a` appears twice"), "{}", e.msg);
        let e = parse("a: !t 1\n").unwrap_err();
        assert!(e.msg.contains("tags"), "{}", e.msg);
        let e = parse("a: [1,\n").unwrap_err();
        assert!(e.msg.starts_with("not valid YAML"), "{}", e.msg);
    }

    /// Parses `text` on a thread with a small stack: a parse that recursed
    /// once per level of nesting would overflow it.
    fn parse_on_small_stack(text: String) -> Result<Node, YamlError> {
        std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || parse(&text))
            .unwrap()
            .join()
            .unwrap()
    }

    #[test]
    fn deep_nesting_is_refused_where_it_goes_past_the_bound_without_recursing() {
        // 50 000 block lists nested in a `doc-ref:`, on one line (100 KB).
        let lists = format!("meta:\n  id: x\n  doc-ref:\n    {}1\n", "- ".repeat(50_000));
        let e = parse_on_small_stack(lists).unwrap_err();
        assert_eq!(
            (e.pos, e.msg.as_str()),
            (
                Pos {
                    line: 4,
                    col: 5 + 2 * (MAX_DEPTH - 2)
                },
                "mappings and lists nested more than 32 deep: a description needs far fewer"
            )
        );
        // Block mappings, one more column each, 2 000 deep.
        let maps: String = (0..2_000)
            .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
            .collect();
        let e = parse_on_small_stack(maps + &" ".repeat(2_000) + "1\n").unwrap_err();
        assert_eq!(
            (e.pos, e.msg.contains("nested more than 32 deep")),
            (
                // The 33rd mapping, `k32:`, as the parser marks it: at the
                // colon of its first key.
                Pos {
                    line: MAX_DEPTH + 1,
                    col: MAX_DEPTH + 4
                },
                true
            ),
            "{}",
            e.msg
        );
        // Flow lists too.
        let flow = format!("a: {}{}\n", "[".repeat(100), "]".repeat(100));
        let e = parse_on_small_stack(flow).unwrap_err();
        assert_eq!(
            e.pos,
            Pos {
                line: 1,
                col: 4 + MAX_DEPTH - 1
            },
            "{}",
            e.msg
        );
        assert!(e.msg.contains("nested more than 32 deep"), "{}", e.msg);
        // Right at the bound: read.
        let at = format!(
            "a: {}1{}\n",
            "[".repeat(MAX_DEPTH - 1),
            "]".repeat(MAX_DEPTH - 1)
        );
        parse_on_small_stack(at).unwrap();
    }

    #[test]
    fn duplicate_keys_are_found_at_their_place_and_a_mapping_is_bounded() {
        // 65 536 keys (an enum of every 16-bit value) load at once.
        let keys = |n: usize| -> String {
            (0..n).fold(String::from("e:\n"), |s, i| s + &format!("  {i}: v{i}\n"))
        };
        let n = parse(&keys(MAX_KEYS)).unwrap();
        assert_eq!(n.as_map().unwrap()[0].2.as_map().unwrap().len(), MAX_KEYS);
        // One more is refused at the key past the bound.
        let e = parse(&keys(MAX_KEYS + 1)).unwrap_err();
        assert_eq!(
            (e.pos, e.msg.as_str()),
            (
                Pos {
                    line: MAX_KEYS + 2,
                    col: 3
                },
                "a mapping of more than 65536 keys: split it (an enum lists at most 65536 values)"
            )
        );
        // A duplicate at the end of a long mapping is found, at its place.
        let e = parse(&(keys(50_000) + "  7: again\n")).unwrap_err();
        assert_eq!(
            e.pos,
            Pos {
                line: 50_002,
                col: 3
            }
        );
        assert_eq!(e.msg, "key `7` appears twice in this mapping");
        // Quadratic checking took 48.7 s for 100 000 keys (release); the keys
        // are checked through a hash set now. No wall-clock bound here: a
        // loaded machine made one fail with nothing wrong (speed is shown by
        // benchmarks, not by timed tests).
    }
}
