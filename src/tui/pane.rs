//! The panes as components, in the manner of gitui: each owns what the user
//! moves in it (its cursor, its scroll, its open nodes) and handles its own keys
//! and scrolling; what it cannot do alone (choose a session, open a packet, jump
//! to a finding's packet) it hands back to the app as an [`Action`]. Keys that
//! mean the same everywhere (quit, help, Tab, the filter box, follow, pause)
//! the app takes before a pane sees them. Drawing is in `ui/`, one module per
//! pane.

use super::filter::LogSet;
use super::model::{FindingLog, LogRow};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::collections::HashSet;
use std::ops::Range;

/// The panes, in Tab order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pane {
    Sessions,
    Packets,
    Detail,
    Hex,
    Findings,
    Graph,
}

impl Pane {
    pub const ALL: [Pane; 6] = [
        Pane::Sessions,
        Pane::Packets,
        Pane::Detail,
        Pane::Hex,
        Pane::Findings,
        Pane::Graph,
    ];

    pub const fn title(self) -> &'static str {
        match self {
            Pane::Sessions => "Sessions",
            Pane::Packets => "Packets",
            Pane::Detail => "Detail",
            Pane::Hex => "Hex",
            Pane::Findings => "Findings",
            Pane::Graph => "IO graph",
        }
    }

    pub fn next(self) -> Pane {
        let i = Pane::ALL.iter().position(|p| *p == self).unwrap_or(0);
        Pane::ALL[(i + 1) % Pane::ALL.len()]
    }

    pub fn prev(self) -> Pane {
        let i = Pane::ALL.iter().position(|p| *p == self).unwrap_or(0);
        Pane::ALL[(i + Pane::ALL.len() - 1) % Pane::ALL.len()]
    }

    /// Lines above a pane's first item: its border, and the sessions' header.
    pub const fn top_lines(self) -> u16 {
        match self {
            Pane::Sessions => 2,
            _ => 1,
        }
    }
}

/// A list position: the selected item and the first one shown.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cursor {
    pub selected: usize,
    pub offset: usize,
}

impl Cursor {
    /// Moves by `delta` within `len` items.
    pub fn shift(&mut self, delta: isize, len: usize) {
        self.selected = self
            .selected
            .saturating_add_signed(delta)
            .min(len.saturating_sub(1));
    }

    pub fn set(&mut self, i: usize, len: usize) {
        self.selected = i.min(len.saturating_sub(1));
    }

    /// Keeps the selection within `height` rows from the offset; returns the
    /// visible range.
    pub fn scroll_into_view(&mut self, len: usize, height: usize) -> Range<usize> {
        self.selected = self.selected.min(len.saturating_sub(1));
        if height == 0 {
            return 0..0;
        }
        if self.selected < self.offset {
            self.offset = self.selected;
        } else if self.selected >= self.offset + height {
            self.offset = self.selected + 1 - height;
        }
        self.offset = self.offset.min(len.saturating_sub(height));
        self.offset..(self.offset + height).min(len)
    }
}

/// What a pane hands back to the app after a key or a scroll.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Nothing more to do (or the key was not the pane's).
    None,
    /// The session selection moved: the packet list follows it.
    SessionMoved,
    /// Enter on a session: show its packets.
    OpenSession,
    /// The packet selection moved: the detail follows it.
    PacketMoved,
    /// Enter on a packet: look into it.
    OpenPacket,
    /// Enter on a finding: show its packet.
    JumpToFinding,
}

/// How much a pane lists now and how tall a page is: what the app knows and a
/// pane needs to move within bounds.
#[derive(Debug, Clone, Copy)]
pub struct Extent {
    pub len: usize,
    pub page: usize,
}

/// A pane that handles its own keys.
pub trait Component {
    /// Moves the selection by `delta` items (keys, the mouse wheel, a click).
    fn scroll(&mut self, delta: isize, extent: Extent) -> Action;

    /// What Enter asks for in this pane.
    fn enter(&mut self) -> Action {
        Action::None
    }

    /// The pane's list position, for a pane that lists items.
    fn cursor(&self) -> Option<&Cursor> {
        None
    }

    /// A key while the pane has focus. The default: Enter as [`Component::enter`]
    /// says, and the usual movement keys (arrows, j/k, Page Up/Down, Ctrl-B/F,
    /// Home/End, g/G).
    fn on_key(&mut self, key: &KeyEvent, extent: Extent) -> Action {
        if key.code == KeyCode::Enter {
            return self.enter();
        }
        match movement(key, extent.page) {
            Some(delta) => self.scroll(delta, extent),
            None => Action::None,
        }
    }

