//! The program of bench/big-trace.sh: a hot loop making about a million calls of a few public
//! functions, as a real program does, most of them with arguments (and receiver state) seen
//! many times before, so the calls fall into a few hundred classes of equivalent calls.

/// The kind of a number, from its remainder by 7.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Zero,
    Small(u32),
    Large,
}

/// `Zero` for multiples of 7, `Small(r)` for remainders up to 3, `Large` otherwise.
pub fn classify(n: u32) -> Kind {
    match n % 7 {
        0 => Kind::Zero,
        r if r <= 3 => Kind::Small(r),
        _ => Kind::Large,
    }
}

/// The word for a digit.
pub fn digit_name(d: u8) -> &'static str {
    ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"][d as usize % 10]
}

/// A number's bits stirred (only the `distinct` mode of the program calls it).
pub fn stir(n: u64) -> u64 {
    n.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29)
}

/// A fixed grid of weights, read cell by cell.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    width: u32,
    cells: Vec<u32>,
}

impl Grid {
    /// A `width` × `width` grid whose cell (x, y) weighs `x * y + 1`.
    pub fn new(width: u32) -> Grid {
        let cells = (0..width * width)
            .map(|i| (i % width) * (i / width) + 1)
            .collect();
        Grid { width, cells }
    }

    /// The weight at (x, y), wrapping around the edges.
    pub fn cell(&self, x: u32, y: u32) -> u32 {
        let (x, y) = (x % self.width, y % self.width);
        self.cells[(y * self.width + x) as usize]
    }
}

/// A running total that changes with every call: no two of its calls are equivalent.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Total {
    sum: u64,
    rounds: u32,
}

impl Total {
    pub fn new() -> Total {
        Total::default()
    }

    /// Adds one round's sum.
    pub fn add(&mut self, amount: u64) {
        self.sum += amount;
        self.rounds += 1;
    }

    pub fn sum(&self) -> u64 {
        self.sum
    }
}
