//! The findings pane (see [`crate::tui::pane::FindingList`]): by kind, worst
//! first, each kind a line with its counts (`error malformed ×12`) that opens
//! to its incidents; or every incident by time. Errors red, warnings yellow,
//! notes dim. Enter on an incident jumps to its packet.

use super::{block_in, fitted, inner, selected_style, severity_style};
use crate::tui::app::App;
use crate::tui::model::LogRow;
use crate::tui::pane::{FindingItem, Order, Pane};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use std::fmt::Write;

pub fn draw(f: &mut Frame, area: Rect, app: &mut App) {
    f.render_widget(block_in(app, Pane::Findings, area, title(app)), area);
    let mut body = inner(area);
    let log = &app.findings;
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
    let len = app.finding_list.items().len();
    let visible = app
        .finding_list
        .cursor
        .scroll_into_view(len, body.height as usize);
    let focused = app.focus == Pane::Findings;
    let selected = app.finding_list.cursor.selected;
    let mut lines: Vec<Line> = visible
        .filter_map(|i| {
            let item = *app.finding_list.items().get(i)?;
            let line = item_line(app, item);
            Some(if i == selected {
                line.style(selected_style(focused))
            } else {
                line
            })
        })
        .collect();
    if lines.is_empty() && body.height > 0 {
        lines.push(Line::styled(
            empty(app),
            Style::new().add_modifier(Modifier::DIM),
        ));
    }
    if let Some(footer) = footer {
        lines.resize(usize::from(body.height), Line::default());
        lines.push(Line::from(footer));
    }
    f.render_widget(fitted(lines, inner(area)), inner(area));
}

/// The pane's title: what it counts, what the filter kept, the order.
fn title(app: &App) -> String {
    let log = &app.findings;
    let (incidents, findings) = app.finding_list.shown();
    let order = match app.finding_list.order {
        Order::Worst => "worst first",
        Order::Time => "by time",
    };
    match &app.view.findings {
        Some(_) => format!(" {findings} of {} findings kept · {order} ", log.total()),
        None if log.total() > incidents as u64 => format!(
            " {} findings in {incidents} incidents · {order} ",
            log.total()
        ),
        None => format!(" {} · {order} ", log.total()),
    }
}

/// What the pane says when it lists nothing.
fn empty(app: &App) -> &'static str {
    match (&app.view.findings, app.findings.total()) {
        (Some(_), _) => "no finding kept by the filter",
        (None, 0) if app.finished => "no findings",
        (None, _) => "no findings yet",
    }
}

fn item_line(app: &App, item: FindingItem) -> Line<'static> {
    match item {
        FindingItem::Group {
            key,
            incidents,
            findings,
            ..
        } => {
            let Some(first) = app
                .finding_list
                .first_of(&app.findings, key)
                .map(|run| run.first)
            else {
                return Line::default();
            };
            let sev = first.severity();
            let style = severity_style(sev);
            let open = if app.finding_list.is_expanded(key) {
                "▾ "
            } else {
                "▸ "
            };
            let mut counts = format!(" ×{findings}");
            if incidents > 1 && u64::from(incidents) != findings {
                let _ = write!(counts, " in {incidents} incidents");
            }
            Line::from(vec![
                Span::raw(open),
                Span::styled(format!("{:<7} ", sev.name()), style),
                Span::styled(first.label().to_string(), style),
                Span::raw(counts),
            ])
        }
        FindingItem::Incident(i) => match app.findings.get(i as usize) {
            Some(run) => incident_line(app, run),
            None => Line::default(),
        },
    }
}

/// An incident: its frame, session, direction, count and detail; by time,
/// with its severity and kind too.
fn incident_line(app: &App, run: &LogRow) -> Line<'static> {
    let fi = &run.first;
    let frame = app
        .finding_frame(fi)
        .map_or_else(|| "?".to_owned(), |f| f.to_string());
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
    let sev = fi.severity();
    let mut spans = Vec::with_capacity(5);
    match app.finding_list.order {
        Order::Worst => spans.push(Span::styled(format!("  {frame:>6} "), severity_style(sev))),
        Order::Time => {
            spans.push(Span::raw(format!("{frame:>6} ")));
            spans.push(Span::styled(
                format!("{:<7} ", sev.name()),
                severity_style(sev),
            ));
            spans.push(Span::styled(fi.label().to_string(), severity_style(sev)));
            spans.push(Span::raw(" "));
        }
    }
    spans.push(Span::raw(format!(
        "s{} {} {detail}",
        fi.session, fi.direction
    )));
    Line::from(spans)
}