    /// The item under a click `line` lines below the pane's first item.
    fn item_at(&self, line: usize) -> Option<usize> {
        self.cursor().map(|c| c.offset + line)
    }

    /// The selected item.
    fn selected(&self) -> usize {
        self.cursor().map_or(0, |c| c.selected)
    }
}

/// The selection change a movement key asks for.
pub fn movement(key: &KeyEvent, page: usize) -> Option<isize> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let page = isize::try_from(page.max(1)).unwrap_or(isize::MAX);
    Some(match key.code {
        KeyCode::Char('b') if ctrl => -page,
        KeyCode::Char('f') if ctrl => page,
        KeyCode::Up | KeyCode::Char('k') => -1,
        KeyCode::Down | KeyCode::Char('j') => 1,
        KeyCode::PageUp => -page,
        KeyCode::PageDown => page,
        KeyCode::Home | KeyCode::Char('g') => isize::MIN / 2,
        KeyCode::End | KeyCode::Char('G') => isize::MAX / 2,
        _ => return None,
    })
}

/// The sessions pane: "all" first, then each session.
#[derive(Debug, Clone, Copy, Default)]
pub struct SessionList {
    pub cursor: Cursor,
}

impl Component for SessionList {
    fn scroll(&mut self, delta: isize, extent: Extent) -> Action {
        self.cursor.shift(delta, extent.len);
        Action::SessionMoved
    }

    fn enter(&mut self) -> Action {
        Action::OpenSession
    }

    fn cursor(&self) -> Option<&Cursor> {
        Some(&self.cursor)
    }
}

/// What the IO graph pane draws, in the order `m` steps through them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Metric {
    #[default]
    Packets,
    Bytes,
    Resends,
    Lost,
    AckDelay,
}

impl Metric {
    pub const ALL: [Metric; 5] = [
        Metric::Packets,
        Metric::Bytes,
        Metric::Resends,
        Metric::Lost,
        Metric::AckDelay,
    ];

    pub const fn title(self) -> &'static str {
        match self {
            Metric::Packets => "packets/s",
            Metric::Bytes => "bytes/s",
            Metric::Resends => "resends/s",
            Metric::Lost => "lost messages/s",
            Metric::AckDelay => "ack delay, mean ms",
        }
    }

    fn step(self, by: isize) -> Metric {
        let n = Metric::ALL.len() as isize;
        let i = Metric::ALL.iter().position(|m| *m == self).unwrap_or(0) as isize;
        Metric::ALL[(i + by).rem_euclid(n) as usize]
    }
}

/// The IO graph pane: the selected session (or all of them) over time; `m`
/// (or the left and right arrows) picks what is drawn.
#[derive(Debug, Clone, Copy, Default)]
pub struct Graph {
    pub metric: Metric,
}

impl Component for Graph {
    fn scroll(&mut self, _delta: isize, _extent: Extent) -> Action {
        Action::None
    }

    fn on_key(&mut self, key: &KeyEvent, _extent: Extent) -> Action {
        match key.code {
            KeyCode::Char('m') | KeyCode::Right | KeyCode::Char('l') => {
                self.metric = self.metric.step(1);
            }
            KeyCode::Char('M') | KeyCode::Left | KeyCode::Char('h') => {
                self.metric = self.metric.step(-1);
            }
            _ => {}
        }
        Action::None
    }
}

/// The order of the findings pane (`s` switches).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Order {
    /// By kind, worst kind first, each kind's incidents in time order.
    #[default]
    Worst,
    /// Every incident in time order.
    Time,
}

/// One line of the findings pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FindingItem {
    /// A kind (a [`Group`](super::model::Group) of the log, by its place in
    /// [`FindingLog::groups`]), with the incidents and findings shown of it.
    Group {
        group: u32,
        key: (u8, u8),
        incidents: u32,
        findings: u64,
    },
    /// An incident: a row of the log (a run of one finding).
    Incident(u32),
}

/// What the findings pane lists is rebuilt when one of these moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Built {
    log: u64,
    filter: u64,
    limit: usize,
    order: Order,
    expansion: u64,
}

