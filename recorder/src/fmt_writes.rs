//! The text a formatting call writes, whatever its `Formatter` writes to.
//!
//! A `Display::fmt(&self, f: &mut Formatter)` called by `println!` writes through `f.buf`, a
//! `&mut dyn core::fmt::Write` that is not a `String` the recorder could read back after the
//! call (stdout's adapter, a file, a `PadAdapter`). Every byte the call writes goes through that
//! trait object's vtable: `Formatter` only ever calls `buf.write_str` and `buf.write_char`
//! (`core::fmt::write` too, for `write!` into the formatter). So while such a call is open, the
//! tracer puts a breakpoint on the first instruction of the two functions the vtable names and,
//! at each stop whose `self` (rdi) is that trait object's data pointer, appends what it writes:
//! the `&str` in rsi/rdx, or the `char` in esi (rustc's x86-64 calling convention for `&mut self,
//! &str` and `&mut self, char`). A `write_str` called from the same type's `write_char` (the
//! trait's default `write_char` does that) is the same write, taken once.
//!
//! Which functions a vtable names is checked against the ELF symbols: slot 3 must be a
//! `core::fmt::Write::write_str` and slot 4 a `write_char`, or nothing is captured (the text is
//! then not recorded, never guessed). A `String` buffer the decoder reads is left alone: the
//! tracer reads the `String` after the call anyway, and what the call appended is exact there
//! at no extra stop.

use std::collections::HashMap;

use crate::addr::FileAddr;
use crate::types::{TypeKind, TypeTable};

/// Which `core::fmt::Write` method a function implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WriteKind {
    Str,
    Char,
}

/// One implementation of a `core::fmt::Write` method in the executable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WriteMethod {
    pub kind: WriteKind,
    /// The symbol's size: its code is `[addr, addr + size)`.
    pub size: u64,
    /// `<alloc::string::String as core::fmt::Write>::…`.
    pub string: bool,
}

/// Every `core::fmt::Write::write_str` / `write_char` implementation among the ELF symbols,
/// by file address.
#[derive(Debug, Clone, Default)]
pub(crate) struct WriteMethods {
    by_addr: HashMap<u64, WriteMethod>,
}

/// Vtable slots of `dyn core::fmt::Write`: drop, size, align, then the methods in declaration
/// order (`write_str`, `write_char`, `write_fmt`).
const WRITE_STR_SLOT: u64 = 3;

impl WriteMethods {
    /// From (demangled name without hash, file address, size) of the ELF text symbols.
    pub(crate) fn find<'s>(symbols: impl Iterator<Item = (&'s str, u64, u64)>) -> WriteMethods {
        let mut by_addr = HashMap::new();
        for (name, addr, size) in symbols {
            if let Some(method) = classify(name, size) {
                by_addr.insert(addr, method);
            }
        }
        WriteMethods { by_addr }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.by_addr.is_empty()
    }

    pub(crate) fn get(&self, addr: FileAddr) -> Option<WriteMethod> {
        self.by_addr.get(&addr.0).copied()
    }

    /// Byte offset, in a `dyn core::fmt::Write` vtable, of the `write_str` slot (`write_char`
    /// follows it).
    pub(crate) fn write_str_slot() -> u64 {
        WRITE_STR_SLOT * 8
    }
}

/// `<T as core::fmt::Write>::write_str` (v0 or legacy demangling), or the trait's default
/// `core::fmt::Write::write_char` instance.
fn classify(name: &str, size: u64) -> Option<WriteMethod> {
    let kind = if name.ends_with("::write_str") {
        WriteKind::Str
    } else if name.ends_with("::write_char") {
        WriteKind::Char
    } else {
        return None;
    };
    let implements = name.starts_with("core::fmt::Write::")
        || (name.starts_with('<') && name.contains(" as core::fmt::Write>::"));
    implements.then(|| WriteMethod {
        kind,
        size,
        string: name.starts_with("<alloc::string::String as core::fmt::Write>::"),
    })
}

