import { randomInt } from 'node:crypto';
import http from 'node:http';
import { sleep } from './raw-http.ts';

/** How long a client waits for one answer before it counts the request as failed. */
const ANSWER_TIMEOUT_MS = 30_000;

interface Answer {
  status: number;
  retryAfter: string | undefined;
  body: { error?: string; status?: string };
}

/** A request whose outcome is not the one a client may rely on: what the test counts as failed. */
export interface FailedRequest {
  text: string;
  keyed: boolean;
  what: string;
}

/**
 * The rolling-restart test's clients, as a real one behaves behind a load balancer: each sends
 * from a random number through a random node in rotation, one send after another. A send is
 * retried only where that is safe for any client: on a refused connection (it never reached a
 * node: the load balancer's retry), and on a 503 after its Retry-After, the same body again
 * (and the same Idempotency-Key for a keyed client). A keyless client that retries a 503 for a
 * message that was in fact sent sends it twice; the network's journal shows that.
 */
export class RollingLoad {
  /** Texts answered 200, by whether their client sent an Idempotency-Key. */
  readonly sent: { text: string; keyed: boolean }[] = [];
  readonly failed: FailedRequest[] = [];
  /** 503s answered and honoured (retried after Retry-After): a client sees these, but nothing fails. */
  retriedAfter503 = 0;
  /** Connections refused by a node that had just left the rotation, retried elsewhere. */
  refusedConnections = 0;
  private running = false;
  private loops: Promise<void>[] = [];
  private counter = 0;

  constructor(
    /** The ports of the nodes in rotation now. */
    private readonly ports: () => number[],
    private readonly apiKey: string,
    private readonly phones: string[],
  ) {}

  start(keyedClients: number, keylessClients: number): void {
    this.running = true;
    for (let index = 0; index < keyedClients; index++) this.loops.push(this.client(true));
    for (let index = 0; index < keylessClients; index++) this.loops.push(this.client(false));
  }

  /** Ends the loops once each client's send under way has its final answer. */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  private async client(keyed: boolean): Promise<void> {
    while (this.running) {
      const text = `roll-${keyed ? 'k' : 'n'}-${process.pid}-${++this.counter}`;
      const body = {
        from_phone: this.phones[randomInt(this.phones.length)],
        to_phone: `+1415555${String(1000 + randomInt(9000))}`,
        message: text,
      };
      const headers: Record<string, string> = keyed ? { 'idempotency-key': `roll-${text}` } : {};
      await this.sendUntilAnswered(text, keyed, body, headers);
      await sleep(20);
    }
  }

  private async sendUntilAnswered(text: string, keyed: boolean, body: object, headers: Record<string, string>): Promise<void> {
    for (;;) {
      let answer: Answer;
      const ports = this.ports();
      const port = ports[randomInt(ports.length)]!;
      try {
        answer = await this.post(port, body, headers);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ECONNREFUSED') {
          this.refusedConnections += 1;
          await sleep(10);
          continue;
        }
        this.failed.push({ text, keyed, what: `no answer from port ${port} at ${Date.now()}: ${(error as Error).message}` });
        return;
      }
      if (answer.status === 200 && answer.body.status === 'sent') {
        this.sent.push({ text, keyed });
        return;
      }
      if (answer.status === 503 && answer.retryAfter !== undefined && Number(answer.retryAfter) >= 1) {
        this.retriedAfter503 += 1;
        await sleep(Number(answer.retryAfter) * 1_000);
        continue;
      }
      this.failed.push({
        text,
        keyed,
        what: `${answer.status} ${JSON.stringify(answer.body)} (Retry-After ${answer.retryAfter}) from port ${port} at ${Date.now()}`,
      });
      return;
    }
  }

  /** One POST on a connection of its own, so that a refused connection is told apart from a lost answer. */
  private post(port: number, body: object, headers: Record<string, string>): Promise<Answer> {
    const payload = JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const request = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/send_message',
          agent: false,
          timeout: ANSWER_TIMEOUT_MS,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(payload),
            authorization: `Bearer ${this.apiKey}`,
            connection: 'close',
            ...headers,
          },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('error', reject);
          response.on('end', () => {
            try {
              resolve({
                status: response.statusCode ?? 0,
                retryAfter: response.headers['retry-after'],
                body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Answer['body'],
              });
            } catch (error) {
              reject(error);
            }
          });
        },
      );
      request.on('timeout', () => request.destroy(new Error(`no answer within ${ANSWER_TIMEOUT_MS} ms`)));
      request.on('error', reject);
      request.end(payload);
    });
  }
}
