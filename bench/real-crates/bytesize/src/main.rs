// Show file and transfer sizes in human units, and parse sizes from a config file.
use bytesize::ByteSize;

fn main() {
    let sizes = [0u64, 1, 999, 1000, 1023, 1024, 1536, 1_000_000, 1_048_576, 5_368_709_120, 1_099_511_627_776, u64::MAX];
    let mut total = ByteSize::b(0);
    for &n in &sizes {
        let s = ByteSize::b(n);
        println!("{n:>22} {:>10} {:>10} {:>10} {:>8}", s.to_string(), s.display().si(), s.display().iec_short(), s.display().si_short());
        total += ByteSize::b(n / 1024);
    }
    println!("total {total} = {} KiB = {:.2} MiB", total.as_u64() / 1024, total.as_mib());
    let limits = ByteSize::kib(64) + ByteSize::mb(3) + ByteSize::gib(1);
    println!("limits {limits} ({} bytes), {:.3} GB", limits.as_u64(), limits.as_gb());
    for text in ["1.5 GiB", "512 KB", "42", "10mb", "3 TiB", "0.25 kib", "abc", "1 ZB", " 7 B "] {
        match text.parse::<ByteSize>() {
            Ok(b) => println!("{text:?} -> {b} ({} bytes)", b.as_u64()),
            Err(e) => println!("{text:?}: {e}"),
        }
    }
    println!("{} {} {}", bytesize::kib(4u32), bytesize::mb(2u8), ByteSize::mib(3) > ByteSize::mb(3));
}
