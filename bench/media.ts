/**
 * npm run bench:media
 *
 * Media against a ceiling, per dialect, in one run on one machine:
 * 1. upload throughput: POST /media of 1 MiB files, 8 at a time, against a bare Fastify route
 *    that streams the body to a file and fsyncs it (bench/media-ceiling-server.ts);
 * 2. download throughput: GET /media/{id} of a 1 MiB file, 8 at a time, against @fastify/static
 *    serving a file of the same size from the same kind of disk;
 * 3. memory, measured first on the fresh process: the gateway's resident set while 20 clients
 *    each upload 16 MiB at once, against its resident set just before (whole-file buffering
 *    would add 320 MiB);
 * 4. media sends: POST /send_message with a 100 KiB image by media.id, against text sends, both
 *    for the same time at the same concurrency.
 * Results replace the media section of docs/benchmarks.md.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.ts';
import { operatorScope } from '../src/domain/tenant-scope.ts';
import { createGateway, createLogger } from '../src/main.ts';
import { createTestDatabase, type Dialect, type TestDatabase } from '../test/support/databases.ts';
import {
  BENCH_SECRET_KEY,
  currentCommit,
  machineDescription,
  startForkedServer,
  startGatewayProcess,
  writeReportSection,
} from './support.ts';
import { ignoreCleanupFailure } from '../test/support/ignore.ts';

const MIB = 1024 * 1024;
const CONCURRENCY = 8;
const TRANSFERS = Number(process.env.BENCH_MEDIA_TRANSFERS ?? 160);
const SEND_SECONDS = 8;
const SENDER = '+447700900001';
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** Bytes that sniff as a PDF, so that every upload is a document whatever its size. */
function pdfOfSize(size: number): Buffer {
  const bytes = randomBytes(size);
  Buffer.from('%PDF-1.7\n').copy(bytes);
  return bytes;
}

function jpegOfSize(size: number): Buffer {
  const bytes = randomBytes(size);
  Buffer.from('ffd8ffe000104a46494600010100000100010000', 'hex').copy(bytes);
  return bytes;
}

interface Answer {
  status: number;
  body: Buffer;
}

function request(port: number, method: string, url: string, headers: Record<string, string>, body?: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = http.request({ host: '127.0.0.1', port, method, path: url, headers, agent }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks) }));
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** `count` calls of `call`, `concurrency` at a time; the rate of bytes moved, in MiB/s. */
async function throughput(
  count: number,
  concurrency: number,
  bytesEach: number,
  call: (index: number) => Promise<Answer>,
  expected: number,
): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const answer = await call(next++);
        if (answer.status !== expected)
          throw new Error(`expected ${expected}, got ${answer.status}: ${answer.body.subarray(0, 300).toString()}`);
      }
    }),
  );
  return (count * bytesEach) / MIB / ((performance.now() - started) / 1000);
}

/** Requests answered in `seconds`, `concurrency` at a time. */
async function rate(seconds: number, concurrency: number, call: (index: number) => Promise<Answer>): Promise<number> {
  let done = 0;
  let index = 0;
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        const answer = await call(index++);
        if (answer.status !== 200) throw new Error(`a send answered ${answer.status}: ${answer.body.subarray(0, 300).toString()}`);
        done += 1;
      }
    }),
  );
  return done / seconds;
}

