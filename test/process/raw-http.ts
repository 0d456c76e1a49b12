import http from 'node:http';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export { sleep };

/**
 * Polls `probe` until it returns something other than undefined or false, and returns that.
 * Every wait in these tests goes through here or through withTimeout, so that a broken server
 * fails a test with a message instead of hanging the run.
 */
export async function waitFor<T>(
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs: number,
  description: string,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) {
      const cause = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${description}${cause}`);
    }
    await sleep(intervalMs);
  }
}

export async function withTimeout<T>(promise: Promise<T>, timeoutMs: number, description: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`Timed out after ${timeoutMs} ms waiting for ${description}`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export interface HttpResult {
  statusCode: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One request on its own connection (no pooling), so a killed server fails only the requests it had. */
export function request(
  port: number,
  options: { method: string; path: string; body?: unknown; apiKey?: string; timeoutMs?: number },
): Promise<HttpResult> {
  const payload = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body));
  return new Promise((resolve, reject) => {
    const outgoing = http.request(
      {
        host: '127.0.0.1',
        port,
        method: options.method,
        path: options.path,
        agent: false,
        headers: {
          ...(payload !== undefined && { 'content-type': 'application/json', 'content-length': payload.length }),
          ...(options.apiKey !== undefined && { authorization: `Bearer ${options.apiKey}` }),
        },
        timeout: options.timeoutMs ?? 10_000,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () =>
          resolve({ statusCode: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error(`${options.method} ${options.path} got no answer in time`)));
    outgoing.on('error', reject);
    outgoing.end(payload);
  });
}

/** Resolves true when a TCP connection to the port is refused, false when one is accepted. */
export function isConnectionRefused(port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED') resolve(true);
      else reject(error);
    });
  });
}

export interface RawResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * A hand-driven HTTP/1.1 client on a plain socket: the test decides exactly which bytes go out
 * and when, which no ordinary client allows, and reads back responses as they arrive.
 */
export class RawHttpConnection {
  private buffer = Buffer.alloc(0);
  private wake: (() => void) | undefined;
  /** Every byte the server ever sent on this connection. */
  bytesReceived = 0;
  isClosed = false;
  error: NodeJS.ErrnoException | undefined;
  readonly closed: Promise<void>;

  private constructor(readonly socket: net.Socket) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      this.bytesReceived += chunk.length;
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.wake?.();
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      this.error = error;
    });
    this.closed = new Promise((resolve) =>
      socket.once('close', () => {
        this.isClosed = true;
        this.wake?.();
        resolve();
      }),
    );
  }

  /**
   * `from` picks the client's end: another loopback address such as 127.0.0.2, or ::1 for IPv6.
   * With `allowHalfOpen`, the client goes on sending after the server's FIN, as a hostile one would.
   */
  static open(
    port: number,
    timeoutMs = 5_000,
    from: { host?: string; localAddress?: string; allowHalfOpen?: boolean } = {},
  ): Promise<RawHttpConnection> {
    const socket = net.connect({
      host: from.host ?? '127.0.0.1',
      port,
      allowHalfOpen: from.allowHalfOpen ?? false,
      ...(from.localAddress !== undefined && { localAddress: from.localAddress }),
    });
    const connection = new RawHttpConnection(socket);
    return withTimeout(
      new Promise((resolve, reject) => {
        socket.once('connect', () => resolve(connection));
        socket.once('error', reject);
      }),
      timeoutMs,
      `a connection to port ${port}`,
    );
  }

  write(data: string | Buffer): Promise<void> {
    return new Promise((resolve, reject) => this.socket.write(data, (error) => (error ? reject(error) : resolve())));
  }

  /** Writes `data` in pieces of `pieceBytes`, spread evenly over about `totalMs`. */
  async trickle(data: string | Buffer, pieceBytes: number, totalMs: number): Promise<void> {
    const bytes = typeof data === 'string' ? Buffer.from(data) : data;
    const pieces = Math.ceil(bytes.length / pieceBytes);
    const intervalMs = totalMs / pieces;
    for (let index = 0; index < pieces; index++) {
      if (index > 0) await sleep(intervalMs);
      await this.write(bytes.subarray(index * pieceBytes, (index + 1) * pieceBytes));
    }
  }

  /** The next complete response, interim ones (100 Continue) included. */
  async nextResponse(timeoutMs = 10_000): Promise<RawResponse> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const response = this.takeResponse();
      if (response !== undefined) return response;
      if (this.isClosed) {
        throw new Error(`The server closed the connection before a full response (${this.buffer.length} bytes pending)`);
      }
      const remainingMs = deadline - Date.now();
      if (remainingMs <= 0) throw new Error(`No full response within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remainingMs);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  close(): void {
    this.socket.destroy();
  }

  private takeResponse(): RawResponse | undefined {
    const headEnd = this.buffer.indexOf('\r\n\r\n');
    if (headEnd === -1) return undefined;
    const [statusLine = '', ...headerLines] = this.buffer.subarray(0, headEnd).toString('latin1').split('\r\n');
    const status = /^HTTP\/1\.1 (\d{3}) /.exec(statusLine);
    if (status === null) throw new Error(`Not an HTTP/1.1 status line: ${JSON.stringify(statusLine)}`);
    const headers: Record<string, string> = {};
    for (const line of headerLines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const statusCode = Number(status[1]);
    const bodyStart = headEnd + 4;
    let bodyLength = 0;
    if (statusCode >= 200) {
      if (headers['content-length'] === undefined) throw new Error(`Response without Content-Length: ${statusLine}`);
      bodyLength = Number(headers['content-length']);
    }
    if (this.buffer.length < bodyStart + bodyLength) return undefined;
    const body = this.buffer.subarray(bodyStart, bodyStart + bodyLength).toString('utf8');
    this.buffer = this.buffer.subarray(bodyStart + bodyLength);
    return { statusCode, headers, body };
  }
}

/** The request line and headers of a JSON POST, with an exact Content-Length. */
export function jsonPostHead(port: number, path: string, body: Buffer, apiKey: string, extraHeaders: string[] = []): string {
  return [
    `POST ${path} HTTP/1.1`,
    `Host: 127.0.0.1:${port}`,
    `Authorization: Bearer ${apiKey}`,
    'Content-Type: application/json',
    `Content-Length: ${body.length}`,
    ...extraHeaders,
    '',
    '',
  ].join('\r\n');
}
