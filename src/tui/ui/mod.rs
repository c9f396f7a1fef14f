//! Drawing: a layout that fits 80x24 and grows with the terminal, and one
//! component per pane, each reading the [`App`] state.

mod bar;
mod detail;
mod findings;
mod graph;

#[cfg(test)]
pub use graph::points as graph_points;
mod packets;
mod sessions;

use super::app::{App, Areas};
use super::pane::Pane;
use crate::engine::Severity;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, BorderType};

/// Width of the hex pane for a number of bytes per line: offset, hex, ASCII
/// and borders.
const fn hex_width(per_line: u16) -> u16 {
    5 + 3 * per_line + 1 + per_line + 2
}

/// Draws the whole screen.
pub fn draw(f: &mut Frame, app: &mut App) {
    let area = f.area();
    let [main, bottom] = Layout::vertical([Constraint::Fill(1), Constraint::Length(1)]).areas(area);
    let big = area.width >= 120 && area.height >= 36;
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
        ..Areas::default()
    };
    let hex_w = hex_width(if lower.width >= 2 * hex_width(16) {
        16
    } else {
        8
    });
    let [detail, hex] =
        Layout::horizontal([Constraint::Fill(1), Constraint::Length(hex_w)]).areas(lower);
    if app.focus == Pane::Graph {
        // The graph takes the place of detail and hex while it has the focus.
        areas.graph = lower;
        if big {
            let [packets, findings] =
                Layout::horizontal([Constraint::Percentage(62), Constraint::Percentage(38)])
                    .areas(middle);
            areas.packets = packets;
            areas.findings = findings;
        } else {
            areas.packets = middle;
        }
    } else if big {
        let [packets, findings] =
            Layout::horizontal([Constraint::Percentage(62), Constraint::Percentage(38)])
                .areas(middle);
        areas.packets = packets;
        areas.findings = findings;
        areas.detail = detail;
        areas.hex = hex;
    } else {
        areas.packets = middle;
        // Small screens: the findings log takes the place of detail and hex
        // while it has the focus.
        if app.focus == Pane::Findings {
            areas.findings = lower;
        } else {
            areas.detail = detail;
            areas.hex = hex;
        }
    }
    app.areas = areas;

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

/// The colour of a severity.
pub fn severity_style(s: Severity) -> Style {
    match s {
        Severity::Error => Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
        Severity::Warning => Style::new().fg(Color::Yellow),
        Severity::Note => Style::new().fg(Color::Blue),
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
