//! The sessions pane: one row per session, with live rates and a sparkline.

use super::{block, fit, inner, selected_style};
use crate::tui::app::App;
use crate::tui::model::{HISTORY_SECS, SessionSnap};
use crate::tui::pane::Pane;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Sparkline};

/// The columns: their title and width, in the order shown.
const COLUMNS: [(&str, u16); 12] = [
    ("#", 3),
    ("client", 0), // As wide as the widest client.
    ("server", 0), // As wide as the widest server.
    ("state", 10),
    ("player", 10),
    ("pkt/s ↑/↓", 9),
    ("resend", 6),
    ("reord", 5),
    ("malf", 4),
    ("ack ms", 6),
    ("loss% ↑/↓", 9),
    ("traffic", 4), // At least; takes what is left.
];

const CLIENT: usize = 1;
const SERVER: usize = 2;
const STATE: usize = 3;
const TRAFFIC: usize = 11;
/// The width of an abbreviated state.
const STATE_SHORT: u16 = 5;

/// The columns taken in, in this order, while they fit after `#` and the
/// client (whose address and port are never cut while the pane can hold
/// them): the server and whole state names are the first to go.
const BY_NEED: [usize; 10] = [STATE, 5, 8, 6, 7, TRAFFIC, 4, 9, 10, SERVER];

/// The width of each column in a pane `width` wide (0: not shown), and
/// whether states are abbreviated.
fn widths(width: u16, sessions: &[SessionSnap]) -> ([u16; 12], bool) {
    let widest = |f: fn(&SessionSnap) -> String| {
        sessions
            .iter()
            .map(|s| f(s).len() as u16)
            .max()
            .unwrap_or(0)
    };
    let mut w = [0u16; 12];
    w[0] = 3;
    w[CLIENT] = widest(|s| s.client.to_string()).max(6);
    let mut used = w[0] + 1 + w[CLIENT];
    for c in BY_NEED {
        let want = match c {
            STATE => STATE_SHORT,
            SERVER => widest(|s| s.server.to_string()).max(6),
            _ => COLUMNS[c].1,
        };
        if used + 1 + want <= width {
            w[c] = want;
            used += 1 + want;
        }
    }
    // Whole state names, when there is room left for them.
    let grow = COLUMNS[STATE].1 - STATE_SHORT;
    let short = w[STATE] == STATE_SHORT && used + grow > width;
    if w[STATE] == STATE_SHORT && !short {
        w[STATE] += grow;
        used += grow;
    }
    if w[TRAFFIC] > 0 {
        w[TRAFFIC] += width.saturating_sub(used);
    }
    (w, short)
}

/// A state in at most [`STATE_SHORT`] columns.
fn abbreviated(state: &str) -> String {
    let known = [
        ("connecting", "conn"),
        ("playing", "play"),
        ("closed", "closd"),
        ("timed-out", "t-out"),
        ("rejected", "rejct"),
        ("disconnecting", "disc"),
        ("syncing", "sync"),
    ];
    match known.iter().find(|(s, _)| *s == state) {
        Some((_, a)) => (*a).to_owned(),
        None if state.len() <= usize::from(STATE_SHORT) => state.to_owned(),
        None => format!("{}…", &state[..state.floor_char_boundary(4)]),
    }
}

pub fn draw(f: &mut Frame, area: Rect, app: &mut App) {
    let n = app.shown_sessions().len();
    let title = format!(" {n} ");
    f.render_widget(block(app, Pane::Sessions, title), area);
    let body = inner(area);
    if body.height < 2 {
        return;
    }
    let (widths, short) = widths(body.width, app.shown_sessions());
    // Placed by hand: a column not shown takes no room, not even a space.
    let mut x = body.x;
    let cols = widths.map(|w| {
        let col = Rect {
            x,
            width: w.min(body.right().saturating_sub(x)),
            height: 1,
            ..body
        };
        if w > 0 {
            x = x.saturating_add(w + 1).min(body.right());
        }
        col
    });
    let header = Style::new().add_modifier(Modifier::BOLD | Modifier::UNDERLINED);
    for (((name, _), col), w) in COLUMNS.iter().zip(cols.iter()).zip(widths) {
        if w > 0 {
            let name = fit(Line::raw(*name), usize::from(w));
            f.render_widget(Paragraph::new(name).style(header), *col);
        }
    }
    let height = (body.height - 1) as usize;
    let visible = app.session_list.cursor.scroll_into_view(n + 1, height);
    for (line, i) in visible.enumerate() {
        let y = body.y + 1 + line as u16;
        draw_row(f, app, i, (y, body), (&cols, short));
    }
}

/// Draws line `i` of the list ("all sessions", then each session) at `y`.
fn draw_row(
    f: &mut Frame,
    app: &App,
    i: usize,
    (y, body): (u16, Rect),
    (cols, short): (&[Rect], bool),
) {
    let focused = app.focus == Pane::Sessions;
    let row_area = Rect {
        y,
        height: 1,
        ..body
    };
    let base = if i == app.session_list.cursor.selected {
        selected_style(focused)
    } else {
        Style::new()
    };
    f.buffer_mut().set_style(row_area, base);
    let at = |c: usize| Rect { y, ..cols[c] };
    if i == 0 {
        let x = at(CLIENT).x;
        let text = format!("all sessions, {} packets", app.row_limit());
        let room = usize::from(row_area.right().saturating_sub(x));
        f.render_widget(
            Paragraph::new(fit(Line::raw(text), room)).style(base),
            Rect {
                x,
                width: room as u16,
                ..row_area
            },
        );
        f.render_widget(Paragraph::new("*").style(base), at(0));
        return;
    }
    let Some(s) = app.shown_sessions().get(i - 1) else {
        return;
    };
    let now = app.now_sec();
    for (c, mut text) in cells(s, now).into_iter().enumerate() {
        if at(c).width == 0 {
            continue;
        }
        let style = match c {
            STATE => state_style(s),
            6..=8 if text != "0" && text != "0/0" => Style::new().fg(Color::Yellow),
            _ => Style::new(),
        };
        if c == STATE && short {
            text = abbreviated(&text);
        }
        let line = fit(
            Line::from(Span::styled(text, style)),
            usize::from(at(c).width),
        );
        f.render_widget(Paragraph::new(line).style(base), at(c));
    }
    // The newest second at the right edge.
    let mut spark = at(TRAFFIC);
    let n = spark.width.min(HISTORY_SECS as u16);
    spark.x += spark.width - n;
    spark.width = n;
    let data: Vec<u64> = s.activity.series(now, n as usize).collect();
    f.render_widget(
        Sparkline::default().data(data).style(base.fg(Color::Green)),
        spark,
    );
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
