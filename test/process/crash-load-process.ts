/**
 * The load of the crash rounds, in a process of its own so that it outlives every server it is
 * aimed at and does not take the test process's event loop. Driven over IPC:
 *
 *   parent → {type: 'start', ...LoadOrder}   begin a round against a server
 *   child  → {type: 'flowing'}                both kinds have had `flowingAfter` 200s this round
 *   parent → {type: 'stop'}                   the server is dead: start nothing new
 *   child  → {type: 'ledger', entries}        once every request of the round has settled
 *
 * Each request carries a text used nowhere else, so the rows the server stored can be matched
 * to the requests that caused them, and the ledger says what each request was told.
 */
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

export interface LoadOrder {
  port: number;
  apiKey: string;
  round: number;
  /** Sends go from `senderPhone` to `recipientPhone`; incoming messages arrive on `recipientPhone`. */
  senderPhone: string;
  recipientPhone: string;
  /** The outside phone the simulated incoming messages come from. */
  strangerPhone: string;
  /** Requests kept in flight per kind, each loop starting its next request as soon as one ends. */
  loopsPerKind: number;
  /** How many 200s of each kind make the round's load count as flowing. */
  flowingAfter: number;
}

export type LoadKind = 'send' | 'receive';

/**
 * What one request was told. `answered` carries the HTTP status (and the message id of a 200);
 * `refused` never reached a server; `cut_off` was on a connection that broke before an answer,
 * so the server may or may not have acted on it.
 */
export type LedgerEntry =
  | { kind: LoadKind; text: string; outcome: 'answered'; statusCode: number; messageId: string | null; body?: string }
  | { kind: LoadKind; text: string; outcome: 'refused' | 'cut_off'; error: string };

export type LoadCommand = ({ type: 'start' } & LoadOrder) | { type: 'stop' };
export type LoadReport = { type: 'flowing' } | { type: 'ledger'; entries: LedgerEntry[] };

const REQUEST_TIMEOUT_MS = 15_000;
/** After a connection error, the loop waits this long, so a dead server is not hammered. */
const ERROR_PAUSE_MS = 20;

let agent = new http.Agent({ keepAlive: true });
let running = false;
let loops: Promise<void>[] = [];
let entries: LedgerEntry[] = [];

function post(order: LoadOrder, kind: LoadKind, text: string): Promise<LedgerEntry> {
  const path = kind === 'send' ? '/send_message' : '/sandbox/receive';
  const body =
    kind === 'send'
      ? { from_phone: order.senderPhone, to_phone: order.recipientPhone, message: text }
      : { from_phone: order.strangerPhone, to_phone: order.recipientPhone, message: text };
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise((resolve) => {
    const request = http.request(
      {
        host: '127.0.0.1',
        port: order.port,
        method: 'POST',
        path,
        agent,
        timeout: REQUEST_TIMEOUT_MS,
        headers: { authorization: `Bearer ${order.apiKey}`, 'content-type': 'application/json', 'content-length': payload.length },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', (error) => resolve({ kind, text, outcome: 'cut_off', error: error.message }));
        response.on('end', () => {
          const statusCode = response.statusCode ?? 0;
          const body = Buffer.concat(chunks).toString('utf8');
          if (statusCode !== 200) {
            // A refusal keeps its body, so a failed round names the error code it was given.
            resolve({ kind, text, outcome: 'answered', statusCode, messageId: null, body });
            return;
          }
          resolve({ kind, text, outcome: 'answered', statusCode, messageId: (JSON.parse(body) as { message_id: string }).message_id });
        });
      },
    );
    request.on('timeout', () => request.destroy(new Error('no answer in time')));
    request.on('error', (error: NodeJS.ErrnoException) =>
      resolve({
        kind,
        text,
        outcome: error.code === 'ECONNREFUSED' ? 'refused' : 'cut_off',
        error: `${error.code ?? ''} ${error.message}`.trim(),
      }),
    );
    request.end(payload);
  });
}

async function loop(order: LoadOrder, kind: LoadKind, loopIndex: number, onAnswered: (kind: LoadKind) => void): Promise<void> {
  for (let count = 0; running; count++) {
    const entry = await post(order, kind, `round-${order.round}-${kind}-${loopIndex}-${count}`);
    entries.push(entry);
    if (entry.outcome === 'answered' && entry.statusCode === 200) onAnswered(kind);
    if (entry.outcome !== 'answered') await sleep(ERROR_PAUSE_MS);
  }
}

function start(order: LoadOrder): void {
  running = true;
  entries = [];
  agent = new http.Agent({ keepAlive: true });
  const answered: Record<LoadKind, number> = { send: 0, receive: 0 };
  let flowing = false;
  const onAnswered = (kind: LoadKind) => {
    answered[kind] += 1;
    if (!flowing && answered.send >= order.flowingAfter && answered.receive >= order.flowingAfter) {
      flowing = true;
      process.send!({ type: 'flowing' } satisfies LoadReport);
    }
  };
  loops = (['send', 'receive'] as const).flatMap((kind) =>
    Array.from({ length: order.loopsPerKind }, (_, index) => loop(order, kind, index, onAnswered)),
  );
}

async function stop(): Promise<void> {
  running = false;
  await Promise.all(loops);
  // Connections to the dead server are of no use to the next round.
  agent.destroy();
  process.send!({ type: 'ledger', entries } satisfies LoadReport);
}

process.on('message', (command: LoadCommand) => {
  if (command.type === 'start') start(command);
  else void stop();
});
// The test process is gone or done: so is its load.
process.on('disconnect', () => process.exit(0));
