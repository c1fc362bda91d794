// Parse a handful of URLs, read their parts, resolve relative references, build API URLs.
use url::Url;

fn main() {
    let inputs = [
        "https://user:secret@example.com:8443/a/b/c?x=1&y=two%20words#frag",
        "http://localhost/",
        "HTTP://EXAMPLE.org:80/./a/../b/%7Efoo",
        "file:///etc/hosts",
        "mailto:someone@example.org",
        "ftp://ftp.example.net/pub/file.txt",
        "https://[::1]:3000/api?debug",
        "not a url",
        "https://exa mple.com/",
    ];
    let mut segments = 0;
    for s in inputs {
        let u = match Url::parse(s) {
            Ok(u) => u,
            Err(e) => { println!("{s}: {e}"); continue; }
        };
        println!("{u} scheme={} host={:?} port={:?} path={} query={:?} fragment={:?}",
            u.scheme(), u.host_str(), u.port_or_known_default(), u.path(), u.query(), u.fragment());
        println!("  user={:?} password={:?} base={} origin={}", u.username(), u.password(),
            u.cannot_be_a_base(), u.origin().ascii_serialization());
        for (k, v) in u.query_pairs() { println!("  {k} = {v}"); }
        segments += u.path_segments().map_or(0, |s| s.count());
        println!("  join: {:?}", u.join("../other?z=9").map(|j| j.to_string()));
    }
    let base = Url::parse("https://api.example.com/v1/").unwrap();
    for i in 0..25 {
        let mut u = base.join(&format!("items/{i}")).unwrap();
        u.query_pairs_mut().append_pair("page", &i.to_string()).append_pair("q", "a b&c");
        if i % 3 == 0 { u.set_fragment(Some("top")); }
        if i % 5 == 0 { let _ = u.set_port(Some(8080 + i)); }
        segments += u.as_str().len() + base.make_relative(&u).map_or(0, |r| r.len());
    }
    println!("{segments}");
}
