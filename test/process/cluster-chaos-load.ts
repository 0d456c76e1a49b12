import { randomInt } from 'node:crypto';
import { sleep } from './raw-http.ts';

/** How long the load waits for one answer; a paused node never answers, so the request goes elsewhere. */
const REQUEST_TIMEOUT_MS = 3_000;
const GIVE_UP_MS = 60_000;

/**
 * The chaos test's clients: sends and simulated incoming messages spread over whichever nodes
 * are up. A send keeps its Idempotency-Key across retries on other nodes until it is answered
 * 200, which is what makes retrying safe; an incoming message is counted only when answered 200.
 */
export class ChaosLoad {
  readonly sent: string[] = [];
  /** Sends cut off after the engine may have taken them: never repeated, so at most once on the network. */
  readonly unknown: string[] = [];
  readonly received: string[] = [];
  private running = false;
  private loops: Promise<void>[] = [];
  private counter = 0;

  constructor(
    private readonly livePorts: () => number[],
    private readonly apiKey: string,
    private readonly phones: string[],
  ) {}

  start(): void {
    this.running = true;
    this.loops = [this.sendLoop(), this.sendLoop(), this.receiveLoop()];
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  private async sendLoop(): Promise<void> {
    while (this.running) {
      const n = ++this.counter;
      const text = `load-${process.pid}-${n}`;
      const body = { from_phone: this.phones[randomInt(this.phones.length)], to_phone: `+1415555${String(1000 + (n % 9000)).padStart(4, '0')}`, message: text };
      const startedAt = Date.now();
      for (;;) {
        const answer = await this.postForBody('/send_message', body, { 'idempotency-key': `chaos-${text}` }).catch(() => undefined);
        if (answer?.status === 200) {
          this.sent.push(text);
          break;
        }
        if ((answer?.body as { error?: string } | undefined)?.error === 'send_outcome_unknown') {
          this.unknown.push(text);
          break;
        }
        const status = answer?.status ?? 0;
        if (Date.now() - startedAt > GIVE_UP_MS) throw new Error(`a send was never answered 200 (last: ${status})`);
        if (!this.running && Date.now() - startedAt > REQUEST_TIMEOUT_MS * 2) return;
        await sleep(200);
      }
      await sleep(50);
    }
  }

  private async receiveLoop(): Promise<void> {
    while (this.running) {
      const n = ++this.counter;
      const body = { from_phone: `+1415556${String(1000 + (n % 9000)).padStart(4, '0')}`, to_phone: this.phones[randomInt(this.phones.length)], message: `in-${n}` };
      const answer = await this.postForBody('/sandbox/receive', body).catch(() => undefined);
      if (answer?.status === 200) this.received.push((answer.body as { message_id: string }).message_id);
      await sleep(answer?.status === 200 ? 50 : 200);
    }
  }

  private async postForBody(path: string, body: object, headers: Record<string, string> = {}): Promise<{ status: number; body: unknown }> {
    const ports = this.livePorts();
    const port = ports[randomInt(ports.length)];
    const response = await fetch(`http://127.0.0.1:${port}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${this.apiKey}`, ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    return { status: response.status, body: await response.json() };
  }
}
