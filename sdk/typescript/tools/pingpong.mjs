// The Node runtime's floor for `make bench-sdk`: reads exactly 64 bytes from stdin and
// writes them back to stdout, again and again, with no framing and no JSON, until stdin
// ends. Both ends are libuv streams, as in the SDK (process.stdin, and process.stdout,
// which Node writes synchronously when it is a pipe). A round trip through it is what
// bouncing a small message over a child's pipes costs in Node itself; the SDK's echo
// adapter is measured against it.
const SIZE = 64;
let pending = Buffer.alloc(0);
process.stdin.on("data", (chunk) => {
  pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
  while (pending.length >= SIZE) {
    process.stdout.write(pending.subarray(0, SIZE));
    pending = pending.subarray(SIZE);
  }
});
process.stdin.on("end", () => {
  if (pending.length > 0) {
    process.stderr.write("pingpong: stdin ended inside a message\n");
    process.exitCode = 1;
  }
});
