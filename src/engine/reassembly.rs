//! A bounded reassembler for messages split into numbered blocks: part of the
//! shared reliability core, for protocols whose reliable messages travel in
//! blocks (Battlegrounds' MSG).
//!
//! A message is `msg_len` bytes split into blocks `0..n`; every block but the
//! last has the same size (the block size, the sender's choice and not sent), so
//! the block size is inferred from block 0: when block 0 is shorter than the
//! message it is a full block, and its length is the block size. Blocks that
//! arrive before block 0 are kept aside (in the message's own buffer) and put in
//! place when it comes. Blocks may arrive in any order and any number of times.
//!
//! **Bounds.** What is buffered is bounded three ways, and each refusal or give-up
//! is reported, never silent:
//! - per message: a `msg_len` over [`Limits::max_message_bytes`], or a block size
//!   that makes more than [`Limits::max_blocks`] blocks, is refused at its first
//!   block, before anything is allocated for it;
//! - messages at once: past [`Limits::max_messages`] in progress, the oldest is
//!   given up;
//! - in total: every message in progress charges its `msg_len` (and its block
//!   bitmap) to a [`Budget`], which several reassemblers may share; a new message
//!   that does not fit gives up this reassembler's oldest messages, or is refused
//!   if it still does not fit.
//!
//! Keys of messages completed or given up are remembered (the last
//! [`Limits::remember`]) so that their late blocks are recognised as such and do
//! not start the message again; that memory grows with the messages finished
//! (by doubling, from 8) up to its bound, and no longer allocates once there.
//! Messages still in progress at the end are handed back by
//! [`Reassembler::drain`].
//!
//! A message of one block is delivered without being buffered in progress.
//! Pushing a block allocates only when a message starts or its block size becomes
//! known (its buffer and bitmap, bounded as above), and while the memory of
//! finished messages grows to its bound.

use crate::capture::Timestamp;
use std::collections::VecDeque;

/// The bounds of a reassembler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The largest message rebuilt, in bytes.
    pub max_message_bytes: u32,
    /// The most blocks a message may have.
    pub max_blocks: u32,
    /// Messages in progress at once.
    pub max_messages: usize,
    /// Keys of completed and given-up messages remembered.
    pub remember: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_message_bytes: 4 << 20,
            max_blocks: 1 << 16,
            max_messages: 64,
            remember: 1024,
        }
    }
}

/// Bytes that reassemblers may hold in total; shared by reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Budget {
    used: usize,
    max: usize,
}

impl Budget {
    pub const fn new(max: usize) -> Self {
        Budget { used: 0, max }
    }

    /// Bytes charged now.
    pub const fn used(&self) -> usize {
        self.used
    }

    pub const fn max(&self) -> usize {
        self.max
    }

    fn fits(&self, n: usize) -> bool {
        self.used.checked_add(n).is_some_and(|t| t <= self.max)
    }

    fn give_back(&mut self, n: usize) {
        self.used = self.used.saturating_sub(n);
    }
}

/// One block as captured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block<'b> {
    /// The whole message's length, as the block states it.
    pub msg_len: u32,
    pub block_id: u32,
    pub data: &'b [u8],
    pub frame: u64,
    pub ts: Timestamp,
}

/// Why a message is not rebuilt at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// `msg_len` is over the limit per message.
    TooLarge { msg_len: u32, max: u32 },
    /// The block size makes more blocks than allowed.
    TooManyBlocks { blocks: u64, max: u32 },
    /// The total budget has no room for it, even after giving up older messages.
    NoBudget { msg_len: u32, available: usize },
}

/// How a block disagrees with its message; the block is dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inconsistency {
    /// Its `msg_len` is not the one of the message's first block captured.
    LengthChanged { msg_len: u32, expected: u32 },
    /// Its id is past the message's last block.
    BeyondEnd { block_id: u32, blocks: u32 },
    /// Its size is not the one its place requires (the block size, or what is
    /// left for the last block).
    WrongSize {
        block_id: u32,
        len: usize,
        expected: usize,
    },
    /// Block 0 longer than the whole message.
    Overlong { len: usize, msg_len: u32 },
    /// An empty block of a message that has bytes.
    Empty { block_id: u32 },
    /// The same block captured again with other bytes.
    Differs { block_id: u32 },
}

