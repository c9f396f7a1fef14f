//! `--plot FILE.svg`: the capture over time, per session, as a picture for a bug
//! report: packets, resends and lost messages per second, and the mean ack
//! delay, one panel each, a line per session and direction.
//!
//! The data is the [`Timeline`]; the picture is drawn with plotters' SVG
//! backend (no font files needed: the viewer renders the text).

use super::Outcome;
use super::stats::DirInterval;
use super::timeline::Timeline;
use crate::engine::SessionId;
use plotters::prelude::*;

/// Sessions drawn when none is named: the busiest.
pub const DEFAULT_SESSIONS: usize = 6;

/// The picture's size in pixels, and the key's column on the right.
const SIZE: (u32, u32) = (1200, 1000);
const LEGEND_WIDTH: u32 = 230;

/// One line's colour per session, in turn (Okabe-Ito, told apart by most
/// colour-blind readers); the server's direction is drawn lighter.
const COLOURS: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(240, 228, 66),
];

/// What one panel shows of a bucket, per second where it is a count.
struct Panel {
    title: &'static str,
    value: fn(&DirInterval, f64) -> Option<f64>,
    /// A mark on each point: where values are sparse, a lone one shows.
    marks: bool,
}

const PANELS: [Panel; 4] = [
    Panel {
        title: "packets/s",
        value: |d, secs| Some(d.packets as f64 / secs),
        marks: false,
    },
    Panel {
        title: "resends/s (reliable messages sent again after an ack could have come back)",
        value: |d, secs| Some(d.resends as f64 / secs),
        marks: false,
    },
    Panel {
        title: "lost reliable messages/s",
        value: |d, secs| Some(d.lost as f64 / secs),
        marks: false,
    },
    Panel {
        title: "ack delay, mean (ms) of the direction's reliable messages",
        value: |d, _| d.mean_ack_ms(),
        marks: true,
    },
];

/// A line of one panel: its label, colour and points (x in seconds from the
/// first packet); `None` where nothing was measured (the line breaks).
struct Line {
    label: String,
    colour: RGBColor,
    width: u32,
    points: Vec<(f64, Option<f64>)>,
}

/// The sessions to draw: those named, or the busiest.
pub fn pick(timeline: &Timeline, named: &[SessionId]) -> Vec<SessionId> {
    match named {
        [] => timeline.busiest(DEFAULT_SESSIONS),
        named => named
            .iter()
            .copied()
            .filter(|&id| timeline.session(id).is_some())
            .collect(),
    }
}

/// The picture, as an SVG document.
pub fn svg(
    timeline: &Timeline,
    outcome: &Outcome,
    sessions: &[SessionId],
) -> Result<String, String> {
    let mut out = String::new();
    draw(&mut out, timeline, outcome, sessions).map_err(|e| e.to_string())?;
    Ok(out)
}

fn draw(
    out: &mut String,
    timeline: &Timeline,
    outcome: &Outcome,
    sessions: &[SessionId],
) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::with_string(out, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let total = outcome.summary.session_count();
    let heading = match (sessions.len() as u64, total) {
        (0, _) => "no session".to_owned(),
        (n, t) if n == t => format!("{} of {} sessions", n, t),
        (n, t) => format!("{n} of {t} sessions (the busiest unless named with --session)"),
    };
    let width_s = timeline.width_ns() as f64 / 1e9;
    let source = match &outcome.capture.interface {
        Some(i) => format!("live on {i}"),
        None => outcome.capture.files.join(", "),
    };
    let title = format!("{source}: {heading}, in buckets of {}", seconds(width_s));
    let (top, body) = root.split_vertically(40);
    top.titled(&title, ("sans-serif", 18))?;
    let (body, key) = body.split_horizontally(SIZE.0 - LEGEND_WIDTH);
    legend(&key, &lines(timeline, outcome, sessions, &PANELS[0]))?;
    let len = timeline.len();
    let x_end = (len.max(1) as f64) * width_s;
    for (panel, area) in PANELS.iter().zip(body.split_evenly((PANELS.len(), 1))) {
        let lines = lines(timeline, outcome, sessions, panel);
        let y_max = lines
            .iter()
            .flat_map(|l| l.points.iter().filter_map(|p| p.1))
            .fold(0.0f64, f64::max);
        let y_max = if y_max > 0.0 { y_max * 1.1 } else { 1.0 };
        let mut chart = ChartBuilder::on(&area)
            .caption(panel.title, ("sans-serif", 15))
            .margin(8)
            .x_label_area_size(28)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..x_end, 0.0..y_max)?;
        chart
            .configure_mesh()
            .x_desc("seconds from the first packet")
            .light_line_style(RGBColor(235, 235, 235))
            .draw()?;
        for line in &lines {
            let style = ShapeStyle::from(line.colour).stroke_width(line.width);
            for run in runs(&line.points) {
                let size = if panel.marks { 2 } else { 0 };
                chart.draw_series(LineSeries::new(run, style).point_size(size))?;
            }
        }
    }
    root.present()?;
    Ok(())
}

