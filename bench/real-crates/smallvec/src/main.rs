// Collect tokens and small numeric buffers in SmallVecs, spilling to the heap when they grow.
use smallvec::{smallvec, SmallVec};

fn main() {
    let mut ids: SmallVec<[u32; 8]> = SmallVec::new();
    for i in 0..6 { ids.push(i * 3); }
    println!("{:?} spilled={} cap={}", ids, ids.spilled(), ids.capacity());
    ids.extend(100..106);
    println!("{:?} spilled={} len={}", ids, ids.spilled(), ids.len());
    ids.insert(2, 42);
    let removed = ids.remove(0);
    ids.retain(|x| *x % 2 == 0);
    ids.dedup();
    let popped = ids.pop();
    println!("removed {removed}, now {:?}, pop {:?}", ids, popped);
    ids.truncate(3);
    ids.shrink_to_fit();
    println!("{:?} spilled={} {:?}", ids, ids.spilled(), ids.as_slice());
    let words: SmallVec<[&str; 4]> = "a small set of words that will spill".split(' ').collect();
    println!("{} words, first {:?}", words.len(), words.first());
    let mut bytes: SmallVec<[u8; 16]> = SmallVec::from_slice(b"header:");
    bytes.extend_from_slice(b" value");
    bytes.insert_many(0, b">>".iter().copied());
    println!("{:?}", String::from_utf8_lossy(&bytes));
    let mut v: SmallVec<[i64; 4]> = smallvec![5, -1, 3];
    v.resize(6, 0);
    v.swap_remove(1);
    v.drain(0..2).for_each(|x| println!("drained {x}"));
    let grown: Vec<i64> = v.clone().into_vec();
    let back = SmallVec::<[i64; 4]>::from_vec(grown.clone());
    println!("{:?} {:?} {} {:?}", grown, back, back == v, v.into_inner());
}