/// Why a message in progress was given up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GiveUpReason {
    /// Too many messages in progress: the oldest went.
    Capacity,
    /// The total budget needed room for a newer message.
    Budget,
    /// The capture (or the session) ended first.
    Ended,
}

/// A message given up before it was complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GivenUp<K> {
    pub key: K,
    pub reason: GiveUpReason,
    pub msg_len: u32,
    /// Blocks received, and how many the message has, once the block size is known.
    pub received: u32,
    pub blocks: Option<u32>,
    /// Its first block's capture.
    pub first_frame: u64,
    pub first_ts: Timestamp,
}

/// What a pushed block did.
#[derive(Debug, PartialEq, Eq)]
pub enum Push<'r> {
    /// Stored; the message is not complete yet.
    Buffered,
    /// The block completed the message: its bytes, valid until the next push.
    Complete(&'r [u8]),
    /// A block already stored, with the same bytes.
    Duplicate,
    /// A block of a message already delivered.
    Done,
    /// A block of a message given up or refused before: ignored.
    Abandoned,
    /// The message is refused (reported once, on the block that first shows it).
    Refused(Refusal),
    /// The block disagrees with its message, and is dropped.
    Inconsistent(Inconsistency),
}

#[derive(Debug)]
struct Partial<K> {
    key: K,
    msg_len: u32,
    /// The block size and block count, once block 0 is in.
    layout: Option<(u32, u32)>,
    /// `msg_len` bytes once the layout is known; before, the early blocks' bytes
    /// one after the other, as `pending` lists them.
    data: Vec<u8>,
    pending: Vec<(u32, u32, u32)>,
    have: Vec<u64>,
    received: u32,
    charged: usize,
    first_frame: u64,
    first_ts: Timestamp,
}

impl<K> Partial<K> {
    /// Block 0 arrives (of `len` bytes): it gives the layout, its size being
    /// the block size, and the blocks kept aside before it are put in place
    /// (those that do not fit the layout go, uncounted).
    fn lay_out(
        &mut self,
        len: usize,
        max_blocks: u32,
    ) -> Result<(), Result<Inconsistency, Refusal>> {
        if len == 0 || len >= self.msg_len as usize {
            return Err(Ok(if len == 0 {
                Inconsistency::Empty { block_id: 0 }
            } else {
                Inconsistency::Overlong {
                    len,
                    msg_len: self.msg_len,
                }
            }));
        }
        let blocks = u64::from(self.msg_len).div_ceil(len as u64);
        if blocks > u64::from(max_blocks) {
            return Err(Err(Refusal::TooManyBlocks {
                blocks,
                max: max_blocks,
            }));
        }
        self.layout = Some((len as u32, blocks as u32));
        if self.pending.is_empty() {
            // Block 0 first, the common case: the buffer as it is (a
            // recycled one keeps its room).
            self.data.clear();
            self.data.resize(self.msg_len as usize, 0);
            return Ok(());
        }
        let early = std::mem::take(&mut self.data);
        let pending = std::mem::take(&mut self.pending);
        self.data = vec![0; self.msg_len as usize];
        // Put the early blocks in place; those that do not fit the layout go.
        for (bid, start, blen) in pending {
            let bytes = early
                .get(start as usize..(start + blen) as usize)
                .unwrap_or_default();
            let ok = self.expected_len(bid).is_ok_and(|e| e == bytes.len());
            if ok {
                let at = bid as usize * len;
                if let Some(dst) = self.data.get_mut(at..at + bytes.len()) {
                    dst.copy_from_slice(bytes);
                    continue;
                }
            }
            // Forget it: it was counted as received.
            if let Some(w) = self.have.get_mut((bid / 64) as usize) {
                *w &= !(1 << (bid % 64));
            }
            self.received = self.received.saturating_sub(1);
        }
        Ok(())
    }

