// Match file names against glob patterns the way a build tool's include/exclude lists do.
use glob::{glob_with, MatchOptions, Pattern};

fn main() {
    let patterns = ["*.rs", "src/**/*.rs", "[a-c]*.txt", "file?.md", "**/test_*", "[!0-9]*", "a[", "*.{rs,toml}", "**"];
    let paths = ["main.rs", "src/lib.rs", "src/a/b/mod.rs", "b.txt", "D.TXT", "file1.md",
        "file10.md", "tests/test_one.rs", "9lives", ".hidden.rs", "README"];
    let strict = MatchOptions { case_sensitive: true, require_literal_separator: true, require_literal_leading_dot: true };
    let loose = MatchOptions { case_sensitive: false, require_literal_separator: false, require_literal_leading_dot: false };
    let mut hits = 0;
    for p in patterns {
        let pat = match Pattern::new(p) {
            Ok(pat) => pat,
            Err(e) => { println!("{p}: error at {}: {}", e.pos, e.msg); continue; }
        };
        for path in paths {
            let (a, b, c) = (pat.matches(path), pat.matches_with(path, strict), pat.matches_with(path, loose));
            if a || b || c { println!("{pat} ~ {path}: {a} {b} {c}"); hits += 1; }
        }
        println!("{} matches_path: {}", pat.as_str(), pat.matches_path(std::path::Path::new("src/lib.rs")));
    }
    for name in ["a[b]*c?", "plain", "*"] { println!("escape {name} = {}", Pattern::escape(name)); }
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/*.rs");
    for entry in glob_with(dir, loose).expect("pattern") {
        match entry { Ok(p) => { hits += 1; println!("found {}", p.display()) } Err(e) => println!("{e}") }
    }
    println!("{hits} hits");
}
