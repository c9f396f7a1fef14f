//! The sessions pane: one row per session, with live rates and a sparkline.

use super::{block, inner, selected_style};
use crate::tui::app::App;
use crate::tui::model::{HISTORY_SECS, SessionSnap};
use crate::tui::pane::Pane;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Sparkline};

const COLUMNS: [(&str, Constraint); 12] = [
    ("#", Constraint::Length(3)),
    ("client", Constraint::Length(22)),
    ("server", Constraint::Length(22)),
    ("state", Constraint::Length(10)),
    ("player", Constraint::Length(10)),
    ("pkt/s ↑/↓", Constraint::Length(9)),
    ("resend", Constraint::Length(6)),
    ("reord", Constraint::Length(5)),
    ("malf", Constraint::Length(4)),
    ("ack ms", Constraint::Length(6)),
    ("loss% ↑/↓", Constraint::Length(9)),
    ("traffic", Constraint::Min(4)),
];

const SERVER: usize = 2;
const LOSS: usize = 10;

pub fn draw(f: &mut Frame, area: Rect, app: &mut App) {
    let n = app.shown_sessions().len();
    let title = format!(" {n} ");
    f.render_widget(block(app, Pane::Sessions, title), area);
    let body = inner(area);
    if body.height < 2 {
        return;
    }
    // The server column only where there is room for it.
    let mut widths = COLUMNS.map(|c| c.1);
    if body.width < 130 {
        widths[SERVER] = Constraint::Length(0);
    }
    // Narrow: the client's address matters more than the loss estimate.
    if body.width < 100 {
        widths[LOSS] = Constraint::Length(0);
    }
    let cols = Layout::horizontal(widths)
        .spacing(1)
        .split(Rect { height: 1, ..body });
    let header = Style::new().add_modifier(Modifier::BOLD | Modifier::UNDERLINED);
    for ((name, _), col) in COLUMNS.iter().zip(cols.iter()) {
        f.render_widget(Paragraph::new(*name).style(header), *col);
    }
    let height = (body.height - 1) as usize;
    let visible = app.session_list.cursor.scroll_into_view(n + 1, height);
    let focused = app.focus == Pane::Sessions;
    let now = app.now_sec();
    let all_packets = app.row_limit();
    for (line, i) in visible.enumerate() {
        let y = body.y + 1 + line as u16;
        let row_area = Rect {
            y,
            height: 1,
            ..body
        };
        let selected = i == app.session_list.cursor.selected;
        let base = if selected {
            selected_style(focused)
        } else {
            Style::new()
        };
        f.buffer_mut().set_style(row_area, base);
        let at = |c: usize| Rect { y, ..cols[c] };
        if i == 0 {
            let text = format!("all sessions, {all_packets} packets");
            f.render_widget(
                Paragraph::new(text).style(base),
                Rect {
                    x: at(1).x,
                    ..row_area
                },
            );
            f.render_widget(Paragraph::new("*").style(base), at(0));
            continue;
        }
        let s = &app.shown_sessions()[i - 1];
        for (c, text) in cells(s, now).into_iter().enumerate() {
            let style = match c {
                3 => state_style(s),
                6..=8 if text != "0" && text != "0/0" => Style::new().fg(Color::Yellow),
                _ => Style::new(),
            };
            f.render_widget(
                Paragraph::new(Line::from(Span::styled(text, style))).style(base),
                at(c),
            );
        }
        // The newest second at the right edge.
        let mut spark = at(COLUMNS.len() - 1);
        let n = spark.width.min(HISTORY_SECS as u16);
        spark.x += spark.width - n;
        spark.width = n;
        let data: Vec<u64> = s.activity.series(now, n as usize).collect();
        f.render_widget(
            Sparkline::default().data(data).style(base.fg(Color::Green)),
            spark,
        );
    }
}

fn cells(s: &SessionSnap, now: u64) -> [String; 11] {
    let [up, down] = s.activity.rate(now);
    let ack = match s.ack_delay_ms {
        [_, Some(a)] | [Some(a), None] => format!("{a:.0}"),
        [None, None] => "-".into(),
    };
    [
        s.id.to_string(),
        s.client.to_string(),
        s.server.to_string(),
        s.state.to_string(),
        s.player
            .as_ref()
            .map(|p| crate::report::table::printable(&p.1).to_string())
            .unwrap_or_default(),
        format!("{up}/{down}"),
        format!("{}/{}", s.resends[0], s.resends[1]),
        s.reorders.to_string(),
        s.malformed.to_string(),
        ack,
        match s.loss {
            [None, None] => "-".into(),
            [a, b] => {
                let pct = |l: Option<f64>| l.map_or("-".into(), |l| format!("{:.1}", l * 100.0));
                format!("{}/{}", pct(a), pct(b))
            }
        },
    ]
}

fn state_style(s: &SessionSnap) -> Style {
    match s.state {
        "playing" => Style::new().fg(Color::Green),
        "closed" => Style::new().fg(Color::DarkGray),
        "rejected" | "timed-out" => Style::new().fg(Color::Red),
        _ => Style::new().fg(Color::Cyan),
    }
}