/// What a `&mut Formatter` points its writes at: the trait object behind `buf` and the two
/// functions its vtable names (run-time addresses).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sink {
    pub data: u64,
    pub write_str: u64,
    pub write_char: u64,
    /// `[start, end)` of the `write_char` function: a `write_str` returning there is part of a
    /// `write_char` already taken.
    pub write_char_code: (u64, u64),
}

/// The text an open formatting call has written so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Capture {
    pub sink: Sink,
    pub text: String,
    /// More was written than the recording keeps (`Limits::max_string`).
    pub truncated: bool,
    /// A write could not be read (memory, not UTF-8, not a `char`): the text is not recorded.
    pub lost: bool,
}

impl Capture {
    pub(crate) fn new(sink: Sink) -> Capture {
        Capture {
            sink,
            text: String::new(),
            truncated: false,
            lost: false,
        }
    }

    /// Whether a write stop at `pc` with `self` in `rdi`, returning to `return_to`, writes to
    /// this call's sink (and is not a `write_str` inside a `write_char` already taken).
    pub(crate) fn takes(&self, pc: u64, rdi: u64, return_to: u64) -> Option<WriteKind> {
        if rdi != self.sink.data {
            return None;
        }
        if pc == self.sink.write_char {
            return Some(WriteKind::Char);
        }
        let (from, to) = self.sink.write_char_code;
        let nested = (from..to).contains(&return_to);
        (pc == self.sink.write_str && !nested).then_some(WriteKind::Str)
    }

    /// Appends one write (`None`: it could not be read), keeping at most `max` bytes.
    pub(crate) fn push(&mut self, written: Option<&str>, max: usize) {
        let Some(s) = written else {
            self.lost = true;
            return;
        };
        if self.truncated {
            return;
        }
        let room = max.saturating_sub(self.text.len());
        if s.len() <= room {
            self.text.push_str(s);
        } else {
            let mut cut = room;
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            self.text.push_str(&s[..cut]);
            self.truncated = true;
        }
    }
}

/// The parameter of a function that is a `&mut core::fmt::Formatter`: its index and the offset
/// of `buf` (the `&mut dyn Write`) in the `Formatter`.
pub(crate) fn formatter_param(
    types: &TypeTable,
    params: &[crate::dwarf::ParamDetail],
) -> Option<(usize, u64)> {
    params.iter().enumerate().find_map(|(i, p)| {
        let ty = types.get(p.ty?)?;
        if !ty.name.starts_with("&mut core::fmt::Formatter") {
            return None;
        }
        let TypeKind::Pointer {
            pointee: Some(formatter),
        } = ty.kind
        else {
            return None;
        };
        let buf = types.member(formatter, "buf")?;
        // `&mut dyn Write`: data pointer then vtable pointer.
        (types.get(buf.ty)?.size == 16).then_some((i, buf.offset))
    })
}

/// Whether the decoded `&mut Formatter` shows its `buf` as a `String` read whole: the text is
/// then what that `String` gains, read again after the call. A `String` behind a vtable the
/// DWARF does not map (decoded as a bare `dyn Write`) is captured like any other sink.
pub(crate) fn reads_string_buffer(formatter: &carve_storage::Value) -> bool {
    use carve_storage::Value;
    let mut f = formatter;
    while let Value::Ref { target, .. } = f {
        f = target;
    }
    let Value::Struct { fields, .. } = f else {
        return false;
    };
    let Some(mut buf) = fields.iter().find(|x| x.name == "buf").map(|x| &x.value) else {
        return false;
    };
    while let Value::Ref { target, .. } = buf {
        buf = target;
    }
    matches!(buf, Value::Str { ty, truncated: false, .. } if ty.ends_with("String"))
}

