// Count words in insertion order, then query, reorder and trim the map like a report generator.
use indexmap::{IndexMap, IndexSet};

fn main() {
    let text = "the quick brown fox jumps over the lazy dog the dog barks and the fox runs \
                a quick brown dog is not a lazy fox but the lazy dog sleeps";
    let mut counts: IndexMap<String, usize> = IndexMap::new();
    for word in text.split_whitespace() {
        *counts.entry(word.to_string()).or_insert(0) += 1;
    }
    println!("{} distinct, first {:?}, last {:?}", counts.len(), counts.first(), counts.last());
    for w in ["fox", "cat", "lazy"] {
        println!("{w}: {:?} at {:?}", counts.get(w), counts.get_index_of(w));
    }
    if let Some((i, k, v)) = counts.get_full("dog") { println!("dog full: {i} {k} {v}"); }
    counts.insert("zebra".to_string(), 1);
    counts.shift_remove("over");
    counts.swap_remove("and");
    counts.sort_by(|k1, v1, k2, v2| v2.cmp(v1).then(k1.cmp(k2)));
    for (i, (k, v)) in counts.iter().enumerate().take(5) { println!("{i}. {k} {v}"); }
    counts.retain(|_, v| *v > 1);
    counts.truncate(4);
    println!("{:?} {:?}", counts.keys().collect::<Vec<_>>(), counts.get_index(1));
    let mut seen: IndexSet<char> = IndexSet::new();
    for c in text.chars().filter(|c| c.is_alphabetic()) { seen.insert(c); }
    seen.sort();
    let other: IndexSet<char> = "aeiou".chars().collect();
    println!("{} letters, {:?}, vowels seen {:?}", seen.len(), seen.get_index(0), seen.intersection(&other).collect::<String>());
    println!("{:?}", seen.pop());
}
