/**
 * A webhook endpoint in a process of its own, as a customer's would be: it answers 204 at once
 * and reports each message's arrival time (wall clock, sub-millisecond) to its parent in batches.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const arrivals: [string, number][] = [];
const server = http.createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const at = performance.timeOrigin + performance.now();
    const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { message?: string };
    if (parsed.message !== undefined) arrivals.push([parsed.message, at]);
    response.writeHead(204).end();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.send!({ port: (server.address() as AddressInfo).port });
});
setInterval(() => {
  if (arrivals.length > 0) process.send!({ arrivals: arrivals.splice(0) });
}, 20);
process.on('disconnect', () => process.exit(0));
