// Format integers fast for a CSV/log writer: row ids, sizes, deltas, extremes.
fn main() {
    let mut buffer = itoa::Buffer::new();
    let mut line = String::new();
    let mut total_len = 0;
    for i in 0..40u32 {
        line.clear();
        line.push_str(buffer.format(i));
        line.push(',');
        line.push_str(buffer.format(i as u64 * 1_000_003));
        line.push(',');
        line.push_str(buffer.format(-(i as i64) * 7919));
        line.push(',');
        line.push_str(buffer.format((i as i16).wrapping_mul(1234)));
        total_len += line.len();
        if i % 10 == 0 { println!("{line}"); }
    }
    let extremes = [buffer.format(i64::MIN).to_owned(), buffer.format(u64::MAX).to_owned(),
        buffer.format(i128::MIN).to_owned(), buffer.format(u128::MAX).to_owned(), buffer.format(0u8).to_owned(),
        buffer.format(-128i8).to_owned(), buffer.format(usize::MAX).to_owned(), buffer.format(isize::MIN).to_owned()];
    println!("{}", extremes.join(" "));
    println!("total {total_len}");
}
