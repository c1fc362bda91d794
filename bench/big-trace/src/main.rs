//! Runs ROUNDS rounds (first argument, default 1000) of 334 calls each: 111 each of `classify`,
//! `digit_name` and `Grid::cell` with small arguments that repeat, then one `Total::add`.
//! 3,000 rounds record 1,002,021 calls (with `main`, `Grid::new` and its closure, `Total::new`
//! and `Total::sum`).
//!
//! With `distinct` as the second argument no two calls are alike: each round calls `classify`,
//! `stir` and `Grid::cell` 111 times each with arguments never passed before (`classify(n)`,
//! `stir(n)`, `cell(round, i)`), then `Total::add`: the same number of calls, nothing to group.

use bigtrace::{classify, digit_name, stir, Grid, Kind, Total};

fn main() {
    let mut args = std::env::args().skip(1);
    let rounds: u32 = match args.next() {
        Some(a) => a.parse().expect("usage: bigtrace [ROUNDS] [distinct]"),
        None => 1000,
    };
    let distinct = match args.next().as_deref() {
        None => false,
        Some("distinct") => true,
        Some(other) => panic!("usage: bigtrace [ROUNDS] [distinct], not {other:?}"),
    };
    let grid = Grid::new(4);
    let mut total = Total::new();
    let mut letters = 0usize;
    for round in 0..rounds {
        if distinct {
            let mut sum = 0u64;
            for i in 0..111u32 {
                let n = round * 111 + i;
                if !matches!(classify(n), Kind::Large) {
                    sum += 1;
                }
                sum += stir(u64::from(n)) >> 40;
                sum += u64::from(grid.cell(round, i));
            }
            total.add(sum);
            continue;
        }
        let mut sum = 0u64;
        for i in 0..111u32 {
            let n = (round + i) % 50;
            if !matches!(classify(n), Kind::Large) {
                sum += 1;
            }
            letters += digit_name((i % 10) as u8).len();
            sum += u64::from(grid.cell(i % 4, n % 4));
        }
        total.add(sum);
    }
    println!("rounds = {rounds}");
    println!("letters = {letters}");
    println!("total = {}", total.sum());
}
