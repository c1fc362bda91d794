//! Reads an executable's ELF and DWARF once: an index of every function (cheap, for selection)
//! and, on demand, the details the tracer needs for the selected ones (breakpoint address after
//! the prologue, frame base, parameter locations, lowered types).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use gimli::{AttributeValue, EndianArcSlice, Reader as _, RunTimeEndian, UnitOffset};
use object::{Object, ObjectSection, ObjectSymbol};

use crate::addr::{FileAddr, LoadBias};
use crate::error::RecordError;
use crate::types::{BaseKind, Member, Type, TypeId, TypeKind, TypeTable, Variant};
use carve_storage::Language;

mod fn_items;
mod inlined;

pub(crate) use inlined::InlinedOnly;

pub(crate) type Reader = EndianArcSlice<RunTimeEndian>;
pub(crate) type Expr = gimli::Expression<Reader>;

/// A function found in DWARF (cheap summary, for every function of the program).
#[derive(Debug, Clone)]
pub struct FunctionEntry {
    /// Demangled path without hash (`expr::lexer::precedence`), or the plain C name.
    pub path: String,
    pub name: String,
    pub linkage_name: Option<String>,
    pub language: Language,
    pub decl_file: Option<String>,
    pub decl_line: Option<u32>,
    pub low_pc: FileAddr,
    pub high_pc: FileAddr,
    /// Declared in the program's own sources (not the Rust standard library, not a registry
    /// dependency, not a system header).
    pub own_code: bool,
    unit: usize,
    die: UnitOffset,
    /// The DWARF namespaces around it (`app::{impl#0}::run`), which its closures share.
    scope: Option<Arc<str>>,
}

/// A line-table row with code: its addresses `[start, end)`, file and line.
#[derive(Debug, Clone)]
struct LineRange {
    start: u64,
    end: u64,
    file: Arc<str>,
    line: u32,
}

/// An executable's line tables, read once, to place many addresses (`carve explore` places
/// each comparison its harness reports the first time it sees it).
#[derive(Debug, Clone)]
pub struct LineTable {
    rows: Vec<LineRange>,
}

impl LineTable {
    /// The source line (file, line) of file address `addr`; `None` when no row holds it.
    pub fn line(&self, addr: u64) -> Option<(Arc<str>, u32)> {
        let at = self
            .rows
            .partition_point(|r| r.start <= addr)
            .checked_sub(1)?;
        let row = &self.rows[at];
        (addr < row.end).then(|| (row.file.clone(), row.line))
    }

    /// Each row: its [start, end) file addresses, in order, and its source line.
    pub fn rows(&self) -> impl Iterator<Item = (std::ops::Range<u64>, &Arc<str>, u32)> {
        self.rows.iter().map(|r| (r.start..r.end, &r.file, r.line))
    }
}

/// A line-table row with code in a selected function (see [`DebugInfo::code_rows`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CodeRow {
    /// Index of the function in the slice given to `code_rows`.
    pub function: usize,
    /// The row's first address.
    pub addr: FileAddr,
    pub file: Arc<str>,
    pub line: u32,
}

/// Where a parameter lives, as DWARF says.
#[derive(Debug, Clone)]
pub(crate) enum LocationDesc {
    Expr(Expr),
    /// Location list entries: `[begin, end)` file addresses and the expression valid there.
    List(Vec<(u64, u64, Expr)>),
    None,
}

