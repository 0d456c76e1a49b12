import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { loadConfig } from '../../../src/config.ts';
import { createGateway, createLogger } from '../../../src/main.ts';

const modeOf = (file: string) => fs.statSync(file).mode & 0o777;

/**
 * What the gateway creates on disk is private to its user. Only SQLite keeps files of the
 * gateway's own (PostgreSQL's are the server's), so this runs on SQLite alone.
 */
describe('files the gateway creates', () => {
  it('the data folder is 0700, and the database, its WAL and shared-memory files and the key file are 0600', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'wagw-permissions-'));
    const dataDirectory = path.join(root, 'data');
    const databaseFile = path.join(dataDirectory, 'db', 'wagw.db');
    try {
      // No WAGW_SECRET_KEY, so a key file is generated in the data folder too.
      const config = loadConfig({ DATABASE_URL: `sqlite:${databaseFile}`, WAGW_DATA_DIR: dataDirectory, LOG_LEVEL: 'silent' });
      const gateway = await createGateway(config, createLogger(config));
      try {
        await gateway.accounts.createAccount({ name: 'Written, so the WAL exists' });
        assert.equal(modeOf(dataDirectory), 0o700);
        assert.equal(modeOf(path.dirname(databaseFile)), 0o700);
        for (const file of [databaseFile, `${databaseFile}-wal`, `${databaseFile}-shm`, path.join(dataDirectory, 'secret.key')]) {
          assert.equal(modeOf(file).toString(8), '600', file);
        }
      } finally {
        await gateway.close();
      }
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('an existing folder keeps the permissions its operator gave it', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'wagw-permissions-'));
    fs.chmodSync(root, 0o750);
    try {
      const config = loadConfig({
        DATABASE_URL: `sqlite:${path.join(root, 'wagw.db')}`,
        WAGW_DATA_DIR: root,
        WAGW_SECRET_KEY: '7e57'.repeat(16),
        LOG_LEVEL: 'silent',
      });
      const gateway = await createGateway(config, createLogger(config));
      await gateway.close();
      assert.equal(modeOf(root), 0o750);
      assert.equal(modeOf(path.join(root, 'wagw.db')), 0o600);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
