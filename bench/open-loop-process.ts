/**
 * An open-loop load generator, in a process of its own. Requests go out on a fixed schedule
 * (one every 1/rate seconds) whether or not earlier ones have been answered, and each latency is
 * measured from the moment its request was due, not from when it was actually written. A server
 * that stalls for 30 ms therefore shows 30 ms of latency on every request due in that stall,
 * which a closed-loop tool (or one that waits for a free connection before starting the clock)
 * hides. Latencies are kept exactly (in microseconds), not bucketed.
 *
 * It takes one order over IPC, runs it, and reports an OpenLoopResult.
 */
import http from 'node:http';
import os from 'node:os';

export interface OpenLoopOrder {
  url: string;
  headers: Record<string, string>;
  fromPhone: string;
  text: string;
  ratePerSecond: number;
  durationSeconds: number;
  /** Run at the same rate first, unmeasured, so both sides are warm. */
  warmupSeconds: number;
}

export interface OpenLoopResult {
  scheduled: number;
  answered2xx: number;
  non2xx: number;
  errors: number;
  /** Requests still unanswered 10 s after the schedule ended (counted, and left out of the percentiles). */
  unanswered: number;
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
  /** The achieved rate of 2xx answers over the measured window. */
  answeredPerSecond: number;
  /** The machine's 1-minute load average at the end of the measured run. */
  loadAverage: number;
}

/** 90,000 distinct UK mobile numbers in turn, none of them a sandbox number, as in the autocannon runs. */
const RECIPIENT_COUNT = 90_000;
const ANSWER_WAIT_MS = 10_000;
/**
 * The schedule is checked every millisecond with a timer, not a busy loop, which would take a
 * whole core from the server on a two-core machine. A timer firing late delays requests, and that
 * delay counts against the server being measured: the bare echo measured alike shows its size.
 */
const TICK_MS = 1;

async function run(order: OpenLoopOrder): Promise<OpenLoopResult> {
  // Under the gateway's per-address connection limit (256 by default); a request waiting for a
  // socket is still timed from when it was due, so the wait counts against the server.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 128 });
  const target = new URL(order.url);
  let sent = 0;
  const send = (onDone: (status: number | null) => void) => {
    const recipient = `+4477009${10_000 + (sent++ % RECIPIENT_COUNT)}`;
    const body = JSON.stringify({ from_phone: order.fromPhone, to_phone: recipient, message: order.text });
    const request = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        agent,
        headers: { ...order.headers, 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        response.resume();
        response.once('end', () => onDone(response.statusCode ?? null));
      },
    );
    request.once('error', () => onDone(null));
    request.end(body);
  };

  const phase = (seconds: number, record: boolean) =>
    new Promise<{ latenciesUs: number[]; ok: number; non2xx: number; errors: number; scheduled: number; unanswered: number }>((resolve) => {
      const intervalNs = 1e9 / order.ratePerSecond;
      const total = Math.round(order.ratePerSecond * seconds);
      const latenciesUs: number[] = [];
      let ok = 0;
      let non2xx = 0;
      let errors = 0;
      let done = 0;
      let issued = 0;
      const startNs = process.hrtime.bigint();
      const finish = () => {
        clearTimeout(graceTimer);
        resolve({ latenciesUs, ok, non2xx, errors, scheduled: total, unanswered: total - done });
      };
      let graceTimer: NodeJS.Timeout | undefined;
      const tick = () => {
        const elapsedNs = Number(process.hrtime.bigint() - startNs);
        // Every request due by now goes out now, each timed from its own due moment.
        while (issued < total && issued * intervalNs <= elapsedNs) {
          const dueNs = startNs + BigInt(Math.round(issued * intervalNs));
          issued += 1;
          send((status) => {
            done += 1;
            if (status === null) errors += 1;
            else if (status >= 200 && status < 300) ok += 1;
            else non2xx += 1;
            if (record) latenciesUs.push(Number(process.hrtime.bigint() - dueNs) / 1_000);
            if (done === total) finish();
          });
        }
        if (issued < total) setTimeout(tick, TICK_MS);
        else graceTimer = setTimeout(finish, ANSWER_WAIT_MS);
      };
      tick();
    });

  if (order.warmupSeconds > 0) await phase(order.warmupSeconds, false);
  const measured = await phase(order.durationSeconds, true);
  agent.destroy();
  const sorted = Float64Array.from(measured.latenciesUs).sort();
  const at = (fraction: number) =>
    sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))]! / 1_000;
  return {
    scheduled: measured.scheduled,
    answered2xx: measured.ok,
    non2xx: measured.non2xx,
    errors: measured.errors,
    unanswered: measured.unanswered,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    p999Ms: at(0.999),
    maxMs: sorted.length === 0 ? Number.NaN : sorted[sorted.length - 1]! / 1_000,
    answeredPerSecond: measured.ok / order.durationSeconds,
    loadAverage: os.loadavg()[0]!,
  };
}

process.once('message', (order: OpenLoopOrder) => {
  run(order).then(
    (result) => process.send!({ result }, () => process.exit(0)),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
});