function residentBytes(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

interface DialectResult {
  dialect: Dialect;
  uploadMiBs: number;
  ceilingUploadMiBs: number;
  downloadMiBs: number;
  ceilingDownloadMiBs: number;
  rssBeforeMiB: number;
  rssPeakMiB: number;
  mediaSendsPerSecond: number;
  textSendsPerSecond: number;
}

async function benchmark(dialect: Dialect): Promise<DialectResult> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), `wagw-bench-media-${dialect}-`));
  const databases: TestDatabase[] = [];
  const database = await createTestDatabase(dialect);
  databases.push(database);
  const config = loadConfig({
    DATABASE_URL: database.url,
    LOG_LEVEL: 'silent',
    WAGW_SECRET_KEY: BENCH_SECRET_KEY,
    WAGW_MEDIA_DIR: path.join(directory, 'media'),
  });
  const seeding = await createGateway(config, createLogger(config));
  const account = await seeding.accounts.createAccount({ name: 'bench', plan: 'enterprise' });
  await seeding.numbers.addNumber(operatorScope(), { accountId: account.id, phone: SENDER });
  const key = (await seeding.apiKeys.createKey({ accountId: account.id, name: 'bench' })).plaintext;
  await seeding.close();

  const ceiling = await startForkedServer('bench/media-ceiling-server.ts');
  const gateway = await startGatewayProcess({
    databaseUrl: database.url,
    directory,
    env: { LOG_LEVEL: 'warn', WAGW_MEDIA_DIR: path.join(directory, 'media') },
  });
  const auth = { authorization: `Bearer ${key}` };
  try {
    // First, on a fresh process: twenty 16 MiB uploads at once, each of different bytes, with the
    // resident set sampled, against the resident set after one small upload.
    await request(gateway.port, 'POST', '/media', { ...auth, 'content-type': 'application/pdf' }, pdfOfSize(1024));
    const big = Array.from({ length: 20 }, () => pdfOfSize(16 * MIB));
    const rssBefore = residentBytes(gateway.pid);
    let rssPeak = rssBefore;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, residentBytes(gateway.pid))), 20);
    const answers = await Promise.all(
      big.map((bytes) => request(gateway.port, 'POST', '/media', { ...auth, 'content-type': 'application/pdf' }, bytes)),
    );
    clearInterval(sampler);
    if (answers.some((answer) => answer.status !== 201)) throw new Error('a 16 MiB upload was refused');

    const files = Array.from({ length: 8 }, () => pdfOfSize(MIB));
    const upload = (index: number) =>
      request(gateway.port, 'POST', '/media', { ...auth, 'content-type': 'application/pdf' }, files[index % files.length]);
    const ceilingUpload = (index: number) =>
      request(ceiling.port, 'POST', '/upload', { 'content-type': 'application/pdf' }, files[index % files.length]);
    // Warm both up, then measure them back to back.
    await throughput(16, CONCURRENCY, MIB, upload, 201);
    await throughput(16, CONCURRENCY, MIB, ceilingUpload, 201);
    const uploadMiBs = await throughput(TRANSFERS, CONCURRENCY, MIB, upload, 201);
    const ceilingUploadMiBs = await throughput(TRANSFERS, CONCURRENCY, MIB, ceilingUpload, 201);

    const stored = JSON.parse((await upload(0)).body.toString()).media_id as string;
    const ceilingFile = JSON.parse((await ceilingUpload(0)).body.toString()).name as string;
    const download = () => request(gateway.port, 'GET', `/media/${stored}`, auth);
    const ceilingDownload = () => request(ceiling.port, 'GET', `/files/${ceilingFile}`, {});
    await throughput(32, CONCURRENCY, MIB, download, 200);
    await throughput(32, CONCURRENCY, MIB, ceilingDownload, 200);
    const downloadMiBs = await throughput(TRANSFERS * 2, CONCURRENCY, MIB, download, 200);
    const ceilingDownloadMiBs = await throughput(TRANSFERS * 2, CONCURRENCY, MIB, ceilingDownload, 200);

    const image = JSON.parse(
      (await request(gateway.port, 'POST', '/media', { ...auth, 'content-type': 'image/jpeg' }, jpegOfSize(100 * 1024))).body.toString(),
    ).media_id as string;
    const send = (index: number, media: boolean) =>
      request(
        gateway.port,
        'POST',
        '/send_message',
        { ...auth, 'content-type': 'application/json' },
        Buffer.from(
          JSON.stringify({
            from_phone: SENDER,
            to_phone: `+1415555${String(index % 10_000).padStart(4, '0')}`,
            message: 'caption',
            ...(media && { media: { id: image } }),
          }),
        ),
      );
    await rate(2, 32, (index) => send(index, true));
    const mediaSendsPerSecond = await rate(SEND_SECONDS, 32, (index) => send(index, true));
    const textSendsPerSecond = await rate(SEND_SECONDS, 32, (index) => send(index, false));
    const result = {
      dialect,
      uploadMiBs,
      ceilingUploadMiBs,
      downloadMiBs,
      ceilingDownloadMiBs,
      rssBeforeMiB: rssBefore / MIB,
      rssPeakMiB: rssPeak / MIB,
      mediaSendsPerSecond,
      textSendsPerSecond,
    };
    console.log(JSON.stringify(result));
    return result;
  } finally {
    await gateway.stop().catch(ignoreCleanupFailure);
    await ceiling.stop();
    for (const each of databases) await each.drop();
    fs.rmSync(directory, { recursive: true, force: true });
  }
}

const results: DialectResult[] = [];
for (const dialect of (process.env.BENCH_DIALECTS?.split(',') ?? ['sqlite', 'postgres']) as Dialect[])
  results.push(await benchmark(dialect));

const ratio = (ours: number, ceiling: number) => (ours / ceiling).toFixed(2);
writeReportSection(
  'bench:media',
  `## Media (\`npm run bench:media\`)

Measured ${new Date().toISOString().slice(0, 10)} at commit \`${currentCommit()}\` on ${machineDescription()}.
Every figure of a row comes from one run; the gateway runs as \`wagw serve\` in a process of its own.

| database | upload, 1 MiB files, 8 at once | bare streaming upload with fsync | ratio | download, 1 MiB, 8 at once | @fastify/static | ratio |
|---|---|---|---|---|---|---|
${results.map((r) => `| ${r.dialect} | ${r.uploadMiBs.toFixed(0)} MiB/s | ${r.ceilingUploadMiBs.toFixed(0)} MiB/s | ${ratio(r.uploadMiBs, r.ceilingUploadMiBs)} | ${r.downloadMiBs.toFixed(0)} MiB/s | ${r.ceilingDownloadMiBs.toFixed(0)} MiB/s | ${ratio(r.downloadMiBs, r.ceilingDownloadMiBs)} |`).join('\n')}

| database | resident set before / peak while 20 clients upload 16 MiB each | growth | media sends (100 KiB image by id) | text sends, same run | ratio |
|---|---|---|---|---|---|
${results.map((r) => `| ${r.dialect} | ${r.rssBeforeMiB.toFixed(0)} / ${r.rssPeakMiB.toFixed(0)} MiB | ${(r.rssPeakMiB - r.rssBeforeMiB).toFixed(0)} MiB (the 320 MiB uploaded are never held) | ${r.mediaSendsPerSecond.toFixed(0)} /s | ${r.textSendsPerSecond.toFixed(0)} /s | ${ratio(r.mediaSendsPerSecond, r.textSendsPerSecond)} |`).join('\n')}

An upload sniffs, hashes and fsyncs its file, renames it into place and writes its row; the
ceiling only streams and fsyncs. A download checks the key and the row, then streams the file
as the static route does. Media sends go to phones outside the sandbox, for which the sandbox
engine does not read the file (their handsets acknowledge without it); a send by \`media.id\`
costs a lookup of the media row and the update of its retention more than a text send.`,
);
process.exit(0);
