//! Drawing: a layout that fits 80x24 and grows with the terminal, and one
//! component per pane, each reading the [`App`] state.
//!
//! What went wrong leads: the strip on the top line counts errors and
//! warnings by kind at any size ([`strip`]), and on screens too small for
//! every pane the findings take the lower part until a packet is opened
//! (detail and hex) or the IO graph is chosen. A line too long for its pane
//! ends in `…` ([`fit`]), never cut mid-word silently.

mod bar;
mod detail;
mod findings;
mod graph;

#[cfg(test)]
pub use bar::KEYS;
#[cfg(test)]
pub use graph::points as graph_points;

/// The strip's text at `width` columns (for tests).
#[cfg(test)]
pub fn strip_text(log: &crate::tui::model::FindingLog, width: usize) -> String {
    strip::strip(log, width).to_string()
}
mod packets;
mod sessions;
mod strip;

use super::app::{App, Areas};
use super::pane::Pane;
use crate::engine::Severity;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType};

/// Width of the hex pane for a number of bytes per line: offset, hex, ASCII
/// and borders.
const fn hex_width(per_line: u16) -> u16 {
    5 + 3 * per_line + 1 + per_line + 2
}

/// Draws the whole screen.
pub fn draw(f: &mut Frame, app: &mut App) {
    let area = f.area();
    if area.height < 2 {
        strip::draw(f, area, app);
        return;
    }
    let [top, main, bottom] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(area);
    app.areas = layout(main, app);
    let areas = app.areas;
    strip::draw(f, top, app);
    sessions::draw(f, areas.sessions, app);
    packets::draw(f, areas.packets, app);
    if !areas.detail.is_empty() {
        detail::draw_tree(f, areas.detail, app);
        detail::draw_hex(f, areas.hex, app);
    }
    if !areas.findings.is_empty() {
        findings::draw(f, areas.findings, app);
    }
    if !areas.graph.is_empty() {
        graph::draw(f, areas.graph, app);
    }
    bar::draw(f, bottom, app);
    if app.help {
        bar::draw_help(f, area);
    }
}

/// Where each pane goes in `main`. Big screens show packets and findings side
/// by side above detail and hex (or the IO graph while it has the focus).
/// Small ones show one pane below the packets: the findings at first and
/// while they have the focus; the detail and hex once the user moves in the
/// packets, opens one or jumps to one ([`App::lower_detail`]); the IO graph
/// while it has the focus.
fn layout(main: Rect, app: &App) -> Areas {
    let big = main.width >= 120 && main.height >= 34;
    let sessions_h = (app.shown_sessions().len() as u16 + 4).clamp(5, (main.height / 4).max(6));
    let lower_h = main.height * 2 / 5;
    let [sessions, middle, lower] = Layout::vertical([
        Constraint::Length(sessions_h),
        Constraint::Fill(1),
        Constraint::Length(lower_h),
    ])
    .areas(main);
    let mut areas = Areas {
        sessions,
        packets: middle,
        ..Areas::default()
    };
    let hex_w = hex_width(if lower.width >= 2 * hex_width(16) {
        16
    } else {
        8
    });
    let [detail, hex] =
        Layout::horizontal([Constraint::Fill(1), Constraint::Length(hex_w)]).areas(lower);
    if big {
        let [packets, findings] =
            Layout::horizontal([Constraint::Percentage(62), Constraint::Percentage(38)])
                .areas(middle);
        areas.packets = packets;
        areas.findings = findings;
    }
    match app.focus {
        Pane::Graph => areas.graph = lower,
        Pane::Detail | Pane::Hex => (areas.detail, areas.hex) = (detail, hex),
        Pane::Findings if !big => areas.findings = lower,
        _ if big || app.lower_detail => (areas.detail, areas.hex) = (detail, hex),
        _ => areas.findings = lower,
    }
    areas
}

/// `line` cut to `width` columns, its last one an ellipsis when it was
/// longer: a line too long for its pane never ends mid-word unmarked.
pub fn fit(line: Line<'_>, width: usize) -> Line<'_> {
    if line.width() <= width {
        return line;
    }
    let mut out = Line::default().style(line.style);
    let mut room = width.saturating_sub(1);
    let mut last = Style::new();
    for span in line.spans {
        if room == 0 {
            break;
        }
        last = span.style;
        let mut text = String::new();
        for c in span.content.chars() {
            let w = Span::raw(c.to_string()).width();
            if w > room {
                room = 0;
                break;
            }
            room -= w;
            text.push(c);
        }
        out.spans.push(Span::styled(text, span.style));
    }
    if width > 0 {
        out.spans.push(Span::styled("…", last));
    }
    out
}

/// A pane's lines, each fitted to the pane's width, as a paragraph.
fn fitted<'a>(lines: Vec<Line<'a>>, area: Rect) -> ratatui::widgets::Paragraph<'a> {
    let w = usize::from(area.width);
    ratatui::widgets::Paragraph::new(lines.into_iter().map(|l| fit(l, w)).collect::<Vec<_>>())
}

/// The frame of a pane: its number and title, highlighted when focused.
fn block<'a>(app: &App, pane: Pane, extra: impl Into<Line<'a>>) -> Block<'a> {
    let n = Pane::ALL.iter().position(|p| *p == pane).unwrap_or(0) + 1;
    let focused = app.focus == pane;
    let style = if focused {
        Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD)
    } else {
        Style::new().fg(Color::DarkGray)
    };
    Block::bordered()
        .border_type(if focused {
            BorderType::Thick
        } else {
            BorderType::Plain
        })
        .border_style(style)
        .title(Line::styled(format!("{n} {}", pane.title()), style))
        .title(extra.into())
}

/// A pane's frame whose extra title is fitted to the pane's width.
fn block_in<'a>(app: &App, pane: Pane, area: Rect, extra: String) -> Block<'a> {
    let room = usize::from(area.width).saturating_sub(pane.title().len() + 6);
    block(app, pane, fit(Line::raw(extra), room))
}

/// The colour of a severity.
pub fn severity_style(s: Severity) -> Style {
    match s {
        Severity::Error => Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
        Severity::Warning => Style::new().fg(Color::Yellow),
        Severity::Note => Style::new().add_modifier(Modifier::DIM),
    }
}

/// The style of the selected line: reversed when its pane has the focus.
fn selected_style(focused: bool) -> Style {
    if focused {
        Style::new().add_modifier(Modifier::REVERSED)
    } else {
        Style::new().bg(Color::DarkGray)
    }
}

/// The inner area of a bordered pane.
fn inner(area: Rect) -> Rect {
    Block::bordered().inner(area)
}
