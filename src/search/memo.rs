//! Each thread's memo of what [`super::splitting`] made of a raw word, for
//! one [`super::words::Words`] at a time (a build's, or a session's, which
//! its builds share): most of a site's words recur, and splitting and
//! stemming a word costs more than looking it up.
//!
//! A page's words are looked up one after the other, a thousand a page,
//! and a lookup is mostly waiting for memory: so an entry is 32 bytes
//! (half a cache line, never across two), and the most recent words of
//! each hash slot are kept in a small direct-mapped table in front of the
//! big one, which stays in the core's cache.

/// One word to index, as [`super::splitting`] gives it, numbered.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Indexable {
    pub word: u32,
    /// The form before diacritics were folded ([`PLAIN`] when it does not
    /// differ).
    pub original: u32,
    pub compound: bool,
}

/// The form of a word that is the word itself.
pub const PLAIN: u32 = u32::MAX;

/// What one raw word gives, in 16 bytes: its first indexable word inline
/// (most raw words give one), the others in the memo's side list. Of its
/// words, the first `base` are `get_indexable_words`' (meta words stop
/// there) and the rest dotted tails.
#[derive(Clone, Copy, Default)]
pub struct Split {
    word: u32,
    original: u32,
    /// Where the words after the first are in [`Memo::rest`], with the
    /// first word's compound flag in the top bit.
    rest: u32,
    /// How many words there are (none, for a raw word of punctuation);
    /// [`BIG`] when the side list starts with a header that says.
    count: u16,
    base: u16,
}

/// The count of a split with more words than a `u16` holds (a raw word
/// of a hundred thousand hyphenated parts): its words in the side list
/// follow a header whose `word` is their count and `original` the base.
const BIG: u16 = u16::MAX;

const COMPOUND: u32 = 1 << 31;

/// A memo this large is dropped and started again.
const LIMIT: usize = 200_000;
/// Slots in the table in front (a power of two): 4096 entries of 32 bytes.
const HOT: usize = 4096;

/// This thread's splits, by the raw word's xxh3 128-bit hash: a lookup
/// reads one small entry rather than the word again (two raw words of a
/// site share a hash with odds of about 2^-100).
pub struct Memo {
    build: u64,
    splits: hashbrown::HashMap<u128, Split>,
    /// By the hash's low bits: the last split looked up there. A zero key
    /// is an empty slot (a word whose hash is zero is never kept here).
    hot: Box<[(u128, Split)]>,
    /// The words of every split after its first.
    rest: Vec<Indexable>,
}

impl Default for Memo {
    fn default() -> Self {
        Memo {
            build: 0,
            splits: hashbrown::HashMap::new(),
            hot: vec![(0, Split::default()); HOT].into_boxed_slice(),
            rest: Vec::new(),
        }
    }
}

impl Memo {
    /// Makes the memo this build's, and drops it when it has grown too
    /// large.
    pub fn start(&mut self, build: u64) {
        if self.build != build || self.splits.len() >= LIMIT {
            self.splits.clear();
            self.hot.fill((0, Split::default()));
            self.rest.clear();
            self.build = build;
        }
    }

    /// The split of the raw word whose hash is `key`, made by `make` (the
    /// words, and how many of them are `get_indexable_words`') the first
    /// time.
    pub fn get(&mut self, key: u128, make: impl FnOnce() -> (Vec<Indexable>, usize)) -> Split {
        let slot = (key as usize) & (HOT - 1);
        let (hot_key, hot) = self.hot[slot];
        if hot_key == key && key != 0 {
            return hot;
        }
        let rest = &mut self.rest;
        let split = *self.splits.entry(key).or_insert_with(|| {
            let (words, base) = make();
            let first = words.first().copied();
            let at = u32::try_from(rest.len()).expect("fewer than 2^31 memo words");
            assert!(at < COMPOUND, "fewer than 2^31 memo words");
            let (count, base) = match (u16::try_from(words.len()), u16::try_from(base)) {
                (Ok(count), Ok(base)) if count < BIG => (count, base),
                _ => {
                    let count = u32::try_from(words.len()).expect("fewer than 2^32 words");
                    let base = u32::try_from(base).expect("fewer than 2^32 words");
                    rest.push(Indexable {
                        word: count,
                        original: base,
                        compound: false,
                    });
                    (BIG, 0)
                }
            };
            rest.extend(words.iter().skip(1));
            Split {
                word: first.map_or(0, |w| w.word),
                original: first.map_or(PLAIN, |w| w.original),
                rest: at
                    | if first.is_some_and(|w| w.compound) {
                        COMPOUND
                    } else {
                        0
                    },
                count,
                base,
            }
        });
        if key != 0 {
            self.hot[slot] = (key, split);
        }
        split
    }