    fn has(&self, id: u32) -> bool {
        self.have
            .get((id / 64) as usize)
            .is_some_and(|w| w & (1 << (id % 64)) != 0)
    }

    fn set(&mut self, id: u32) {
        if let Some(w) = self.have.get_mut((id / 64) as usize) {
            *w |= 1 << (id % 64);
        }
    }

    fn given_up(&self, reason: GiveUpReason) -> GivenUp<K>
    where
        K: Copy,
    {
        GivenUp {
            key: self.key,
            reason,
            msg_len: self.msg_len,
            received: self.received,
            blocks: self.layout.map(|(_, n)| n),
            first_frame: self.first_frame,
            first_ts: self.first_ts,
        }
    }

    /// The bytes a block must have at `id` under the layout.
    fn expected_len(&self, id: u32) -> Result<usize, Inconsistency> {
        let Some((size, blocks)) = self.layout else {
            return Ok(0);
        };
        if id >= blocks {
            return Err(Inconsistency::BeyondEnd {
                block_id: id,
                blocks,
            });
        }
        let start = u64::from(id) * u64::from(size);
        Ok((u64::from(size)).min(u64::from(self.msg_len) - start) as usize)
    }

    /// The stored bytes of block `id`.
    fn stored(&self, id: u32) -> Option<&[u8]> {
        let Some((size, _)) = self.layout else {
            let &(_, start, len) = self.pending.iter().find(|(b, _, _)| *b == id)?;
            return self.data.get(start as usize..(start + len) as usize);
        };
        let start = (u64::from(id) * u64::from(size)) as usize;
        let len = self.expected_len(id).ok()?;
        self.data.get(start..start + len)
    }
}

/// A bounded reassembler of block-split messages, by key (a message id with
/// whatever scopes it: direction, channel).
#[derive(Debug)]
pub struct Reassembler<K> {
    limits: Limits,
    partials: Vec<Partial<K>>,
    /// Keys of finished messages: `true` delivered, `false` given up or refused.
    finished: VecDeque<(K, bool)>,
    out: Vec<u8>,
    /// The buffers of the last message delivered, emptied, for the next
    /// one to start with: a message's bytes and block bits are not
    /// allocated afresh for each.
    spare: (Vec<u8>, Vec<u64>),
}

impl<K: Copy + Eq> Default for Reassembler<K> {
    fn default() -> Self {
        Self::new(Limits::default())
    }
}

impl<K: Copy + Eq> Reassembler<K> {
    pub fn new(limits: Limits) -> Self {
        Reassembler {
            limits,
            partials: Vec::new(),
            finished: VecDeque::new(),
            out: Vec::new(),
            spare: (Vec::new(), Vec::new()),
        }
    }

    pub const fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Messages in progress.
    pub fn in_progress(&self) -> usize {
        self.partials.len()
    }

    /// Bytes this reassembler has charged to its budget.
    pub fn charged(&self) -> usize {
        self.partials.iter().map(|p| p.charged).sum()
    }

    /// Blocks received of the message `key`, if it is in progress.
    pub fn received(&self, key: K) -> Option<u32> {
        self.partials
            .iter()
            .find(|p| p.key == key)
            .map(|p| p.received)
    }

    fn finish(&mut self, key: K, delivered: bool) {
        if self.limits.remember == 0 {
            return;
        }
        if self.finished.len() == self.finished.capacity()
            && self.finished.len() < self.limits.remember
        {
            // Grown with what finishes, by doubling, up to its full size:
            // once there, remembering never allocates again.
            let room = self
                .finished
                .len()
                .max(8)
                .min(self.limits.remember - self.finished.len());
            self.finished.reserve_exact(room);
        }
        if self.finished.len() >= self.limits.remember {
            self.finished.pop_front();
        }
        self.finished.push_back((key, delivered));
    }

    fn remove(&mut self, i: usize, budget: &mut Budget) -> Partial<K> {
        let p = self.partials.swap_remove(i);
        budget.give_back(p.charged);
        p
    }

