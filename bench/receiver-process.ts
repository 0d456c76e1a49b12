/**
 * A webhook endpoint in a process of its own, as a customer's would be. By default it answers
 * 204 at once and reports each message's arrival time (wall clock, sub-millisecond) to its
 * parent in batches. Started with the argument `hang`, it reads each request and never answers,
 * as an endpoint stuck behind a dead upstream would; the gateway's timeout is what ends them.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const hang = process.argv[2] === 'hang';
const arrivals: [string, number][] = [];
let hungRequests = 0;
let openHungRequests = 0;
let mostHungAtOnce = 0;
let hungRequestsReported = 0;

const server = http.createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    if (hang) {
      hungRequests += 1;
      openHungRequests += 1;
      mostHungAtOnce = Math.max(mostHungAtOnce, openHungRequests);
      response.once('close', () => {
        openHungRequests -= 1;
      });
      return;
    }
    const at = performance.timeOrigin + performance.now();
    const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { message?: string };
    if (parsed.message !== undefined) arrivals.push([parsed.message, at]);
    response.writeHead(204).end();
  });
});
server.keepAliveTimeout = 60_000;
// A hanging endpoint holds requests for as long as the gateway waits; Node's own request
// timeout would otherwise answer 408 for it after five minutes.
server.requestTimeout = 0;
server.listen(0, '127.0.0.1', () => {
  process.send!({ port: (server.address() as AddressInfo).port });
});
setInterval(() => {
  if (arrivals.length > 0) process.send!({ arrivals: arrivals.splice(0) });
  if (hungRequests !== hungRequestsReported) {
    hungRequestsReported = hungRequests;
    process.send!({ hungRequests, mostHungAtOnce });
  }
}, 20);
process.on('disconnect', () => process.exit(0));
