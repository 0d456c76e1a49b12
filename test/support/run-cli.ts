import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { JsonObject } from './json.ts';
import { loadConfig } from '../../src/config.ts';
import { createGateway, createLogger, type Gateway } from '../../src/main.ts';
import { createTestDatabase, type Dialect, type TestDatabase } from './databases.ts';

const WAGW_BIN = fileURLToPath(new URL('../../bin/wagw', import.meta.url));
// Generous: a CLI start costs a few seconds of CPU, and a loaded two-core CI machine runs several at once.
const CLI_TIMEOUT_MS = 180_000;

export interface CliRun {
  args: string[];
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Runs the real `bin/wagw` in its own process against the database at `databaseUrl`; `input` is its standard input. */
export function runCli(databaseUrl: string, args: readonly string[], extraEnv: NodeJS.ProcessEnv = {}, input?: string): Promise<CliRun> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extraEnv, DATABASE_URL: databaseUrl };
  // The child is a program under test, not a node:test worker.
  delete env.NODE_TEST_CONTEXT;
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      [WAGW_BIN, ...args],
      { env, timeout: CLI_TIMEOUT_MS, encoding: 'utf8' },
      (error, stdout, stderr) => {
        if (error !== null && (error.killed || typeof error.code !== 'number')) {
          reject(new Error(`wagw ${args.join(' ')} did not finish: ${error.message}\n${stderr}`));
          return;
        }
        resolve({ args: [...args], exitCode: error === null ? 0 : Number(error.code), stdout, stderr });
      },
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

function describeRun(run: CliRun): string {
  return `wagw ${run.args.join(' ')}\nexit code: ${run.exitCode}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`;
}

/**
 * Asserts that a run succeeded and printed exactly one JSON object on one line of stdout, and
 * returns that object. The whole of stdout is parsed, so any stray line fails the test.
 */
export function expectJsonObject(run: CliRun): JsonObject {
  assert.equal(run.exitCode, 0, describeRun(run));
  assert.match(run.stdout, /^[^\n]+\n$/, `stdout must be exactly one line\n${describeRun(run)}`);
  const parsed: unknown = JSON.parse(run.stdout);
  assert.ok(typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed), `stdout must be a JSON object\n${describeRun(run)}`);
  // stderr may carry warnings for the operator, but never an error.
  assert.doesNotMatch(run.stderr, /^error/m, `a successful command reports no error\n${describeRun(run)}`);
  return parsed as Record<string, unknown>;
}

/**
 * Asserts that a run failed as a person's mistake: exit code 1, one "error:" message on stderr
 * that names each of `mentions`, no stack trace, and nothing on stdout that a script could
 * mistake for a result.
 */
export function expectRefusal(run: CliRun, ...mentions: string[]): void {
  assert.equal(run.exitCode, 1, describeRun(run));
  assert.equal(run.stdout, '', `stdout must stay empty on failure\n${describeRun(run)}`);
  assert.match(run.stderr, /^error: \S/, describeRun(run));
  assert.doesNotMatch(run.stderr, /\n\s+at /, `a refusal is a message, not a stack trace\n${describeRun(run)}`);
  for (const mention of mentions) {
    assert.ok(run.stderr.includes(mention), `stderr should mention ${JSON.stringify(mention)}\n${describeRun(run)}`);
  }
}

/** A fresh database with one account, and a gateway on it for the test's own reads and writes beside the CLI's. */
export interface CliTestDatabase {
  database: TestDatabase;
  gateway: Gateway;
  accountId: string;
  close(): Promise<void>;
}

export async function openCliTestDatabase(dialect: Dialect, accountName: string): Promise<CliTestDatabase> {
  const database = await createTestDatabase(dialect);
  const config = loadConfig({
    DATABASE_URL: database.url,
    LOG_LEVEL: 'silent',
    WAGW_SECRET_KEY: process.env.WAGW_SECRET_KEY ?? '7e57'.repeat(16),
  });
  const gateway = await createGateway(config, createLogger(config));
  const accountId = (await gateway.accounts.createAccount({ name: accountName, plan: 'pro' })).id;
  return {
    database,
    gateway,
    accountId,
    close: async () => {
      await gateway.close();
      await database.drop();
    },
  };
}
