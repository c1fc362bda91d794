//! Typed addresses: an address in the ELF file and an address in the running process are
//! different things; the load bias is the only bridge between them.

use std::fmt;

/// An address as written in the ELF file and its DWARF (before relocation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FileAddr(pub u64);

/// An address in the traced process's address space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RuntimeAddr(pub u64);

/// How far the executable was moved when loaded (0 for non-PIE executables).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LoadBias(pub u64);

impl LoadBias {
    pub fn relocate(self, addr: FileAddr) -> RuntimeAddr {
        RuntimeAddr(addr.0.wrapping_add(self.0))
    }

    pub fn unrelocate(self, addr: RuntimeAddr) -> FileAddr {
        FileAddr(addr.0.wrapping_sub(self.0))
    }
}

impl fmt::Display for FileAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}

impl fmt::Display for RuntimeAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}
