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

/// shim_inner: a generic shim whose one statement calls its non-generic body.
pub fn shout<T: AsRef<str>>(text: T) -> String {
    fn inner(text: &str) -> String {
        text.to_uppercase()
    }
    inner(text.as_ref())
}

/// private_tuple_ctor: rustc emits `Wrap` as a function when it is passed as one.
struct Wrap(u32);

pub fn wrapped(xs: &[u32]) -> u32 {
    xs.iter().copied().map(Wrap).map(|w| w.0).sum()
}

/// not_found: a function a macro makes, which the source does not show (a repetition).
macro_rules! make {
    ($($name:ident),*) => {
        $(pub fn $name() -> u32 {
            7
        })*
    };
}
make!(made);

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

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// # Safety
    /// The first `n` items must have been written. (history: a call no test makes, made by
    /// `Unloading`'s drop.)
    pub unsafe fn set_len(&mut self, n: usize) {
        self.len = n;
    }

    /// history (a state inside a handle): hands the items out one by one; the stack looks
    /// empty while the handle lives, and the items not taken go back when it drops.
    pub fn unload(&mut self) -> Unloading<'_> {
        let kept = self.len;
        self.len = 0;
        Unloading {
            stack: self,
            kept,
            next: 0,
        }
    }
}

/// history (a move through a by-value parameter): a stack too big to pass in registers, so
/// `into_full(self)` takes it by address, and the recording sees the parameter (`len()` is
/// called on it) as an object of its own, left in the state the deck had; what `into_full`
/// gives back came from it.
pub struct Deck {
    cards: [MaybeUninit<u8>; 16],
    len: usize,
}

impl Deck {
    pub fn new() -> Deck {
        Deck {
            cards: [MaybeUninit::uninit(); 16],
            len: 0,
        }
    }

    pub fn push(&mut self, x: u8) {
        self.cards[self.len] = MaybeUninit::new(x);
        self.len += 1;
    }

    pub fn top(&self) -> u8 {
        // Safety: `len` cards were written.
        unsafe { self.cards[self.len - 1].assume_init() }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The cards when all sixteen were written, else the deck back.
    pub fn into_full(self) -> Result<[u8; 16], Deck> {
        if self.len() < 16 {
            return Err(self);
        }
        // Safety: all sixteen cards were written.
        Ok(self.cards.map(|c| unsafe { c.assume_init() }))
    }
}

/// The handle `Stack::unload` returns.
pub struct Unloading<'a> {
    stack: &'a mut Stack,
    kept: usize,
    next: usize,
}

impl Iterator for Unloading<'_> {
    type Item = u8;

    fn next(&mut self) -> Option<u8> {
        (self.next < self.kept).then(|| {
            self.next += 1;
            // Safety: the first `kept` items were written.
            unsafe { self.stack.items[self.next - 1].assume_init() }
        })
    }
}

impl Drop for Unloading<'_> {
    fn drop(&mut self) {
        // Called while the stack looks empty: a state no whole call of `Stack` leaves.
        if self.stack.is_empty() {
            let left = self.kept - self.next;
            for i in 0..left {
                self.stack.items[i] = self.stack.items[self.next + i];
            }
            // Safety: the first `left` items were just written.
            unsafe { self.stack.set_len(left) };
        }
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

// ---- observe: what a test sees of a result `==` cannot compare (issue 27) -----------------
// Kept apart from the sections above so that additions elsewhere merge cleanly.

/// getters: private fields, returned inside `Option`; `id` and `name` are its fields'
/// getters, `label` one the program calls, `child_count`, `first_child` and `is_leaf` ones it
/// never calls; `iter`, `into_name` and `child` are no getters (a walk, a move, an argument).
pub struct Node {
    id: u32,
    name: String,
    children: Vec<u32>,
}

impl Node {
    pub fn id(&self) -> u32 {
        self.id
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn label(&self) -> String {
        format!("{}#{}", self.name, self.id)
    }

    pub fn child_count(&self) -> usize {
        self.children.len()
    }

    pub fn first_child(&self) -> Option<u32> {
        self.children.first().copied()
    }

    pub fn is_leaf(&self) -> bool {
        self.children.is_empty()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, u32> {
        self.children.iter()
    }

    pub fn into_name(self) -> String {
        self.name
    }

    pub fn child(&self, i: usize) -> Option<u32> {
        self.children.get(i).copied()
    }
}

/// getters of a changed receiver (`assert/effects.rs`): one the run never calls.
impl Counter {
    pub fn is_even(&self) -> bool {
        self.total % 2 == 0
    }
}

/// getters of a changed `&mut` argument (`assert/effects.rs`): a public field and a getter
/// the run never calls.
pub struct Tally {
    pub count: u32,
}

impl Tally {
    pub fn is_even(&self) -> bool {
        self.count % 2 == 0
    }
}

pub fn add_to(tally: &mut Tally, n: u32) {
    tally.count += n;
}

pub fn lookup(name: &str) -> Option<Node> {
    match name {
        "root" => Some(Node {
            id: 1,
            name: "root".to_string(),
            children: vec![2, 3],
        }),
        _ => None,
    }
}

/// display: a private field, `Display` and nothing else; the program never displays it.
pub struct Grade(u8);

impl fmt::Display for Grade {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let letter = match self.0 {
            90.. => 'A',
            70..=89 => 'B',
            _ => 'C',
        };
        write!(f, "{letter} ({})", self.0)
    }
}

pub fn grade(score: u8) -> Grade {
    Grade(score)
}

/// debug: a derived `Debug` all the way down, inside `Option`; the pattern could name only the
/// variant, as a `Span`'s fields are private.
#[derive(Debug)]
pub enum Token {
    Word(Span),
    End,
}

#[derive(Debug)]
#[allow(dead_code)] // read only by `Debug`, which the lint does not count
pub struct Span {
    at: usize,
    len: usize,
}

pub fn token(text: &str) -> Option<Token> {
    Some(match text.len() {
        0 => Token::End,
        len => Token::Word(Span { at: 0, len }),
    })
}

/// debug, observed on the build: a `Debug` written by hand.
pub struct Mark(u32);

impl fmt::Debug for Mark {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "mark {}", self.0)
    }
}

