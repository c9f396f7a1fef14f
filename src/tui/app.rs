//! The UI's state: the packet index, findings and sessions received from the
//! data side, and the panes the user looks at ([`super::pane`]). The app takes
//! the keys every pane shares and hands the rest to the focused pane, then does
//! what the pane asks ([`Action`]); drawing reads this state (see `ui`).

use super::filter::{DisplayFilter, Job, LogSet, PacketCtx, Worker};
use super::model::{
    CaptureCounters, Endpoints, Entry, FindingLog, LoggedFinding, RECORD_HEADER, Row, RowIndex,
    SessionSnap, Update,
};
use super::pane::{
    Action, Component, Cursor, Detail, Extent, FindingItem, FindingList, Graph, HexView, LogView,
    Node, Pane, SessionList,
};
use super::store::StoreReader;
use crate::capture::Timestamp;
use crate::engine::{SessionId, Severity};
use crate::proto::dissect::{TreeEntry, TreeItem};
use crate::report::timeline::Timeline;
use ratatui::crossterm::event::{
    Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::{Position, Rect};
use std::net::SocketAddr;
use std::ops::Range;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The packet list: all rows, one session's, or those a filter matches.
#[derive(Debug, Default)]
pub struct PacketView {
    pub session: Option<SessionId>,
    pub filter: Option<Arc<DisplayFilter>>,
    /// Indices of matching rows found so far; `None` when every row matches.
    pub matches: Option<Vec<u32>>,
    /// Rows of the findings log the filter kept so far; `None` when every
    /// one is kept (no session chosen, no filter).
    pub findings: Option<LogSet>,
    /// Findings kept so far (each row's run counted whole).
    pub findings_kept: u64,
    /// Bumped whenever `findings` changes: the findings pane rebuilds then.
    pub findings_version: u64,
    /// Rows of the findings log looked at: a finding logged later on a row
    /// the worker had already been given is checked by the UI itself.
    log_seen: usize,
    /// Rows examined so far for `matches` (by the filter worker).
    pub scanned: usize,
    /// Rows handed to the filter worker so far.
    sent: usize,
    /// The worker's generation these matches belong to.
    generation: u64,
    /// A frame to select once the scan has got to it (the one selected when
    /// the view changed).
    reselect: Option<u64>,
    pub cursor: Cursor,
}

impl PacketView {
    fn is_all(&self) -> bool {
        self.session.is_none() && self.filter.is_none()
    }
}

impl Component for PacketView {
    fn scroll(&mut self, delta: isize, extent: Extent) -> Action {
        self.cursor.shift(delta, extent.len);
        Action::PacketMoved
    }

    fn enter(&mut self) -> Action {
        Action::OpenPacket
    }

    fn cursor(&self) -> Option<&Cursor> {
        Some(&self.cursor)
    }
}

/// What the status bar's input line is for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Prompt {
    /// A display filter (`/`).
    #[default]
    Filter,
    /// A file to save the packets in view to (`w`).
    Save,
    /// A frame number to go to (`:`).
    GoTo,
}

/// The text being typed in the status bar.
#[derive(Debug, Clone, Default)]
pub struct FilterInput {
    pub prompt: Prompt,
    pub text: String,
    /// Why the text does not parse; `None` when it does.
    pub error: Option<String>,
}

/// Where each pane was last drawn, for the mouse and for page sizes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Areas {
    pub sessions: Rect,
    pub packets: Rect,
    pub detail: Rect,
    pub hex: Rect,
    pub findings: Rect,
    pub graph: Rect,
}

impl Areas {
    pub fn get(&self, p: Pane) -> Rect {
        match p {
            Pane::Sessions => self.sessions,
            Pane::Packets => self.packets,
            Pane::Detail => self.detail,
            Pane::Hex => self.hex,
            Pane::Findings => self.findings,
            Pane::Graph => self.graph,
        }
    }

    fn pane_at(&self, pos: Position) -> Option<Pane> {
        Pane::ALL.into_iter().find(|p| self.get(*p).contains(pos))
    }
}

/// A place to come back to: the pane in focus, and the selections of the
/// findings and the packets.
#[derive(Debug, Clone, Copy)]
struct Place {
    focus: Pane,
    finding: Cursor,
    frame: Option<u64>,
}

/// What the data source is, for the status bar and the clock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceInfo {
    /// `file x.pcap` or `live lo`.
    pub label: String,
    pub live: bool,
}

/// Everything the screen shows.
pub struct App {
    pub source: SourceInfo,
    store: StoreReader,
    /// The packet index (the rest of each row is in its record in the store;
    /// see [`App::row`]).
    pub rows: RowIndex,
    /// The findings, in the order raised, runs folded, bounded (see
    /// [`FindingLog`]).
    pub findings: FindingLog,
    pub sessions: Vec<SessionSnap>,
    /// Every session's two ends, by session id (shared with filter jobs).
    endpoints: Arc<Vec<Option<Endpoints>>>,
    /// Filters the packet list off the UI thread; started with the first filter.
    worker: Option<Worker>,
    pub counters: CaptureCounters,
    pub progress: Option<f64>,
    pub finished: bool,
    pub error: Option<String>,

