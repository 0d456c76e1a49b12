import { WebSocket } from 'ws';
import { waitForValue } from './waiting.ts';

/** A frame of an event stream: the webhook body with the event's id first. */
export interface StreamFrame {
  event_id: string;
  event: string;
  message?: string;
  [field: string]: unknown;
}

/** What a refused connection was answered, before any upgrade: the status and the API's error body. */
export interface RefusedConnection {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}

/**
 * A WebSocket client of an event stream as a consumer would write one: it keeps every frame it
 * got, in order, and how the server closed it. Tests wait on its frames, never on time.
 */
export class StreamClient {
  readonly frames: StreamFrame[] = [];
  closedWith: { code: number; reason: string } | undefined;
  private readonly socket: WebSocket;

  private constructor(socket: WebSocket) {
    this.socket = socket;
    socket.on('message', (data) => this.frames.push(JSON.parse(String(data)) as StreamFrame));
    socket.on('close', (code, reason) => {
      this.closedWith = { code, reason: String(reason) };
    });
  }

  /** Connects to `path` on the base URL; resolves once open, or with the refusal the server answered. */
  static connect(baseUrl: string, path: string, apiKey: string | undefined): Promise<StreamClient | RefusedConnection> {
    const socket = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}${path}`, {
      headers: apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` },
    });
    return new Promise((resolve, reject) => {
      socket.once('open', () => resolve(new StreamClient(socket)));
      socket.once('unexpected-response', (_request, response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => {
          text += chunk.toString();
        });
        response.on('end', () => {
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: JSON.parse(text) as Record<string, unknown> });
          socket.terminate();
        });
      });
      socket.once('error', reject);
    });
  }

  /** The frames once there are at least `count`. */
  framesAtLeast(count: number): Promise<StreamFrame[]> {
    return waitForValue(() => (this.frames.length >= count ? this.frames : undefined), `${count} frames on the stream`);
  }

  /** How the server closed the stream, once it has. */
  closed(): Promise<{ code: number; reason: string }> {
    return waitForValue(() => this.closedWith, 'the server to close the stream');
  }

  send(text: string): void {
    this.socket.send(text);
  }

  /** Closes from the client's side and waits until the socket is closed. */
  async close(): Promise<void> {
    this.socket.close(1000);
    await this.closed();
  }
}

export function isRefused(connection: StreamClient | RefusedConnection): connection is RefusedConnection {
  return !(connection instanceof StreamClient);
}

/** A connection the test expects to be accepted. */
export async function openStream(baseUrl: string, path: string, apiKey: string): Promise<StreamClient> {
  const connection = await StreamClient.connect(baseUrl, path, apiKey);
  if (isRefused(connection)) throw new Error(`the stream refused the connection: ${connection.status} ${JSON.stringify(connection.body)}`);
  return connection;
}
