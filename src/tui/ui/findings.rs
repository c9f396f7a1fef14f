//! The findings log, runs folded (see [`crate::tui::model::FindingLog`]);
//! Enter jumps to the packet of a run's first finding.

use super::{block, inner, selected_style, severity_style};
use crate::tui::app::App;
use crate::tui::pane::Pane;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use std::fmt::Write;

pub fn draw(f: &mut Frame, area: Rect, app: &mut App) {
    let len = app.finding_limit();
    let log = &app.findings;
    let title = if log.total() > len as u64 {
        format!(" {len} rows, {} findings ", log.total())
    } else {
        format!(" {len} ")
    };
    f.render_widget(block(app, Pane::Findings, title), area);
    let mut body = inner(area);
    // What the cap left out, on the pane's last line.
    let folded = log.overflow_total();
    let footer = (folded > 0 && body.height > 1).then(|| {
        let mut line = format!("{folded} more findings folded:");
        for (i, (kind, n)) in log.overflow().enumerate() {
            let _ = write!(line, "{} {kind} {n}", if i == 0 { "" } else { "," });
        }
        body.height -= 1;
        line
    });
    let visible = app
        .finding_list
        .cursor
        .scroll_into_view(len, body.height as usize);
    let focused = app.focus == Pane::Findings;
    let mut lines: Vec<Line> = app
        .findings
        .rows()
        .get(visible.clone())
        .unwrap_or_default()
        .iter()
        .zip(visible)
        .map(|(run, i)| {
            let fi = &run.first;
            let mut detail = app.finding_detail(fi);
            if let Some(s) = fi.seqno() {
                detail = format!("#{s} {detail}");
            }
            if run.count > 1 {
                let newest = app
                    .finding_frame(&run.newest)
                    .map_or_else(|| "?".to_owned(), |f| f.to_string());
                let seqno = run
                    .newest
                    .seqno()
                    .map(|s| format!(" #{s}"))
                    .unwrap_or_default();
                detail = format!("×{} {detail} (newest: frame {newest}{seqno})", run.count);
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
    if let Some(footer) = footer {
        lines.resize(usize::from(body.height), Line::default());
        lines.push(Line::from(footer));
    }
    f.render_widget(Paragraph::new(lines), inner(area));
}