    pub focus: Pane,
    pub session_list: SessionList,
    pub view: PacketView,
    pub detail: Detail,
    pub hex: HexView,
    pub finding_list: FindingList,
    pub graph: Graph,
    /// Every session over time, filled by the data side: the IO graph's data.
    pub timeline: Arc<Mutex<Timeline>>,
    pub follow: bool,
    /// On screens too small for every pane, whether the lower part shows the
    /// packet's detail and hex (once the user looks at packets) rather than
    /// the findings (at first, and once the user goes to them).
    pub lower_detail: bool,
    /// While paused, what was shown when the pause began: row, finding and
    /// session counts stay there.
    pub paused: Option<(usize, usize, Vec<SessionSnap>)>,
    pub help: bool,
    pub input: Option<FilterInput>,
    /// A one-off message for the status bar.
    pub message: Option<String>,
    /// Where the user was before the last jump (to a finding's packet, to a
    /// frame): Backspace goes back there.
    back: Option<Place>,
    /// Files `w` saved, and how many packets each holds: the summary on quit
    /// names them.
    pub saved: Vec<(std::path::PathBuf, u64)>,
    pub quit: bool,
    pub areas: Areas,
    /// Rows received per second of wall time (set by the run loop).
    pub pps: f64,
    /// Wall clock for live rates (set by the run loop for live sources).
    pub wall_now: Option<Timestamp>,
}

/// Rows per filter job.
const FILTER_BLOCK: usize = 16 * 1024;
/// Filter jobs queued at once: enough to keep the worker busy between two
/// screens, few enough that a cancelled filter leaves little to drop.
const FILTER_IN_FLIGHT: usize = 4;

impl App {
    pub fn new(source: SourceInfo, store: StoreReader) -> Self {
        App {
            follow: source.live,
            lower_detail: false,
            source,
            store,
            rows: RowIndex::default(),
            findings: FindingLog::default(),
            sessions: Vec::new(),
            endpoints: Arc::default(),
            worker: None,
            counters: CaptureCounters::default(),
            progress: None,
            finished: false,
            error: None,
            focus: Pane::Packets,
            session_list: SessionList::default(),
            view: PacketView::default(),
            detail: Detail::default(),
            hex: HexView::default(),
            finding_list: FindingList::default(),
            graph: Graph::default(),
            timeline: Arc::default(),
            paused: None,
            help: false,
            input: None,
            message: None,
            back: None,
            saved: Vec::new(),
            quit: false,
            areas: Areas::default(),
            pps: 0.0,
            wall_now: None,
        }
    }

    // ---- data in ----

    /// Takes in one update from the data side.
    pub fn apply(&mut self, u: Update) {
        match u {
            Update::Batch {
                rows,
                findings,
                endpoints,
            } => {
                if !endpoints.is_empty() {
                    let all = Arc::make_mut(&mut self.endpoints);
                    for e in endpoints {
                        if all.len() <= e.id {
                            all.resize(e.id + 1, None);
                        }
                        all[e.id] = Some(e);
                    }
                }
                rows.iter().for_each(|r| self.rows.push(r.entry()));
                for (frame, mut f) in findings {
                    // Every finding's frame is a row's; the nearest one otherwise.
                    let r = self
                        .row_of_frame(frame)
                        .unwrap_or_else(|| self.rows.first_from_frame(frame));
                    f.row = u32::try_from(r).unwrap_or(u32::MAX);
                    // Every packet keeps its findings' worst severity, folded
                    // or not (a late one, `lost`, marks its earlier row).
                    self.rows.note(r, f.severity());
                    self.findings.push(f);
                }
            }
            Update::Sessions(s) => self.sessions = s,
            Update::Status { counters, progress } => {
                self.counters = counters;
                self.progress = progress;
            }
            Update::Finished => {
                self.finished = true;
                self.progress = self.progress.map(|_| 1.0);
            }
            Update::Failed(e) => self.error = Some(e),
        }
    }

    /// Work between two screens: filtering the new rows, following.
    pub fn tick(&mut self) {
        self.findings.index();
        self.pump_filter();
        self.refresh_findings();
        if self.follow && self.paused.is_none() {
            let len = self.view_len();
            self.view.cursor.set(len.saturating_sub(1), len);
        }
        self.refresh_detail();
    }

    // ---- what is shown ----

    /// Rows the view may show (all of them, or those up to the pause).
    pub fn row_limit(&self) -> usize {
        self.paused.as_ref().map_or(self.rows.len(), |p| p.0)
    }

    pub fn finding_limit(&self) -> usize {
        self.paused.as_ref().map_or(self.findings.len(), |p| p.1)
    }

    pub fn shown_sessions(&self) -> &[SessionSnap] {
        self.paused.as_ref().map_or(&self.sessions, |p| &p.2)
    }

