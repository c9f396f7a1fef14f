//! The strip on the top line, visible at any size: errors and warnings by
//! kind, then the notes' count, and the key that focuses the worst finding.
//! Each finding fed is counted, the ones the findings log folded too.

use super::{fit, severity_style};
use crate::engine::Severity;
use crate::tui::app::App;
use crate::tui::model::FindingLog;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

pub fn draw(f: &mut Frame, area: Rect, app: &App) {
    let width = usize::from(area.width);
    let line = fit(strip(&app.findings, width), width);
    f.render_widget(Paragraph::new(line), area);
}

/// The strip's line: the longest form that fits `width`, from every kind
/// named with the notes and the key, to the counts alone.
pub fn strip(log: &FindingLog, width: usize) -> Line<'static> {
    let errors = log.count_of(Severity::Error);
    let warnings = log.count_of(Severity::Warning);
    let notes = log.count_of(Severity::Note);
    if errors + warnings == 0 {
        let mut spans = vec![Span::styled(
            " no errors, no warnings ",
            Style::new().fg(Color::Green),
        )];
        if notes > 0 {
            spans.push(Span::styled(
                format!("· {} ", plural(notes, "note")),
                severity_style(Severity::Note),
            ));
        }
        return Line::from(spans);
    }
    // Error kinds, warning kinds, notes, the key.
    let forms = [
        [true, true, true, true],
        [true, true, false, true],
        [true, true, false, false],
        [true, false, false, false],
    ];
    for shown in forms {
        let line = form(log, shown);
        if line.width() <= width {
            return line;
        }
    }
    // Too narrow to name the kinds: the counts alone, as far as they go.
    form(log, [false; 4])
}

/// One form of the strip: the error and warning kinds named or not, the
/// notes counted or not, the key shown or not.
fn form(log: &FindingLog, [errors, warnings, notes, key]: [bool; 4]) -> Line<'static> {
    let mut spans = vec![Span::raw(" ")];
    let named = [
        (Severity::Error, "error", errors),
        (Severity::Warning, "warning", warnings),
    ];
    for (s, name, kinds) in named {
        let n = log.count_of(s);
        if n == 0 {
            continue;
        }
        if spans.len() > 1 {
            spans.push(Span::raw(" │ "));
        }
        let mut text = plural(n, name);
        if kinds {
            text.push(':');
            for (k, c) in log.counts().filter(|(k, _)| k.severity() == s) {
                text.push_str(&format!(" {k} {c},"));
            }
            text.pop();
        }
        spans.push(Span::styled(text, severity_style(s)));
    }
    let n = log.count_of(Severity::Note);
    if notes && n > 0 {
        spans.push(Span::raw(" │ "));
        spans.push(Span::styled(
            plural(n, "note"),
            severity_style(Severity::Note),
        ));
    }
    if key {
        spans.push(Span::styled("  ! worst", Style::new().fg(Color::DarkGray)));
    }
    Line::from(spans)
}

fn plural(n: u64, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}
