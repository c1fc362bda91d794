// Diff two versions of a config file line by line, show a unified diff and per-word changes.
use similar::{Algorithm, ChangeTag, TextDiff};

fn main() {
    let old = "[server]\nhost = \"localhost\"\nport = 8080\nworkers = 4\n\n[log]\nlevel = \"info\"\nfile = \"/var/log/app.log\"\n";
    let new = "[server]\nhost = \"0.0.0.0\"\nport = 8080\nworkers = 8\ntimeout = 30\n\n[log]\nlevel = \"debug\"\n";
    let diff = TextDiff::from_lines(old, new);
    println!("ratio {:.3}, {} ops", diff.ratio(), diff.ops().len());
    for change in diff.iter_all_changes() {
        let sign = match change.tag() { ChangeTag::Delete => "-", ChangeTag::Insert => "+", ChangeTag::Equal => " " };
        print!("{sign}{:?}{:?} {}", change.old_index(), change.new_index(), change);
    }
    print!("{}", diff.unified_diff().context_radius(1).header("old.toml", "new.toml"));
    for group in diff.grouped_ops(2) {
        for op in &group {
            for change in diff.iter_changes(op) { if change.tag() != ChangeTag::Equal { println!("{:?}: {}", op.tag(), change.value().trim_end()); } }
        }
    }
    for (a, b) in [("level = info", "level = debug"), ("the quick brown fox", "the quick red fox jumps"), ("same", "same")] {
        let words = TextDiff::from_words(a, b);
        let chars = TextDiff::configure().algorithm(Algorithm::Patience).diff_chars(a, b);
        let changed: Vec<String> = words.iter_all_changes().filter(|c| c.tag() != ChangeTag::Equal).map(|c| format!("{}{}", c.tag(), c.value())).collect();
        println!("{a:?} -> {b:?}: words {changed:?}, chars ratio {:.2}", chars.ratio());
    }
}
