import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { createTestDatabase } from '../support/databases.ts';
import { sleep, waitFor } from './raw-http.ts';
import { killAllServerProcesses, openDatabase, startServerProcess, type ServerProcess } from './server-process.ts';
import { ignoreCutOff } from '../support/ignore.ts';

const PASSWORD_LINE = /Password \(shown once\): /g;

/**
 * How many of the servers printed the operator's password. A server makes the operator just
 * after it starts listening, so this waits for the first one to print it, and a moment more for
 * any other that might.
 */
async function passwordsPrinted(servers: readonly ServerProcess[]): Promise<number> {
  const count = () => servers.reduce((total, server) => total + (server.output().match(PASSWORD_LINE)?.length ?? 0), 0);
  await waitFor(() => count() > 0, 10_000, 'the operator password to be printed').catch(ignoreCutOff);
  await sleep(1_000);
  return count();
}

describe('nodes started together on an empty database (postgres)', { timeout: 180_000 }, () => {
  after(() => killAllServerProcesses());

  it('three `wagw serve` started at once on an empty PostgreSQL database all serve, and only one prints the operator password', async () => {
    const database = await createTestDatabase('postgres');
    const dataDirectories = [0, 1, 2].map(() => fs.mkdtempSync(path.join(os.tmpdir(), 'wagw-first-start-')));
    try {
      const env = (index: number) => ({
        WAGW_SECRET_KEY: '7e57'.repeat(16),
        WAGW_NODE_NAME: `node-${index}`,
        WAGW_DATA_DIR: dataDirectories[index]!,
      });
      const starts = await Promise.allSettled([0, 1, 2].map((index) => startServerProcess(database.url, env(index))));
      const failures = starts.flatMap((start) => (start.status === 'rejected' ? [String(start.reason)] : []));
      assert.deepEqual(failures, [], 'every node serves');
      const servers = starts.map((start) => (start as PromiseFulfilledResult<ServerProcess>).value);
      for (const server of servers) {
        const response = await fetch(`http://127.0.0.1:${server.port}/login`);
        assert.equal(response.status, 200, server.output());
      }
      assert.equal(await passwordsPrinted(servers), 1, servers.map((server) => server.output()).join('\n---\n'));

      const store = openDatabase(database.url);
      try {
        const operators = await store.db.selectFrom('users').select('email').where('is_operator', '=', 1).execute();
        assert.deepEqual(
          operators.map((operator) => operator.email),
          ['admin@wagw.local'],
        );
      } finally {
        await store.close();
      }
    } finally {
      await killAllServerProcesses();
      await database.drop();
      for (const directory of dataDirectories) fs.rmSync(directory, { recursive: true, force: true });
    }
  });
});

describe('servers started together on an empty database (sqlite)', { timeout: 180_000 }, () => {
  after(() => killAllServerProcesses());

  it('of two `wagw serve` started at once on one new SQLite file, one serves and the other is refused as a second server, never as a crash', async () => {
    const database = await createTestDatabase('sqlite');
    const dataDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'wagw-first-start-'));
    try {
      const env = { WAGW_SECRET_KEY: '7e57'.repeat(16), WAGW_DATA_DIR: dataDirectory };
      const starts = await Promise.allSettled([0, 1].map(() => startServerProcess(database.url, env)));
      const served = starts.filter((start) => start.status === 'fulfilled');
      const refusals = starts.flatMap((start) => (start.status === 'rejected' ? [String(start.reason)] : []));
      assert.equal(served.length, 1, `exactly one serves: ${refusals.join('\n')}`);
      assert.equal(refusals.length, 1);
      assert.match(refusals[0]!, /Another wa-gateway server .* is running on this SQLite database/);
      const server = (served[0] as PromiseFulfilledResult<ServerProcess>).value;
      assert.equal(await passwordsPrinted([server]), 1, server.output());
    } finally {
      await killAllServerProcesses();
      await database.drop();
      fs.rmSync(dataDirectory, { recursive: true, force: true });
    }
  });
});