/// The findings pane: the log's incidents grouped by kind, worst first, a
/// kind opened (Enter, →) to its incidents; or every incident by time (`s`).
/// Enter on an incident jumps to its packet.
#[derive(Debug, Clone, Default)]
pub struct FindingList {
    pub cursor: Cursor,
    pub order: Order,
    /// The kinds opened, by their key ([`Group::key`]).
    expanded: HashSet<(u8, u8)>,
    expansion: u64,
    items: Vec<FindingItem>,
    built: Option<Built>,
    /// Incidents and findings shown (all of them, or those the filter kept).
    shown: (usize, u64),
}

/// What the findings pane shows of the log: the rows of the log paused at
/// (`limit`), and those the filter kept (`kept`, `None` for all of them).
pub struct LogView<'a> {
    pub log: &'a FindingLog,
    pub limit: usize,
    pub kept: Option<&'a LogSet>,
    /// Changes with the filter and with what it has found so far.
    pub filter: u64,
}

impl LogView<'_> {
    fn shows(&self, i: u32) -> bool {
        (i as usize) < self.limit && self.kept.is_none_or(|k| k.contains(i))
    }
}

impl FindingList {
    /// The lines, as last built.
    pub fn items(&self) -> &[FindingItem] {
        &self.items
    }

    pub fn is_expanded(&self, key: (u8, u8)) -> bool {
        self.expanded.contains(&key)
    }

    /// Incidents and findings shown: every one, or those the filter kept.
    pub const fn shown(&self) -> (usize, u64) {
        self.shown
    }

    /// The first incident of the kind `key`.
    pub fn first_of<'a>(&self, log: &'a FindingLog, key: (u8, u8)) -> Option<&'a LogRow> {
        let group = log.groups().iter().find(|g| g.key() == key)?;
        log.get(group.first as usize)
    }

    /// The line under the cursor.
    pub fn selected_item(&self) -> Option<FindingItem> {
        self.items.get(self.cursor.selected).copied()
    }

    /// Rebuilds the lines if the log, the filter or the pane's state moved,
    /// keeping the cursor on the line it was on.
    pub fn refresh(&mut self, view: &LogView<'_>) {
        let built = Built {
            log: view.log.version(),
            filter: view.filter,
            limit: view.limit,
            order: self.order,
            expansion: self.expansion,
        };
        if self.built == Some(built) {
            return;
        }
        self.built = Some(built);
        let selected = self.selected_item();
        self.items.clear();
        let shown = view.log.by_time().filter(|&i| view.shows(i));
        self.shown = shown.fold((0, 0), |(n, f), i| {
            (n + 1, f + view.log.get(i as usize).map_or(0, |r| r.count))
        });
        match self.order {
            Order::Time => self.items.extend(
                view.log
                    .by_time()
                    .filter(|&i| view.shows(i))
                    .map(FindingItem::Incident),
            ),
            Order::Worst => self.build_groups(view),
        }
        let at = selected.and_then(|s| self.items.iter().position(|&i| same(i, s)));
        self.cursor
            .set(at.unwrap_or(self.cursor.selected), self.items.len());
    }

    /// Each kind with what is shown of it, worst first, and the incidents
    /// of those opened, in time order.
    fn build_groups(&mut self, view: &LogView<'_>) {
        let groups = view.log.groups();
        let places: rustc_hash::FxHashMap<(u8, u8), usize> = groups
            .iter()
            .enumerate()
            .map(|(g, k)| (k.key(), g))
            .collect();
        let at = |i: u32| {
            let key = view.log.get(i as usize)?.first.group_key();
            places.get(&key).copied()
        };
        // Per kind: incidents and findings shown, and the incidents if open.
        let mut shown = vec![(0u32, 0u64, Vec::new()); groups.len()];
        for i in view.log.by_time().filter(|&i| view.shows(i)) {
            let Some(g) = at(i) else { continue };
            let (n, f, rows) = &mut shown[g];
            *n += 1;
            *f += view.log.get(i as usize).map_or(0, |r| r.count);
            if self.expanded.contains(&groups[g].key()) {
                rows.push(FindingItem::Incident(i));
            }
        }
        for (g, (incidents, findings, rows)) in shown.into_iter().enumerate() {
            if incidents == 0 {
                continue;
            }
            self.items.push(FindingItem::Group {
                group: g as u32,
                key: groups[g].key(),
                incidents,
                findings,
            });
            self.items.extend(rows);
        }
    }

    /// Opens (or closes) the kind under the cursor, or the kind of the
    /// incident under it (then the cursor goes to the kind).
    fn fold(&mut self, log: &FindingLog, open: bool) {
        let pos = self.cursor.selected;
        let Some(item) = self.items.get(pos).copied() else {
            return;
        };
        let key = match item {
            FindingItem::Group { key, .. } => Some(key),
            FindingItem::Incident(i) => {
                if open {
                    return;
                }
                let head = self.items[..pos]
                    .iter()
                    .rposition(|i| matches!(i, FindingItem::Group { .. }));
                self.cursor.selected = head.unwrap_or(pos);
                log.get(i as usize).map(|r| r.first.group_key())
            }
        };
        let Some(key) = key else { return };
        let changed = if open {
            self.expanded.insert(key)
        } else {
            self.expanded.remove(&key)
        };
        if changed {
            self.expansion += 1;
        }
    }

    /// Opens the worst kind and selects it, in the worst-first order.
    pub fn focus_worst(&mut self, log: &FindingLog) {
        self.order = Order::Worst;
        self.cursor = Cursor::default();
        if let Some(g) = log.groups().first()
            && self.expanded.insert(g.key())
        {
            self.expansion += 1;
        }
    }

    /// A key, with the log to open kinds in.
    pub fn on_key_with(&mut self, key: &KeyEvent, extent: Extent, log: &FindingLog) -> Action {
        match (key.code, self.selected_item()) {
            (KeyCode::Char('s'), _) => {
                self.order = match self.order {
                    Order::Worst => Order::Time,
                    Order::Time => Order::Worst,
                };
            }
            (KeyCode::Enter, Some(FindingItem::Incident(_))) => return Action::JumpToFinding,
            (KeyCode::Enter, Some(FindingItem::Group { key, .. })) => {
                let open = !self.expanded.contains(&key);
                self.fold(log, open);
            }
            (KeyCode::Right | KeyCode::Char('l'), _) => self.fold(log, true),
            (KeyCode::Left | KeyCode::Char('h'), _) => self.fold(log, false),
            _ => return Component::on_key(self, key, extent),
        }
        Action::None
    }
}

