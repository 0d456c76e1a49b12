/**
 * An open-loop load generator in a process of its own, so that making requests does not take
 * CPU from the gateway it measures. It POSTs /sandbox/receive at a fixed rate and reports when
 * each request left and when its answer came (wall clock, sub-millisecond).
 */
import http from 'node:http';

interface LoadOrder {
  port: number;
  apiKey: string;
  toPhone: string;
  ratePerSecond: number;
  total: number;
}

process.once('message', (order: LoadOrder) => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const now = () => performance.timeOrigin + performance.now();
  const tickMs = 5;
  const started = performance.now();
  let sent = 0;
  let answered = 0;
  const report: { text: string; sentAt: number; answeredAt: number; status: number }[] = [];
  const tick = () => {
    const due = Math.min(order.total, Math.floor(((performance.now() - started) * order.ratePerSecond) / 1000) + 1);
    while (sent < due) {
      const text = `bench-${sent}`;
      const sentAt = now();
      sent += 1;
      const request = http.request({
        host: '127.0.0.1',
        port: order.port,
        path: '/sandbox/receive',
        method: 'POST',
        agent,
        headers: { authorization: `Bearer ${order.apiKey}`, 'content-type': 'application/json' },
      });
      request.on('response', (response) => {
        response.resume();
        response.on('end', () => {
          report.push({ text, sentAt, answeredAt: now(), status: response.statusCode ?? 0 });
          answered += 1;
          if (answered === order.total) {
            process.send!({ report }, () => process.exit(0));
          }
        });
      });
      request.end(JSON.stringify({ from_phone: '+14155550100', to_phone: order.toPhone, message: text }));
    }
    if (sent < order.total) setTimeout(tick, tickMs);
  };
  tick();
});
