//! The packet list: a virtual list over the index, decoding only visible rows.

use super::{block_in, fitted, inner, selected_style, severity_style};
use crate::tui::app::App;
use crate::tui::pane::Pane;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use std::fmt::Write;

pub fn draw(f: &mut Frame, area: Rect, app: &mut App) {
    let len = app.view_len();
    let mut title = match app.view.session {
        Some(s) => format!(" session {s}: {len} "),
        None => format!(" {len} "),
    };
    if let Some(filter) = &app.view.filter {
        let _ = write!(
            title,
            "of {} kept by /{}/ ",
            app.row_limit(),
            crate::text::printable(filter.text())
        );
    }
    if let Some(p) = app.filtering() {
        let _ = write!(title, "filtering {:.0}% ", p * 100.0);
    }
    f.render_widget(block_in(app, Pane::Packets, area, title), area);
    let body = inner(area);
    let visible = app.view.cursor.scroll_into_view(len, body.height as usize);
    let focused = app.focus == Pane::Packets;
    let first = app.first_ts();
    let mut payload = Vec::new();
    let mut lines = Vec::with_capacity(visible.len());
    for i in visible {
        let Some(r) = app.view_row(i) else { break };
        let Some(row) = app.row(r) else {
            lines.push(Line::raw("[row unavailable]"));
            continue;
        };
        let mut spans = Vec::with_capacity(8);
        let frame_style = row.worst().map_or(Style::new(), super::severity_style);
        spans.push(Span::styled(format!("{:>6} ", row.frame), frame_style));
        let t = row.ts.since(first);
        spans.push(Span::raw(format!(
            "{:>4}.{:06} ",
            t / 1_000_000_000,
            t % 1_000_000_000 / 1_000
        )));
        let (src, dst) = match app.addresses(&row) {
            Some((s, d)) => (s.to_string(), d.to_string()),
            None => ("?".into(), "?".into()),
        };
        spans.push(Span::styled(
            format!("{src} -> {dst} "),
            Style::new().fg(Color::Cyan),
        ));
        let mut text = String::new();
        if app.payload(&row, &mut payload) {
            let dissector = app.dissector(&row, &payload);
            let header = dissector.header(&payload, &mut |h| {
                let _ = write!(text, "{}={} ", h.short, h.value);
            });
            match header {
                Ok(()) => {
                    let _ = write!(text, "len={} ", row.len);
                    let mut first = true;
                    let _ = dissector.messages(&payload, &mut |m| {
                        let _ = write!(text, "{}{}", if first { "" } else { " " }, m.token);
                        first = false;
                    });
                    spans.push(Span::raw(text));
                }
                Err(e) => {
                    spans.push(Span::raw(format!("len={} ", row.len)));
                    spans.push(Span::styled(
                        format!("undecodable: {e}"),
                        severity_style(crate::engine::Severity::Error),
                    ));
                }
            }
        } else {
            spans.push(Span::raw("[payload unavailable]"));
        }
        // Findings as the report prints them: ` [resend#3, lost#4]`, coloured.
        let mut first = true;
        for finding in app.findings_of(r) {
            spans.push(Span::raw(if first { " [" } else { ", " }));
            first = false;
            let mut token = finding.label().to_string();
            if let Some(s) = finding.seqno() {
                let _ = write!(token, "#{s}");
            }
            spans.push(Span::styled(token, severity_style(finding.severity())));
        }
        if !first {
            spans.push(Span::raw("]"));
        }
        let mut line = Line::from(spans);
        if i == app.view.cursor.selected {
            line = line.style(selected_style(focused));
        }
        lines.push(line);
    }
    f.render_widget(fitted(lines, body), body);
}
