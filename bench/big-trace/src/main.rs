//! Runs ROUNDS rounds (first argument, default 1000) of 334 calls each: 111 each of `classify`,
//! `digit_name` and `Grid::cell` with small arguments that repeat, then one `Total::add`.
//! 3,000 rounds record 1,002,021 calls (with `main`, `Grid::new` and its closure, `Total::new`
//! and `Total::sum`).

use bigtrace::{classify, digit_name, Grid, Kind, Total};

fn main() {
    let rounds: u32 = match std::env::args().nth(1) {
        Some(a) => a.parse().expect("usage: bigtrace [ROUNDS]"),
        None => 1000,
    };
    let grid = Grid::new(4);
    let mut total = Total::new();
    let mut letters = 0usize;
    for round in 0..rounds {
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
