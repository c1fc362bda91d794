//! A small library whose recorded run (trace.db, see README.md) goes through every rule of the
//! generator's rule families: each item below is named after the rule it is here for.

use std::fmt;
use std::mem::MaybeUninit;

// ---- act: how a test calls a function ----------------------------------------------------

/// free_fn
pub fn add(a: i32, b: i32) -> i32 {
    a + b
}

/// associated_fn, and a receiver rebuilt by its producer (a constructor).
pub struct Counter {
    pub total: u32,
    step: u32,
}

impl Counter {
    pub fn new(step: u32) -> Counter {
        Counter { total: 0, step }
    }

    /// A `&mut self` call a later receiver's state is replayed through.
    pub fn bump(&mut self) -> u32 {
        self.total += self.step;
        self.total
    }

    pub fn total(&self) -> u32 {
        self.total
    }

    /// Checks a total `by` higher, which no call left the counter at: the state `check` is
    /// called in is derived from `bump` steps.
    pub fn jump(&mut self, by: u32) -> bool {
        self.total += by;
        let ok = self.check();
        self.total -= by;
        ok
    }

    pub fn check(&self) -> bool {
        self.total < 1000
    }
}

/// impl_elsewhere
pub mod extra {
    use super::Counter;

    impl Counter {
        pub fn reset(&mut self) -> u32 {
            let was = self.total;
            self.total = 0;
            was
        }
    }
}

/// display: `Display::fmt` carved as `to_string()`.
impl fmt::Display for Counter {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "counter at {}", self.total)
    }
}

/// std_trait
impl From<u32> for Counter {
    fn from(step: u32) -> Counter {
        Counter::new(step)
    }
}

/// crate_trait and foreign_self.
pub trait Shape {
    fn area(&self) -> u64;
}

pub struct Square {
    pub side: u64,
}

impl Shape for Square {
    fn area(&self) -> u64 {
        self.side * self.side
    }
}

impl Shape for u32 {
    fn area(&self) -> u64 {
        let widen = |x: u32| u64::from(x);
        widen(*self)
    }
}

/// private_self: a trait impl on a private type.
struct Hidden(u64);

impl Shape for Hidden {
    fn area(&self) -> u64 {
        self.0
    }
}

pub fn hidden_area(side: u64) -> u64 {
    Hidden(side).area()
}

/// nested_fn
pub fn outer(x: u32) -> u32 {
    fn inner(x: u32) -> u32 {
        x * 2
    }
    inner(x) + 1
}

/// private_tuple_ctor: rustc emits `Wrap` as a function when it is passed as one.
struct Wrap(u32);

pub fn wrapped(xs: &[u32]) -> u32 {
    xs.iter().copied().map(Wrap).map(|w| w.0).sum()
}

/// not_found: a function a macro makes, which the source does not show.
macro_rules! make {
    () => {
        pub fn made() -> u32 {
            7
        }
    };
}
make!();

// ---- arrange: how a test builds the objects it needs ------------------------------------

/// struct_literal: built by the program without a call a test could make again.
pub struct Point {
    pub x: i32,
    pub y: i32,
}

impl Point {
    pub fn norm1(&self) -> i32 {
        self.x.abs() + self.y.abs()
    }
}

/// part_of_returned: a `Slot` is only ever handed out inside an `Entry`.
pub struct Slot {
    value: u32,
}

impl Slot {
    pub fn value(&self) -> u32 {
        self.value
    }
}

pub enum Entry {
    Found(Slot),
    Missing,
}

pub fn find(xs: &[u32], wanted: u32) -> Entry {
    match xs.iter().find(|x| **x == wanted) {
        Some(x) => Entry::Found(Slot { value: *x }),
        None => Entry::Missing,
    }
}

/// history: its inline storage is `MaybeUninit`, which the recorder reads as bytes, so equal
/// recorded states prove nothing: it is rebuilt from its own history.
pub struct Stack {
    items: [MaybeUninit<u8>; 4],
    len: usize,
}

impl Stack {
    pub fn new() -> Stack {
        Stack {
            items: [MaybeUninit::uninit(); 4],
            len: 0,
        }
    }

    pub fn push(&mut self, x: u8) {
        self.items[self.len] = MaybeUninit::new(x);
        self.len += 1;
    }

    pub fn top(&self) -> u8 {
        // Safety: `len` items were written.
        unsafe { self.items[self.len - 1].assume_init() }
    }
}


