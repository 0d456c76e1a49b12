import { randomInt } from 'node:crypto';
import { sleep } from './raw-http.ts';

/** How long the load waits for one answer; a paused node never answers, so the request goes elsewhere. */
const REQUEST_TIMEOUT_MS = 3_000;
/** How long a timed send waits for its answer: long enough to measure an answer that came too late. */
const TIMED_REQUEST_TIMEOUT_MS = 15_000;
const GIVE_UP_MS = 60_000;

interface Answer {
  status: number;
  body: unknown;
}

/** The first answer to a send made through a chosen node, and how long it took. */
export interface TimedAnswer {
  port: number;
  status: number;
  error: string | undefined;
  ms: number;
}

/** A send answered 200 from one of the gateway's numbers to another. */
export interface NumberToNumberSend {
  text: string;
  toPhone: string;
}

/**
 * The chaos test's clients: sends and simulated incoming messages spread over whichever nodes
 * are up. A send keeps its Idempotency-Key across retries on other nodes until it is answered
 * 200, which is what makes retrying safe; an incoming message is counted only when answered 200.
 * Some sends go from one of the gateway's numbers to another, so that the receiving number's
 * node stores them as incoming messages.
 */
export class ChaosLoad {
  readonly sent: string[] = [];
  /** Sends cut off after the engine may have taken them: never repeated, so at most once on the network. */
  readonly unknown: string[] = [];
  readonly received: string[] = [];
  readonly numberToNumber: NumberToNumberSend[] = [];
  /** Answers 200 by port: which nodes served the load. */
  readonly answeredBy = new Map<number, number>();
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
    this.loops = [this.sendLoop(), this.sendLoop(), this.numberToNumberLoop(), this.receiveLoop()];
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  /**
   * A keyed send from `fromPhone` made through the node at `port`, timed from the request to
   * its first answer, whatever that is. Until answered 200 it is then retried with its key
   * through any live node, as every send of the load is.
   */
  timedSend(port: number, fromPhone: string): Promise<TimedAnswer> {
    const { text, body, key } = this.nextSend(fromPhone, `+1415557${String(1000 + randomInt(9000))}`, 'timed');
    const startedAt = Date.now();
    const first = this.postForBody(port, '/send_message', body, { 'idempotency-key': key }, TIMED_REQUEST_TIMEOUT_MS).catch(
      () => undefined,
    );
    const timed = first.then((answer) => ({ port, status: answer?.status ?? 0, error: errorCodeOf(answer), ms: Date.now() - startedAt }));
    this.loops.push(first.then(async (answer) => void (await this.settle(answer, text, body, key, startedAt))));
    return timed;
  }

  private async sendLoop(): Promise<void> {
    while (this.running) {
      const { text, body, key } = this.nextSend(
        this.phones[randomInt(this.phones.length)]!,
        `+1415555${String(1000 + (this.counter % 9000)).padStart(4, '0')}`,
        'load',
      );
      await this.sendUntilAnswered(text, body, key);
      await sleep(50);
    }
  }

  private async numberToNumberLoop(): Promise<void> {
    while (this.running) {
      const from = randomInt(this.phones.length);
      const toPhone = this.phones[(from + 1 + randomInt(this.phones.length - 1)) % this.phones.length]!;
      const { text, body, key } = this.nextSend(this.phones[from]!, toPhone, 'n2n');
      if (await this.sendUntilAnswered(text, body, key)) this.numberToNumber.push({ text, toPhone });
      await sleep(100);
    }
  }

  private nextSend(fromPhone: string, toPhone: string, prefix: string) {
    const text = `${prefix}-${process.pid}-${++this.counter}`;
    return { text, body: { from_phone: fromPhone, to_phone: toPhone, message: text }, key: `chaos-${text}` };
  }

  /** Sends until answered 200 (true) or with an unknown outcome, retrying through any live node. */
  private async sendUntilAnswered(text: string, body: object, key: string): Promise<boolean> {
    const startedAt = Date.now();
    const answer = await this.postToAnyNode('/send_message', body, { 'idempotency-key': key }).catch(() => undefined);
    return this.settle(answer, text, body, key, startedAt);
  }

  private async settle(first: Answer | undefined, text: string, body: object, key: string, startedAt: number): Promise<boolean> {
    for (let answer = first; ; ) {
      if (answer?.status === 200) {
        this.sent.push(text);
        return true;
      }
      if (errorCodeOf(answer) === 'send_outcome_unknown') {
        this.unknown.push(text);
        return false;
      }
      if (Date.now() - startedAt > GIVE_UP_MS) throw new Error(`a send was never answered 200 (last: ${answer?.status ?? 0})`);
      if (!this.running && Date.now() - startedAt > REQUEST_TIMEOUT_MS * 2) return false;
      await sleep(200);
      answer = await this.postToAnyNode('/send_message', body, { 'idempotency-key': key }).catch(() => undefined);
    }
  }

  private async receiveLoop(): Promise<void> {
    while (this.running) {
      const n = ++this.counter;
      const body = {
        from_phone: `+1415556${String(1000 + (n % 9000)).padStart(4, '0')}`,
        to_phone: this.phones[randomInt(this.phones.length)],
        message: `in-${n}`,
      };
      const answer = await this.postToAnyNode('/sandbox/receive', body).catch(() => undefined);
      if (answer?.status === 200) this.received.push((answer.body as { message_id: string }).message_id);
      await sleep(answer?.status === 200 ? 50 : 200);
    }
  }

  private postToAnyNode(path: string, body: object, headers: Record<string, string> = {}): Promise<Answer> {
    const ports = this.livePorts();
    return this.postForBody(ports[randomInt(ports.length)]!, path, body, headers, REQUEST_TIMEOUT_MS);
  }

  private async postForBody(port: number, path: string, body: object, headers: Record<string, string>, timeoutMs: number): Promise<Answer> {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${this.apiKey}`, ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const answer = { status: response.status, body: await response.json() };
    if (answer.status === 200) this.answeredBy.set(port, (this.answeredBy.get(port) ?? 0) + 1);
    return answer;
  }
}

function errorCodeOf(answer: Answer | undefined): string | undefined {
  return (answer?.body as { error?: string } | undefined)?.error;
}
