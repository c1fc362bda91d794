// Lay out a text table in a terminal: column widths measured in display cells, not bytes.
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

fn main() {
    let rows = [
        ["name", "city", "note"],
        ["Zoë", "Zürich", "café ☕"],
        ["山田太郎", "東京", "日本語テキスト"],
        ["Ana", "São Paulo", "tab\tand\u{200b}zero-width"],
        ["김민준", "서울", "emoji 👍🏽 and flag 🇫🇷"],
        ["x\u{301}", "ascii only", "combining a\u{308}"],
    ];
    let mut widths = [0usize; 3];
    for row in &rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.width());
        }
    }
    for row in &rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            line.push_str(cell);
            line.push_str(&" ".repeat(widths[i] - cell.width() + 2));
        }
        println!("{line}| bytes {} cjk {}", line.len(), line.width_cjk());
    }
    let mut per_width = [0usize; 4];
    for c in "Hello, 世界! ½ ± ① ゛\u{0}\u{7f}é".chars() {
        let w = c.width().unwrap_or(3);
        per_width[w.min(3)] += 1;
        println!("{c:?} width {:?} cjk {:?}", c.width(), c.width_cjk());
    }
    println!("{widths:?} {per_width:?}");
}
