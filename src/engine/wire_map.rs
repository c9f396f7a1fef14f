//! Maps keyed by what the wire carries: addresses, ports, ids and block
//! numbers a sender chooses. A fixed hash such as `FxHash` lets a crafted
//! capture (IPv6 source addresses picked to collide, say) put every key in one
//! probe chain and turn each lookup into a scan; these maps hash with
//! `foldhash`, seeded afresh in each process, as fast on the hot path and not
//! predictable from outside. Maps keyed by our own numbers (session ids) keep
//! `FxHash`.

/// A hash map whose keys come from the wire.
pub type WireMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// A hash set whose members come from the wire.
pub type WireSet<T> = std::collections::HashSet<T, foldhash::fast::RandomState>;

/// An empty [`WireMap`] with a fresh seed.
pub fn wire_map<K, V>() -> WireMap<K, V> {
    WireMap::default()
}

/// An empty [`WireSet`] with a fresh seed.
pub fn wire_set<T>() -> WireSet<T> {
    WireSet::default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn two_maps_hash_the_same_key_apart() {
        // Seeded per map: a key's place in one map says nothing of another's.
        let key = (
            "2001:db8::1".parse::<std::net::Ipv6Addr>().unwrap(),
            7777u16,
        );
        let hashes: std::collections::HashSet<u64> = (0..8)
            .map(|_| {
                wire_map::<(std::net::Ipv6Addr, u16), ()>()
                    .hasher()
                    .hash_one(key)
            })
            .collect();
        assert!(
            hashes.len() > 1,
            "every map hashed the key alike: {hashes:?}"
        );
    }

    #[test]
    fn a_map_finds_what_it_holds() {
        let mut m = wire_map();
        for i in 0u32..1000 {
            m.insert(i.to_be_bytes(), i);
        }
        assert!((0u32..1000).all(|i| m.get(&i.to_be_bytes()) == Some(&i)));
        let mut s = wire_set();
        assert!(s.insert(5u8) && !s.insert(5u8));
    }
}
