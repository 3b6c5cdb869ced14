import { fstatSync, write as fsWrite } from "node:fs";
import { Socket } from "node:net";

/**
 * The single writer of the frames' descriptor: batches the replies completed in one turn
 * of the event loop into one write, never blocking the event loop on a full pipe.
 *
 * A pipe or a socket is written through a libuv stream: the descriptor is made
 * non-blocking and each write is attempted at once, on the event loop, with no thread
 * hand-off (only a full pipe waits for writability). Anything else (a file) is written
 * with fs.write, on libuv's thread pool.
 */
export class Writer {
  private queue: Buffer[] = [];
  private scheduled = false;
  private failed: Error | undefined;
  private pending = 0; // writes handed to the stream or fs.write, not yet done
  private drained: Array<() => void> = [];
  private readonly stream: Socket | undefined;

  constructor(
    private readonly fd: number,
    private readonly onError: (e: Error) => void,
  ) {
    let stream: Socket | undefined;
    try {
      const st = fstatSync(fd);
      if (st.isFIFO() || st.isSocket()) {
        stream = new Socket({ fd, readable: false, writable: true });
        stream.on("error", (e) => this.fail(e));
        stream.unref(); // the loop lives for what is being written, not for the descriptor
      }
    } catch {
      stream = undefined; // not a stream libuv can take: fs.write it is
    }
    this.stream = stream;
  }

  put(frame: Buffer): void {
    if (this.failed) {
      return;
    }
    this.queue.push(frame);
    if (!this.scheduled) {
      // Replies completed in the same turn of the event loop go out in one write.
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.flush();
      });
    }
  }

  private flush(): void {
    if (this.queue.length === 0 || this.failed) {
      this.settle();
      return;
    }
    const data = this.queue.length === 1 ? this.queue[0] : Buffer.concat(this.queue);
    this.queue = [];
    this.pending++;
    if (this.stream) {
      this.stream.write(data, (err) => this.done(err ?? undefined));
    } else if (this.pending === 1) {
      this.writeAll(data, 0);
    } else {
      this.pending--; // a file write is still going: it takes this data when it is done
      this.queue.push(data);
    }
  }

  private writeAll(data: Buffer, off: number): void {
    fsWrite(this.fd, data, off, data.length - off, null, (err, n) => {
      if (err) {
        if ((err as NodeJS.ErrnoException).code === "EAGAIN") {
          setTimeout(() => this.writeAll(data, off), 1);
          return;
        }
        this.done(err);
        return;
      }
      if (off + n < data.length) {
        this.writeAll(data, off + n);
      } else {
        this.done(undefined);
        this.flush();
      }
    });
  }

  private done(err: Error | undefined): void {
    this.pending--;
    if (err) {
      this.fail(err);
    }
    this.settle();
  }

  private fail(err: Error): void {
    if (this.failed) {
      return;
    }
    this.failed = err;
    this.queue = [];
    this.onError(err);
    this.settle();
  }

  private settle(): void {
    if (this.failed || (this.pending === 0 && !this.scheduled && this.queue.length === 0)) {
      for (const f of this.drained.splice(0)) {
        f();
      }
    }
  }

  /** Resolves once everything queued is written (or writing failed). */
  idle(): Promise<void> {
    if (this.failed || (this.pending === 0 && !this.scheduled && this.queue.length === 0)) {
      return Promise.resolve();
    }
    return new Promise((resolve) => this.drained.push(resolve));
  }
}