/// The `char` a `write_char` received in esi, when it is one.
pub(crate) fn char_arg(rsi: u64) -> Option<char> {
    char::from_u32(rsi as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_methods_are_found_by_their_symbol_names() {
        let symbols = [
            (
                "<std::io::default_write_fmt::Adapter<std::io::stdio::StdoutLock> as core::fmt::Write>::write_str",
                0x100,
                0x50,
            ),
            (
                "<std::io::default_write_fmt::Adapter<std::io::stdio::StdoutLock> as core::fmt::Write>::write_char",
                0x200,
                0xd6,
            ),
            ("<alloc::string::String as core::fmt::Write>::write_str", 0x300, 0x20),
            ("core::fmt::Write::write_char", 0x400, 0x30),
            ("core::fmt::Write::write_fmt", 0x500, 0x1f),
            ("my::Thing::write_str", 0x600, 0x10),
        ];
        let found = WriteMethods::find(symbols.iter().map(|(n, a, s)| (*n, *a, *s)));
        let get = |a| found.get(FileAddr(a));
        assert_eq!(
            get(0x100).map(|m| (m.kind, m.string)),
            Some((WriteKind::Str, false))
        );
        assert_eq!(get(0x200).map(|m| m.kind), Some(WriteKind::Char));
        assert_eq!(
            get(0x300).map(|m| (m.kind, m.string)),
            Some((WriteKind::Str, true))
        );
        assert_eq!(get(0x400).map(|m| m.kind), Some(WriteKind::Char));
        assert_eq!(
            get(0x500),
            None,
            "write_fmt is never called through the vtable"
        );
        assert_eq!(get(0x600), None, "an inherent method is no fmt::Write impl");
    }

    fn capture() -> Capture {
        Capture::new(Sink {
            data: 0x7000,
            write_str: 0x100,
            write_char: 0x200,
            write_char_code: (0x200, 0x2d6),
        })
    }

    #[test]
    fn only_writes_to_the_formatters_own_sink_are_taken_once_each() {
        let c = capture();
        assert_eq!(c.takes(0x100, 0x7000, 0x9999), Some(WriteKind::Str));
        assert_eq!(c.takes(0x200, 0x7000, 0x9999), Some(WriteKind::Char));
        // Another writer of the same type (another thread's stdout adapter).
        assert_eq!(c.takes(0x100, 0x8000, 0x9999), None);
        // The default `write_char` calling `write_str`: one write, taken at `write_char`.
        assert_eq!(c.takes(0x100, 0x7000, 0x250), None);
    }

    #[test]
    fn only_a_string_buffer_read_whole_is_left_to_be_read_back() {
        use carve_storage::{Field, Value};
        let formatter = |buf: Value| Value::Ref {
            ty: "&mut core::fmt::Formatter".into(),
            addr: 1,
            target: Box::new(Value::Struct {
                ty: "core::fmt::Formatter".into(),
                fields: vec![Field {
                    name: "buf".into(),
                    value: Value::Ref {
                        ty: "&mut dyn core::fmt::Write".into(),
                        addr: 2,
                        target: Box::new(buf),
                    },
                }],
            }),
        };
        let string = |truncated| Value::Str {
            ty: "alloc::string::String".into(),
            value: "ab".into(),
            truncated,
        };
        assert!(reads_string_buffer(&formatter(string(false))));
        assert!(!reads_string_buffer(&formatter(string(true))));
        let unmapped = Value::Pointer {
            ty: "dyn core::fmt::Write".into(),
            addr: 0x7fff,
        };
        assert!(!reads_string_buffer(&formatter(unmapped)));
    }

    #[test]
    fn the_text_keeps_at_most_the_limit_on_a_char_boundary_and_a_lost_write_marks_it() {
        let mut c = capture();
        c.push(Some("  1.0 "), 8);
        c.push(Some("kB…"), 8);
        assert_eq!(
            (c.text.as_str(), c.truncated, c.lost),
            ("  1.0 kB", true, false)
        );
        let mut c = capture();
        c.push(Some("a"), 8);
        c.push(None, 8);
        assert!(c.lost);
        assert_eq!(char_arg(0x41), Some('A'));
        assert_eq!(char_arg(0xD800), None);
    }
}
