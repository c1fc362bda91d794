// Split command lines typed by a user into words, and quote words back into a safe command.
use shlex::Shlex;

fn main() {
    let lines = [
        "ls -la /tmp",
        "echo 'hello world' \"and $HOME\" done",
        "grep -e 'a b' -- file\\ name.txt",
        "unterminated 'quote",
        "cmd --opt=\"x y z\" # trailing comment",
        "  spaces   between  words ",
        "printf '%s\\n' \"nested 'single' quotes\"",
        "line one\nline two",
        "",
    ];
    let mut words_total = 0;
    for line in lines {
        match shlex::split(line) {
            Some(words) => {
                words_total += words.len();
                let back = shlex::try_join(words.iter().map(|w| w.as_str())).unwrap();
                println!("{line:?} -> {words:?} -> {back}");
            }
            None => println!("{line:?}: unbalanced quotes"),
        }
        let mut lexer = Shlex::new(line);
        let n = lexer.by_ref().count();
        println!("  {n} words, error: {}, lines: {}", lexer.had_error, lexer.line_no);
    }
    for word in ["simple", "it's", "two words", "$(rm -rf /)", "", "tab\there", "nul\0byte"] {
        println!("quote {word:?} = {:?}", shlex::try_quote(word));
    }
    let quoter = shlex::Quoter::new().allow_nul(true);
    println!("{:?} {words_total}", quoter.join(["a b", "c\0d", "e"]));
}
