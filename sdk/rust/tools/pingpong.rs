//! The Rust floor for `make bench-sdk`: reads whatever has arrived on stdin (64-byte
//! messages) and writes it back to stdout in one write, again and again, with no framing,
//! no JSON and no runtime (std only, one thread, blocking reads and writes on the
//! descriptors), until stdin ends: one message per read and write with one caller, as
//! many as arrived together with many. A round trip through it is what bouncing a small
//! message over a child's pipes costs a Rust program; the SDK's echo adapter is measured
//! against it.

use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::mem::ManuallyDrop;
use std::os::unix::io::FromRawFd;

const SIZE: usize = 64;

fn main() {
    // SAFETY: descriptors 0 and 1 stay open for the whole process; ManuallyDrop never
    // closes them.
    let mut input = ManuallyDrop::new(unsafe { File::from_raw_fd(0) });
    let mut output = ManuallyDrop::new(unsafe { File::from_raw_fd(1) });
    let mut buf = vec![0u8; 1 << 16];
    let mut total = 0;
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) if total % SIZE == 0 => return,
            Ok(0) => {
                eprintln!("pingpong: stdin ended inside a message");
                std::process::exit(1);
            }
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => {
                eprintln!("pingpong: {}", e);
                std::process::exit(1);
            }
        };
        total += n;
        if let Err(e) = output.write_all(&buf[..n]) {
            eprintln!("pingpong: {}", e);
            std::process::exit(1);
        }
    }
}
