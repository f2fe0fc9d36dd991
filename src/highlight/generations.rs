//! A bounded memo in two generations, for the highlighter's caches: when
//! the newer generation has used its budget, the older one is dropped and
//! the newer takes its place. What recurs across the site stays (it is
//! found and put back into the newer generation); one-off entries age out,
//! so memory stays bounded however large the site is.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;

/// A map whose entries carry a cost; the newer generation holds at most
/// `budget` of it, so the whole holds at most twice that.
pub(crate) struct Generations<K, V> {
    newer: HashMap<K, V>,
    older: HashMap<K, V>,
    used: usize,
    budget: usize,
}

impl<K: Hash + Eq, V> Generations<K, V> {
    /// An empty memo whose newer generation holds `budget`.
    pub(crate) fn new(budget: usize) -> Self {
        Generations {
            newer: HashMap::new(),
            older: HashMap::new(),
            used: 0,
            budget,
        }
    }

    /// The entry at `key`, in either generation.
    pub(crate) fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.newer.get(key).or_else(|| self.older.get(key))
    }

    /// The entry at `key`; one found in the older generation moves to the
    /// newer, charged `cost` of it, so that what recurs stays.
    pub(crate) fn renew(&mut self, key: &K, cost: impl FnOnce(&V) -> usize) -> Option<&V>
    where
        K: Clone,
    {
        if !self.newer.contains_key(key) {
            let value = self.older.remove(key)?;
            let cost = cost(&value);
            self.charge(key.clone(), cost, || value);
        }
        self.newer.get(key)
    }

    /// The newer generation's entry at `key` (made by `make` when it has
    /// none), charged `cost`; the generations turn over first when the
    /// budget is used up.
    pub(crate) fn charge(&mut self, key: K, cost: usize, make: impl FnOnce() -> V) -> &mut V {
        if self.used > 0 && self.used.saturating_add(cost) > self.budget {
            self.older = std::mem::take(&mut self.newer);
            self.used = 0;
        }
        self.used = self.used.saturating_add(cost);
        self.newer.entry(key).or_insert_with(make)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_recurs_stays_and_one_off_entries_age_out() {
        let mut memo: Generations<String, u32> = Generations::new(3);
        *memo.charge("kept".into(), 1, u32::default) = 1;
        for (i, one_off) in ["a", "b", "c", "d", "e", "f"].into_iter().enumerate() {
            *memo.charge(one_off.into(), 1, u32::default) = 0;
            if i % 2 == 1 {
                let kept = memo.renew(&"kept".to_string(), |_| 1);
                assert_eq!(kept, Some(&1), "a recurring entry stays");
            }
        }
        assert_eq!(memo.get("kept"), Some(&1));
        assert_eq!(memo.get("a"), None, "one-off entries age out");
        assert!(memo.newer.len() + memo.older.len() <= 6);
    }

    #[test]
    fn an_entry_larger_than_the_budget_is_still_kept_until_the_next_one() {
        let mut memo: Generations<&str, u32> = Generations::new(2);
        *memo.charge("big", 10, u32::default) = 7;
        assert_eq!(memo.get("big"), Some(&7));
        *memo.charge("next", 1, u32::default) = 1;
        assert_eq!(memo.get("big"), Some(&7), "now in the older generation");
        *memo.charge("after", 5, u32::default) = 1;
        assert_eq!(memo.get("big"), None);
    }
}