    /// Gives up the oldest message in progress.
    fn give_up_oldest(
        &mut self,
        budget: &mut Budget,
        reason: GiveUpReason,
        gave_up: &mut impl FnMut(GivenUp<K>),
    ) -> bool {
        let Some(i) = (0..self.partials.len()).min_by_key(|&i| self.partials[i].first_ts) else {
            return false;
        };
        let p = self.remove(i, budget);
        self.finish(p.key, false);
        gave_up(p.given_up(reason));
        true
    }

    /// Adds one block of message `key`. Messages given up to make room are
    /// handed to `gave_up` (with [`GiveUpReason::Capacity`] or
    /// [`GiveUpReason::Budget`]).
    pub fn push(
        &mut self,
        key: K,
        block: Block<'_>,
        budget: &mut Budget,
        mut gave_up: impl FnMut(GivenUp<K>),
    ) -> Push<'_> {
        let Some(i) = self.partials.iter().position(|p| p.key == key) else {
            return self.start(key, block, budget, &mut gave_up);
        };
        let p = &mut self.partials[i];
        if block.msg_len != p.msg_len {
            return Push::Inconsistent(Inconsistency::LengthChanged {
                msg_len: block.msg_len,
                expected: p.msg_len,
            });
        }
        match self.place(i, block) {
            Ok(true) => {}
            Ok(false) => return Push::Duplicate,
            Err(Ok(inconsistency)) => return Push::Inconsistent(inconsistency),
            Err(Err(refusal)) => {
                let p = self.remove(i, budget);
                self.finish(p.key, false);
                return Push::Refused(refusal);
            }
        }
        let p = &self.partials[i];
        if p.layout.is_some_and(|(_, blocks)| p.received == blocks) {
            let mut p = self.remove(i, budget);
            self.finish(p.key, true);
            std::mem::swap(&mut self.out, &mut p.data);
            p.data.clear();
            p.have.clear();
            self.spare = (p.data, p.have);
            return Push::Complete(&self.out);
        }
        Push::Buffered
    }

    /// The first block of a message not in progress.
    fn start(
        &mut self,
        key: K,
        block: Block<'_>,
        budget: &mut Budget,
        gave_up: &mut impl FnMut(GivenUp<K>),
    ) -> Push<'_> {
        if let Some(&(_, delivered)) = self.finished.iter().rev().find(|(k, _)| *k == key) {
            return if delivered {
                Push::Done
            } else {
                Push::Abandoned
            };
        }
        let msg_len = block.msg_len;
        let len = block.data.len();
        if msg_len > self.limits.max_message_bytes {
            self.finish(key, false);
            return Push::Refused(Refusal::TooLarge {
                msg_len,
                max: self.limits.max_message_bytes,
            });
        }
        if block.block_id == 0 {
            if len > msg_len as usize {
                return Push::Inconsistent(Inconsistency::Overlong { len, msg_len });
            }
            if len == 0 && msg_len > 0 {
                return Push::Inconsistent(Inconsistency::Empty { block_id: 0 });
            }
            if len == msg_len as usize {
                // One block: the whole message, nothing kept in progress.
                self.finish(key, true);
                self.out.clear();
                self.out.extend_from_slice(block.data);
                return Push::Complete(&self.out);
            }
            let blocks = u64::from(msg_len).div_ceil(len as u64);
            if blocks > u64::from(self.limits.max_blocks) {
                self.finish(key, false);
                return Push::Refused(Refusal::TooManyBlocks {
                    blocks,
                    max: self.limits.max_blocks,
                });
            }
        } else if let Some(inconsistency) = self.check_later_first(&block) {
            return Push::Inconsistent(inconsistency);
        }
        let words = (msg_len.min(self.limits.max_blocks) as usize).div_ceil(64);
        let charge = msg_len as usize + words * 8;
        if let Err(refusal) = self.make_room(charge, msg_len, budget, gave_up) {
            self.finish(key, false);
            return Push::Refused(refusal);
        }
        let (data, mut have) = std::mem::take(&mut self.spare);
        have.resize(words, 0);
        self.partials.push(Partial {
            key,
            msg_len,
            layout: None,
            data,
            pending: Vec::new(),
            have,
            received: 0,
            charged: charge,
            first_frame: block.frame,
            first_ts: block.ts,
        });
        let i = self.partials.len() - 1;
        match self.place(i, block) {
            Ok(_) => Push::Buffered,
            Err(Ok(inconsistency)) => {
                // Cannot happen for a first block checked above; drop it cleanly.
                self.remove(i, budget);
                Push::Inconsistent(inconsistency)
            }
            Err(Err(refusal)) => {
                self.remove(i, budget);
                self.finish(key, false);
                Push::Refused(refusal)
            }
        }
    }

    /// A message's first block captured that is not its block 0: within the
    /// blocks the message can have, and not empty. (Every block has at least
    /// a byte, so a message has at most `msg_len` blocks.)
    fn check_later_first(&self, block: &Block<'_>) -> Option<Inconsistency> {
        let most = block.msg_len.min(self.limits.max_blocks);
        if block.block_id >= most {
            return Some(Inconsistency::BeyondEnd {
                block_id: block.block_id,
                blocks: most,
            });
        }
        if block.data.is_empty() {
            return Some(Inconsistency::Empty {
                block_id: block.block_id,
            });
        }
        None
    }

    /// Room for a new message charging `charge` bytes: the oldest in
    /// progress given up while messages at once, then bytes in total, are
    /// over their bounds; refused when nothing is left to give up.
    fn make_room(
        &mut self,
        charge: usize,
        msg_len: u32,
        budget: &mut Budget,
        gave_up: &mut impl FnMut(GivenUp<K>),
    ) -> Result<(), Refusal> {
        while self.partials.len() >= self.limits.max_messages.max(1) {
            self.give_up_oldest(budget, GiveUpReason::Capacity, gave_up);
        }
        while !budget.fits(charge) {
            if !self.give_up_oldest(budget, GiveUpReason::Budget, gave_up) {
                return Err(Refusal::NoBudget {
                    msg_len,
                    available: budget.max.saturating_sub(budget.used),
                });
            }
        }
        budget.used += charge;
        Ok(())
    }

    /// Stores a block in message `i`: `Ok(true)` if new, `Ok(false)` for a
    /// duplicate.
    fn place(
        &mut self,
        i: usize,
        block: Block<'_>,
    ) -> Result<bool, Result<Inconsistency, Refusal>> {
        let max_blocks = self.limits.max_blocks;
        let p = &mut self.partials[i];
        let id = block.block_id;
        let len = block.data.len();
        if p.has(id) {
            return match p.stored(id) {
                Some(old) if old != block.data => Err(Ok(Inconsistency::Differs { block_id: id })),
                _ => Ok(false),
            };
        }
        if p.layout.is_none() && id == 0 {
            p.lay_out(len, max_blocks)?;
        }
        match p.layout {
            Some((size, _)) => {
                let expected = p.expected_len(id).map_err(Ok)?;
                if len != expected {
                    return Err(Ok(if len == 0 {
                        Inconsistency::Empty { block_id: id }
                    } else {
                        Inconsistency::WrongSize {
                            block_id: id,
                            len,
                            expected,
                        }
                    }));
                }
                let at = id as usize * size as usize;
                if let Some(dst) = p.data.get_mut(at..at + len) {
                    dst.copy_from_slice(block.data);
                }
            }
            None => {
                // Before block 0: kept aside, within the message's length.
                if len == 0 {
                    return Err(Ok(Inconsistency::Empty { block_id: id }));
                }
                if p.data.len() + len > p.msg_len as usize {
                    return Err(Ok(Inconsistency::WrongSize {
                        block_id: id,
                        len,
                        expected: p.msg_len as usize - p.data.len(),
                    }));
                }
                if id >= p.msg_len.min(max_blocks) {
                    return Err(Ok(Inconsistency::BeyondEnd {
                        block_id: id,
                        blocks: p.msg_len.min(max_blocks),
                    }));
                }
                p.pending.push((id, p.data.len() as u32, len as u32));
                p.data.extend_from_slice(block.data);
            }
        }
        p.set(id);
        p.received += 1;
        Ok(true)
    }

    /// Drops message `key` without a word: one of its blocks is unknown (the
    /// capture cut it short), so it can never be rebuilt, and its being
    /// incomplete says nothing of the sender. Its later blocks are
    /// [`Push::Abandoned`]. A message already delivered is left as it is.
    pub fn abandon(&mut self, key: K, budget: &mut Budget) {
        if self.finished.iter().any(|(k, _)| *k == key) {
            return;
        }
        if let Some(i) = self.partials.iter().position(|p| p.key == key) {
            self.remove(i, budget);
        }
        self.finish(key, false);
    }

    /// Gives up every message in progress whose key `which` accepts (all of a
    /// session's at its end), handing each to `f` with [`GiveUpReason::Ended`].
    pub fn drain(
        &mut self,
        budget: &mut Budget,
        mut which: impl FnMut(&K) -> bool,
        mut f: impl FnMut(GivenUp<K>),
    ) {
        let mut i = 0;
        while i < self.partials.len() {
            if which(&self.partials[i].key) {
                let p = self.remove(i, budget);
                f(p.given_up(GiveUpReason::Ended));
            } else {
                i += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(msg_len: u32, block_id: u32, data: &[u8]) -> Block<'_> {
        Block {
            msg_len,
            block_id,
            data,
            frame: u64::from(block_id) + 1,
            ts: Timestamp(u64::from(block_id)),
        }
    }

    fn message(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 + 3) as u8).collect()
    }

    #[test]
    fn an_abandoned_message_gives_its_bytes_back_and_ignores_its_later_blocks() {
        let mut r = Reassembler::<u32>::default();
        let mut budget = Budget::new(1 << 20);
        let msg = message(100);
        let first = r.push(7, block(100, 0, &msg[..40]), &mut budget, |_| panic!());
        assert_eq!(first, Push::Buffered);
        assert!(budget.used() > 0);
        r.abandon(7, &mut budget);
        assert_eq!((r.in_progress(), budget.used()), (0, 0));
        let later = r.push(7, block(100, 1, &msg[40..80]), &mut budget, |_| panic!());
        assert_eq!(later, Push::Abandoned);
        let mut ended = 0;
        r.drain(&mut budget, |_| true, |_| ended += 1);
        assert_eq!(ended, 0, "nothing left to call incomplete");
    }

    /// Pushes the blocks of `msg` (block size `size`) in `order`; the message
    /// once complete, and how many pushes completed it.
    fn feed(
        r: &mut Reassembler<u32>,
        budget: &mut Budget,
        msg: &[u8],
        size: usize,
        order: &[usize],
    ) -> (Option<Vec<u8>>, usize) {
        let chunks: Vec<&[u8]> = msg.chunks(size).collect();
        let mut done = None;
        let mut completions = 0;
        for &i in order {
            match r.push(
                7,
                block(msg.len() as u32, i as u32, chunks[i]),
                budget,
                |_| panic!("gave up"),
            ) {
                Push::Complete(bytes) => {
                    done = Some(bytes.to_vec());
                    completions += 1;
                }
                Push::Buffered | Push::Duplicate | Push::Done => {}
                other => panic!("{other:?}"),
            }
        }
        (done, completions)
    }

    fn permutations(n: usize) -> Vec<Vec<usize>> {
        if n == 0 {
            return vec![vec![]];
        }
        let mut out = Vec::new();
        for p in permutations(n - 1) {
            for at in 0..=p.len() {
                let mut q = p.clone();
                q.insert(at, n - 1);
                out.push(q);
            }
        }
        out
    }

    #[test]
    fn every_order_of_blocks_rebuilds_the_message() {
        let msg = message(23);
        for order in permutations(5) {
            let mut r = Reassembler::default();
            let mut budget = Budget::new(1 << 20);
            let (done, n) = feed(&mut r, &mut budget, &msg, 5, &order);
            assert_eq!(done.as_deref(), Some(&msg[..]), "{order:?}");
            assert_eq!(n, 1);
            assert_eq!(budget.used(), 0, "{order:?}");
            assert_eq!(r.in_progress(), 0);
        }
    }

    #[test]
    fn duplicates_and_late_blocks() {
        let msg = message(12);
        let mut r = Reassembler::default();
        let mut budget = Budget::new(1 << 20);
        // 2, 2 again, 1, 1 again, 0: complete; then 1 again is of a done message.
        let (done, n) = feed(&mut r, &mut budget, &msg, 5, &[2, 2, 1, 1, 0, 1]);
        assert_eq!(done.as_deref(), Some(&msg[..]));
        assert_eq!(n, 1);
        let chunks: Vec<&[u8]> = msg.chunks(5).collect();
        let mut r = Reassembler::default();
        r.push(7, block(12, 1, chunks[1]), &mut budget, |_| {});
        assert_eq!(
            r.push(7, block(12, 1, chunks[1]), &mut budget, |_| {}),
            Push::Duplicate
        );
        assert_eq!(
            r.push(7, block(12, 1, b"xxxxx"), &mut budget, |_| {}),
            Push::Inconsistent(Inconsistency::Differs { block_id: 1 })
        );
        assert_eq!(
            r.push(7, block(12, 0, chunks[0]), &mut budget, |_| {}),
            Push::Buffered
        );
        assert_eq!(
            r.push(7, block(12, 1, b"xxxxx"), &mut budget, |_| {}),
            Push::Inconsistent(Inconsistency::Differs { block_id: 1 })
        );
    }

    #[test]
    fn a_single_block_message_is_delivered_at_once() {
        let mut r: Reassembler<u32> = Reassembler::default();
        let mut budget = Budget::new(100);
        assert_eq!(
            r.push(1, block(3, 0, b"abc"), &mut budget, |_| {}),
            Push::Complete(b"abc")
        );
        assert_eq!(
            r.push(1, block(3, 0, b"abc"), &mut budget, |_| {}),
            Push::Done
        );
        assert_eq!(budget.used(), 0);
        assert_eq!(
            r.push(2, block(0, 0, b""), &mut budget, |_| {}),
            Push::Complete(b"")
        );
    }

    #[test]
    fn missing_blocks_are_reported_at_the_end() {
        let msg = message(20);
        let chunks: Vec<&[u8]> = msg.chunks(5).collect();
        let mut r = Reassembler::default();
        let mut budget = Budget::new(1 << 20);
        for i in [0, 1, 3] {
            assert_eq!(
                r.push(9u32, block(20, i, chunks[i as usize]), &mut budget, |_| {}),
                Push::Buffered
            );
        }
        assert!(budget.used() >= 20);
        let mut ended = Vec::new();
        r.drain(&mut budget, |_| true, |g| ended.push(g));
        assert_eq!(ended.len(), 1);
        let g = ended[0];
        assert_eq!(
            (g.key, g.reason, g.received, g.blocks, g.first_frame),
            (9, GiveUpReason::Ended, 3, Some(4), 1)
        );
        assert_eq!(budget.used(), 0);
    }

    #[test]
    fn inconsistent_blocks_are_dropped() {
        let mut r: Reassembler<u32> = Reassembler::default();
        let mut budget = Budget::new(1 << 20);
        assert_eq!(
            r.push(1, block(10, 0, b"abcd"), &mut budget, |_| {}),
            Push::Buffered
        );
        // Blocks are 4 bytes: block 1 must be 4, block 2 (the last) 2, block 3 does not exist.
        assert_eq!(
            r.push(1, block(10, 1, b"abc"), &mut budget, |_| {}),
            Push::Inconsistent(Inconsistency::WrongSize {
                block_id: 1,
                len: 3,
                expected: 4
            })
        );
        assert_eq!(
            r.push(1, block(10, 3, b"ab"), &mut budget, |_| {}),
            Push::Inconsistent(Inconsistency::BeyondEnd {
                block_id: 3,
                blocks: 3
            })
        );
        assert_eq!(
            r.push(1, block(11, 1, b"abcd"), &mut budget, |_| {}),
            Push::Inconsistent(Inconsistency::LengthChanged {
                msg_len: 11,
                expected: 10
            })
        );
        assert_eq!(
            r.push(2, block(3, 0, b"abcd"), &mut budget, |_| {}),
            Push::Inconsistent(Inconsistency::Overlong { len: 4, msg_len: 3 })
        );
        // An early block that the layout does not fit is forgotten when block 0 comes.
        assert_eq!(
            r.push(3, block(10, 1, b"abc"), &mut budget, |_| {}),
            Push::Buffered
        );
        assert_eq!(
            r.push(3, block(10, 0, b"abcd"), &mut budget, |_| {}),
            Push::Buffered
        );
        assert_eq!(r.received(3), Some(1));
    }

    #[test]
    fn a_message_of_65536_blocks_is_refused_without_allocating_it() {
        let mut r: Reassembler<u32> = Reassembler::default();
        let mut budget = Budget::new(64 << 20);
        let data = [0u8; 490];
        let msg_len = 490 * 65536;
        let out = r.push(1, block(msg_len, 5, &data), &mut budget, |_| {});
        assert_eq!(
            out,
            Push::Refused(Refusal::TooLarge {
                msg_len,
                max: 4 << 20
            })
        );
        assert_eq!((budget.used(), r.in_progress(), r.charged()), (0, 0, 0));
        // Its later blocks are ignored, not started again.
        assert_eq!(
            r.push(1, block(msg_len, 0, &data), &mut budget, |_| {}),
            Push::Abandoned
        );
        // Within the byte limit, 65537 blocks of one byte are too many.
        let mut r: Reassembler<u32> = Reassembler::default();
        assert_eq!(
            r.push(2, block(65537, 0, b"x"), &mut budget, |_| {}),
            Push::Refused(Refusal::TooManyBlocks {
                blocks: 65537,
                max: 65536
            })
        );
        assert_eq!(budget.used(), 0);
    }

    #[test]
    fn the_bounds_give_up_the_oldest_and_say_so() {
        let limits = Limits {
            max_messages: 2,
            ..Limits::default()
        };
        let mut r: Reassembler<u32> = Reassembler::new(limits);
        let mut budget = Budget::new(1 << 20);
        let mut gone = Vec::new();
        for key in 1..=3u32 {
            let b = Block {
                ts: Timestamp(u64::from(key)),
                ..block(10, 0, b"abcde")
            };
            assert_eq!(
                r.push(key, b, &mut budget, |g| gone.push(g)),
                Push::Buffered
            );
        }
        assert_eq!(gone.len(), 1);
        assert_eq!((gone[0].key, gone[0].reason), (1, GiveUpReason::Capacity));
        assert_eq!(
            r.push(1, block(10, 1, b"fghij"), &mut budget, |_| {}),
            Push::Abandoned
        );
        // The total: room for one 100-byte message; a second gives up the first.
        let mut r: Reassembler<u32> = Reassembler::default();
        let mut budget = Budget::new(120);
        let mut gone = Vec::new();
        assert_eq!(
            r.push(1, block(100, 0, &[1; 50]), &mut budget, |g| gone.push(g)),
            Push::Buffered
        );
        let b = Block {
            ts: Timestamp(9),
            ..block(100, 0, &[2; 50])
        };
        assert_eq!(r.push(2, b, &mut budget, |g| gone.push(g)), Push::Buffered);
        assert_eq!(
            gone.iter().map(|g| (g.key, g.reason)).collect::<Vec<_>>(),
            [(1, GiveUpReason::Budget)]
        );
        assert!(budget.used() <= 120);
        // A message larger than the whole budget is refused.
        assert!(matches!(
            r.push(3, block(1000, 0, &[3; 500]), &mut budget, |g| gone.push(g)),
            Push::Refused(Refusal::NoBudget { msg_len: 1000, .. })
        ));
    }
}