/// text: a tag whose state only its text (`as_str`) and parser (`parse`) give back: the program
/// changes it through `append_raw`, which is not recorded (see README.md).
pub struct Tag {
    text: String,
}

impl Tag {
    pub fn parse(text: &str) -> Option<Tag> {
        (!text.is_empty()).then(|| Tag {
            text: text.to_string(),
        })
    }

    pub fn append_raw(&mut self, more: &str) {
        self.text.push_str(more);
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    pub fn len(&self) -> usize {
        self.text.len()
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }
}

// ---- arrange: how a test builds an argument (`arrange/args/`) ---------------------------

/// mock: a dependency the library reaches through a trait object argument.
pub trait Source {
    fn next_value(&mut self) -> u32;
}

pub fn drain(src: &mut dyn Source, n: u32) -> u32 {
    let mut sum = 0;
    for _ in 0..n {
        sum += src.next_value();
    }
    sum
}

/// replay_closure: a closure of the program's, called by the library.
pub fn apply_each(xs: &[u32], mut f: impl FnMut(u32) -> u32) -> u32 {
    let mut sum = 0;
    for x in xs {
        sum += f(*x);
    }
    sum
}

/// closure_env: a value holding a closure of the program's (an iterator adaptor), which no
/// test can write.
pub fn sum_all(items: impl Iterator<Item = u32>) -> u32 {
    items.sum()
}

/// rebuilt_object: an object of the crate passed by reference, rebuilt from its producer.
pub fn twice(c: &Counter) -> u32 {
    c.total * 2
}

// ---- arrange: an object a public const holds (`arrange/rebuild/public_const.rs`) ---------

/// public_const: a private field, and no call the program makes gives one: the consts do.
pub struct Limits {
    max: u32,
}

impl Limits {
    pub const fn with_max(max: u32) -> Limits {
        Limits { max }
    }

    pub fn allows(&self, n: u32) -> bool {
        n <= self.max
    }
}

pub const STRICT: Limits = Limits { max: 3 };
pub const BIG: u32 = 100;

pub mod limits {
    use super::Limits;

    /// Names another const.
    pub const LOOSE: Limits = Limits { max: super::BIG };
    /// Made by a `const fn`: no initializer to compare with.
    pub const MADE: Limits = Limits::with_max(50);
}

/// borrowed (`arrange/args/borrowed.rs`): an object holding what its maker borrowed.
pub struct Window<'a> {
    cells: &'a mut [u32],
}

impl<'a> Window<'a> {
    pub fn new(cells: &'a mut [u32]) -> Window<'a> {
        Window { cells }
    }

    pub fn fill(&mut self, v: u32) -> usize {
        self.cells.iter_mut().for_each(|c| *c = v);
        self.cells.len()
    }
}

// ---- assert: how a test observes a result ----------------------------------------------

/// compared: `assert_eq!`; panics: `#[should_panic]`.
pub fn divide(a: u32, b: u32) -> u32 {
    if b == 0 {
        panic!("division by zero");
    }
    a / b
}

/// pattern, on a `Result<(), E>` recorded whole: `Ok(_)`.
#[derive(Debug)]
pub struct Invalid;

pub fn validate(x: u32) -> Result<(), Invalid> {
    if x > 100 {
        Err(Invalid)
    } else {
        Ok(())
    }
}

/// zero_sized_ok, by another road: `Result<(), Infallible>` takes no byte at all, so the debug
/// info gives the function no return type and nothing is recorded.
pub fn settle(x: u32) -> Result<(), std::convert::Infallible> {
    let _ = x;
    Ok(())
}

/// fields: no `PartialEq`, public fields.
pub struct Stats {
    pub count: usize,
    pub max: u32,
}

pub fn stats(xs: &[u32]) -> Stats {
    Stats {
        count: xs.len(),
        max: xs.iter().copied().max().unwrap_or(0),
    }
}

/// pattern: no `PartialEq`, variants with parts.
#[derive(Debug)]
pub enum Kind {
    Small(u32),
    Large { excess: u32 },
}

pub fn classify(x: u32) -> Kind {
    if x < 10 {
        Kind::Small(x)
    } else {
        Kind::Large { excess: x - 10 }
    }
}

/// display_text: no `PartialEq`, private field, and the program displays it.
pub struct Size(u64);

impl Size {
    pub fn of(bytes: u64) -> Size {
        Size(bytes)
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{} kB", self.0 / 1000)
    }
}

pub fn size_of(text: &str) -> Size {
    Size::of(text.len() as u64 * 1000)
}
