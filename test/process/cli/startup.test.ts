import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, dialects, type TestDatabase } from '../../support/databases.ts';
import { expectJsonObject, runCli } from '../../support/run-cli.ts';

const TRACE_HOOK = pathToFileURL(path.join(import.meta.dirname, 'package-trace.mjs')).href;

/** The packages a CLI run loaded, in the order it first loaded them. */
async function packagesLoadedBy(databaseUrl: string, args: string[]): Promise<string[]> {
  const directory = await mkdtemp(path.join(tmpdir(), 'wagw-trace-'));
  const traceFile = path.join(directory, 'packages.txt');
  try {
    const run = await runCli(databaseUrl, args, {
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${TRACE_HOOK}`,
      WAGW_TEST_PACKAGE_TRACE: traceFile,
    });
    expectJsonObject(run);
    return (await readFile(traceFile, 'utf8')).split('\n').filter(Boolean);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

for (const dialect of dialects) {
  describe(`a CLI command loads only what it needs (${dialect})`, () => {
    let database: TestDatabase;
    before(async () => {
      database = await createTestDatabase(dialect);
      // Migrated first, so that the runs below read rather than build the schema.
      expectJsonObject(await runCli(database.url, ['migrate', '--json']));
    });
    after(() => database.drop());

    for (const args of [
      ['account', 'list', '--json'],
      ['number', 'list', '--json'],
      ['cluster', 'status', '--json'],
    ]) {
      it(`wagw ${args.join(' ')} loads neither Baileys nor the HTTP stack`, async () => {
        const loaded = await packagesLoadedBy(database.url, args);
        assert.ok(loaded.includes('kysely'), `the trace saw the store load: ${loaded.join(', ')}`);
        for (const heavy of ['baileys', 'fastify', '@fastify/swagger', 'qrcode']) {
          assert.ok(!loaded.includes(heavy), `${heavy} was loaded: ${loaded.join(', ')}`);
        }
      });
    }
  });
}
