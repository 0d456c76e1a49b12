/**
 * An open-loop load generator in a process of its own, so that making requests does not take
 * CPU from the gateway it measures. It POSTs /sandbox/receive at a fixed rate and reports when
 * each request was due by the schedule (not when it got out, so a stall on either side counts)
 * and when its answer came (wall clock, sub-millisecond).
 */
import http from 'node:http';

export interface LoadOrder {
  port: number;
  apiKey: string;
  toPhone: string;
  ratePerSecond: number;
  total: number;
  /** Starts each message's text, so that two runs against one gateway tell their messages apart. */
  prefix?: string;
}

process.once('message', (order: LoadOrder) => {
  // Under the gateway's per-address connection limit (256 by default); a request waiting for a
  // socket is still timed from when it was due.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 128 });
  const now = () => performance.timeOrigin + performance.now();
  const tickMs = 1;
  const started = performance.now();
  let sent = 0;
  let answered = 0;
  const report: { text: string; sentAt: number; answeredAt: number; status: number }[] = [];
  const tick = () => {
    const due = Math.min(order.total, Math.floor(((performance.now() - started) * order.ratePerSecond) / 1000) + 1);
    // Request n is due at started + n / rate; all that are due go out now.
    while (sent < due) {
      const text = `${order.prefix ?? 'bench'}-${sent}`;
      const sentAt = performance.timeOrigin + started + (sent * 1000) / order.ratePerSecond;
      sent += 1;
      const request = http.request({
        host: '127.0.0.1',
        port: order.port,
        path: '/sandbox/receive',
        method: 'POST',
        agent,
        headers: { authorization: `Bearer ${order.apiKey}`, 'content-type': 'application/json' },
      });
      const settle = (status: number) => {
        report.push({ text, sentAt, answeredAt: now(), status });
        answered += 1;
        if (answered === order.total) process.send!({ report }, () => process.exit(0));
      };
      // A failed connection is reported as status 0, never left to hang the run.
      request.on('error', () => settle(0));
      request.on('response', (response) => {
        response.resume();
        response.on('end', () => settle(response.statusCode ?? 0));
      });
      request.end(JSON.stringify({ from_phone: '+14155550100', to_phone: order.toPhone, message: text }));
    }
    if (sent < order.total) setTimeout(tick, tickMs);
  };
  tick();
});