    /// A split's words, in order.
    pub fn words(&self, split: Split) -> impl Iterator<Item = Indexable> + '_ {
        let first = (split.count > 0).then_some(Indexable {
            word: split.word,
            original: split.original,
            compound: split.rest & COMPOUND != 0,
        });
        let at = (split.rest & !COMPOUND) as usize;
        let rest = match split.count {
            0 | 1 => &[][..],
            BIG => &self.rest[at + 1..at + self.rest[at].word as usize],
            n => &self.rest[at..at + usize::from(n) - 1],
        };
        first.into_iter().chain(rest.iter().copied())
    }

    /// How many of a split's words are `get_indexable_words`' (the rest
    /// are dotted tails).
    pub fn base(&self, split: Split) -> usize {
        match split.count {
            BIG => self.rest[(split.rest & !COMPOUND) as usize].original as usize,
            _ => usize::from(split.base),
        }
    }

    /// How many of a split's words are parts of a compound.
    pub fn compounds(&self, split: Split) -> usize {
        match split.count {
            0 => 0,
            1 => usize::from(split.rest & COMPOUND != 0),
            _ => self.words(split).filter(|w| w.compound).count(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(n: u32, compound: bool) -> Indexable {
        Indexable {
            word: n,
            original: PLAIN,
            compound,
        }
    }

    #[test]
    fn a_split_gives_back_its_words_made_once() {
        let mut memo = Memo::default();
        memo.start(1);
        let made = std::cell::Cell::new(0);
        let get = |memo: &mut Memo, key: u128, words: Vec<Indexable>| {
            memo.get(key, || {
                made.set(made.get() + 1);
                let base = words.len().min(2);
                (words, base)
            })
        };
        let three = vec![word(7, false), word(8, true), word(9, true)];
        let a = get(&mut memo, 5, three.clone());
        // Same slot of the table in front, another key.
        let b = get(&mut memo, 5 + HOT as u128, vec![word(3, true)]);
        let none = get(&mut memo, 0, vec![]);
        let a_again = get(&mut memo, 5, vec![]);
        let b_again = get(&mut memo, 5 + HOT as u128, vec![]);
        let none_again = get(&mut memo, 0, vec![word(1, false)]);
        assert_eq!(made.get(), 3);
        assert_eq!(memo.words(a).collect::<Vec<_>>(), three);
        assert_eq!(memo.words(a_again).collect::<Vec<_>>(), three);
        assert_eq!((memo.base(a), memo.compounds(a)), (2, 2));
        assert_eq!(memo.words(b_again).collect::<Vec<_>>(), [word(3, true)]);
        assert_eq!((memo.base(b), memo.compounds(b)), (1, 1));
        assert_eq!(memo.words(none_again).count(), 0);
        assert_eq!((memo.base(none), memo.compounds(none)), (0, 0));
        // More words than a u16 counts, before another split, and the most
        // that one counts.
        let big: Vec<Indexable> = (0..70_000).map(|n| word(n, n % 3 == 0)).collect();
        let split = get(&mut memo, 9, big.clone());
        let after = get(&mut memo, 10, vec![word(1, false), word(2, true)]);
        assert_eq!(memo.words(split).collect::<Vec<_>>(), big);
        assert_eq!((memo.base(split), memo.compounds(split)), (2, 23_334));
        assert_eq!(memo.words(after).count(), 2);
        let edge: Vec<Indexable> = (0..65_534).map(|n| word(n, false)).collect();
        let split = get(&mut memo, 11, edge.clone());
        assert_eq!(memo.words(split).collect::<Vec<_>>(), edge);
        let edge: Vec<Indexable> = (0..65_535).map(|n| word(n, false)).collect();
        let split = get(&mut memo, 12, edge.clone());
        assert_eq!(memo.words(split).collect::<Vec<_>>(), edge);
        assert_eq!(made.get(), 7);
        // Another build starts afresh.
        memo.start(2);
        let a = get(&mut memo, 5, vec![word(4, false)]);
        assert_eq!(memo.words(a).collect::<Vec<_>>(), [word(4, false)]);
        assert_eq!(made.get(), 8);
    }
}
