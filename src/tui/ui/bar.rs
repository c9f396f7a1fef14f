//! The status bar, the filter input line and the help overlay.

use crate::tui::app::App;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};
use std::fmt::Write;

pub fn draw(f: &mut Frame, area: Rect, app: &App) {
    if let Some(input) = &app.input {
        draw_input(f, area, input);
        return;
    }
    let bar = Style::new().bg(Color::Blue).fg(Color::White);
    let mut spans = vec![Span::raw(format!(" {} ", app.source.label))];
    // Errors and messages come first: they matter more than the counters.
    if let Some(e) = &app.error {
        spans.push(Span::styled(
            format!(" error: {e} "),
            Style::new().bg(Color::Red).fg(Color::White),
        ));
    } else if let Some(m) = &app.message {
        spans.push(Span::styled(
            format!(" {m} "),
            Style::new().bg(Color::White).fg(Color::Black),
        ));
    }
    let mut left = String::new();
    match (app.finished, app.progress) {
        (false, Some(p)) => {
            let _ = write!(left, "| loading {:.0}% ", p * 100.0);
        }
        (true, _) if !app.source.live => left.push_str("| loaded "),
        (true, _) => left.push_str("| stopped "),
        _ => {}
    }
    // What the filter (or the session chosen) kept, before the totals: on a
    // narrow screen it is what matters.
    if app.view.filter.is_some() || app.view.session.is_some() {
        let (_, findings) = app.finding_list.shown();
        let _ = write!(
            left,
            "| kept {} packets, {findings} findings ",
            app.view_len()
        );
    }
    let c = &app.counters;
    // The capture's counters come once a second, the rows as they are
    // analysed: a frame counted in a row was captured, so the frames shown are
    // never fewer than the packets.
    let packets = app.rows.len() as u64;
    let _ = write!(
        left,
        "| {} frames {packets} packets ",
        c.frames.max(packets)
    );
    if let Some(rx) = c.received {
        let _ = write!(
            left,
            "| rx {rx} drop {}/{} ",
            c.dropped_kernel.unwrap_or(0),
            c.dropped_interface.unwrap_or(0)
        );
    }
    // A rate for a file only while it loads.
    if app.source.live || !app.finished {
        let _ = write!(left, "| {:.0} pkt/s ", app.pps);
    }
    spans.push(Span::raw(left));
    // The mode and the help hint stay visible however narrow the screen.
    let mode = match (app.paused.is_some(), app.follow) {
        (true, _) => Span::styled(" PAUSED ", Style::new().bg(Color::Yellow).fg(Color::Black)),
        (false, true) => Span::styled(" FOLLOW ", Style::new().bg(Color::Green).fg(Color::Black)),
        (false, false) => Span::raw(""),
    };
    let right = Line::from(vec![mode, Span::raw(" ? help ")]);
    let [l, r] = Layout::horizontal([
        Constraint::Fill(1),
        Constraint::Length(right.width() as u16),
    ])
    .areas(area);
    let left = super::fit(Line::from(spans), usize::from(l.width));
    f.render_widget(Paragraph::new(left).style(bar), l);
    f.render_widget(Paragraph::new(right).style(bar), r);
}

/// The input line: the filter, the file to save to or the frame to go to,
/// as typed, with what is wrong with it.
fn draw_input(f: &mut Frame, area: Rect, input: &crate::tui::app::FilterInput) {
    let (mark, style) = match &input.error {
        None => ("ok", Style::new().fg(Color::Green)),
        Some(_) => ("error", Style::new().fg(Color::Red)),
    };
    let label = match input.prompt {
        crate::tui::app::Prompt::Filter => "/",
        crate::tui::app::Prompt::Save => "save the packets in view to: ",
        crate::tui::app::Prompt::GoTo => "go to frame: ",
    };
    let mut spans = vec![
        Span::styled(label, Style::new().add_modifier(Modifier::BOLD)),
        Span::raw(input.text.clone()),
        Span::styled("█", Style::new().add_modifier(Modifier::SLOW_BLINK)),
    ];
    if input.prompt == crate::tui::app::Prompt::Filter {
        spans.push(Span::raw("  "));
        spans.push(Span::styled(format!("[{mark}]"), style));
    }
    if let Some(e) = &input.error {
        spans.push(Span::styled(format!(" {e}"), style));
    }
    let line = super::fit(Line::from(spans), usize::from(area.width));
    f.render_widget(Paragraph::new(line), area);
}

/// Every key, as the help overlay lists them; docs/tui.md lists the same
/// (a test checks it).
pub const KEYS: [(&str, &str); 22] = [
    ("↑ ↓ / k j", "move up / down"),
    ("PgUp PgDn", "move a page (also Ctrl-b Ctrl-f)"),
    ("Home End / g G", "first / last"),
    ("Tab Shift-Tab", "next / previous pane"),
    ("1-6", "sessions packets detail hex findings graph"),
    ("Enter", "open; on an incident, jump to its packet"),
    ("Backspace", "back from a jump (again: forth)"),
    ("← → / h l", "fold / unfold a tree node or a kind"),
    ("!", "focus the worst finding"),
    ("s", "findings: worst first / by time"),
    (": Ctrl-g", "go to a frame"),
    ("m M / ← →", "IO graph: next / previous measure"),
    ("/", "filter packets and findings"),
    ("  Enter Esc", "apply (empty clears) / cancel"),
    ("  Ctrl-u", "clear the text"),
    ("Esc", "show all packets and findings again"),
    ("w", "save the packets in view (pcapng)"),
    ("f", "follow new packets"),
    ("space", "pause / resume the display"),
    ("mouse", "wheel scrolls, click focuses and selects"),
    ("?", "this help (any key closes it)"),
    ("q Ctrl-c", "quit, with a summary on the terminal"),
];

pub fn draw_help(f: &mut Frame, area: Rect) {
    let popup = area.centered(
        Constraint::Length(62),
        Constraint::Length(KEYS.len() as u16 + 2),
    );
    f.render_widget(Clear, popup);
    let lines: Vec<Line> = KEYS
        .iter()
        .map(|(k, what)| {
            Line::from(vec![
                Span::styled(
                    format!("{k:<16}"),
                    Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
                ),
                Span::raw(*what),
            ])
        })
        .collect();
    f.render_widget(
        Paragraph::new(lines).block(
            Block::bordered()
                .title(" Keys ")
                .border_style(Style::new().fg(Color::Cyan)),
        ),
        popup,
    );
}
