/**
 * The ceiling for the send benchmark: a bare Fastify app with one POST route that parses the
 * same JSON body as /send_message and answers the same shape of JSON, of the same size, with
 * no authentication, no validation, no database and no logging. Whatever the gateway does on
 * top of this is the price of its promises. Started by bench/send.ts, it reports its port over
 * IPC and exits when its parent disconnects.
 */
import Fastify from 'fastify';
import type { AddressInfo } from 'node:net';
import { monotonicFactory } from 'ulid';

interface SendBody {
  from_phone: string;
  to_phone: string;
  message: string;
}

const nextUlid = monotonicFactory();
const app = Fastify({ logger: false });

app.post<{ Body: SendBody }>('/send_message', async (request) => ({
  message_id: `msg_${nextUlid().toLowerCase()}`,
  created_at: new Date().toISOString(),
  from_phone: request.body.from_phone,
  to_phone: request.body.to_phone,
  message: request.body.message,
  status: 'sent',
}));

await app.listen({ host: '127.0.0.1', port: 0 });
process.send!({ port: (app.server.address() as AddressInfo).port });
process.on('disconnect', () => void app.close().then(() => process.exit(0)));
