/**
 * Autocannon in a process of its own, so that generating load does not take the event loop of
 * the benchmark's own process. It takes its orders over IPC, runs once and reports autocannon's
 * result. Each request's body is a send to a different recipient, as real traffic is, so that
 * nothing keyed by the recipient is warmer than it would be in production.
 */
import autocannon from 'autocannon';

export interface AutocannonOrder {
  url: string;
  headers: Record<string, string>;
  fromPhone: string;
  text: string;
  /** Sends to this group instead of a different phone each time. */
  toGroup?: string;
  /**
   * Simulated incoming messages (POST /sandbox/receive) to this sandbox number instead of sends,
   * each from a different phone; `fromPhone` is then unused.
   */
  incomingTo?: string;
  connections: number;
  /** How long to run; or, with `amount`, how many requests to answer, however long they take. */
  durationSeconds?: number;
  amount?: number;
  overallRate?: number;
}

/** 90,000 distinct UK mobile numbers, none of them a sandbox number; the sandbox sends nowhere. */
const RECIPIENT_COUNT = 90_000;

process.once('message', (order: AutocannonOrder) => {
  let sent = 0;
  const instance = autocannon(
    {
      url: order.url,
      connections: order.connections,
      ...(order.amount === undefined ? { duration: order.durationSeconds } : { amount: order.amount }),
      ...(order.overallRate !== undefined && { overallRate: Math.max(1, Math.round(order.overallRate)) }),
      requests: [
        {
          method: 'POST',
          headers: order.headers,
          setupRequest: (request) => {
            if (order.incomingTo !== undefined) {
              const stranger = `+4477009${10_000 + (sent++ % RECIPIENT_COUNT)}`;
              return { ...request, body: JSON.stringify({ from_phone: stranger, to_phone: order.incomingTo, message: order.text }) };
            }
            const recipient =
              order.toGroup === undefined ? { to_phone: `+4477009${10_000 + (sent++ % RECIPIENT_COUNT)}` } : { to_group: order.toGroup };
            return { ...request, body: JSON.stringify({ from_phone: order.fromPhone, ...recipient, message: order.text }) };
          },
        },
      ],
    },
    (error, result) => {
      if (error) {
        console.error(error);
        process.exit(1);
      }
      process.send!({ result }, () => process.exit(0));
    },
  );
  process.once('disconnect', () => instance.stop());
});