pub fn mark(n: u32) -> Mark {
    Mark(n * 2)
}

/// bare_variant: nothing inside is observable.
#[allow(dead_code)] // what no caller can see
pub struct Opaque(u32);

pub fn opaque(n: u32) -> Option<Opaque> {
    Some(Opaque(n))
}

/// variant_getters: a ticket drawn from a global counter (as url's `Origin::new_opaque()`), so
/// its number is the run's, not the call's: the test checks its variant and its getters.
#[derive(Debug, Clone, PartialEq)]
pub enum Ticket {
    Drawn(Serial),
    Named(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Serial(u32);

static NEXT_SERIAL: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

impl Ticket {
    pub fn draw() -> Ticket {
        Ticket::Drawn(Serial(
            NEXT_SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        ))
    }

    pub fn is_named(&self) -> bool {
        matches!(self, Ticket::Named(_))
    }

    pub fn label(&self) -> String {
        match self {
            Ticket::Drawn(_) => "drawn".to_string(),
            Ticket::Named(name) => name.clone(),
        }
    }
}

/// unwrapped: `Ok(String)` beside an error type without `PartialEq` (a pattern cannot name
/// a `String`).
#[derive(Debug)]
pub struct NameError;

pub fn parse_name(text: &str) -> Result<String, NameError> {
    match text.trim() {
        "" => Err(NameError),
        name => Ok(name.to_uppercase()),
    }
}

/// debug, for a type the source does not show: a macro makes the error enum (a repetition).
macro_rules! code_error {
    ($($name:ident),*) => {
        $(#[derive(Debug)]
        pub enum $name {
            Odd(u32),
        })*
    };
}
code_error!(CodeError);

pub fn check_code(code: u32) -> Result<u32, CodeError> {
    if code % 2 == 1 {
        Err(CodeError::Odd(code))
    } else {
        Ok(code / 2)
    }
}

/// provided_method: a provided method of a private trait (no recorded call: its rule's test
/// makes the function a run would record).
#[allow(dead_code)]
trait Sealed {
    fn seal(&self) -> u32 {
        1
    }
}

// ---- stored_fields: constructors that store their arguments (issue 30) --------------------

/// stored_fields: private fields that `new` stores as given.
#[derive(Debug)]
pub struct Extent {
    start: u32,
    end: u32,
}

impl Extent {
    pub fn new(start: u32, end: u32) -> Extent {
        Extent { start, end }
    }

    pub fn len(&self) -> u32 {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }
}

/// stored_fields: an extent widened inside the crate, a state no public call gives back.
pub fn widened_len(start: u32, end: u32, by: u32) -> u32 {
    let extent = Extent {
        start: start - by,
        end: end + by,
    };
    extent.len()
}

/// stored_fields: a constructor that orders its arguments, so which becomes which field depends
/// on their values.
#[derive(Debug)]
pub struct Bounds {
    lo: u32,
    hi: u32,
}

impl Bounds {
    pub fn new(a: u32, b: u32) -> Bounds {
        Bounds {
            lo: a.min(b),
            hi: a.max(b),
        }
    }

    pub fn width(&self) -> u32 {
        self.hi - self.lo
    }
}

/// parts: an enum whose variant holds an object with private fields.
#[derive(Debug)]
pub enum Run {
    Solid(Extent),
    Gap(u32),
}

impl Run {
    pub fn length(&self) -> u32 {
        match self {
            Run::Solid(extent) => extent.len(),
            Run::Gap(n) => *n,
        }
    }
}

/// parts: a run made inside the crate, its extent with it.
pub fn solid(start: u32, end: u32) -> u32 {
    Run::Solid(Extent { start, end }).length()
}
