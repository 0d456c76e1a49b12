import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { createTestDatabase, dialects } from '../support/databases.ts';
import { killAllServerProcesses, startServerProcess } from './server-process.ts';

for (const dialect of dialects) {
  describe(`wagw serve from any working directory (${dialect})`, () => {
    after(() => killAllServerProcesses());

    it('renders the dashboard when started outside the project folder', async () => {
      const database = await createTestDatabase(dialect);
      const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'wagw-cwd-'));
      try {
        const server = await startServerProcess(database.url, { WAGW_DATA_DIR: elsewhere }, elsewhere);
        const response = await fetch(`http://127.0.0.1:${server.port}/login`);
        assert.equal(response.status, 200, server.output());
        assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
        assert.match(await response.text(), /<h1>Sign in<\/h1>/);
      } finally {
        await killAllServerProcesses();
        await database.drop();
        fs.rmSync(elsewhere, { recursive: true, force: true });
      }
    });
  });
}
