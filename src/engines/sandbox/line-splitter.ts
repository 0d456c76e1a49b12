/**
 * Splits a socket's bytes into lines of at most `maxLineBytes` each. A line that grows past the
 * limit is never assembled: the splitter stops at once and reports it, so that a peer cannot make
 * this process hold more than about one limit of its bytes (readline buffers without end).
 */
export class LineSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private stopped = false;

  constructor(
    /** May be raised between lines, as once a peer has proved who it is. */
    public maxLineBytes: number,
    private readonly onLine: (line: string) => void,
    private readonly onTooLong: () => void,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    while (!this.stopped) {
      const end = chunk.indexOf(10, start);
      const piece = chunk.subarray(start, end === -1 ? chunk.length : end);
      if (this.pendingBytes + piece.length > this.maxLineBytes) {
        this.overflow();
        return;
      }
      if (end === -1) {
        if (piece.length > 0) this.keep(piece);
        return;
      }
      const line = this.pending.length === 0 ? piece : Buffer.concat([...this.pending, piece]);
      this.pending = [];
      this.pendingBytes = 0;
      start = end + 1;
      this.onLine(line.toString('utf8'));
    }
  }

  /** Ignores whatever arrives from now on, as when its socket is being closed. */
  stop(): void {
    this.stopped = true;
    this.pending = [];
    this.pendingBytes = 0;
  }

  private keep(piece: Buffer): void {
    // A copy, so that a short remainder does not hold the whole chunk it came in.
    this.pending.push(Buffer.from(piece));
    this.pendingBytes += piece.length;
  }

  private overflow(): void {
    this.stop();
    this.onTooLong();
  }
}
