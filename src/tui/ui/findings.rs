//! The findings log; Enter jumps to the packet.

use super::{block, inner, selected_style, severity_style};
use crate::tui::app::App;
use crate::tui::pane::Pane;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

pub fn draw(f: &mut Frame, area: Rect, app: &mut App) {
    let len = app.finding_limit();
    f.render_widget(block(app, Pane::Findings, format!(" {len} ")), area);
    let body = inner(area);
    let visible = app
        .finding_list
        .cursor
        .scroll_into_view(len, body.height as usize);
    let focused = app.focus == Pane::Findings;
    let lines: Vec<Line> = app
        .findings
        .range(visible.clone())
        .zip(visible)
        .map(|(fi, i)| {
            let mut detail = app.finding_detail(fi);
            if let Some(s) = fi.seqno() {
                detail = format!("#{s} {detail}");
            }
            let frame = app
                .finding_frame(fi)
                .map_or_else(|| "?".to_owned(), |f| f.to_string());
            let line = Line::from(vec![
                Span::raw(format!("{frame:>6} ")),
                Span::styled(
                    format!("{:<7} ", fi.severity()),
                    severity_style(fi.severity()),
                ),
                Span::styled(fi.label().to_string(), severity_style(fi.severity())),
                Span::raw(format!(" s{} {} {detail}", fi.session, fi.direction)),
            ]);
            if i == app.finding_list.cursor.selected {
                line.style(selected_style(focused))
            } else {
                line
            }
        })
        .collect();
    f.render_widget(Paragraph::new(lines), body);
}
