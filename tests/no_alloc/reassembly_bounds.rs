//! The shared block reassembler (`engine::reassembly`): any order of blocks with
//! duplicates rebuilds the message exactly when every block came; and a message
//! of 65536 blocks is refused by the bounds without allocating it.

use lwarscope::capture::Timestamp;
use lwarscope::engine::reassembly::{Block, Budget, Push, Reassembler, Refusal};
use proptest::prelude::*;

use crate::counting_alloc;

use counting_alloc::allocations;

fn block(msg_len: u32, block_id: u32, data: &[u8]) -> Block<'_> {
    Block {
        msg_len,
        block_id,
        data,
        frame: 1,
        ts: Timestamp(1),
    }
}

#[test]
fn a_message_of_65536_blocks_is_refused_without_an_allocation() {
    let mut r: Reassembler<u32> = Reassembler::default();
    let mut budget = Budget::new(usize::MAX);
    let data = vec![0u8; 490];
    // Warm up: the structures the reassembler keeps (the remembered keys,
    // which grow with what finishes up to their bound: fill them).
    let remember = r.limits().remember as u32;
    for id in 0..remember {
        let key = 100_000 + id;
        let _ = r.push(key, block(490 * 65536, 1, &data), &mut budget, |_| {});
    }
    let before = allocations();
    for id in 0..64u32 {
        let out = r.push(2 + id, block(490 * 65536, id, &data), &mut budget, |_| {});
        assert!(
            matches!(out, Push::Refused(Refusal::TooLarge { .. })),
            "{out:?}"
        );
    }
    assert_eq!(allocations() - before, 0);
    assert_eq!((budget.used(), r.in_progress()), (0, 0));
}

/// Issue 37: messages of several blocks one after another, each delivered,
/// take the buffers of the one before (its bytes, its block bits): none is
/// allocated afresh once the first went through.
#[test]
fn messages_delivered_one_after_another_reuse_their_buffers() {
    let mut r: Reassembler<u32> = Reassembler::default();
    let mut budget = Budget::new(usize::MAX);
    let msg: Vec<u8> = (0..1200u32).map(|i| i as u8).collect();
    let mut send = |r: &mut Reassembler<u32>, key: u32| {
        let mut done = false;
        for (id, chunk) in msg.chunks(490).enumerate() {
            let out = r.push(key, block(1200, id as u32, chunk), &mut budget, |_| {});
            done = matches!(out, Push::Complete(bytes) if bytes == msg.as_slice());
        }
        assert!(done, "message {key}");
    };
    // Warm up: the remembered keys grow to their bound.
    let remember = r.limits().remember as u32;
    for key in 0..remember + 2 {
        send(&mut r, key);
    }
    let before = allocations();
    for key in remember + 2..remember + 66 {
        send(&mut r, key);
    }
    assert_eq!(allocations() - before, 0);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_order_with_duplicates_rebuilds_exactly_when_all_blocks_came(
        len in 1usize..300,
        size in 1usize..40,
        seed in any::<u64>(),
        drop_one in any::<bool>(),
    ) {
        let msg: Vec<u8> = (0..len).map(|i| (i as u64 ^ seed) as u8).collect();
        let chunks: Vec<&[u8]> = msg.chunks(size).collect();
        let n = chunks.len();
        // A shuffled order with some blocks twice, from a small LCG.
        let mut state = seed | 1;
        let mut next = || { state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); (state >> 33) as usize };
        let mut order: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() { order.swap(i, next() % (i + 1)); }
        let extra: Vec<usize> = (0..n / 2).map(|_| next() % n).collect();
        order.extend(extra);
        let missing = if drop_one && n > 1 { Some(next() % n) } else { None };
        let mut r: Reassembler<u32> = Reassembler::default();
        let mut budget = Budget::new(1 << 20);
        let mut completed = None;
        for &i in &order {
            if Some(i) == missing { continue; }
            match r.push(5, block(len as u32, i as u32, chunks[i]), &mut budget, |_| {}) {
                Push::Complete(bytes) => { prop_assert!(completed.is_none()); completed = Some(bytes.to_vec()); }
                Push::Buffered | Push::Duplicate | Push::Done => {}
                other => prop_assert!(false, "{:?}", other),
            }
        }
        match missing {
            None => prop_assert_eq!(completed, Some(msg)),
            Some(_) => {
                prop_assert!(completed.is_none());
                let mut ended = 0;
                r.drain(&mut budget, |_| true, |_| ended += 1);
                prop_assert_eq!(ended, 1);
            }
        }
        prop_assert_eq!(budget.used(), 0);
    }
}
