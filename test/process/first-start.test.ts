import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { createTestDatabase } from '../support/databases.ts';
import { killAllServerProcesses, openDatabase, startServerProcess } from './server-process.ts';

const PASSWORD_LINE = /Password \(shown once\): /g;

describe('nodes started together on an empty database (postgres)', { timeout: 180_000 }, () => {
  after(() => killAllServerProcesses());

  it('three `wagw serve` started at once on an empty PostgreSQL database all serve, and only one prints the operator password', async () => {
    const database = await createTestDatabase('postgres');
    const dataDirectories = [0, 1, 2].map(() => fs.mkdtempSync(path.join(os.tmpdir(), 'wagw-first-start-')));
    try {
      const env = (index: number) => ({ WAGW_SECRET_KEY: '7e57'.repeat(16), WAGW_NODE_NAME: `node-${index}`, WAGW_DATA_DIR: dataDirectories[index]! });
      const starts = await Promise.allSettled([0, 1, 2].map((index) => startServerProcess(database.url, env(index))));
      const failures = starts.flatMap((start) => (start.status === 'rejected' ? [String(start.reason)] : []));
      assert.deepEqual(failures, [], 'every node serves');
      const servers = starts.map((start) => (start as PromiseFulfilledResult<Awaited<ReturnType<typeof startServerProcess>>>).value);
      for (const server of servers) {
        const response = await fetch(`http://127.0.0.1:${server.port}/login`);
        assert.equal(response.status, 200, server.output());
      }
      const passwordsPrinted = servers.reduce((count, server) => count + (server.output().match(PASSWORD_LINE)?.length ?? 0), 0);
      assert.equal(passwordsPrinted, 1, servers.map((server) => server.output()).join('\n---\n'));

      const store = openDatabase(database.url);
      try {
        const operators = await store.db.selectFrom('users').select('email').where('is_operator', '=', 1).execute();
        assert.deepEqual(operators.map((operator) => operator.email), ['admin@wagw.local']);
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
