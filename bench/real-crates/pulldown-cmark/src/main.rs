// Render a README-like markdown document to HTML, and collect its headings and links.
use pulldown_cmark::{html, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

const DOC: &str = "# Project *carve*\n\nA tool that **records** calls and `writes` tests.\n\n\
## Install\n\n```sh\ncargo install carve\n```\n\n- fast\n- [docs](https://example.com/docs \"Docs\")\n  - nested item\n\
- ~~slow~~\n\n1. first\n2. second\n\n> A quote with a [link][ref].\n\n| a | b |\n|---|:-:|\n| 1 | 2 |\n\n\
Footnote here[^1].\n\n[^1]: The note.\n[ref]: https://example.org\n\n- [x] done\n- [ ] todo\n\n***\n\n<div>raw html</div>\n";

fn main() {
    let mut html_out = String::new();
    html::push_html(&mut html_out, Parser::new_ext(DOC, Options::all()));
    println!("{html_out}");
    let mut plain = String::new();
    html::push_html(&mut plain, Parser::new("Just *one* paragraph with a <br> and &amp; entity."));
    println!("{plain}");
    let mut headings = Vec::new();
    let mut links = Vec::new();
    let mut in_heading: Option<HeadingLevel> = None;
    for event in Parser::new_ext(DOC, Options::ENABLE_TABLES | Options::ENABLE_FOOTNOTES) {
        match event {
            Event::Start(Tag::Heading { level, .. }) => in_heading = Some(level),
            Event::End(TagEnd::Heading(_)) => in_heading = None,
            Event::Text(t) if in_heading.is_some() => headings.push(format!("{:?} {t}", in_heading.unwrap())),
            Event::Start(Tag::Link { dest_url, title, .. }) => links.push(format!("{dest_url} {title}")),
            _ => {}
        }
    }
    let offsets: Vec<_> = Parser::new(DOC).into_offset_iter().map(|(_, r)| r.start).take(10).collect();
    println!("{headings:?}\n{links:?}\n{offsets:?}");
}
