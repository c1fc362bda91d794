// Encode digests and keys to hex for display, and decode hex typed in configuration files.
use hex::{FromHex, ToHex};

fn main() {
    let blobs: [&[u8]; 6] = [b"", b"kiwi", b"\x00\x01\xfe\xff", b"The quick brown fox", &[0xde, 0xad, 0xbe, 0xef], &[7u8; 32]];
    let mut total = 0;
    for blob in blobs {
        let lower = hex::encode(blob);
        let upper = hex::encode_upper(blob);
        let via_trait: String = blob.encode_hex();
        assert_eq!(hex::decode(&upper).unwrap(), blob);
        println!("{lower} {upper} {}", via_trait == lower);
        total += lower.len();
    }
    let inputs = ["48656c6c6f", "DEADBEEF", "abc", "zz11", "0x12", "", "00ff00ff00ff00ff"];
    for s in inputs {
        match hex::decode(s) {
            Ok(bytes) => println!("{s} -> {bytes:?}"),
            Err(e) => println!("{s}: {e} ({e:?})"),
        }
    }
    let key = <[u8; 4]>::from_hex("cafebabe").unwrap();
    let mut buf = [0u8; 8];
    hex::encode_to_slice(key, &mut buf).unwrap();
    let mut back = [0u8; 4];
    hex::decode_to_slice(buf, &mut back).unwrap();
    println!("{key:?} {} {back:?} {:?}", std::str::from_utf8(&buf).unwrap(), hex::decode_to_slice("abcd", &mut back));
    println!("{:?} {total}", Vec::<u8>::from_hex("0102"));
}
