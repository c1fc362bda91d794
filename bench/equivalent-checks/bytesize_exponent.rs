//! bench/equivalent-mutants.tsv argues nine mutants of bytesize's `ideal_unit_std` equivalent (the
//! first estimate and the first loop, which the second loop corrects). This program runs the
//! original and each of them over 2,048,036 sizes (every power of 1000 and 1024 in u64 times
//! 1..2000, minus one, ±2, and 2,000,000 pseudo-random ones) and counts where they differ; a
//! mutant the list leaves out (`exp > 1` made `exp == 1`) is run too, and differs.
//!
//! rustc -O bench/equivalent-checks/bytesize_exponent.rs -o /tmp/exp && /tmp/exp

fn orig(size: f64, unit: u64, unit_base: f64) -> usize {
    let unit = unit as f64;
    let mut exp = ((size.ln() / unit_base) as isize).max(1);
    while exp > 1 && size / unit.powi(exp as i32 - 1) < unit {
        exp -= 1;
    }
    while size / unit.powi(exp as i32) >= unit {
        exp += 1;
    }
    exp as usize
}
macro_rules! variant {
    ($name:ident, $init:expr, $cond:expr) => {
        fn $name(size: f64, unit: u64, unit_base: f64) -> usize {
            let unit = unit as f64;
            let _ = unit_base;
            let mut exp: isize = $init(size, unit_base);
            while $cond(exp, size, unit) {
                exp -= 1;
            }
            while size / unit.powi(exp as i32) >= unit {
                exp += 1;
            }
            exp as usize
        }
    };
}
variant!(
    ub_one,
    |s: f64, _b: f64| ((s.ln() / 1.0) as isize).max(1),
    |e: isize, s: f64, u: f64| e > 1 && s / u.powi(e as i32 - 1) < u
);
variant!(
    ub_neg,
    |s: f64, _b: f64| ((s.ln() / -1.0) as isize).max(1),
    |e: isize, s: f64, u: f64| e > 1 && s / u.powi(e as i32 - 1) < u
);
variant!(
    i_mod,
    |s: f64, b: f64| ((s.ln() % b) as isize).max(1),
    |e: isize, s: f64, u: f64| e > 1 && s / u.powi(e as i32 - 1) < u
);
variant!(
    i_mul,
    |s: f64, b: f64| ((s.ln() * b) as isize).max(1),
    |e: isize, s: f64, u: f64| e > 1 && s / u.powi(e as i32 - 1) < u
);
variant!(
    or,
    |s: f64, b: f64| ((s.ln() / b) as isize).max(1),
    |e: isize, s: f64, u: f64| e > 1 || s / u.powi(e as i32 - 1) < u
);
variant!(
    ge,
    |s: f64, b: f64| ((s.ln() / b) as isize).max(1),
    |e: isize, s: f64, u: f64| e >= 1 && s / u.powi(e as i32 - 1) < u
);
variant!(
    le,
    |s: f64, b: f64| ((s.ln() / b) as isize).max(1),
    |e: isize, s: f64, u: f64| e > 1 && s / u.powi(e as i32 - 1) <= u
);
variant!(
    plus,
    |s: f64, b: f64| ((s.ln() / b) as isize).max(1),
    |e: isize, s: f64, u: f64| e > 1 && s / u.powi(e as i32 + 1) < u
);
variant!(
    div,
    |s: f64, b: f64| ((s.ln() / b) as isize).max(1),
    |e: isize, s: f64, u: f64| e > 1 && s / u.powi(e as i32 / 1) < u
);
variant!(
    eq,
    |s: f64, b: f64| ((s.ln() / b) as isize).max(1),
    |e: isize, s: f64, u: f64| e == 1 && s / u.powi(e as i32 - 1) < u
);
fn main() {
    let mut sizes: Vec<f64> = Vec::new();
    for unit in [1000u64, 1024] {
        let mut p: u128 = unit as u128;
        while p <= u64::MAX as u128 * 8 {
            for d in [-2i128, -1, 0, 1, 2] {
                let v = p as i128 + d;
                if v > 0 {
                    sizes.push(v as f64);
                }
            }
            for m in 1..2000u128 {
                sizes.push((p * m) as f64);
                sizes.push((p * m - 1) as f64);
            }
            p *= unit as u128;
        }
    }
    let mut x: u64 = 88172645463325252;
    for _ in 0..2_000_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        sizes.push((x >> (x % 60)) as f64);
    }
    let fs: [(&str, fn(f64, u64, f64) -> usize); 10] = [
        ("eq (not listed)", eq),
        ("ub_one", ub_one),
        ("ub_neg", ub_neg),
        ("i_mod", i_mod),
        ("i_mul", i_mul),
        ("or", or),
        ("ge", ge),
        ("le", le),
        ("plus", plus),
        ("div", div),
    ];
    for (name, f) in fs {
        let mut diff = 0;
        for &s in &sizes {
            for (unit, base) in [(1000u64, 1000f64.ln()), (1024, 1024f64.ln())] {
                if s < unit as f64 {
                    continue;
                }
                if f(s, unit, base) != orig(s, unit, base) {
                    diff += 1;
                }
            }
        }
        println!("{name}: {diff} differences over {} sizes", sizes.len());
    }
}
