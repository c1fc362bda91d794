//! Reports as text: a compact human summary (optionally with ANSI colours) and JUnit XML for CI
//! systems. JSON is the report's serde form, written by the CLI.

use std::fmt::Write as _;

use crate::report::{Divergence, Mode, Report};

/// Divergences listed after the first one of a function in human output.
const MAX_OTHERS_SHOWN: usize = 8;

struct Paint {
    on: bool,
}

impl Paint {
    fn wrap(&self, code: &str, text: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
    fn red(&self, t: &str) -> String {
        self.wrap("31", t)
    }
    fn green(&self, t: &str) -> String {
        self.wrap("32", t)
    }
    fn bold(&self, t: &str) -> String {
        self.wrap("1", t)
    }
    fn dim(&self, t: &str) -> String {
        self.wrap("2", t)
    }
}

/// The report for a terminal or a CI log: one block per diverged function (its first divergence
/// with both values, then the others one per line) and one summary line at the end.
pub fn human(report: &Report, color: bool) -> String {
    let p = Paint { on: color };
    let mut out = String::new();
    for d in &report.process {
        let _ = writeln!(out, "{} {}", p.red("✗"), p.bold(&d.one_line()));
    }
    for g in report.groups.iter().filter(|g| g.diverged()) {
        let count = g.divergences().count();
        let unit = match report.mode {
            Mode::Trace => "top-level call",
            Mode::Tests => "carved test",
        };
        let _ = writeln!(
            out,
            "{} {} {}",
            p.red("✗"),
            p.bold(&g.function),
            p.dim(&format!(
                "({} {unit}{}, {count} divergence{})",
                g.calls,
                if g.calls == 1 { "" } else { "s" },
                if count == 1 { "" } else { "s" }
            ))
        );
        if let Some(first) = &g.first {
            write_first(&mut out, first, &p);
        }
        for d in g.others.iter().take(MAX_OTHERS_SHOWN) {
            let _ = writeln!(out, "    {}", p.dim(&format!("· {}", d.one_line())));
        }
        if g.others.len() > MAX_OTHERS_SHOWN {
            let more = g.others.len() - MAX_OTHERS_SHOWN;
            let _ = writeln!(
                out,
                "    {}",
                p.dim(&format!(
                    "· … and {more} more (--format json lists them all)"
                ))
            );
        }
    }
    out.push_str(&summary_line(report, &p));
    out.push('\n');
    out
}

fn write_first(out: &mut String, d: &Divergence, p: &Paint) {
    let mut head = format!("{}: {}", d.call_path, d.kind.describe());
    if d.kind == crate::report::DivergenceKind::CallCountChanged {
        head = format!("{}: calls to {} changed", d.call_path, d.function);
    }
    use crate::report::DivergenceKind as K;
    match (&d.field, d.kind) {
        (_, K::CallCountChanged) => {}
        (_, K::ReturnChanged | K::OutcomeChanged) if !d.at.is_empty() => {
            head.push_str(&format!(" (at {})", d.at))
        }
        (_, K::ReturnChanged | K::OutcomeChanged) => {}
        (Some(field), _) => head.push_str(&format!(" ({field}{})", d.at)),
        (None, _) => {}
    }
    let _ = writeln!(out, "    {}", p.bold(&head));
    if let Some(b) = &d.baseline {
        let _ = writeln!(out, "      baseline: {b}");
    }
    if let Some(n) = &d.new {
        let _ = writeln!(out, "      new:      {}", p.red(n));
    }
}

fn summary_line(report: &Report, p: &Paint) -> String {
    let s = &report.summary;
    let skipped = match (s.ignored_unstable, s.ignored_by_glob) {
        (0, 0) => String::new(),
        (u, 0) => format!("; {u} unstable difference{} skipped", plural(u)),
        (0, i) => format!("; {i} ignored difference{} skipped", plural(i)),
        (u, i) => format!("; {u} unstable and {i} ignored differences skipped"),
    };
    let compared = match report.mode {
        Mode::Trace => {
            let runs = report.baseline_runs.len();
            format!(
                "{} calls compared with baseline run {}{}",
                s.calls_compared,
                report
                    .baseline_runs
                    .last()
                    .map(|r| r.to_string())
                    .unwrap_or_else(|| "?".into()),
                if runs > 1 {
                    format!(" (stability learned from {runs} runs)")
                } else {
                    String::new()
                }
            )
        }
        Mode::Tests => format!("{} carved tests run", s.calls_compared),
    };
    if s.divergences == 0 {
        p.green(&format!(
            "carve gate: no divergence in {} function{} ({compared}{skipped})",
            s.functions,
            plural(s.functions)
        ))
    } else {
        p.red(&format!(
            "carve gate: {} divergence{} in {} of {} function{} ({compared}{skipped})",
            s.divergences,
            plural(s.divergences),
            s.diverged_functions + usize::from(!report.process.is_empty()),
            s.functions,
            plural(s.functions)
        ))
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// JUnit XML: one `<testcase>` per top-level function (classname: its module or type), failing
/// with the first divergence as the message and every divergence in the body; in trace mode a
/// `process exit` testcase comes first.
pub fn junit(report: &Report) -> String {
    let mut cases = String::new();
    let mut tests = 0;
    let mut failures = 0;
    if report.mode == Mode::Trace {
        tests += 1;
        let classname = report.subject.rsplit('/').next().unwrap_or(&report.subject);
        let _ = write!(
            cases,
            "    <testcase name=\"process exit\" classname=\"{}\"",
            escape(classname)
        );
        match report.process.first() {
            None => cases.push_str("/>\n"),
            Some(first) => {
                failures += 1;
                cases.push_str(">\n");
                write_failure(&mut cases, first, &report.process);
                cases.push_str("    </testcase>\n");
            }
        }
    }
    for g in &report.groups {
        tests += 1;
        let _ = write!(
            cases,
            "    <testcase name=\"{}\" classname=\"{}\"",
            escape(&g.function),
            escape(&g.module)
        );
        match &g.first {
            None => cases.push_str("/>\n"),
            Some(first) => {
                failures += 1;
                cases.push_str(">\n");
                let all: Vec<Divergence> = g.divergences().cloned().collect();
                write_failure(&mut cases, first, &all);
                cases.push_str("    </testcase>\n");
            }
        }
    }
    let suite = match report.mode {
        Mode::Trace => format!("carve gate: {}", report.subject),
        Mode::Tests => format!("carve gate --tests: {}", report.subject),
    };
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"carve gate\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\">"
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" skipped=\"0\">",
        escape(&suite)
    );
    out.push_str(&cases);
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

fn write_failure(out: &mut String, first: &Divergence, all: &[Divergence]) {
    let body: Vec<String> = all.iter().map(Divergence::one_line).collect();
    let kind = first.kind.as_str();
    let _ = writeln!(
        out,
        "      <failure message=\"{}\" type=\"{}\">{}</failure>",
        escape(&first.one_line()),
        escape(kind),
        escape(&body.join("\n"))
    );
}

/// Text safe in XML 1.0 content and attribute values: markup characters as entities, line
/// breaks and tabs as character references, other characters XML forbids as U+FFFD.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c if (c as u32) < 0x20 || matches!(c, '\u{FFFE}' | '\u{FFFF}') => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_and_control_characters_are_escaped() {
        assert_eq!(
            escape("a<b & \"c\"\n\u{1}"),
            "a&lt;b &amp; &quot;c&quot;&#10;\u{FFFD}"
        );
    }
}
