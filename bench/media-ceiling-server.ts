/**
 * The ceiling for the media benchmark: a bare Fastify app that does the least a durable upload
 * and a download can do. POST /upload streams the body to a file and fsyncs it; GET /files/:name
 * serves a file with @fastify/static. No authentication, sniffing, hashing or database. Started
 * by bench/media.ts, it reports its port over IPC and exits when its parent disconnects.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { AddressInfo } from 'node:net';
import fastifyStatic from '@fastify/static';
import Fastify from 'fastify';

const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'wagw-bench-media-ceiling-'));
const app = Fastify({ logger: false, bodyLimit: 200 * 1024 * 1024 });
app.removeAllContentTypeParsers();
app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
await app.register(fastifyStatic, { root: directory, prefix: '/files/' });

let uploads = 0;
app.post('/upload', async (request, reply) => {
  const file = path.join(directory, `upload-${++uploads}`);
  await pipeline(request.body as NodeJS.ReadableStream, fs.createWriteStream(file));
  const handle = await fs.promises.open(file, 'r');
  await handle.sync();
  await handle.close();
  return reply.status(201).send({ name: path.basename(file) });
});

await app.listen({ host: '127.0.0.1', port: 0 });
process.send!({ port: (app.server.address() as AddressInfo).port });
process.on(
  'disconnect',
  () =>
    void app.close().then(() => {
      fs.rmSync(directory, { recursive: true, force: true });
      process.exit(0);
    }),
);
