//! The check every protocol's golden vectors make of its tokens and texts,
//! shared by the area test binaries (included with `#[path]`).

use lwarscope::proto::dissect::TextBytes;

/// A token's or text's bytes for packet lines and JSON Lines (written by
/// hand for speed) are what its `Display` writes; JSON's search for escapes
/// begins at or before its first quoted text.
pub fn same_bytes_as_display(t: &dyn TextBytes) {
    let shown = t.to_string();
    let mut bytes = b"x".to_vec();
    t.write_bytes(&mut bytes);
    assert_eq!(&bytes[1..], shown.as_bytes());
    let mut json = b"x".to_vec();
    let from = t.write_json(&mut json);
    assert_eq!(&json[1..], shown.as_bytes());
    assert!(
        from <= 1 + shown.find('"').unwrap_or(shown.len()),
        "{shown}"
    );
}
