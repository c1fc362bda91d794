// Cache the results of an expensive lookup in an LRU cache, with hits, misses and evictions.
use lru::LruCache;
use std::num::NonZeroUsize;

fn expensive(key: u64) -> String { format!("value-{}", key * key % 97) }

fn main() {
    let mut cache: LruCache<u64, String> = LruCache::new(NonZeroUsize::new(8).unwrap());
    let (mut hits, mut misses) = (0, 0);
    let requests = [1u64, 2, 3, 1, 4, 5, 2, 6, 7, 8, 9, 1, 10, 2, 3, 11, 12, 1, 13, 4, 4, 4, 14, 15, 2];
    for &key in requests.iter().cycle().take(60) {
        if let Some(v) = cache.get(&key) {
            hits += 1;
            if key == 4 { println!("hit {key}: {v}"); }
        } else {
            misses += 1;
            if let Some((old, _)) = cache.push(key, expensive(key)) { if old != key && misses % 5 == 0 { println!("evicted {old}"); } }
        }
    }
    println!("hits {hits} misses {misses} len {} cap {}", cache.len(), cache.cap());
    println!("peek 2 {:?}, contains 99 {}, lru {:?}, mru {:?}", cache.peek(&2), cache.contains(&99), cache.peek_lru(), cache.peek_mru());
    if let Some(v) = cache.get_mut(&2) { v.push_str("-edited"); }
    let v = cache.get_or_insert(100, || expensive(100)).clone();
    cache.promote(&1);
    cache.demote(&2);
    println!("{v} popped {:?} {:?}", cache.pop(&3), cache.pop_lru());
    cache.resize(NonZeroUsize::new(4).unwrap());
    let keys: Vec<_> = cache.iter().map(|(k, _)| *k).collect();
    println!("after resize {keys:?}");
    cache.clear();
    println!("empty {}", cache.is_empty());
}