    /// Packets in the current view.
    pub fn view_len(&self) -> usize {
        match &self.view.matches {
            None => self.row_limit(),
            Some(m) => m.partition_point(|&i| (i as usize) < self.row_limit()),
        }
    }

    /// The index row at position `i` of the view.
    pub fn view_row(&self, i: usize) -> Option<usize> {
        match &self.view.matches {
            None => (i < self.row_limit()).then_some(i),
            Some(m) => m.get(i).map(|&r| r as usize),
        }
    }

    /// True while the filter is still going through rows already received.
    pub fn filtering(&self) -> Option<f64> {
        (self.view.matches.is_some() && self.view.scanned < self.rows.len())
            .then(|| self.view.scanned as f64 / self.rows.len().max(1) as f64)
    }

    pub fn session(&self, id: u32) -> Option<&SessionSnap> {
        let id = id as usize;
        let s = self.shown_sessions();
        // Sessions arrive in id order; most are where their id says.
        match s.get(id) {
            Some(snap) if snap.id == id => Some(snap),
            _ => s.iter().find(|snap| snap.id == id),
        }
    }

    /// Source and destination of a row's packet.
    /// The protocol of a packet's session (the engine's word, not a guess from
    /// its bytes: a flow recognised by its handshake has no mark on each packet).
    pub fn protocol(&self, row: &Row, payload: &[u8]) -> &'static crate::engine::ProtocolInfo {
        self.endpoints
            .get(row.session as usize)
            .copied()
            .flatten()
            .map_or_else(|| crate::proto::protocol_of(payload), |e| e.protocol)
    }

    /// What reads the packet of `row`: its session's reader for its
    /// direction (Battlegrounds' byte order, a protobuf description's
    /// message per side), else its protocol's dissector.
    pub fn dissector(
        &self,
        row: &Row,
        payload: &[u8],
    ) -> &'static dyn crate::proto::dissect::Dissector {
        self.endpoints
            .get(row.session as usize)
            .copied()
            .flatten()
            .map_or_else(
                || crate::proto::protocol_of(payload).dissector,
                |e| e.dissector(row.direction()),
            )
    }

    pub fn addresses(&self, row: &Row) -> Option<(SocketAddr, SocketAddr)> {
        self.endpoints
            .get(row.session as usize)
            .copied()
            .flatten()
            .map(|e| e.of(row.direction()))
    }

    /// Findings raised on the packet of index row `row`.
    /// Of a run, only its first and newest are kept (see [`FindingLog`]).
    pub fn findings_of(&self, row: usize) -> impl Iterator<Item = &LoggedFinding> {
        let row = u32::try_from(row).unwrap_or(u32::MAX);
        self.findings
            .in_rows(row..row.saturating_add(1))
            .map(|(_, f)| f)
    }

    /// A finding's frame.
    pub fn finding_frame(&self, f: &LoggedFinding) -> Option<u64> {
        self.rows.get(f.row as usize).map(|e| e.frame)
    }

    /// A finding's detail, as text (read back from the store).
    pub fn finding_detail(&self, f: &LoggedFinding) -> String {
        self.store
            .read_text(f.detail)
            .unwrap_or_else(|e| format!("(cannot read the detail back: {e})"))
    }

    /// The index row of a frame (frames are in increasing order).
    pub fn row_of_frame(&self, frame: u64) -> Option<usize> {
        self.rows.find_frame(frame)
    }

    /// Index row `i`, its record's header read from the store; `None` past
    /// the end or if the store cannot be read.
    pub fn row(&self, i: usize) -> Option<Row> {
        let e: Entry = self.rows.get(i)?;
        let mut header = [0; RECORD_HEADER];
        self.store.read_exact_at(&mut header, e.record).ok()?;
        Some(Row::from_header(e, &header))
    }

    /// Reads a row's payload.
    pub fn payload(&self, row: &Row, buf: &mut Vec<u8>) -> bool {
        self.store.read(row.payload(), buf).is_ok()
    }

    /// Capture time of the first packet: packet times are shown relative to it.
    pub fn first_ts(&self) -> Timestamp {
        self.row(0).map_or(Timestamp(0), |r| r.ts)
    }

    /// The capture second rates are measured at.
    pub fn now_sec(&self) -> u64 {
        let last = self
            .row_limit()
            .checked_sub(1)
            .and_then(|i| self.row(i))
            .map_or(Timestamp(0), |r| r.ts);
        let now = match (self.paused.is_none(), self.wall_now) {
            (true, Some(w)) => w.max(last),
            _ => last,
        };
        now.nanos() / 1_000_000_000
    }

    // ---- filtering ----

    /// Starts the view over: a new session or filter. Filtering goes on in the
    /// background; the packet selected now is selected again once it is found.
    fn reset_view(&mut self) {
        let keep = self
            .selected_row()
            .and_then(|r| self.rows.get(r))
            .map(|e| e.frame);
        self.view.matches = (!self.view.is_all()).then(Vec::new);
        self.view.findings = (!self.view.is_all()).then(LogSet::default);
        self.view.findings_version += 1;
        self.view.log_seen = self.findings.len();
        self.view.scanned = 0;
        self.view.sent = 0;
        self.view.cursor = Cursor::default();
        self.view.reselect = None;
        if let Some(w) = &self.worker {
            self.view.generation = w.cancel();
        }
        if self.view.matches.is_none() {
            if let Some(frame) = keep {
                self.select_frame_in_view(frame);
            }
            return;
        }
        self.view.reselect = keep;
        if self.worker.is_none() {
            match Worker::spawn(self.store.clone()) {
                Ok(w) => {
                    self.view.generation = w.generation();
                    self.worker = Some(w);
                }
                Err(e) => self.error = Some(format!("cannot start the filter: {e}")),
            }
        }
        self.pump_filter();
    }

    /// Takes in what the filter worker found and hands it the next rows.
    fn pump_filter(&mut self) {
        if self.view.matches.is_none() {
            return;
        }
        let Some(worker) = self.worker.take() else {
            return;
        };
        while let Some(done) = worker.try_done() {
            self.take_matches(done);
        }
        self.check_late_findings();
        self.send_jobs(&worker);
        self.worker = Some(worker);
    }

    /// Filters the findings logged on rows the worker had already been given
    /// (a `lost` raised on an earlier packet, the end of the capture's), up
    /// to a few thousand a screen; stops at a row the worker has not
    /// finished, to take it up once it has.
    fn check_late_findings(&mut self) {
        const BUDGET: usize = 4096;
        let end = self.findings.len().min(self.view.log_seen + BUDGET);
        while self.view.log_seen < end {
            let i = self.view.log_seen;
            let Some(r) = self.findings.get(i).map(|run| run.first.row as usize) else {
                break;
            };
            if r < self.view.sent {
                if r >= self.view.scanned {
                    break;
                }
                self.check_late(r);
            }
            self.view.log_seen += 1;
        }
    }

    /// Filters again the packet of index row `r`, already scanned, and its
    /// findings.
    fn check_late(&mut self, r: usize) {
        let mut payload = Vec::new();
        let Some(row) = self.row(r).filter(|row| self.payload(row, &mut payload)) else {
            return;
        };
        if self.view.session.is_some_and(|s| row.session as usize != s) {
            return;
        }
        let lo = r as u32;
        let own: Vec<(u32, LoggedFinding)> = self
            .findings
            .in_rows_logged(lo..lo + 1)
            .map(|(_, i, f)| (i, *f))
            .collect();
        let own = own.iter().map(|(i, f)| (*i, f));
        let mut found = Vec::new();
        let packet = match &self.view.filter {
            None => {
                found.extend(own.map(|(i, _)| i));
                true
            }
            Some(filter) => {
                let unknown = (SocketAddr::from(([0; 4], 0)), SocketAddr::from(([0; 4], 0)));
                let ctx = PacketCtx {
                    row: &row,
                    payload: &payload,
                    addresses: self.addresses(&row).unwrap_or(unknown),
                    protocol: self.protocol(&row, &payload),
                    dissector: self.dissector(&row, &payload),
                    findings: &[],
                };
                let mut fs = Vec::new();
                super::filter::finding_matches(filter, &ctx, own, &mut fs, &mut found)
            }
        };
        if packet
            && let Some(m) = &mut self.view.matches
            && let Err(at) = m.binary_search(&lo)
        {
            m.insert(at, lo);
        }
        self.keep_findings(found);
    }

    /// Adds rows of the findings log to those the filter kept.
    fn keep_findings(&mut self, found: Vec<u32>) {
        if let Some(kept) = &mut self.view.findings
            && !found.is_empty()
        {
            found.into_iter().for_each(|i| kept.insert(i));
            self.view.findings_version += 1;
        }
    }

    /// Brings the findings pane up to date with the log and the filter.
    fn refresh_findings(&mut self) {
        let view = LogView {
            log: &self.findings,
            limit: self.paused.as_ref().map_or(self.findings.len(), |p| p.1),
            kept: self.view.findings.as_ref(),
            filter: self.view.findings_version,
        };
        self.finding_list.refresh(&view);
    }

    fn take_matches(&mut self, done: super::filter::Done) {
        if done.generation != self.view.generation || done.start != self.view.scanned {
            return;
        }
        if let Some(m) = &mut self.view.matches {
            m.extend(done.matches);
        }
        self.keep_findings(done.findings);
        self.view.scanned = done.end;
        if let Some(frame) = self.view.reselect
            && self
                .row_of_frame(frame)
                .is_none_or(|r| r < self.view.scanned)
        {
            self.view.reselect = None;
            self.select_frame_in_view(frame);
        }
    }

    /// Hands the worker blocks of rows not sent yet, up to a few in flight.
    fn send_jobs(&mut self, worker: &Worker) {
        let in_flight = self.view.sent.saturating_sub(self.view.scanned);
        let mut room = (FILTER_IN_FLIGHT * FILTER_BLOCK).saturating_sub(in_flight);
        while room > 0 && self.view.sent < self.rows.len() {
            let start = self.view.sent;
            let end = (start + FILTER_BLOCK.min(room)).min(self.rows.len());
            let rows: Vec<Entry> = self.rows.range(start..end).collect();
            let findings = self.job_findings(start..end);
            let job = Job {
                generation: self.view.generation,
                start,
                rows,
                findings,
                session: self.view.session,
                filter: self.view.filter.clone(),
                endpoints: Arc::clone(&self.endpoints),
            };
            if !worker.send(job) {
                self.error = Some("the filter has stopped".into());
                return;
            }
            self.view.sent = end;
            room -= end - start;
        }
    }

    /// The findings of rows `range`, with their row indices and their rows
    /// in the log, as the filter sees them.
    fn job_findings(&self, range: Range<usize>) -> Vec<(usize, u32, LoggedFinding)> {
        let lo = u32::try_from(range.start).unwrap_or(u32::MAX);
        let hi = u32::try_from(range.end).unwrap_or(u32::MAX);
        self.findings
            .in_rows_logged(lo..hi)
            .map(|(r, i, f)| (r as usize, i, *f))
            .collect()
    }

    /// Waits until the filter has gone through every row received so far (for
    /// tests and snapshots; the UI never waits).
    pub fn finish_filtering(&mut self) {
        while self.view.matches.is_some() && self.view.scanned < self.rows.len() {
            self.pump_filter();
            let Some(worker) = self.worker.take() else {
                return;
            };
            let done = worker.done_within(Duration::from_secs(10));
            self.worker = Some(worker);
            match done {
                Some(d) => self.take_matches(d),
                None => return,
            }
        }
        self.refresh_detail();
    }

    fn select_frame_in_view(&mut self, frame: u64) -> bool {
        let Some(row) = self.row_of_frame(frame) else {
            return false;
        };
        let pos = match &self.view.matches {
            None => Some(row),
            Some(m) => m.binary_search(&(row as u32)).ok(),
        };
        match pos {
            Some(p) => {
                let len = self.view_len();
                self.view.cursor.set(p, len);
                true
            }
            None => false,
        }
    }

    /// The index row under the packet cursor.
    pub fn selected_row(&self) -> Option<usize> {
        self.view_row(self.view.cursor.selected)
    }

    /// Sets the display filter (empty text clears it).
    pub fn set_filter(&mut self, text: &str) -> Result<(), String> {
        self.view.filter = if text.trim().is_empty() {
            None
        } else {
            Some(Arc::new(DisplayFilter::parse(text)?))
        };
        self.reset_view();
        Ok(())
    }

    fn select_session(&mut self) {
        let id = self
            .session_list
            .cursor
            .selected
            .checked_sub(1)
            .and_then(|i| self.shown_sessions().get(i))
            .map(|s| s.id);
        if id != self.view.session {
            self.view.session = id;
            self.reset_view();
        }
    }

    // ---- the detail tree ----

    fn refresh_detail(&mut self) {
        let row = self.selected_row();
        if row == self.detail.row {
            return;
        }
        let same_shape = self.detail.row.is_some();
        let cursor = self.detail.cursor;
        self.detail = Detail::default();
        self.detail.row = row;
        self.hex = HexView::default();
        let Some(r) = row else { return };
        let mut payload = Vec::new();
        let Some(row) = self.row(r).filter(|row| self.payload(row, &mut payload)) else {
            self.detail.nodes.push(Node {
                label: "payload".into(),
                value: "cannot be read back from the store".into(),
                span: None,
                depth: 0,
                severity: Some(Severity::Error),
            });
            return;
        };
        self.detail.nodes = tree(self, r, &row, &payload);
        self.detail.payload = payload;
        if same_shape {
            // Keep the cursor where it was, as Wireshark does when moving on.
            let len = self.detail.visible().len();
            self.detail.cursor.set(cursor.selected, len);
        }
    }

    // ---- input ----

    /// Handles one terminal event.
    pub fn on_event(&mut self, e: &Event) {
        match e {
            Event::Key(k) if k.kind != KeyEventKind::Release => self.on_key(k),
            Event::Mouse(m) => self.on_mouse(m),
            _ => {}
        }
    }

    fn on_key(&mut self, k: &KeyEvent) {
        self.on_key_inner(k);
        match self.focus {
            Pane::Findings => self.lower_detail = false,
            Pane::Detail | Pane::Hex => self.lower_detail = true,
            _ => {}
        }
    }

    fn on_key_inner(&mut self, k: &KeyEvent) {
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && k.code == KeyCode::Char('c') {
            self.quit = true;
            return;
        }
        if self.input.is_some() {
            self.on_input_key(k);
            return;
        }
        if self.help {
            // Any key closes the help; q still quits.
            self.help = false;
            if k.code == KeyCode::Char('q') {
                self.quit = true;
            }
            return;
        }
        self.message = None;
        // Keys that mean the same in every pane; the rest are the pane's.
        match k.code {
            KeyCode::Char('q') => self.quit = true,
            KeyCode::Char('?') => self.help = true,
            KeyCode::Tab => self.focus = self.focus.next(),
            KeyCode::BackTab => self.focus = self.focus.prev(),
            KeyCode::Char(c @ '1'..='6') => {
                self.focus = Pane::ALL[(c as u8 - b'1') as usize];
            }
            KeyCode::Char('/') => {
                let text = self
                    .view
                    .filter
                    .as_ref()
                    .map(|f| f.text().to_owned())
                    .unwrap_or_default();
                self.input = Some(FilterInput {
                    prompt: Prompt::Filter,
                    text,
                    error: None,
                });
            }
            KeyCode::Char('w') => self.prompt(Prompt::Save, "lwarscope-view.pcapng"),
            KeyCode::Char(':') => self.prompt(Prompt::GoTo, ""),
            KeyCode::Char('g') if ctrl => self.prompt(Prompt::GoTo, ""),
            KeyCode::Char('!') => {
                self.finding_list.focus_worst(&self.findings);
                self.focus = Pane::Findings;
            }
            KeyCode::Backspace => self.go_back(),
            KeyCode::Char('f') if !ctrl => {
                self.follow = !self.follow;
                if self.follow {
                    self.paused = None;
                }
            }
            KeyCode::Char(' ') => self.toggle_pause(),
            KeyCode::Esc if self.view.session.is_some() || self.view.filter.is_some() => {
                self.show_all();
                self.message = Some("showing all packets".into());
            }
            _ => {
                let pane = self.focus;
                let extent = self.extent(pane);
                let action = match pane {
                    Pane::Findings => self.finding_list.on_key_with(k, extent, &self.findings),
                    _ => self.component(pane).on_key(k, extent),
                };
                self.act(action);
            }
        }
    }

    /// Opens the input line for `prompt`, with `text` typed in.
    fn prompt(&mut self, prompt: Prompt, text: &str) {
        self.input = Some(FilterInput {
            prompt,
            text: text.into(),
            error: None,
        });
    }

    /// How much `pane` lists now, and its page.
    fn extent(&self, pane: Pane) -> Extent {
        let len = match pane {
            Pane::Sessions => self.shown_sessions().len() + 1,
            Pane::Packets => self.view_len(),
            Pane::Detail => self.detail.visible().len(),
            Pane::Hex => 0,
            Pane::Findings => self.finding_list.items().len(),
            Pane::Graph => 0,
        };
        let page = self.areas.get(pane).height.saturating_sub(3).max(1);
        Extent {
            len,
            page: usize::from(page),
        }
    }

    fn component(&mut self, pane: Pane) -> &mut dyn Component {
        match pane {
            Pane::Sessions => &mut self.session_list,
            Pane::Packets => &mut self.view,
            Pane::Detail => &mut self.detail,
            Pane::Hex => &mut self.hex,
            Pane::Findings => &mut self.finding_list,
            Pane::Graph => &mut self.graph,
        }
    }

    /// Does what a pane asked for.
    fn act(&mut self, action: Action) {
        match action {
            Action::None => {}
            Action::SessionMoved => self.select_session(),
            Action::OpenSession => {
                self.select_session();
                self.focus = Pane::Packets;
            }
            Action::PacketMoved => {
                self.lower_detail = true;
                // Moving away from the end stops following; End resumes it.
                let len = self.view_len();
                self.follow = self.follow && self.view.cursor.selected + 1 >= len;
                self.refresh_detail();
            }
            Action::OpenPacket => {
                if self.selected_row().is_some() {
                    self.follow = false;
                    self.focus = Pane::Detail;
                }
            }
            Action::JumpToFinding => self.jump_to_finding(),
        }
    }

    /// Back to every packet: no session chosen, no filter.
    fn show_all(&mut self) {
        self.session_list = SessionList::default();
        self.view.session = None;
        self.view.filter = None;
        self.reset_view();
    }

    fn on_input_key(&mut self, k: &KeyEvent) {
        let Some(input) = &mut self.input else { return };
        match k.code {
            KeyCode::Esc => self.input = None,
            KeyCode::Enter if input.prompt == Prompt::Save => {
                let path = std::path::PathBuf::from(input.text.trim());
                self.input = None;
                self.message = Some(match self.save_view(&path) {
                    Ok(n) => {
                        self.saved.push((path.clone(), n));
                        format!("saved {n} packets to {}", crate::text::path(&path))
                    }
                    Err(e) => format!("not saved: {}", crate::text::printable(&e)),
                });
                return;
            }
            KeyCode::Enter if input.prompt == Prompt::GoTo => {
                match input.text.trim().parse::<u64>() {
                    Ok(frame) => {
                        self.input = None;
                        self.remember();
                        self.go_to_frame(frame);
                    }
                    Err(_) => input.error = Some("a frame number".into()),
                }
                return;
            }
            KeyCode::Enter => {
                let text = input.text.clone();
                match self.set_filter(&text) {
                    Ok(()) => {
                        self.input = None;
                        self.focus = Pane::Packets;
                    }
                    Err(e) => {
                        if let Some(input) = &mut self.input {
                            input.error = Some(e);
                        }
                    }
                }
                return;
            }
            KeyCode::Backspace => {
                input.text.pop();
            }
            KeyCode::Char('u') if k.modifiers.contains(KeyModifiers::CONTROL) => input.text.clear(),
            KeyCode::Char(c) => input.text.push(c),
            _ => {}
        }
        if let Some(input) = &mut self.input
            && input.prompt == Prompt::Filter
        {
            input.error = if input.text.trim().is_empty() {
                None
            } else {
                DisplayFilter::parse(&input.text).err()
            };
        }
    }

    /// Writes the packets in view (the session and filter chosen) to `path`
    /// as pcapng: the store keeps UDP payloads, not frames, so each packet is
    /// written as a raw IP frame whose IP and UDP headers are rebuilt from its
    /// addresses (the file's comment says so). Returns how many were written.
    pub fn save_view(&mut self, path: &std::path::Path) -> Result<u64, String> {
        use crate::capture::export::{ExportFormat, FrameWriter};
        use crate::capture::synth::{Link, udp_frame};
        use crate::capture::{Frame, FrameClass, LinkType};
        self.finish_filtering();
        let comment = format!(
            "packets in view in lwarscope's terminal UI{}; IP and UDP headers rebuilt from each packet's addresses",
            self.view
                .filter
                .as_ref()
                .map(|f| format!(" (filter `{}`)", f.text()))
                .unwrap_or_default()
        );
        let mut writer = FrameWriter::create(path, ExportFormat::Pcapng, Some(comment))
            .map_err(|e| e.to_string())?;
        let mut payload = Vec::new();
        for i in 0..self.view_len() {
            let Some(row) = self.view_row(i).and_then(|r| self.row(r)) else {
                continue;
            };
            let Some((src, dst)) = self.addresses(&row) else {
                continue;
            };
            if !self.payload(&row, &mut payload) {
                continue;
            }
            let data = udp_frame(Link::RawIp, src, dst, &payload);
            let headers = data.len() - payload.len();
            let frame = Frame {
                number: row.frame,
                ts: row.ts,
                orig_len: (headers + usize::from(row.len)) as u32,
                cap_len: data.len() as u32,
                class: FrameClass::NotIp,
                data: &data,
                link: LinkType::RawIp,
                fragment_frames: &[],
            };
            writer.write(&frame).map_err(|e| e.to_string())?;
        }
        writer.finish().map_err(|e| e.to_string())
    }

    fn on_mouse(&mut self, m: &MouseEvent) {
        let pos = Position::new(m.column, m.row);
        let Some(pane) = self.areas.pane_at(pos) else {
            return;
        };
        let extent = self.extent(pane);
        let action = match m.kind {
            MouseEventKind::ScrollUp => self.component(pane).scroll(-3, extent),
            MouseEventKind::ScrollDown => self.component(pane).scroll(3, extent),
            MouseEventKind::Down(MouseButton::Left) => {
                self.focus = pane;
                let area = self.areas.get(pane);
                let top = area.y + pane.top_lines();
                if m.row < top || m.row >= area.bottom().saturating_sub(1) {
                    return;
                }
                let c = self.component(pane);
                match c.item_at(usize::from(m.row - top)) {
                    Some(t) => {
                        let delta = t as isize - c.selected() as isize;
                        c.scroll(delta, extent)
                    }
                    None => Action::None,
                }
            }
            _ => Action::None,
        };
        self.act(action);
    }

    /// Selects the packet of the incident under the findings cursor.
    fn jump_to_finding(&mut self) {
        let Some(FindingItem::Incident(i)) = self.finding_list.selected_item() else {
            return;
        };
        let Some(frame) = self
            .findings
            .get(i as usize)
            .and_then(|run| self.finding_frame(&run.first))
        else {
            return;
        };
        self.remember();
        self.go_to_frame(frame);
    }

    /// Selects the packet of `frame` (or the first game packet after it),
    /// widening the view if the current one hides it, and focuses the packets.
    fn go_to_frame(&mut self, frame: u64) {
        let Some(row) = self.rows.get(self.rows.first_from_frame(frame)) else {
            self.message = Some(format!("no game packet at or after frame {frame}"));
            return;
        };
        self.follow = false;
        let mut note = (row.frame != frame)
            .then(|| format!("frame {frame} is no game packet: frame {} shown", row.frame));
        if !self.select_frame_in_view(row.frame) {
            self.show_all();
            self.select_frame_in_view(row.frame);
            note.get_or_insert(format!(
                "view widened to all packets to show frame {}",
                row.frame
            ));
        }
        self.message = note;
        self.refresh_detail();
        self.focus = Pane::Packets;
        self.lower_detail = true;
    }

    /// Where the user is now, to come back to.
    fn place(&self) -> Place {
        Place {
            focus: self.focus,
            finding: self.finding_list.cursor,
            frame: self
                .selected_row()
                .and_then(|r| self.rows.get(r))
                .map(|e| e.frame),
        }
    }

    fn remember(&mut self) {
        self.back = Some(self.place());
    }

    /// Back to where the last jump left from; again, back to where it went.
    fn go_back(&mut self) {
        let Some(to) = self.back.take() else {
            self.message = Some("nowhere to go back to".into());
            return;
        };
        self.back = Some(self.place());
        if let Some(frame) = to.frame
            && !self.select_frame_in_view(frame)
        {
            self.show_all();
            self.select_frame_in_view(frame);
        }
        self.finding_list.cursor = to.finding;
        self.focus = to.focus;
        self.follow = false;
        self.refresh_detail();
    }

    /// The line printed on the terminal once the TUI has ended, as tshark
    /// prints its packet count: what was read and found, and what `w` saved.
    pub fn summary(&self) -> String {
        let packets = self.rows.len() as u64;
        let plural = |n: u64, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
        let mut line = format!(
            "lwarscope: {}, {}, {}, {}, {}, {}",
            plural(self.counters.frames.max(packets), "frame"),
            plural(packets, "game packet"),
            plural(self.sessions.len() as u64, "session"),
            plural(self.findings.count_of(Severity::Error), "error"),
            plural(self.findings.count_of(Severity::Warning), "warning"),
            plural(self.findings.count_of(Severity::Note), "note"),
        );
        for (i, (path, n)) in self.saved.iter().enumerate() {
            line.push_str(if i == 0 { "; saved " } else { ", " });
            line.push_str(&format!(
                "{} to {}",
                plural(*n, "packet"),
                crate::text::path(path)
            ));
        }
        line
    }

    fn toggle_pause(&mut self) {
        self.paused = match self.paused.take() {
            Some(_) => None,
            None => {
                self.follow = false;
                Some((self.rows.len(), self.findings.len(), self.sessions.clone()))
            }
        };
    }
}