/// The same line of the pane, whatever its counts.
fn same(a: FindingItem, b: FindingItem) -> bool {
    match (a, b) {
        (FindingItem::Group { key: x, .. }, FindingItem::Group { key: y, .. }) => x == y,
        _ => a == b,
    }
}

impl Component for FindingList {
    fn scroll(&mut self, delta: isize, extent: Extent) -> Action {
        self.cursor.shift(delta, extent.len);
        Action::None
    }

    fn enter(&mut self) -> Action {
        match self.selected_item() {
            Some(FindingItem::Incident(_)) => Action::JumpToFinding,
            _ => Action::None,
        }
    }

    fn cursor(&self) -> Option<&Cursor> {
        Some(&self.cursor)
    }
}

/// The hex pane: a scroll position, kept on the selected field by drawing.
#[derive(Debug, Clone, Copy, Default)]
pub struct HexView {
    pub scroll: usize,
}

impl Component for HexView {
    fn scroll(&mut self, delta: isize, _extent: Extent) -> Action {
        self.scroll = self.scroll.saturating_add_signed(delta);
        Action::None
    }
}

/// One line of the detail tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub label: String,
    pub value: String,
    /// The bytes it covers in the payload, for the hex pane.
    pub span: Option<Range<usize>>,
    pub depth: u8,
    pub severity: Option<crate::engine::Severity>,
}

/// The decoded tree of the selected packet.
#[derive(Debug, Clone, Default)]
pub struct Detail {
    /// The index row it shows.
    pub row: Option<usize>,
    pub nodes: Vec<Node>,
    pub payload: Vec<u8>,
    pub collapsed: HashSet<usize>,
    pub cursor: Cursor,
}

impl Detail {
    /// Indices of the nodes not hidden under a collapsed parent.
    pub fn visible(&self) -> Vec<usize> {
        let mut out = Vec::with_capacity(self.nodes.len());
        let mut hide_below: Option<u8> = None;
        for (i, n) in self.nodes.iter().enumerate() {
            if let Some(d) = hide_below {
                if n.depth > d {
                    continue;
                }
                hide_below = None;
            }
            out.push(i);
            if self.collapsed.contains(&i) {
                hide_below = Some(n.depth);
            }
        }
        out
    }

    /// The node under the cursor.
    pub fn selected_node(&self) -> Option<&Node> {
        self.visible()
            .get(self.cursor.selected)
            .and_then(|&i| self.nodes.get(i))
    }

