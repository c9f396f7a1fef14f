//! The IO graph: the selected session (or every session) over time, each
//! direction a line, from the same timeline as `--plot`.

use super::{block, inner};
use crate::report::stats::DirInterval;
use crate::report::timeline::Timeline;
use crate::tui::app::App;
use crate::tui::data::lock;
use crate::tui::pane::{Metric, Pane};
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Color, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Chart, Dataset, GraphType, Paragraph};

/// A bucket's value for `metric`, per second where it is a count; `None` where
/// nothing was measured.
fn value(metric: Metric, d: &DirInterval, secs: f64) -> Option<f64> {
    match metric {
        Metric::Packets => Some(d.packets as f64 / secs),
        Metric::Bytes => Some(d.bytes as f64 / secs),
        Metric::Resends => Some(d.resends as f64 / secs),
        Metric::Lost => Some(d.lost as f64 / secs),
        Metric::AckDelay => d.mean_ack_ms(),
    }
}

/// Both directions' points of the session `id` (every session when `None`):
/// x in seconds from the first packet.
pub fn points(t: &Timeline, id: Option<usize>, metric: Metric) -> [Vec<(f64, f64)>; 2] {
    let secs = t.width_ns() as f64 / 1e9;
    let (span, buckets): (_, Vec<[DirInterval; 2]>) = match id {
        Some(id) => match t.session(id) {
            Some(s) => (s.span(), s.span().map(|i| s.bucket(i)).collect()),
            None => (0..0, Vec::new()),
        },
        None => {
            // Every session summed, bucket by bucket, in one pass each.
            let mut sum = vec![<[DirInterval; 2]>::default(); t.len()];
            let ids = t.busiest(usize::MAX);
            let all = ids.iter().filter_map(|&s| t.session(s)).chain([t.other()]);
            for series in all {
                for i in series.span() {
                    if let Some(to) = sum.get_mut(i) {
                        for (a, b) in to.iter_mut().zip(series.bucket(i)) {
                            a.merge(&b);
                        }
                    }
                }
            }
            (0..t.len(), sum)
        }
    };
    let mut out = [Vec::new(), Vec::new()];
    for (i, dirs) in span.zip(buckets) {
        let x = (i as f64 + 0.5) * secs;
        for (points, d) in out.iter_mut().zip(&dirs) {
            if let Some(y) = value(metric, d, secs) {
                points.push((x, y));
            }
        }
    }
    out
}

pub fn draw(f: &mut Frame, area: Rect, app: &mut App) {
    let metric = app.graph.metric;
    let who = match app.view.session {
        Some(id) => format!("session {id}"),
        None => "all sessions".to_owned(),
    };
    let (points, width_s, len) = {
        let t = lock(&app.timeline);
        (
            points(&t, app.view.session, metric),
            t.width_ns() as f64 / 1e9,
            t.len(),
        )
    };
    let c2s = Style::new().fg(Color::Cyan);
    let s2c = Style::new().fg(Color::Magenta);
    // The key is in the title: inside the chart it would hide the lines.
    let title = Line::from(vec![
        Span::raw(format!(
            " {who}: {} per {} ",
            metric.title(),
            short_secs(width_s)
        )),
        Span::styled("━ c2s ", c2s),
        Span::styled("━ s2c ", s2c),
        Span::raw("(m: next) "),
    ]);
    f.render_widget(block(app, Pane::Graph, title), area);
    let body = inner(area);
    if points.iter().all(Vec::is_empty) {
        f.render_widget(Paragraph::new("nothing measured yet"), body);
        return;
    }
    let x_max = (len.max(1) as f64 * width_s).max(width_s);
    let y_max = points
        .iter()
        .flatten()
        .map(|p| p.1)
        .fold(0.0f64, f64::max)
        .max(1.0)
        * 1.1;
    let [a, b] = points;
    let datasets = vec![
        Dataset::default()
            .name("c2s")
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(c2s)
            .data(&a),
        Dataset::default()
            .name("s2c")
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(s2c)
            .data(&b),
    ];
    let label = |v: f64| Span::raw(short(v));
    let chart = Chart::new(datasets)
        .hidden_legend_constraints((Constraint::Length(0), Constraint::Length(0)))
        .x_axis(Axis::default().bounds([0.0, x_max]).labels([
            label(0.0),
            label(x_max / 2.0),
            label(x_max),
        ]))
        .y_axis(Axis::default().bounds([0.0, y_max]).labels([
            label(0.0),
            label(y_max / 2.0),
            label(y_max),
        ]));
    f.render_widget(chart, body);
}

/// A bucket width: `100 ms`, `1.6 s`.
fn short_secs(s: f64) -> String {
    if s < 1.0 {
        format!("{:.0} ms", s * 1000.0)
    } else {
        format!("{} s", short(s))
    }
}

/// A number in a few characters.
fn short(v: f64) -> String {
    match v {
        v if v >= 10_000.0 => format!("{:.0}k", v / 1000.0),
        v if v >= 100.0 || v == v.trunc() => format!("{v:.0}"),
        v => format!("{v:.1}"),
    }
}
