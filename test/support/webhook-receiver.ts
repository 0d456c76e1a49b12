import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitForValue } from './waiting.ts';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  receivedAt: number;
}

/** What the receiver answers; by default 200. Return `'hang'` to never answer. */
export type Responder = (
  request: ReceivedRequest,
  index: number,
) => { status: number; headers?: Record<string, string>; body?: string; delayMs?: number } | 'hang';

/**
 * A real HTTP server standing in for a customer's webhook endpoint: it records every request
 * as it arrived and answers as the test tells it to.
 */
export class WebhookReceiver {
  readonly requests: ReceivedRequest[] = [];
  private readonly server: http.Server;
  private readonly hanging = new Set<http.ServerResponse>();
  responder: Responder = () => ({ status: 200, body: 'ok' });

  private constructor() {
    this.server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const received: ReceivedRequest = {
          method: request.method ?? '',
          path: request.url ?? '',
          headers: request.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          receivedAt: Date.now(),
        };
        const index = this.requests.push(received) - 1;
        const answer = this.responder(received, index);
        if (answer === 'hang') {
          this.hanging.add(response);
          // The gateway gave up on it (its timeout) or the connection ended: no longer held open.
          response.on('close', () => this.hanging.delete(response));
          return;
        }
        const respond = () => {
          response.writeHead(answer.status, answer.headers ?? {});
          response.end(answer.body ?? '');
        };
        if (answer.delayMs === undefined) respond();
        else setTimeout(respond, answer.delayMs);
      });
    });
  }

  static async start(port = 0): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver();
    await new Promise<void>((resolve) => receiver.server.listen(port, '127.0.0.1', resolve));
    return receiver;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Resolves once `count` requests (optionally matching) have arrived (test/support/waiting.ts). */
  async waitForRequests(count: number, match: (request: ReceivedRequest) => boolean = () => true): Promise<ReceivedRequest[]> {
    return waitForValue(
      () => {
        const matching = this.requests.filter(match);
        return matching.length >= count ? matching : undefined;
      },
      `${count} webhook requests (${this.requests.filter(match).length} so far)`,
    );
  }

  /** Requests answered `'hang'` whose connections the sender still holds open. */
  get openHungRequests(): number {
    return this.hanging.size;
  }

  async close(): Promise<void> {
    for (const response of this.hanging) response.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
