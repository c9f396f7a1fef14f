//! The detail tree of the selected packet, and its payload in hex with the bytes
//! of the selected field highlighted.

use super::{block, fitted, inner, selected_style, severity_style};
use crate::tui::app::App;
use crate::tui::pane::Pane;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

pub fn draw_tree(f: &mut Frame, area: Rect, app: &mut App) {
    let title = app
        .detail
        .row
        .and_then(|r| app.rows.get(r))
        .map(|e| format!(" frame {} ", e.frame))
        .unwrap_or_default();
    f.render_widget(block(app, Pane::Detail, title), area);
    let body = inner(area);
    let focused = app.focus == Pane::Detail;
    let d = &mut app.detail;
    let visible = d.visible();
    let range = d
        .cursor
        .scroll_into_view(visible.len(), body.height as usize);
    let lines: Vec<Line> = range
        .map(|pos| {
            let i = visible[pos];
            let n = &d.nodes[i];
            let has_children = d.nodes.get(i + 1).is_some_and(|c| c.depth > n.depth);
            let marker = match (has_children, d.collapsed.contains(&i)) {
                (false, _) => "  ",
                (true, true) => "▸ ",
                (true, false) => "▾ ",
            };
            let label_style = n.severity.map_or(
                if n.depth == 0 {
                    Style::new().add_modifier(Modifier::BOLD)
                } else {
                    Style::new()
                },
                severity_style,
            );
            let mut spans = vec![
                Span::raw("  ".repeat(n.depth as usize)),
                Span::raw(marker),
                Span::styled(n.label.clone(), label_style),
            ];
            if !n.value.is_empty() {
                spans.push(Span::raw(": "));
                spans.push(Span::raw(n.value.clone()));
            }
            let line = Line::from(spans);
            if pos == d.cursor.selected {
                line.style(selected_style(focused))
            } else {
                line
            }
        })
        .collect();
    f.render_widget(fitted(lines, body), body);
}

pub fn draw_hex(f: &mut Frame, area: Rect, app: &mut App) {
    let span = app.detail.selected_node().and_then(|n| n.span.clone());
    let title = span
        .as_ref()
        .map(|s| format!(" {}..{} ", s.start, s.end))
        .unwrap_or_default();
    f.render_widget(block(app, Pane::Hex, title), area);
    let body = inner(area);
    // 16 bytes per line where it fits, else 8, else 4.
    let per_line = [16usize, 8, 4]
        .into_iter()
        .find(|&n| body.width as usize > 5 + 4 * n)
        .unwrap_or(4);
    let payload = &app.detail.payload;
    let lines_total = payload.len().div_ceil(per_line);
    let height = body.height as usize;
    // Bring the selected field into view unless the user is scrolling the hex.
    if app.focus != Pane::Hex
        && let Some(s) = &span
    {
        let first = s.start / per_line;
        let last = s.end.saturating_sub(1) / per_line;
        if first < app.hex.scroll || last >= app.hex.scroll + height {
            app.hex.scroll = first;
        }
    }
    app.hex.scroll = app.hex.scroll.min(lines_total.saturating_sub(height));
    let hl = Style::new().bg(Color::Yellow).fg(Color::Black);
    let in_span = |i: usize| span.as_ref().is_some_and(|s| s.contains(&i));
    let lines: Vec<Line> = (app.hex.scroll..lines_total.min(app.hex.scroll + height))
        .map(|l| {
            let start = l * per_line;
            let chunk = &payload[start..(start + per_line).min(payload.len())];
            let mut spans = vec![Span::styled(
                format!("{start:04x} "),
                Style::new().fg(Color::DarkGray),
            )];
            for (k, b) in chunk.iter().enumerate() {
                let style = if in_span(start + k) { hl } else { Style::new() };
                spans.push(Span::styled(format!("{b:02x}"), style));
                spans.push(Span::raw(" "));
            }
            spans.push(Span::raw("   ".repeat(per_line - chunk.len())));
            spans.push(Span::raw(" "));
            for (k, b) in chunk.iter().enumerate() {
                let c = if b.is_ascii_graphic() || *b == b' ' {
                    *b as char
                } else {
                    '.'
                };
                let style = if in_span(start + k) { hl } else { Style::new() };
                spans.push(Span::styled(c.to_string(), style));
            }
            Line::from(spans)
        })
        .collect();
    f.render_widget(Paragraph::new(lines), body);
}
