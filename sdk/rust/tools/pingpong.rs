//! The Rust floor for `make bench-sdk`: reads exactly 64 bytes from stdin and writes them
//! back to stdout, again and again, with no framing, no JSON and no runtime (std only, one
//! thread, blocking reads and writes on the descriptors), until stdin ends. A round trip
//! through it is what bouncing a small message over a child's pipes costs a Rust program;
//! the SDK's echo adapter is measured against it.

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
    let mut buf = [0u8; SIZE];
    loop {
        let mut got = 0;
        while got < SIZE {
            match input.read(&mut buf[got..]) {
                Ok(0) if got == 0 => return,
                Ok(0) => {
                    eprintln!("pingpong: stdin ended inside a message");
                    std::process::exit(1);
                }
                Ok(n) => got += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    eprintln!("pingpong: {}", e);
                    std::process::exit(1);
                }
            }
        }
        if let Err(e) = output.write_all(&buf) {
            eprintln!("pingpong: {}", e);
            std::process::exit(1);
        }
    }
}