/// The key, beside the panels (it would hide data inside them): a line and a
/// label for each session and direction.
fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    lines: &[Line],
) -> Result<(), Box<dyn std::error::Error>>
where
    DB::ErrorType: 'static,
{
    for (k, line) in lines.iter().enumerate() {
        let y = 40 + 20 * k as i32;
        let style = ShapeStyle::from(line.colour).stroke_width(line.width.max(2));
        area.draw(&PathElement::new([(8, y), (30, y)], style))?;
        area.draw(&Text::new(
            line.label.clone(),
            (36, y - 7),
            ("sans-serif", 13).into_font(),
        ))?;
    }
    Ok(())
}

/// The lines of one panel: each session's two directions.
fn lines(
    timeline: &Timeline,
    outcome: &Outcome,
    sessions: &[SessionId],
    panel: &Panel,
) -> Vec<Line> {
    let width_s = timeline.width_ns() as f64 / 1e9;
    let mut lines = Vec::new();
    for (k, &id) in sessions.iter().enumerate() {
        let Some(series) = timeline.session(id) else {
            continue;
        };
        let colour = COLOURS[k % COLOURS.len()];
        let who = outcome
            .sessions
            .iter()
            .find(|s| s.id == id)
            .map(|s| format!("#{id} {}", s.client))
            .unwrap_or_else(|| format!("#{id}"));
        for (dir, name) in [(0, "c2s"), (1, "s2c")] {
            let points = (0..timeline.len())
                .map(|i| {
                    let x = (i as f64 + 0.5) * width_s;
                    let in_span = series.span().contains(&i);
                    let value = (panel.value)(&series.bucket(i)[dir], width_s);
                    // Outside the session's span nothing is drawn; inside, a
                    // count is zero where nothing came.
                    (x, if in_span { value } else { None })
                })
                .collect();
            lines.push(Line {
                label: format!("{who} {name}"),
                colour: if dir == 0 { colour } else { lighter(colour) },
                width: if dir == 0 { 2 } else { 1 },
                points,
            });
        }
    }
    lines
}

/// The runs of consecutive measured points.
fn runs(points: &[(f64, Option<f64>)]) -> Vec<Vec<(f64, f64)>> {
    let mut runs = Vec::new();
    let mut run = Vec::new();
    for &(x, y) in points {
        match y {
            Some(y) => run.push((x, y)),
            None if !run.is_empty() => runs.push(std::mem::take(&mut run)),
            None => {}
        }
    }
    if !run.is_empty() {
        runs.push(run);
    }
    runs
}

fn lighter(c: RGBColor) -> RGBColor {
    let up = |v: u8| v + (255 - v) / 2;
    RGBColor(up(c.0), up(c.1), up(c.2))
}

fn seconds(s: f64) -> String {
    if s < 1.0 {
        format!("{} ms", (s * 1000.0).round())
    } else {
        format!("{s} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_break_where_nothing_was_measured() {
        let points = [
            (0.0, Some(1.0)),
            (1.0, None),
            (2.0, Some(2.0)),
            (3.0, Some(3.0)),
        ];
        assert_eq!(
            runs(&points),
            vec![vec![(0.0, 1.0)], vec![(2.0, 2.0), (3.0, 3.0)]]
        );
    }

    #[test]
    fn bucket_widths_read_as_people_write_them() {
        assert_eq!(seconds(0.1), "100 ms");
        assert_eq!(seconds(0.4), "400 ms");
        assert_eq!(seconds(1.6), "1.6 s");
    }
}
