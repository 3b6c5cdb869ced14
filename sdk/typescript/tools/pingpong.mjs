// The Node runtime's floor for `make bench-sdk`: writes whatever has arrived on stdin
// (64-byte messages) back to stdout in one write, again and again, with no framing and
// no JSON, until stdin ends: one message per read and write with one caller, as many as
// arrived together with many. Both ends are libuv streams, as in the SDK (process.stdin,
// and process.stdout, which Node writes synchronously when it is a pipe). A round trip
// through it is what bouncing a small message over a child's pipes costs in Node itself;
// the SDK's echo adapter is measured against it.
const SIZE = 64;
let total = 0;
process.stdin.on("data", (chunk) => {
  total += chunk.length;
  process.stdout.write(chunk);
});
process.stdin.on("end", () => {
  if (total % SIZE !== 0) {
    process.stderr.write("pingpong: stdin ended inside a message\n");
    process.exitCode = 1;
  }
});
