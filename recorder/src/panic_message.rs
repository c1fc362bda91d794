//! Reads a panic's message from the `core::fmt::Arguments` handed to `core::panicking::panic_fmt`
//! (rustc 1.95's compact encoding, documented in core/src/fmt/mod.rs): either a static string,
//! or a template of length-prefixed literal pieces and placeholder bytes. Placeholders cannot be
//! formatted without running the program's code, so they read as `{…}`; the literal text around
//! them is exact, which is what `#[should_panic(expected = "...")]` needs.

use crate::location::Memory;

/// Longest message read, in bytes.
const MAX_MESSAGE: usize = 4096;

/// The message encoded by `Arguments { template, args }`, or `None` when it cannot be read.
pub(crate) fn panic_message(template: u64, args: u64, mem: &dyn Memory) -> Option<String> {
    if args & 1 == 1 {
        // The static-string form: `template` points at the str, `args` holds `len << 1 | 1`.
        let len = ((args >> 1) as usize).min(MAX_MESSAGE);
        let mut buf = vec![0u8; len];
        return mem
            .read(template, &mut buf)
            .then(|| String::from_utf8_lossy(&buf).into_owned());
    }
    let mut out = Vec::new();
    let mut at = template;
    let byte = |at: u64| -> Option<u8> {
        let mut b = [0u8];
        mem.read(at, &mut b).then_some(b[0])
    };
    while out.len() < MAX_MESSAGE {
        let n = byte(at)?;
        at += 1;
        match n {
            0 => return Some(String::from_utf8_lossy(&out).into_owned()),
            1..=127 => {
                let mut piece = vec![0u8; n as usize];
                if !mem.read(at, &mut piece) {
                    return None;
                }
                out.extend_from_slice(&piece);
                at += n as u64;
            }
            128 => {
                let mut len = [0u8; 2];
                if !mem.read(at, &mut len) {
                    return None;
                }
                let len = u16::from_le_bytes(len) as usize;
                let mut piece = vec![0u8; len.min(MAX_MESSAGE)];
                if !mem.read(at + 2, &mut piece) {
                    return None;
                }
                out.extend_from_slice(&piece);
                at += 2 + len as u64;
            }
            0xC0..=0xFF => {
                out.extend_from_slice("{…}".as_bytes());
                // Optional fields: flags (32 bit), width, precision, arg index (16 bit each).
                at += (n & 1 != 0) as u64 * 4
                    + (n & 2 != 0) as u64 * 2
                    + (n & 4 != 0) as u64 * 2
                    + (n & 8 != 0) as u64 * 2;
            }
            _ => return None, // not a valid template byte: not the encoding we know
        }
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    struct At(u64, Vec<u8>);
    impl Memory for At {
        fn read(&self, addr: u64, buf: &mut [u8]) -> bool {
            let Some(start) = addr.checked_sub(self.0) else {
                return false;
            };
            match self.1.get(start as usize..start as usize + buf.len()) {
                Some(s) => {
                    buf.copy_from_slice(s);
                    true
                }
                None => false,
            }
        }
    }

    #[test]
    fn a_static_message_is_read_whole() {
        let text = b"not implemented: the question is not known yet";
        let mem = At(0x1000, text.to_vec());
        let args = (text.len() as u64) << 1 | 1;
        assert_eq!(
            panic_message(0x1000, args, &mem).as_deref(),
            Some("not implemented: the question is not known yet")
        );
    }

    #[test]
    fn a_template_keeps_its_literal_pieces_and_marks_placeholders() {
        // "index out of bounds: the len is {} but the index is {}"
        let (first, second) = (
            &b"index out of bounds: the len is "[..],
            &b" but the index is"[..],
        );
        let mut t = vec![first.len() as u8];
        t.extend_from_slice(first);
        t.push(0xC0);
        t.push(second.len() as u8);
        t.extend_from_slice(second);
        t.push(0xC9); // flags + arg_index present
        t.extend_from_slice(&[0, 0, 0, 0, 1, 0]);
        t.push(0);
        let mem = At(0x2000, t);
        assert_eq!(
            panic_message(0x2000, 0x5000, &mem).as_deref(),
            Some("index out of bounds: the len is {…} but the index is{…}")
        );
    }

    #[test]
    fn unreadable_or_foreign_bytes_give_no_message() {
        let mem = At(0x2000, vec![0x90, 0x90]);
        assert_eq!(panic_message(0x2000, 0x5000, &mem), None);
        assert_eq!(panic_message(0x9999, 0x5000, &mem), None);
    }
}