impl LocationDesc {
    /// The expression valid at `pc` (a file address).
    pub(crate) fn at(&self, pc: u64) -> Option<&Expr> {
        match self {
            LocationDesc::Expr(e) => Some(e),
            LocationDesc::List(entries) => entries
                .iter()
                .find(|(b, e, _)| *b <= pc && pc < *e)
                .map(|(_, _, x)| x),
            LocationDesc::None => None,
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct ParamDetail {
    pub name: String,
    pub ty: Option<TypeId>,
    pub location: LocationDesc,
}

/// What the tracer needs to record calls of one function.
#[derive(Debug, Clone)]
pub(crate) struct FunctionDetail {
    /// First instruction after the prologue: where arguments have their DWARF locations.
    pub breakpoint: FileAddr,
    pub frame_base: Option<Expr>,
    pub encoding: gimli::Encoding,
    pub params: Vec<ParamDetail>,
    pub return_type: Option<TypeId>,
    /// The register holding the caller's hidden return pointer (rdi at entry) at the
    /// breakpoint, when the prologue leaves one that does.
    pub hidden_return: Option<crate::abi::EntryRdi>,
    /// Rust's calling convention (else C's).
    pub rust_abi: bool,
    /// The function each zero-sized function item of a signature among the parameters' names
    /// (`fn(&u32, &u32) -> core::cmp::Ordering`, path demangled without hash), where the
    /// instance's code says (see `fn_items`).
    pub fn_items: Vec<(String, String)>,
}

/// Where an abstract instance of an inlined function is: its unit (index), its DIE, the
/// namespace enclosing it and the unit's language.
#[derive(Clone)]
struct InlinedDie {
    unit: usize,
    die: UnitOffset,
    prefix: Option<Arc<str>>,
    language: Language,
}

/// An executable's debug information. A clone shares the file's bytes and sections (`Arc`s).
#[derive(Clone)]
pub struct DebugInfo {
    path: PathBuf,
    dwarf: Arc<gimli::Dwarf<Reader>>,
    units: Arc<Vec<gimli::Unit<Reader>>>,
    /// Line rows per unit, sorted by address.
    unit_rows: Arc<Vec<Vec<Row>>>,
    /// Namespace prefix (`core::option`) of named type DIEs, by global DIE offset.
    namespaces: Arc<HashMap<usize, Arc<str>>>,
    functions: Arc<Vec<FunctionEntry>>,
    /// The abstract instances of inlined functions (`DW_AT_inline`), read whole only by
    /// [`DebugInfo::inlined_only`]: a large program has tens of thousands (the standard
    /// library's, one per unit that inlines one).
    inlined_dies: Arc<Vec<InlinedDie>>,
    /// The functions with no code of their own, worked out from `inlined_dies` at first use
    /// (`carve record`'s note and `--coverage` both ask), shared by the clones.
    inlined_only: Arc<std::sync::OnceLock<Vec<InlinedOnly>>>,
    /// ELF text symbols by demangled name, read at their first use: demangling every symbol
    /// of a large program (cargo: 40 MB) is most of the cost of finding it selects nothing.
    /// Shared by the clones (each recording of a program loaded once reads them once).
    symbols: Arc<std::sync::OnceLock<HashMap<String, u64>>>,
    /// Where code starts: every ELF text symbol's and every function's address, sorted (for
    /// [`DebugInfo::padding_after`]), read at first use, shared by the clones.
    code_starts: Arc<std::sync::OnceLock<Vec<u64>>>,
    /// Functions (index into `functions`) and ELF text symbols (demangled, without hash) by
    /// start address, read at first use (to name what a function item calls), shared by the
    /// clones.
    starts: Arc<std::sync::OnceLock<fn_items::CodeIndex>>,
    /// The file's bytes, for reading the symbols later.
    bytes: Arc<FileBytes>,
    /// Trait-object vtables by their trait's path without generics (`mouse::Planet`): the
    /// vtable's file address and its `{vtable_type}` DIE (unit index, offset), whose
    /// DW_AT_containing_type is the concrete type.
    vtables: HashMap<String, Vec<(FileAddr, usize, UnitOffset)>>,
    /// Traits whose vtables are lowered already.
    vtable_traits_done: HashSet<String>,
    /// Types `0..vtable_scan` were already searched for `dyn Trait` names.
    vtable_scan: usize,
    pub(crate) eh_frame: gimli::EhFrame<Reader>,
    /// `.eh_frame_hdr`'s sorted table, for binary-searched FDE lookups (a linear scan of
    /// `.eh_frame` per function costs about a minute on a large binary).
    pub(crate) eh_frame_hdr: Option<gimli::ParsedEhFrameHdr<Reader>>,
    pub(crate) eh_bases: gimli::BaseAddresses,
    pub(crate) types: TypeTable,
    /// Lowest virtual address of a PT_LOAD segment (to find the load bias).
    pub(crate) first_load_vaddr: u64,
    pub(crate) is_pie: bool,
    /// The ELF entry point (`_start`): code that never runs again once `main` is reached.
    pub(crate) entry: FileAddr,
    /// `.text`: its address and bytes (prologues are decoded to follow the hidden pointer).
    /// (Read from the file's mapped bytes: copying a large program's code costs more than indexing it.)
    text: (u64, std::ops::Range<usize>),
}

/// An executable's bytes: mapped (only the pages read are loaded: a program that turns out to
/// select nothing costs little), or read whole where mapping fails.
enum FileBytes {
    Mapped(memmap2::Mmap),
    Read(Vec<u8>),
}

impl FileBytes {
    fn open(path: &Path) -> std::io::Result<FileBytes> {
        let file = std::fs::File::open(path)?;
        // SAFETY: the map is only read. A program file changed while carve reads it (rebuilt
        // in place) could fault; build tools replace executables by renaming a new file over
        // them, which leaves this mapping intact.
        match unsafe { memmap2::Mmap::map(&file) } {
            Ok(map) => Ok(FileBytes::Mapped(map)),
            Err(_) => std::fs::read(path).map(FileBytes::Read),
        }
    }

    fn as_slice(&self) -> &[u8] {
        match self {
            FileBytes::Mapped(m) => m,
            FileBytes::Read(v) => v,
        }
    }
}

/// Whether the executable at `path` may have functions to record, told from its section table
/// and DWARF unit headers only, without indexing anything: not when it cannot be read as ELF
/// or has no `.debug_info` (loading it would fail the same way), nor, unless `std_selectable`,
/// when every compile unit was compiled from the Rust standard library's sources
/// (`/rustc/...`, `/rust/deps/...`: cargo as rustup ships it), as such a program has no code of
/// its own and no function of a user's crate. True when in doubt (compressed sections,
/// unreadable units).
pub(crate) fn may_have_selectable(path: &Path, std_selectable: bool) -> bool {
    let Ok(bytes) = FileBytes::open(path) else {
        return false;
    };
    let Ok(file) = object::File::parse(bytes.as_slice()) else {
        return false;
    };
    if file.format() != object::BinaryFormat::Elf || file.section_by_name(".debug_info").is_none() {
        return false;
    }
    if std_selectable || !file.is_little_endian() {
        return true;
    }
    let load = |id: gimli::SectionId| -> Result<gimli::EndianSlice<'_, gimli::LittleEndian>, ()> {
        let data = match file.section_by_name(id.name()) {
            // A compressed section would need inflating: leave it to the full load.
            Some(s)
                if s.compressed_file_range().map_err(|_| ())?.format
                    != object::CompressionFormat::None =>
            {
                return Err(())
            }
            Some(s) => s.data().map_err(|_| ())?,
            None => &[],
        };
        Ok(gimli::EndianSlice::new(data, gimli::LittleEndian))
    };
    let Ok(dwarf) = gimli::Dwarf::load(load) else {
        return true;
    };
    let mut headers = dwarf.units();
    loop {
        match headers.next() {
            Ok(Some(header)) => {
                let Ok(unit) = dwarf.unit(header) else {
                    return true;
                };
                // The standard library and the crates it is built with (`/rust/deps/`).
                let std = unit.comp_dir.is_some_and(|d| {
                    d.slice().starts_with(b"/rustc/") || d.slice().starts_with(b"/rust/deps/")
                });
                if !std {
                    return true;
                }
            }
            Ok(None) => return false,
            Err(_) => return true,
        }
    }
}

fn dwarf_err(path: &Path, offset: usize, reason: impl ToString) -> RecordError {
    RecordError::Dwarf {
        path: path.to_path_buf(),
        offset,
        reason: reason.to_string(),
    }
}

/// How many structs deep a parameter's fields are searched for the closures it holds
/// (`Map<Iter<..>, F>`: one; `Map<Map<I, F>, G>`: two).
const HELD_DEPTH: u32 = 3;

impl DebugInfo {
    /// Loads the ELF file at `path` and indexes its functions.
    pub fn load(path: &Path) -> Result<DebugInfo, RecordError> {
        let bytes =
            Arc::new(
                FileBytes::open(path).map_err(|source| RecordError::ProgramUnreadable {
                    path: path.to_path_buf(),
                    source,
                })?,
            );
        let file = object::File::parse(bytes.as_slice()).map_err(|e| RecordError::NotElf {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        if file.format() != object::BinaryFormat::Elf {
            return Err(RecordError::NotElf {
                path: path.to_path_buf(),
                reason: format!("{:?} file", file.format()),
            });
        }
        if file.section_by_name(".debug_info").is_none() {
            return Err(RecordError::NoDebugInfo {
                path: path.to_path_buf(),
            });
        }
        let endian = if file.is_little_endian() {
            RunTimeEndian::Little
        } else {
            RunTimeEndian::Big
        };
        let load_section = |id: gimli::SectionId| -> Result<Reader, RecordError> {
            // One copy into the shared slice (`into_owned` then `Arc::from` made two: a
            // tenth of carve's start-up on a debug build).
            let data: Arc<[u8]> = match file.section_by_name(id.name()) {
                Some(section) => Arc::from(
                    &*section
                        .uncompressed_data()
                        .map_err(|e| dwarf_err(path, 0, format!("section {}: {e}", id.name())))?,
                ),
                None => Arc::from(&[][..]),
            };
            Ok(EndianArcSlice::new(data, endian))
        };
        let dwarf = gimli::Dwarf::load(load_section)?;

        let eh_section = file.section_by_name(".eh_frame");
        let eh_data = eh_section
            .as_ref()
            .and_then(|s| s.uncompressed_data().ok())
            .map_or_else(|| Arc::from(&[][..]), |d| Arc::<[u8]>::from(&*d));
        let eh_frame = gimli::EhFrame::from(EndianArcSlice::new(eh_data, endian));
        let mut eh_bases = gimli::BaseAddresses::default();
        if let Some(s) = &eh_section {
            eh_bases = eh_bases.set_eh_frame(s.address());
        }
        let mut text = (0, 0..0);
        if let Some(s) = file.section_by_name(".text") {
            eh_bases = eh_bases.set_text(s.address());
            if let Some((offset, size)) = s.file_range() {
                text = (s.address(), offset as usize..(offset + size) as usize);
            }
        }
        if let Some(s) = file.section_by_name(".got") {
            eh_bases = eh_bases.set_got(s.address());
        }
        let eh_frame_hdr = file.section_by_name(".eh_frame_hdr").and_then(|s| {
            let data = Arc::<[u8]>::from(&*s.uncompressed_data().ok()?);
            eh_bases = eh_bases.clone().set_eh_frame_hdr(s.address());
            let hdr = gimli::EhFrameHdr::from(EndianArcSlice::new(data, endian));
            hdr.parse(&eh_bases, 8).ok()
        });

        let first_load_vaddr = file
            .segments()
            .map(|s| object::ObjectSegment::address(&s))
            .min()
            .unwrap_or(0);
        let is_pie = matches!(file.kind(), object::ObjectKind::Dynamic);

        let mut info = DebugInfo {
            path: path.to_path_buf(),
            dwarf: Arc::new(dwarf),
            units: Arc::new(Vec::new()),
            unit_rows: Arc::new(Vec::new()),
            namespaces: Arc::new(HashMap::new()),
            functions: Arc::new(Vec::new()),
            inlined_dies: Arc::new(Vec::new()),
            inlined_only: Arc::new(std::sync::OnceLock::new()),
            symbols: Arc::new(std::sync::OnceLock::new()),
            code_starts: Arc::new(std::sync::OnceLock::new()),
            starts: Arc::new(std::sync::OnceLock::new()),
            bytes: bytes.clone(),
            vtables: HashMap::new(),
            vtable_traits_done: HashSet::new(),
            vtable_scan: 0,
            eh_frame,
            eh_frame_hdr,
            eh_bases,
            types: TypeTable::default(),
            first_load_vaddr,
            is_pie,
            entry: FileAddr(file.entry()),
            text,
        };
        info.index()?;
        let dwo: Vec<String> = info
            .units
            .iter()
            .filter_map(|u| {
                let name = u.dwo_name().ok().flatten()?;
                let r = info.dwarf.attr_string(u, name).ok()?;
                Some(r.to_string_lossy().ok()?.into_owned())
            })
            .collect();
        if info.functions.is_empty() && !dwo.is_empty() {
            return Err(RecordError::SplitDwarf {
                path: path.to_path_buf(),
                dwo: dwo.join(", "),
            });
        }
        if info.functions.is_empty() {
            return Err(RecordError::NoDebugInfo {
                path: path.to_path_buf(),
            });
        }
        Ok(info)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every function with code in the executable, in DWARF order.
    pub fn functions(&self) -> &[FunctionEntry] {
        &self.functions
    }

    fn symbol_table(&self) -> &HashMap<String, u64> {
        self.symbols.get_or_init(|| {
            let mut symbols = HashMap::new();
            let Ok(file) = object::File::parse(self.bytes.as_slice()) else {
                return symbols;
            };
            for sym in file.symbols() {
                if let Ok(name) = sym.name() {
                    if sym.kind() == object::SymbolKind::Text && sym.address() != 0 {
                        let demangled = format!("{:#}", rustc_demangle::demangle(name));
                        symbols.insert(demangled, sym.address());
                    }
                }
            }
            symbols
        })
    }

    /// Address of an ELF text symbol by demangled name (without hash).
    pub(crate) fn symbol(&self, name: &str) -> Option<FileAddr> {
        self.symbol_table().get(name).map(|a| FileAddr(*a))
    }

    /// The `core::fmt::Write` methods among the ELF text symbols (each monomorphised instance,
    /// which the by-name table above folds together), for capturing what a `Formatter` writes.
    pub(crate) fn write_methods(&self) -> crate::fmt_writes::WriteMethods {
        let Ok(file) = object::File::parse(self.bytes.as_slice()) else {
            return crate::fmt_writes::WriteMethods::default();
        };
        let mut found = Vec::new();
        for sym in file.symbols() {
            let Ok(name) = sym.name() else { continue };
            if sym.kind() != object::SymbolKind::Text || sym.address() == 0 {
                continue;
            }
            // Cheap filter before demangling: both manglings keep the method name as text.
            if !(name.contains("write_str") || name.contains("write_char")) {
                continue;
            }
            let demangled = format!("{:#}", rustc_demangle::demangle(name));
            found.push((demangled, sym.address(), sym.size()));
        }
        crate::fmt_writes::WriteMethods::find(found.iter().map(|(n, a, s)| (n.as_str(), *a, *s)))
    }

    /// Every ELF text symbol: demangled name (without hash) and address.
    pub(crate) fn symbols(&self) -> impl Iterator<Item = (&str, FileAddr)> {
        self.symbol_table()
            .iter()
            .map(|(n, a)| (n.as_str(), FileAddr(*a)))
    }

    fn index(&mut self) -> Result<(), RecordError> {
        let mut units = Vec::new();
        let mut headers = self.dwarf.units();
        let path = self.path.clone();
        while let Some(header) = headers
            .next()
            .map_err(|e| dwarf_err(&path, 0, format!("unit header: {e}")))?
        {
            let start = header.offset().0;
            let unit = self
                .dwarf
                .unit(header)
                .map_err(|e| dwarf_err(&path, start, format!("unit: {e}")))?;
            let unit_index = units.len();
            self.index_unit(unit_index, &unit, start)?;
            Arc::make_mut(&mut self.unit_rows).push(line_rows(&self.dwarf, &unit));
            units.push(unit);
        }
        self.units = Arc::new(units);
        Ok(())
    }

    fn index_unit(
        &mut self,
        unit_index: usize,
        unit: &gimli::Unit<Reader>,
        unit_start: usize,
    ) -> Result<(), RecordError> {
        let files = file_table(&self.dwarf, unit);
        let mut entries = unit.entries();
        let mut language = Language::Other;
        // (depth, prefix) of the namespaces enclosing the current DIE.
        let mut scopes: Vec<(isize, Arc<str>)> = Vec::new();
        let path = self.path.clone();
        while let Some(entry) = entries
            .next_dfs()
            .map_err(|e| dwarf_err(&path, unit_start, format!("DIE: {e}")))?
        {
            let depth = entry.depth();
            while scopes.last().is_some_and(|(d, _)| *d >= depth) {
                scopes.pop();
            }
            let global = entry.offset().0 + unit_start;
            match entry.tag() {
                gimli::DW_TAG_compile_unit => {
                    language = match entry.attr_value(gimli::DW_AT_language) {
                        Some(AttributeValue::Language(gimli::DW_LANG_Rust)) => Language::Rust,
                        Some(AttributeValue::Language(
                            gimli::DW_LANG_C
                            | gimli::DW_LANG_C89
                            | gimli::DW_LANG_C99
                            | gimli::DW_LANG_C11
                            | gimli::DW_LANG_C17,
                        )) => Language::C,
                        _ => Language::Other,
                    };
                }
                gimli::DW_TAG_namespace => {
                    let name = attr_string(&self.dwarf, unit, entry, gimli::DW_AT_name)
                        .unwrap_or_default();
                    let prefix: Arc<str> = match scopes.last() {
                        Some((_, p)) => Arc::from(format!("{p}::{name}")),
                        None => Arc::from(name),
                    };
                    scopes.push((depth, prefix));
                }
                gimli::DW_TAG_structure_type
                | gimli::DW_TAG_enumeration_type
                | gimli::DW_TAG_union_type
                | gimli::DW_TAG_typedef => {
                    if let Some((_, prefix)) = scopes.last() {
                        Arc::make_mut(&mut self.namespaces).insert(global, prefix.clone());
                    }
                }
                gimli::DW_TAG_variable => {
                    if let Some((key, addr, ty)) = vtable_variable(&self.dwarf, unit, entry) {
                        self.vtables
                            .entry(key)
                            .or_default()
                            .push((addr, unit_index, ty));
                    }
                }
                gimli::DW_TAG_subprogram => {
                    let place: Place = (&files, language, &scopes);
                    if let Some(f) = function_entry(&self.dwarf, unit, entry, place) {
                        Arc::make_mut(&mut self.functions).push(FunctionEntry {
                            unit: unit_index,
                            die: entry.offset(),
                            ..f
                        });
                    } else if entry.attr_value(gimli::DW_AT_inline).is_some() {
                        // The abstract instance of an inlined function: no code of its own.
                        let prefix = scopes.last().map(|(_, p)| p.clone());
                        Arc::make_mut(&mut self.inlined_dies).push(InlinedDie {
                            unit: unit_index,
                            die: entry.offset(),
                            prefix,
                            language,
                        });
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The line-table rows with code inside `functions` (indexes into the slice): each row
    /// whose address range is not empty (rows sharing an address with the next one hold no
    /// instruction), with a line number. `--coverage` breaks on their first
    /// addresses.
    pub(crate) fn code_rows(&self, functions: &[&FunctionEntry]) -> Vec<CodeRow> {
        let mut by_unit: HashMap<usize, Vec<(u64, u64, usize)>> = HashMap::new();
        for (i, f) in functions.iter().enumerate() {
            by_unit
                .entry(f.unit)
                .or_default()
                .push((f.low_pc.0, f.high_pc.0, i));
        }
        let mut out = Vec::new();
        for (unit_index, mut ranges) in by_unit {
            ranges.sort_unstable();
            let Some(unit) = self.units.get(unit_index) else {
                continue;
            };
            let owner = |addr: u64| -> Option<usize> {
                let at = ranges.partition_point(|(low, _, _)| *low <= addr);
                let (_, high, i) = ranges.get(at.checked_sub(1)?)?;
                (addr < *high).then_some(*i)
            };
            for row in self.unit_code_rows(unit) {
                if let Some(function) = owner(row.start) {
                    out.push(CodeRow {
                        function,
                        addr: FileAddr(row.start),
                        file: row.file,
                        line: row.line,
                    });
                }
            }
        }
        out.sort_by_key(|r| r.addr);
        out
    }

    /// The line-table rows of `unit` that hold code: each row whose address range is not
    /// empty (rows sharing an address with the next one hold no instruction), with a line
    /// number and a file. Rows not marked `is_stmt` count too: a rustc epilogue can have its
    /// `is_stmt` row on a cleanup path and the normal path entering the line at a later,
    /// non-`is_stmt` row; the line runs either way (callgrind counts it).
    fn unit_code_rows(&self, unit: &gimli::Unit<Reader>) -> Vec<LineRange> {
        let Some(program) = unit.line_program.clone() else {
            return Vec::new();
        };
        let files: Vec<Option<Arc<str>>> = file_table(&self.dwarf, unit)
            .into_iter()
            .map(|f| f.map(Arc::from))
            .collect();
        let mut out = Vec::new();
        let mut rows = program.rows();
        // The row before the current one: (address, file, line).
        let mut previous: Option<(u64, u64, u64)> = None;
        while let Ok(Some((_, row))) = rows.next_row() {
            if let Some((start, file, line)) = previous {
                if row.address() > start && line > 0 {
                    if let Some(file) = files.get(file as usize).cloned().flatten() {
                        out.push(LineRange {
                            start,
                            end: row.address(),
                            file,
                            line: line as u32,
                        });
                    }
                }
            }
            previous = (!row.end_sequence()).then(|| {
                let line = row.line().map(|l| l.get()).unwrap_or(0);
                (row.address(), row.file_index(), line)
            });
        }
        out
    }

    /// The source line of each address of `addrs` (file addresses), by the line tables of
    /// every unit: the row whose address range holds it (code inlined from another file is
    /// that file's line); `None` outside every row.
    /// Every line-table row with code, sorted by address.
    pub(crate) fn line_table(&self) -> LineTable {
        let mut rows: Vec<LineRange> = self
            .units
            .iter()
            .flat_map(|unit| self.unit_code_rows(unit))
            .collect();
        rows.sort_unstable_by_key(|r| r.start);
        LineTable { rows }
    }

    /// Lowers the details of function `f` (breakpoint address, parameters and their types).
    pub(crate) fn detail(&mut self, f: &FunctionEntry) -> Result<FunctionDetail, RecordError> {
        let unit = &self.units[f.unit];
        let unit_start = unit.header.offset().0;
        let err = |e: gimli::Error| dwarf_err(&self.path, unit_start + f.die.0, e);
        let entry = unit.entry(f.die).map_err(err)?;
        let frame_base = match entry.attr_value(gimli::DW_AT_frame_base) {
            Some(AttributeValue::Exprloc(e)) => Some(e),
            _ => None,
        };
        let spec = specification(unit, &entry);
        let return_type = type_ref(&entry).or_else(|| spec.as_ref().and_then(type_ref));

        let mut raw_params = Vec::new();
        let mut tree = unit.entries_tree(Some(f.die)).map_err(err)?;
        let root = tree.root().map_err(err)?;
        let mut children = root.children();
        // rustc leaves a zero-sized parameter unnamed and names it in a variable of the same
        // type declared on the same line: (name, type, line) of the function's own variables.
        let mut variables = Vec::new();
        let mut unnamed = Vec::new();
        while let Some(child) = children.next().map_err(err)? {
            let e = child.entry();
            let line = e
                .attr_value(gimli::DW_AT_decl_line)
                .and_then(|v| v.udata_value());
            if e.tag() == gimli::DW_TAG_variable {
                if let Some(n) = attr_string(&self.dwarf, unit, e, gimli::DW_AT_name) {
                    variables.push((n, type_ref(e), line));
                }
                continue;
            }
            if e.tag() != gimli::DW_TAG_formal_parameter {
                continue;
            }
            let origin = specification(unit, e);
            let name = attr_string(&self.dwarf, unit, e, gimli::DW_AT_name)
                .or_else(|| {
                    origin
                        .as_ref()
                        .and_then(|o| attr_string(&self.dwarf, unit, o, gimli::DW_AT_name))
                })
                .unwrap_or_else(|| {
                    unnamed.push((raw_params.len(), type_ref(e), line));
                    format!("arg{}", raw_params.len())
                });
            let ty = type_ref(e).or_else(|| origin.as_ref().and_then(type_ref));
            let location = match e.attr_value(gimli::DW_AT_location) {
                Some(AttributeValue::Exprloc(expr)) => LocationDesc::Expr(expr),
                Some(attr @ AttributeValue::LocationListsRef(_))
                | Some(attr @ AttributeValue::SecOffset(_))
                | Some(attr @ AttributeValue::DebugLocListsIndex(_)) => {
                    let mut list = Vec::new();
                    if let Ok(Some(mut iter)) = self.dwarf.attr_locations(unit, attr) {
                        while let Ok(Some(loc)) = iter.next() {
                            list.push((loc.range.begin, loc.range.end, loc.data));
                        }
                    }
                    LocationDesc::List(list)
                }
                _ => LocationDesc::None,
            };
            raw_params.push((name, ty, location));
        }

        for (index, ty, line) in unnamed {
            let taken = |n: &String| raw_params.iter().any(|(p, _, _)| p == n);
            let found = variables
                .iter()
                .find(|(n, t, l)| *t == ty && *l == line && line.is_some() && !taken(n));
            if let Some((n, _, _)) = found {
                raw_params[index].0 = n.clone();
            }
        }

        let breakpoint = FileAddr(after_prologue(
            &self.unit_rows[f.unit],
            f.low_pc.0,
            f.high_pc.0,
        ));
        let encoding = unit.encoding();
        let unit_index = f.unit;
        let mut params = Vec::new();
        for (name, ty, location) in raw_params {
            let ty = ty.map(|off| self.lower(unit_index, off));
            params.push(ParamDetail { name, ty, location });
        }
        let return_type = return_type.map(|off| self.lower(unit_index, off));
        self.lower_vtables();
        let (text_at, range) = &self.text;
        let text = self.bytes.as_slice().get(range.clone()).unwrap_or_default();
        let prologue = f
            .low_pc
            .0
            .checked_sub(*text_at)
            .zip(breakpoint.0.checked_sub(*text_at))
            .and_then(|(from, to)| text.get(from as usize..to as usize));
        let hidden_return = prologue.and_then(|code| crate::abi::entry_rdi_at(code, f.low_pc.0));
        let fn_items = self.fn_items(f, &params);
        Ok(FunctionDetail {
            breakpoint,
            frame_base,
            encoding,
            params,
            return_type,
            hidden_return,
            rust_abi: f.language == Language::Rust,
            fn_items,
        })
    }

    /// The closure bodies whose environment `functions` take as a parameter (by value, as
    /// `impl FnMut`/`F: Fn..` do, behind references, `&mut F`, or in a field of one, as
    /// `Map<I, F>` holds `F`, [`HELD_DEPTH`] structs deep at most): for each environment type
    /// (`app::main::{closure_env#0}`) the `{closure#0}` subprogram of the same namespace
    /// (`app::main`) and generic arguments. Matched by name, not by DIE: each codegen unit
    /// describes the types it uses, and a closure that captures something has no parameter for
    /// its environment in DWARF (its captures are variables). Trait objects (`&dyn Fn`) are not
    /// followed.
    pub(crate) fn closures_passed_to(&self, functions: &[&FunctionEntry]) -> Vec<&FunctionEntry> {
        let mut envs = HashSet::new();
        // Types already searched, with how deep: parameters of many functions share them.
        let mut searched = HashMap::new();
        for f in functions {
            self.each_param_type(f, |this, unit, ty| {
                this.closure_envs(unit, ty, HELD_DEPTH, (&mut envs, &mut searched));
                true
            });
        }
        if envs.is_empty() {
            return Vec::new();
        }
        self.functions
            .iter()
            .filter(|f| {
                let Some(index) = f.name.strip_prefix("{closure#") else {
                    return false;
                };
                let env = format!("{{closure_env#{index}");
                envs.contains(&match &f.scope {
                    Some(scope) => format!("{scope}::{env}"),
                    None => env,
                })
            })
            .collect()
    }

    /// Calls `each(self, unit index, type)` for the types of `f`'s formal parameters in order,
    /// until it returns false.
    fn each_param_type(
        &self,
        f: &FunctionEntry,
        mut each: impl FnMut(&DebugInfo, usize, TypeRef) -> bool,
    ) {
        let Some(unit) = self.units.get(f.unit) else {
            return;
        };
        let Ok(mut tree) = unit.entries_tree(Some(f.die)) else {
            return;
        };
        let Ok(root) = tree.root() else { return };
        let mut children = root.children();
        while let Ok(Some(child)) = children.next() {
            let e = child.entry();
            if e.tag() != gimli::DW_TAG_formal_parameter {
                continue;
            }
            let ty = type_ref(e).or_else(|| specification(unit, e).as_ref().and_then(type_ref));
            if let Some(ty) = ty {
                if !each(self, f.unit, ty) {
                    return;
                }
            }
        }
    }

    /// The full names of the closure environments `ty` is, points to (`&mut`, `&`, nested) or
    /// holds in its fields, `depth` structs deep at most (a `Map<I, F>` holds `F`: the closure
    /// the program gave `map`, which the callee runs as it takes the items), into `envs`;
    /// `searched` holds the types already looked at and how deep (none is looked at again as
    /// deep or less).
    fn closure_envs(
        &self,
        unit_index: usize,
        ty: TypeRef,
        depth: u32,
        (envs, searched): (&mut HashSet<String>, &mut HashMap<(usize, UnitOffset), u32>),
    ) {
        let Some((unit_index, off)) = self.behind_refs(unit_index, ty) else {
            return;
        };
        if searched
            .get(&(unit_index, off))
            .is_some_and(|&d| d >= depth)
        {
            return;
        }
        searched.insert((unit_index, off), depth);
        if let Some(env) = self.env_name(unit_index, off) {
            envs.insert(env);
            return;
        }
        let is_struct = self
            .units
            .get(unit_index)
            .and_then(|unit| unit.entry(off).ok())
            .is_some_and(|e| e.tag() == gimli::DW_TAG_structure_type);
        if depth == 0 || !is_struct {
            return;
        }
        let mut fields = Vec::new();
        self.for_children(unit_index, off, |_, _, _, e| {
            if e.tag() == gimli::DW_TAG_member {
                fields.extend(type_ref(e));
            }
        });
        for field in fields {
            self.closure_envs(unit_index, field, depth - 1, (envs, searched));
        }
    }

    /// The type `ty` is, behind a few levels of references at most (`&&mut F`).
    fn behind_refs(&self, unit_index: usize, ty: TypeRef) -> Option<(usize, UnitOffset)> {
        let (mut unit_index, mut off) = match ty {
            TypeRef::Unit(off) => (unit_index, off),
            TypeRef::Global(global) => self.unit_of(global)?,
        };
        for _ in 0..4 {
            let unit = self.units.get(unit_index)?;
            let entry = unit.entry(off).ok()?;
            match entry.tag() {
                gimli::DW_TAG_pointer_type | gimli::DW_TAG_reference_type => {
                    (unit_index, off) = match type_ref(&entry)? {
                        TypeRef::Unit(o) => (unit_index, o),
                        TypeRef::Global(global) => self.unit_of(global)?,
                    };
                }
                _ => return Some((unit_index, off)),
            }
        }
        None
    }

    /// The full name of the closure environment the type at `off` is (`app::main::{closure_env#0}`).
    fn env_name(&self, unit_index: usize, off: UnitOffset) -> Option<String> {
        let unit = self.units.get(unit_index)?;
        let entry = unit.entry(off).ok()?;
        if entry.tag() != gimli::DW_TAG_structure_type {
            return None;
        }
        let name = attr_string(&self.dwarf, unit, &entry, gimli::DW_AT_name)?;
        if !name.starts_with("{closure_env#") {
            return None;
        }
        let global = unit.header.offset().0 + off.0;
        Some(match self.namespaces.get(&global) {
            Some(prefix) => format!("{prefix}::{name}"),
            None => name,
        })
    }

    /// The file's code bytes in `[low, high)`, when they are all in `.text`.
    pub(crate) fn code(&self, low: FileAddr, high: FileAddr) -> Option<&[u8]> {
        let (text_at, range) = &self.text;
        let text = self.bytes.as_slice().get(range.clone())?;
        let from = low.0.checked_sub(*text_at)? as usize;
        let to = high.0.checked_sub(*text_at)? as usize;
        text.get(from..to)
    }

    /// How many `int3` bytes, at most `most`, follow the code that ends at `high` before any
    /// symbol's or function's code starts: the alignment padding compilers put between
    /// functions (LLVM and GCC fill it with `int3`), which nothing executes, so a patch may
    /// cover it (see `inprocess::sites`).
    pub(crate) fn padding_after(&self, high: FileAddr, most: usize) -> usize {
        let starts = self.code_starts.get_or_init(|| {
            let mut starts: Vec<u64> = self.functions.iter().map(|f| f.low_pc.0).collect();
            if let Ok(file) = object::File::parse(self.bytes.as_slice()) {
                starts.extend(
                    file.symbols()
                        .filter(|s| s.kind() == object::SymbolKind::Text && s.address() != 0)
                        .map(|s| s.address()),
                );
            }
            starts.sort_unstable();
            starts.dedup();
            starts
        });
        let next = starts.partition_point(|&a| a < high.0);
        let room = starts
            .get(next)
            .map_or(most as u64, |&a| (a - high.0).min(most as u64)) as usize;
        let Some(after) = high
            .0
            .checked_add(room as u64)
            .and_then(|end| self.code(high, FileAddr(end)))
        else {
            return 0;
        };
        after
            .iter()
            .take_while(|&&b| b == crate::inprocess::INT3)
            .count()
    }

    /// Lowers the concrete types behind every vtable of a trait that appears as `dyn Trait` in
    /// a type lowered so far (and, in turn, in the types that lowers), so the decoder can turn
    /// trait objects into their concrete values without touching DWARF. Incremental: each type
    /// is searched once and each trait's vtables are lowered once.
    pub(crate) fn lower_vtables(&mut self) {
        if !self.is_pie && !self.types.has_load_bias() {
            // A fixed-address executable is never moved: its vtables are where the ELF says.
            self.types.set_load_bias(LoadBias(0));
        }
        while self.vtable_scan < self.types.len() {
            let end = self.types.len();
            let mut wanted = Vec::new();
            for id in self.vtable_scan..end {
                let name = self.types.name(id);
                if !name.contains("dyn ") {
                    continue;
                }
                for key in dyn_traits(name) {
                    if !self.vtable_traits_done.contains(key) {
                        self.vtable_traits_done.insert(key.to_string());
                        wanted.push(key.to_string());
                    }
                }
            }
            self.vtable_scan = end;
            for key in wanted {
                let Some(list) = self.vtables.get(&key).cloned() else {
                    continue;
                };
                for (addr, unit_index, vtable_type) in list {
                    if let Some(concrete) = self.containing_type(unit_index, vtable_type) {
                        let id = self.lower(unit_index, concrete);
                        self.types.add_vtable(addr, id);
                    }
                }
            }
        }
    }

    /// DW_AT_containing_type of a `{vtable_type}` DIE: the concrete type implementing the trait.
    fn containing_type(&self, unit_index: usize, off: UnitOffset) -> Option<TypeRef> {
        let entry = self.units.get(unit_index)?.entry(off).ok()?;
        attr_type_ref(&entry, gimli::DW_AT_containing_type)
    }

    /// Lowers the type DIE at `off` of unit `unit_index` (cached; recursive types terminate).
    pub(crate) fn lower(&mut self, unit_index: usize, r: impl Into<TypeRef>) -> TypeId {
        let (unit_index, off) = match r.into() {
            TypeRef::Unit(off) => (unit_index, off),
            TypeRef::Global(global) => match self.unit_of(global) {
                Some(found) => found,
                None => return self.unknown_type(),
            },
        };
        let unit_start = self.units[unit_index].header.offset().0;
        let global = unit_start + off.0;
        if let Some(id) = self.types.by_die(global) {
            return id;
        }
        let id = self.types.reserve(global, "?".to_string());
        let ty = self.lower_uncached(unit_index, off, global);
        self.types.fill(id, ty);
        id
    }

    /// The unit holding the DIE at `global` in `.debug_info`, and the DIE's offset in it.
    fn unit_of(&self, global: usize) -> Option<(usize, UnitOffset)> {
        let start = |u: &gimli::Unit<Reader>| u.header.offset().0;
        let index = self
            .units
            .partition_point(|u| start(u) <= global)
            .checked_sub(1)?;
        let unit = &self.units[index];
        let off = global - start(unit);
        (off < unit.header.length_including_self()).then_some((index, UnitOffset(off)))
    }

    /// A type carve could not find (a dangling reference): decoded as opaque, never as a guess.
    fn unknown_type(&mut self) -> TypeId {
        const NO_DIE: usize = usize::MAX;
        if let Some(id) = self.types.by_die(NO_DIE) {
            return id;
        }
        let id = self.types.reserve(NO_DIE, "<unknown type>".into());
        self.types.fill(
            id,
            Type {
                name: "<unknown type>".into(),
                size: 0,
                kind: TypeKind::Opaque,
            },
        );
        id
    }

    fn lower_uncached(&mut self, unit_index: usize, off: UnitOffset, global: usize) -> Type {
        let opaque = |name: &str| Type {
            name: name.to_string(),
            size: 0,
            kind: TypeKind::Opaque,
        };
        let Ok(entry) = self.units[unit_index].entry(off) else {
            return opaque("<bad type DIE>");
        };
        let unit = &self.units[unit_index];
        let bare = attr_string(&self.dwarf, unit, &entry, gimli::DW_AT_name);
        let size = entry
            .attr_value(gimli::DW_AT_byte_size)
            .and_then(|v| v.udata_value())
            .unwrap_or(0);
        let qualified = |bare: &Option<String>, this: &DebugInfo| -> String {
            match (bare, this.namespaces.get(&global)) {
                (Some(n), Some(prefix)) => format!("{prefix}::{n}"),
                (Some(n), None) => n.clone(),
                (None, _) => "<anonymous>".to_string(),
            }
        };
        let target = type_ref(&entry);
        match entry.tag() {
            gimli::DW_TAG_base_type => {
                let name = bare.unwrap_or_else(|| "?".to_string());
                let enc = match entry.attr_value(gimli::DW_AT_encoding) {
                    Some(AttributeValue::Encoding(e)) => e,
                    _ => gimli::DW_ATE_unsigned,
                };
                let kind = if size == 0 {
                    TypeKind::Unit
                } else {
                    match enc {
                        gimli::DW_ATE_boolean => TypeKind::Base(BaseKind::Bool),
                        gimli::DW_ATE_UTF if name == "char" => TypeKind::Base(BaseKind::Char),
                        gimli::DW_ATE_float => TypeKind::Base(BaseKind::Float),
                        gimli::DW_ATE_signed | gimli::DW_ATE_signed_char => {
                            TypeKind::Base(BaseKind::Signed)
                        }
                        gimli::DW_ATE_unsigned
                        | gimli::DW_ATE_unsigned_char
                        | gimli::DW_ATE_UTF => TypeKind::Base(BaseKind::Unsigned),
                        _ => TypeKind::Opaque,
                    }
                };
                Type { name, size, kind }
            }
            gimli::DW_TAG_pointer_type
            | gimli::DW_TAG_reference_type
            | gimli::DW_TAG_rvalue_reference_type => {
                let pointee = target.map(|t| self.lower(unit_index, t));
                let name = bare.unwrap_or_else(|| {
                    let inner = pointee.map(|p| self.types.name(p)).unwrap_or("void");
                    format!("{inner} *")
                });
                Type {
                    name,
                    size: if size == 0 { 8 } else { size },
                    kind: TypeKind::Pointer { pointee },
                }
            }
            gimli::DW_TAG_const_type | gimli::DW_TAG_volatile_type | gimli::DW_TAG_typedef => {
                let is_typedef = entry.tag() == gimli::DW_TAG_typedef;
                let name = qualified(&bare, self);
                match target {
                    Some(t) => {
                        let inner = self.lower(unit_index, t);
                        let mut ty = self
                            .types
                            .get(inner)
                            .cloned()
                            .unwrap_or_else(|| opaque("?"));
                        if is_typedef {
                            ty.name = name;
                        }
                        ty
                    }
                    None => Type {
                        name: if is_typedef { name } else { "void".into() },
                        size: 0,
                        kind: TypeKind::Unit,
                    },
                }
            }
            gimli::DW_TAG_array_type => {
                let elem = target.map(|t| self.lower(unit_index, t));
                let count = self.array_count(unit_index, off);
                match elem {
                    Some(elem) => {
                        let elem_ty = self.types.get(elem);
                        let elem_size = elem_ty.map(|t| t.size).unwrap_or(0);
                        let name = format!(
                            "[{}; {}]",
                            self.types.name(elem),
                            count.map(|c| c.to_string()).unwrap_or_else(|| "?".into())
                        );
                        Type {
                            name,
                            size: if size == 0 {
                                elem_size * count.unwrap_or(0)
                            } else {
                                size
                            },
                            kind: TypeKind::Array { elem, count },
                        }
                    }
                    None => opaque("[?]"),
                }
            }
            gimli::DW_TAG_enumeration_type => {
                let name = qualified(&bare, self);
                let signed = target
                    .map(|t| self.lower(unit_index, t))
                    .and_then(|t| self.types.get(t))
                    .is_some_and(|t| t.kind == TypeKind::Base(BaseKind::Signed));
                let mut enumerators = Vec::new();
                self.for_children(unit_index, off, |_, dwarf, unit, e| {
                    if e.tag() == gimli::DW_TAG_enumerator {
                        let n = attr_string(dwarf, unit, e, gimli::DW_AT_name).unwrap_or_default();
                        let v = match e.attr_value(gimli::DW_AT_const_value) {
                            Some(AttributeValue::Sdata(v)) => v as i128,
                            Some(AttributeValue::Udata(v)) => v as i128,
                            Some(v) => v.udata_value().map(|v| v as i128).unwrap_or(0),
                            None => 0,
                        };
                        enumerators.push((n, v));
                    }
                });
                Type {
                    name,
                    size,
                    kind: TypeKind::CEnum {
                        signed,
                        enumerators,
                    },
                }
            }
            gimli::DW_TAG_structure_type | gimli::DW_TAG_union_type | gimli::DW_TAG_class_type => {
                let name = qualified(&bare, self);
                if entry.attr_value(gimli::DW_AT_declaration).is_some() && size == 0 {
                    return Type {
                        name,
                        size,
                        kind: TypeKind::Opaque,
                    };
                }
                let is_union = entry.tag() == gimli::DW_TAG_union_type;
                self.lower_struct(unit_index, off, name, size, is_union)
            }
            gimli::DW_TAG_subroutine_type => opaque(crate::types::SIGNATURE),
            gimli::DW_TAG_unspecified_type => Type {
                name: bare.unwrap_or_else(|| "void".into()),
                size: 0,
                kind: TypeKind::Unit,
            },
            _ => opaque(&bare.unwrap_or_else(|| "?".into())),
        }
    }

    fn lower_struct(
        &mut self,
        unit_index: usize,
        off: UnitOffset,
        name: String,
        size: u64,
        is_union: bool,
    ) -> Type {
        // Gather raw member descriptions first, then lower their types (which needs &mut self).
        enum Raw {
            Member(String, u64, Option<TypeRef>),
            Param(Option<TypeRef>),
            VariantPart(UnitOffset),
        }
        let mut raws = Vec::new();
        self.for_children(unit_index, off, |_, dwarf, unit, e| match e.tag() {
            gimli::DW_TAG_member => {
                if e.attr_value(gimli::DW_AT_external).is_some() {
                    return; // a static member
                }
                let n = attr_string(dwarf, unit, e, gimli::DW_AT_name)
                    .unwrap_or_else(|| format!("__{}", raws.len()));
                raws.push(Raw::Member(n, member_offset(e), type_ref(e)));
            }
            gimli::DW_TAG_template_type_parameter => raws.push(Raw::Param(type_ref(e))),
            gimli::DW_TAG_variant_part => raws.push(Raw::VariantPart(e.offset())),
            _ => {}
        });
        let mut members = Vec::new();
        let mut params = Vec::new();
        let mut variant_part = None;
        for raw in raws {
            match raw {
                Raw::Member(n, offset, Some(t)) => {
                    let ty = self.lower(unit_index, t);
                    members.push(Member {
                        name: n,
                        offset,
                        ty,
                    });
                }
                // A member of a type carve cannot resolve is kept, as an opaque value: leaving
                // it out would make the struct look read in full.
                Raw::Member(n, offset, None) => {
                    let ty = self.unknown_type();
                    members.push(Member {
                        name: n,
                        offset,
                        ty,
                    });
                }
                Raw::Param(Some(t)) => params.push(self.lower(unit_index, t)),
                Raw::Param(None) => {}
                Raw::VariantPart(vp) => variant_part = Some(vp),
            }
        }
        if let Some(vp) = variant_part {
            let (tag, variants) = self.lower_variant_part(unit_index, vp);
            return Type {
                name,
                size,
                kind: TypeKind::Enum { tag, variants },
            };
        }
        let kind = if is_union {
            TypeKind::Union { members }
        } else if size == 0 && members.is_empty() && name == "()" {
            TypeKind::Unit
        } else {
            TypeKind::Struct { members, params }
        };
        Type { name, size, kind }
    }

    fn lower_variant_part(
        &mut self,
        unit_index: usize,
        vp: UnitOffset,
    ) -> (Option<Member>, Vec<Variant>) {
        let Ok(vp_entry) = self.units[unit_index].entry(vp) else {
            return (None, Vec::new());
        };
        let discr_die = match vp_entry.attr_value(gimli::DW_AT_discr) {
            Some(AttributeValue::UnitRef(o)) => Some(o),
            _ => None,
        };
        let mut tag_raw = None;
        let mut raw_variants: Vec<(Option<u128>, String, u64, Option<TypeRef>)> = Vec::new();
        let units = &self.units;
        let dwarf = &self.dwarf;
        let unit = &units[unit_index];
        if let Ok(mut tree) = unit.entries_tree(Some(vp)) {
            if let Ok(root) = tree.root() {
                let mut children = root.children();
                while let Ok(Some(child)) = children.next() {
                    let e = child.entry();
                    match e.tag() {
                        gimli::DW_TAG_member if Some(e.offset()) == discr_die => {
                            tag_raw = Some((member_offset(e), type_ref(e)));
                        }
                        gimli::DW_TAG_variant => {
                            let discr =
                                e.attr_value(gimli::DW_AT_discr_value)
                                    .and_then(|v| match v {
                                        AttributeValue::Sdata(s) => Some(s as i128 as u128),
                                        // 128-bit discriminants (a tag widened to a u128's
                                        // alignment) come as 16 bytes of data.
                                        AttributeValue::Data16(d) => Some(d),
                                        AttributeValue::Block(b) => {
                                            let bytes = b.to_slice().ok()?;
                                            (bytes.len() <= 16).then(|| {
                                                let mut le = [0u8; 16];
                                                le[..bytes.len()].copy_from_slice(&bytes);
                                                u128::from_le_bytes(le)
                                            })
                                        }
                                        other => other.udata_value().map(u128::from),
                                    });
                            let mut grand = child.children();
                            while let Ok(Some(m)) = grand.next() {
                                let me = m.entry();
                                if me.tag() == gimli::DW_TAG_member {
                                    let n = attr_string(dwarf, unit, me, gimli::DW_AT_name)
                                        .unwrap_or_default();
                                    raw_variants.push((discr, n, member_offset(me), type_ref(me)));
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        let tag = tag_raw.and_then(|(offset, t)| {
            t.map(|t| Member {
                name: "<tag>".into(),
                offset,
                ty: self.lower(unit_index, t),
            })
        });
        let variants = raw_variants
            .into_iter()
            .filter_map(|(discr, name, offset, t)| {
                t.map(|t| Variant {
                    discr,
                    name,
                    offset,
                    ty: self.lower(unit_index, t),
                })
            })
            .collect();
        (tag, variants)
    }

    fn array_count(&self, unit_index: usize, off: UnitOffset) -> Option<u64> {
        let mut count = None;
        self.for_children(unit_index, off, |_, _, _, e| {
            if e.tag() == gimli::DW_TAG_subrange_type && count.is_none() {
                count = e
                    .attr_value(gimli::DW_AT_count)
                    .and_then(|v| v.udata_value())
                    .or_else(|| {
                        e.attr_value(gimli::DW_AT_upper_bound)
                            .and_then(|v| v.udata_value())
                            .map(|u| u + 1)
                    });
            }
        });
        count
    }

    fn for_children(
        &self,
        unit_index: usize,
        off: UnitOffset,
        mut f: impl FnMut(
            usize,
            &gimli::Dwarf<Reader>,
            &gimli::Unit<Reader>,
            &gimli::DebuggingInformationEntry<Reader>,
        ),
    ) {
        let unit = &self.units[unit_index];
        let Ok(mut tree) = unit.entries_tree(Some(off)) else {
            return;
        };
        let Ok(root) = tree.root() else { return };
        let mut children = root.children();
        let mut i = 0;
        while let Ok(Some(child)) = children.next() {
            f(i, &self.dwarf, unit, child.entry());
            i += 1;
        }
    }
}

impl From<gimli::Error> for RecordError {
    fn from(e: gimli::Error) -> Self {
        RecordError::Dwarf {
            path: PathBuf::new(),
            offset: 0,
            reason: e.to_string(),
        }
    }
}

fn attr_string(
    dwarf: &gimli::Dwarf<Reader>,
    unit: &gimli::Unit<Reader>,
    entry: &gimli::DebuggingInformationEntry<Reader>,
    at: gimli::DwAt,
) -> Option<String> {
    let value = entry.attr_value(at)?;
    let r = dwarf.attr_string(unit, value).ok()?;
    Some(r.to_string_lossy().ok()?.into_owned())
}

/// A reference to a type DIE: in the referring DIE's unit, or anywhere in `.debug_info` (an
/// optimised build's codegen units refer to each other's types with DW_FORM_ref_addr).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TypeRef {
    Unit(UnitOffset),
    Global(usize),
}

impl From<UnitOffset> for TypeRef {
    fn from(o: UnitOffset) -> TypeRef {
        TypeRef::Unit(o)
    }
}

fn type_ref(entry: &gimli::DebuggingInformationEntry<Reader>) -> Option<TypeRef> {
    attr_type_ref(entry, gimli::DW_AT_type)
}

fn attr_type_ref(
    entry: &gimli::DebuggingInformationEntry<Reader>,
    attr: gimli::DwAt,
) -> Option<TypeRef> {
    match entry.attr_value(attr) {
        Some(AttributeValue::UnitRef(o)) => Some(TypeRef::Unit(o)),
        Some(AttributeValue::DebugInfoRef(o)) => Some(TypeRef::Global(o.0)),
        _ => None,
    }
}

/// A type reference in the same unit only (vtable DIEs are looked up in their own unit).
fn unit_type_ref(entry: &gimli::DebuggingInformationEntry<Reader>) -> Option<UnitOffset> {
    match entry.attr_value(gimli::DW_AT_type) {
        Some(AttributeValue::UnitRef(o)) => Some(o),
        _ => None,
    }
}

fn member_offset(entry: &gimli::DebuggingInformationEntry<Reader>) -> u64 {
    entry
        .attr_value(gimli::DW_AT_data_member_location)
        .and_then(|v| v.udata_value())
        .unwrap_or(0)
}

/// A `<T as Trait>::{vtable}` variable: (trait path without generics, file address, the
/// `{vtable_type}` DIE). Cheap for the many other variables: locals fail on the first operation
/// of their location before any name is read.
fn vtable_variable(
    dwarf: &gimli::Dwarf<Reader>,
    unit: &gimli::Unit<Reader>,
    entry: &gimli::DebuggingInformationEntry<Reader>,
) -> Option<(String, FileAddr, UnitOffset)> {
    let Some(AttributeValue::Exprloc(expr)) = entry.attr_value(gimli::DW_AT_location) else {
        return None;
    };
    let addr = match expr.operations(unit.encoding()).next().ok()?? {
        gimli::Operation::Address { address } => address,
        gimli::Operation::AddressIndex { index } => dwarf.address(unit, index).ok()?,
        _ => return None,
    };
    let name = attr_string(dwarf, unit, entry, gimli::DW_AT_name)?;
    let key = vtable_trait(&name)?;
    Some((key.to_string(), FileAddr(addr), unit_type_ref(entry)?))
}

/// The trait path (without generics) of a vtable variable's name:
/// `<mouse::Earth as mouse::Planet>::{vtable}` → `mouse::Planet`.
fn vtable_trait(name: &str) -> Option<&str> {
    let inner = name.strip_prefix('<')?.strip_suffix(">::{vtable}")?;
    // The first ` as ` outside angle brackets (`<T as U>` inside the type nests deeper).
    let mut depth = 0i32;
    let bytes = inner.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        match b {
            b'<' => depth += 1,
            b'>' if i == 0 || bytes[i - 1] != b'-' => depth -= 1,
            b' ' if depth == 0 && inner[i..].starts_with(" as ") => {
                let path = trait_path(&inner[i + 4..]);
                return (!path.is_empty()).then_some(path);
            }
            _ => {}
        }
    }
    None
}

/// The principal traits named in a type name: `&(dyn a::B<u8> + core::marker::Send)` → `a::B`.
fn dyn_traits(name: &str) -> impl Iterator<Item = &str> {
    name.match_indices("dyn ").filter_map(move |(i, _)| {
        let before = name[..i].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            return None;
        }
        let path = trait_path(&name[i + 4..]);
        (!path.is_empty()).then_some(path)
    })
}

/// The leading path of `s`, up to generics or whatever ends the trait's name.
fn trait_path(s: &str) -> &str {
    let end = s
        .find(['<', '>', ',', ')', '(', '+', ' ', ';', ']'])
        .unwrap_or(s.len());
    &s[..end]
}

/// The DIE named by DW_AT_specification or DW_AT_abstract_origin (same unit only).
fn specification(
    unit: &gimli::Unit<Reader>,
    entry: &gimli::DebuggingInformationEntry<Reader>,
) -> Option<gimli::DebuggingInformationEntry<Reader>> {
    let target = entry
        .attr_value(gimli::DW_AT_specification)
        .or_else(|| entry.attr_value(gimli::DW_AT_abstract_origin))?;
    match target {
        AttributeValue::UnitRef(o) => unit.entry(o).ok(),
        _ => None,
    }
}

/// Where a DIE is: its unit's file table, language and enclosing namespaces.
type Place<'a> = (&'a [Option<String>], Language, &'a [(isize, Arc<str>)]);

/// The summary of a concrete subprogram DIE, or `None` for declarations and inlined-only ones.
fn function_entry(
    dwarf: &gimli::Dwarf<Reader>,
    unit: &gimli::Unit<Reader>,
    entry: &gimli::DebuggingInformationEntry<Reader>,
    place: Place,
) -> Option<FunctionEntry> {
    let low = match entry.attr_value(gimli::DW_AT_low_pc)? {
        AttributeValue::Addr(a) => a,
        v @ AttributeValue::DebugAddrIndex(_) => dwarf.attr_address(unit, v).ok()??,
        _ => return None,
    };
    let high = match entry.attr_value(gimli::DW_AT_high_pc)? {
        AttributeValue::Addr(a) => a,
        v => low + v.udata_value()?,
    };
    if low == 0 || high <= low {
        return None;
    }
    described(dwarf, unit, entry, place, (FileAddr(low), FileAddr(high)))
}

/// The summary of a subprogram DIE whose code is at `[low, high)` (both 0: none of its own),
/// its name, path and declaration read from it or from the DIE it specifies.
fn described(
    dwarf: &gimli::Dwarf<Reader>,
    unit: &gimli::Unit<Reader>,
    entry: &gimli::DebuggingInformationEntry<Reader>,
    (files, language, scopes): Place,
    (low, high): (FileAddr, FileAddr),
) -> Option<FunctionEntry> {
    let spec = specification(unit, entry);
    let get = |at| {
        attr_string(dwarf, unit, entry, at)
            .or_else(|| spec.as_ref().and_then(|s| attr_string(dwarf, unit, s, at)))
    };
    let name = get(gimli::DW_AT_name)?;
    let linkage_name = get(gimli::DW_AT_linkage_name);
    let decl = |e: &gimli::DebuggingInformationEntry<Reader>| {
        let file = match e.attr_value(gimli::DW_AT_decl_file) {
            Some(AttributeValue::FileIndex(i)) => Some(i),
            Some(v) => v.udata_value(),
            None => None,
        };
        let line = e
            .attr_value(gimli::DW_AT_decl_line)
            .and_then(|v| v.udata_value());
        (file, line)
    };
    let (mut file, mut line) = decl(entry);
    if file.is_none() {
        if let Some(s) = &spec {
            (file, line) = decl(s);
        }
    }
    let decl_file = file.and_then(|i| files.get(i as usize).cloned().flatten());
    let path = match &linkage_name {
        Some(l) => match rustc_demangle::try_demangle(l) {
            Ok(d) => format!("{d:#}"),
            Err(_) => name.clone(),
        },
        None => match scopes.last() {
            Some((_, prefix)) if language == Language::Rust => format!("{prefix}::{name}"),
            _ => name.clone(),
        },
    };
    let own_code = match (&decl_file, language) {
        (Some(f), Language::Rust | Language::C) => is_own_source(f),
        _ => false,
    };
    Some(FunctionEntry {
        path,
        name,
        linkage_name,
        language,
        decl_file,
        decl_line: line.map(|l| l as u32),
        low_pc: low,
        high_pc: high,
        own_code,
        unit: 0,
        die: entry.offset(),
        scope: scopes.last().map(|(_, p)| p.clone()),
    })
}

/// Sources that belong to the program rather than to Rust's standard library, a registry or git
/// dependency, or the system.
fn is_own_source(path: &str) -> bool {
    !(path.starts_with("/rustc/")
        // The standard library's own dependencies (memchr, hashbrown, gimli...) as rustc ships them.
        || path.starts_with("/rust/deps/")
        || path.contains("/.cargo/registry/")
        || path.contains("/.cargo/git/")
        || path.contains("/rustlib/")
        || path.starts_with("/usr/")
        || path.starts_with("<"))
}

/// The line program's file names as paths (absolute where the DWARF allows), by file index.
fn file_table(dwarf: &gimli::Dwarf<Reader>, unit: &gimli::Unit<Reader>) -> Vec<Option<String>> {
    let Some(program) = &unit.line_program else {
        return Vec::new();
    };
    let header = program.header();
    let comp_dir = unit
        .comp_dir
        .as_ref()
        .and_then(|d| d.to_string_lossy().ok().map(|s| s.into_owned()));
    let to_string = |v: AttributeValue<Reader>| -> Option<String> {
        dwarf
            .attr_string(unit, v)
            .ok()
            .and_then(|r| r.to_string_lossy().ok().map(|s| s.into_owned()))
    };
    // DWARF 5 numbers files from 0, earlier versions from 1; index by the number DW_AT_decl_file uses.
    let count = header.file_names().len() as u64;
    let first = if header.version() >= 5 { 0 } else { 1 };
    let mut out = vec![None; (count + first) as usize];
    for index in first..first + count {
        let Some(file) = header.file(index) else {
            continue;
        };
        let Some(name) = to_string(file.path_name()) else {
            continue;
        };
        let mut path = PathBuf::from(&name);
        if path.is_relative() {
            if let Some(dir) = file.directory(header).and_then(to_string) {
                path = Path::new(&dir).join(path);
            }
        }
        if path.is_relative() {
            if let Some(cd) = &comp_dir {
                path = Path::new(cd).join(path);
            }
        }
        out[index as usize] = Some(path.to_string_lossy().into_owned());
    }
    out
}

/// A line row as the breakpoint rule reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Row {
    address: u64,
    prologue_end: bool,
    /// Line 0: code the compiler made that no source line holds (a stack probe's loop).
    no_line: bool,
}

/// Every line row, sorted by address.
fn line_rows(dwarf: &gimli::Dwarf<Reader>, unit: &gimli::Unit<Reader>) -> Vec<Row> {
    let _ = dwarf;
    let Some(program) = unit.line_program.clone() else {
        return Vec::new();
    };
    let mut rows = program.rows();
    let mut out = Vec::new();
    while let Ok(Some((_, row))) = rows.next_row() {
        if !row.end_sequence() {
            out.push(Row {
                address: row.address(),
                prologue_end: row.prologue_end(),
                no_line: row.line().is_none(),
            });
        }
    }
    out.sort_unstable();
    out
}

/// The first address after the prologue of the function at `[low, high)`: the row marked
/// `prologue_end`, else the second distinct row address (as gdb does), else `low`. A row of
/// line 0 is passed over for the next row of a line: in a debug build whose frame is over a
/// page, it is the stack probe's loop, before the prologue spills the arguments the
/// breakpoint reads, and hit once per page (pulldown-cmark's `get_entity::{{closure}}`
/// recorded its index `i` as a return address).
fn after_prologue(rows: &[Row], low: u64, high: u64) -> u64 {
    let start = rows.partition_point(|r| r.address <= low);
    let after_first = || rows[start..].iter().take_while(|r| r.address < high);
    (after_first().find(|r| r.prologue_end))
        .or_else(|| after_first().find(|r| !r.no_line))
        .or_else(|| after_first().next())
        .map_or(low, |r| r.address)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(rows: &[(u64, bool, bool)]) -> Vec<Row> {
        (rows.iter())
            .map(|&(address, prologue_end, no_line)| Row {
                address,
                prologue_end,
                no_line,
            })
            .collect()
    }

    #[test]
    fn breakpoint_goes_to_the_prologue_end_row() {
        let rows = rows(&[
            (0x10, false, false),
            (0x18, false, false),
            (0x20, true, false),
            (0x30, false, false),
        ]);
        assert_eq!(after_prologue(&rows, 0x10, 0x40), 0x20);
    }

    #[test]
    fn without_prologue_end_the_second_row_is_used() {
        let rows = rows(&[
            (0x10, false, false),
            (0x18, false, false),
            (0x20, false, false),
            (0x50, true, false),
        ]);
        assert_eq!(after_prologue(&rows, 0x10, 0x40), 0x18);
    }

    #[test]
    fn a_row_of_line_0_is_passed_over_for_the_next_row_of_a_line() {
        // pulldown-cmark's `get_entity::{{closure}}`: line 2157, the probe loop at line 0,
        // then 2157 again after the spills.
        let probe = rows(&[
            (0x80, false, false),
            (0x8a, false, true),
            (0xb1, false, false),
        ]);
        assert_eq!(after_prologue(&probe, 0x80, 0xc0), 0xb1);
        // Only rows of line 0 after the first: the second row still.
        let made = rows(&[(0x80, false, false), (0x8a, false, true)]);
        assert_eq!(after_prologue(&made, 0x80, 0xc0), 0x8a);
    }

    #[test]
    fn a_function_with_one_row_breaks_at_its_first_instruction() {
        assert_eq!(
            after_prologue(&rows(&[(0x10, false, false)]), 0x10, 0x40),
            0x10
        );
    }

    #[test]
    fn vtable_names_give_their_trait_path() {
        assert_eq!(
            vtable_trait("<mouse::Earth as mouse::Planet>::{vtable}"),
            Some("mouse::Planet")
        );
        assert_eq!(
            vtable_trait(
                "<std::rt::lang_start::{closure_env#0}<()> as core::ops::function::Fn<()>>::{vtable}"
            ),
            Some("core::ops::function::Fn")
        );
        assert_eq!(
            vtable_trait("<<a::X as a::Y>::Out as b::Z>::{vtable}"),
            Some("b::Z")
        );
        assert_eq!(vtable_trait("<a::X as b::Z>::{vtable_type}"), None);
        assert_eq!(vtable_trait("mouse::THE_ANSWER"), None);
    }

    #[test]
    fn dyn_type_names_give_their_principal_traits() {
        let all = |n| dyn_traits(n).collect::<Vec<_>>();
        assert_eq!(all("&dyn mouse::Planet"), ["mouse::Planet"]);
        assert_eq!(
            all("alloc::boxed::Box<dyn abc::Answerer, alloc::alloc::Global>"),
            ["abc::Answerer"]
        );
        assert_eq!(
            all("&(dyn core::ops::function::Fn<(i32), Output=i32> + core::marker::Send)"),
            ["core::ops::function::Fn"]
        );
        assert!(all("a::Candyn b").is_empty());
        assert!(all("u8").is_empty());
    }

    #[test]
    fn std_and_registry_sources_are_not_own_code() {
        assert!(!is_own_source("/rustc/abc/library/core/src/option.rs"));
        assert!(!is_own_source("/rust/deps/memchr-2.7.4/src/memchr.rs"));
        assert!(!is_own_source(
            "/root/.cargo/registry/src/index.crates.io-1/rusqlite-0.41.1/src/lib.rs"
        ));
        assert!(is_own_source("/work/fixtures/expr/src/lexer.rs"));
    }
}