    fn has_children(&self, i: usize) -> bool {
        match (self.nodes.get(i), self.nodes.get(i + 1)) {
            (Some(a), Some(b)) => b.depth > a.depth,
            _ => false,
        }
    }

    /// Left closes the node under the cursor, or goes to its parent; right
    /// opens it.
    fn collapse(&mut self, close: bool) {
        let visible = self.visible();
        let Some(&i) = visible.get(self.cursor.selected) else {
            return;
        };
        if !close {
            self.collapsed.remove(&i);
            return;
        }
        if self.has_children(i) && !self.collapsed.contains(&i) {
            self.collapsed.insert(i);
        } else if let Some(parent) = (0..i)
            .rev()
            .find(|&p| self.nodes[p].depth < self.nodes[i].depth)
            && let Some(pos) = visible.iter().position(|&v| v == parent)
        {
            // On a leaf or a closed node: go to the parent.
            self.cursor.selected = pos;
        }
    }

    /// Enter opens or closes the node under the cursor.
    fn toggle(&mut self) {
        let visible = self.visible();
        if let Some(&i) = visible.get(self.cursor.selected)
            && self.has_children(i)
            && !self.collapsed.remove(&i)
        {
            self.collapsed.insert(i);
        }
    }
}

impl Component for Detail {
    fn scroll(&mut self, delta: isize, _extent: Extent) -> Action {
        let len = self.visible().len();
        self.cursor.shift(delta, len);
        Action::None
    }

    fn enter(&mut self) -> Action {
        self.toggle();
        Action::None
    }

    fn cursor(&self) -> Option<&Cursor> {
        Some(&self.cursor)
    }

    fn on_key(&mut self, key: &KeyEvent, extent: Extent) -> Action {
        match key.code {
            KeyCode::Left | KeyCode::Char('h') => self.collapse(true),
            KeyCode::Right | KeyCode::Char('l') => self.collapse(false),
            KeyCode::Enter => return self.enter(),
            _ => {
                if let Some(delta) = movement(key, extent.page) {
                    return self.scroll(delta, extent);
                }
            }
        }
        Action::None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn node(depth: u8) -> Node {
        Node {
            label: String::new(),
            value: String::new(),
            span: None,
            depth,
            severity: None,
        }
    }

    #[test]
    fn lists_move_within_bounds_and_say_what_follows() {
        let extent = Extent { len: 5, page: 3 };
        let mut s = SessionList::default();
        assert_eq!(
            s.on_key(&key(KeyCode::PageDown), extent),
            Action::SessionMoved
        );
        assert_eq!(s.cursor.selected, 3);
        s.on_key(&key(KeyCode::End), extent);
        assert_eq!(s.cursor.selected, 4);
        s.on_key(&key(KeyCode::Char('k')), extent);
        assert_eq!(s.cursor.selected, 3);
        assert_eq!(s.on_key(&key(KeyCode::Enter), extent), Action::OpenSession);
        assert_eq!(s.on_key(&key(KeyCode::Char('x')), extent), Action::None);
        // Enter jumps from an incident only (see the app's tests); on an
        // empty list it does nothing.
        let mut f = FindingList::default();
        assert_eq!(f.on_key(&key(KeyCode::Enter), extent), Action::None);
        f.on_key(&key(KeyCode::Home), extent);
        assert_eq!(f.cursor.selected, 0);
    }

    #[test]
    fn the_detail_tree_opens_closes_and_climbs_to_the_parent() {
        let mut d = Detail {
            nodes: vec![node(0), node(1), node(1), node(0)],
            ..Detail::default()
        };
        let extent = Extent { len: 0, page: 10 };
        d.on_key(&key(KeyCode::Left), extent);
        assert_eq!(d.visible(), [0, 3], "the first node closed");
        d.on_key(&key(KeyCode::Right), extent);
        d.on_key(&key(KeyCode::Down), extent);
        d.on_key(&key(KeyCode::Down), extent);
        assert_eq!(d.cursor.selected, 2);
        d.on_key(&key(KeyCode::Char('h')), extent);
        assert_eq!(d.cursor.selected, 0, "a leaf goes to its parent");
        d.on_key(&key(KeyCode::Enter), extent);
        assert_eq!(d.visible(), [0, 3]);
        d.on_key(&key(KeyCode::Enter), extent);
        assert_eq!(d.visible(), [0, 1, 2, 3]);
    }
}
