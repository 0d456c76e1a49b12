import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createTestDatabase } from '../../support/databases.ts';
import { request } from '../raw-http.ts';
import { freePort, killAllServerProcesses, seedDatabase, startServerProcess } from '../server-process.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** Runs `wagw serve` to its end and returns how it ended and what it said. */
async function serveUntilExit(databaseUrl: string): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }> {
  const child = spawn(process.execPath, [path.join(ROOT, 'bin/wagw'), 'serve'], {
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: databaseUrl,
      PORT: String(await freePort()),
      LOG_LEVEL: 'warn',
      WAGW_SECRET_KEY: '7e57'.repeat(16),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.once('exit', (exitCode, exitSignal) => resolve([exitCode, exitSignal])),
  );
  return { code, signal, output };
}

describe('SQLite serves a single node', () => {
  after(() => killAllServerProcesses());

  it('refuses a second server on the same file with the reason, and serves at once after a crash of the first', async () => {
    const database = await createTestDatabase('sqlite');
    try {
      const seeded = await seedDatabase(database.url);
      const first = await startServerProcess(database.url, { WAGW_SECRET_KEY: '7e57'.repeat(16) });
      const second = await serveUntilExit(database.url);
      assert.equal(second.code, 1, `exit ${second.code}, signal ${second.signal}:\n${second.output}`);
      assert.match(second.output, /Another wa-gateway server \(node .+, pid \d+ on .+\) is running on this SQLite database/);
      assert.match(second.output, /SQLite serves one node: stop that server first, or run several nodes on PostgreSQL/);
      assert.doesNotMatch(second.output, /\n\s+at /, 'a clear message, not a stack trace');
      // The first server was not disturbed.
      const send = (port: number) =>
        request(port, {
          method: 'POST',
          path: '/send_message',
          apiKey: seeded.apiKey,
          body: { from_phone: seeded.phones[0], to_phone: '+14155550100', message: 'still here' },
        });
      assert.equal((await send(first.port)).statusCode, 200);

      // After kill -9 the dead server's leases end at its successor's start: no TTL to wait out.
      first.signalGroup('SIGKILL');
      await first.exited;
      const successor = await startServerProcess(database.url, { WAGW_SECRET_KEY: '7e57'.repeat(16) });
      const answer = await send(successor.port);
      assert.equal(answer.statusCode, 200, answer.body);
    } finally {
      await killAllServerProcesses();
      await database.drop();
    }
  });
});