/// A field of the dissector's tree as a line of the detail pane.
fn node_of(f: TreeItem) -> Node {
    Node {
        label: f.label,
        value: f.value,
        span: Some(f.span),
        depth: f.depth,
        severity: None,
    }
}

/// The detail tree of one packet: header, each message with every field,
/// undecodable bytes, findings.
fn tree(app: &App, r: usize, row: &Row, payload: &[u8]) -> Vec<Node> {
    let mut nodes = Vec::new();
    let (src, dst) = match app.addresses(row) {
        Some((s, d)) => (s.to_string(), d.to_string()),
        None => ("?".into(), "?".into()),
    };
    nodes.push(Node {
        label: format!("Frame {}", row.frame),
        value: format!(
            "{} bytes{}, {} -> {} ({}, session {})",
            payload.len(),
            if row.cut_by_capture() {
                " (cut by the capture)"
            } else {
                ""
            },
            src,
            dst,
            row.direction(),
            row.session
        ),
        span: Some(0..payload.len()),
        depth: 0,
        severity: None,
    });
    let dissector = app.dissector(row, payload);
    let mut numbers = String::new();
    let header = dissector.header(payload, &mut |h| {
        if !numbers.is_empty() {
            numbers.push_str(", ");
        }
        numbers.push_str(h.name);
        numbers.push(' ');
        numbers.push_str(&h.value.to_string());
    });
    match header {
        Err(e) => nodes.push(Node {
            label: "Header".into(),
            value: e.to_string(),
            span: Some(0..payload.len()),
            depth: 0,
            severity: Some(Severity::Error),
        }),
        Ok(()) => dissector.tree(payload, &mut |entry| match entry {
            TreeEntry::Field(f) if f.depth == 0 && f.label == "header" => nodes.push(Node {
                label: "Header".into(),
                value: std::mem::take(&mut numbers),
                span: Some(f.span),
                depth: 0,
                severity: None,
            }),
            TreeEntry::Field(f) => nodes.push(node_of(f)),
            TreeEntry::Error { error, offset } => nodes.push(Node {
                label: "Undecodable".into(),
                value: error.to_string(),
                span: Some(offset..payload.len()),
                depth: 0,
                severity: Some(Severity::Error),
            }),
        }),
    }
    let findings: Vec<&LoggedFinding> = app.findings_of(r).collect();
    if !findings.is_empty() {
        nodes.push(Node {
            label: "Findings".into(),
            value: findings.len().to_string(),
            span: None,
            depth: 0,
            severity: findings.iter().map(|f| f.severity()).max(),
        });
        for f in findings {
            let mut value = app.finding_detail(f);
            if let Some(s) = f.seqno() {
                value = if value.is_empty() {
                    format!("seqno {s}")
                } else {
                    format!("seqno {s}: {value}")
                };
            }
            nodes.push(Node {
                label: f.label().to_string(),
                value,
                span: None,
                depth: 1,
                severity: Some(f.severity()),
            });
        }
    }
    nodes
}
