import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const REPOSITORY_ROOT = path.resolve(import.meta.dirname, '../..');

/** A PostgreSQL server of one test's own, from scripts/postgres.sh, which it may restart at will. */
export interface PrivatePostgres {
  /** The server's `postgres` database: empty, and nobody else's. */
  url: string;
  bin: string;
  directory: string;
  stop(): Promise<void>;
}

/**
 * Starts a throwaway PostgreSQL server for one test: a test that restarts its server must not
 * take the run's shared one down under the test files running beside it. Undefined where
 * PostgreSQL's programs are not installed (a run given its server from outside).
 */
export async function startPrivatePostgres(): Promise<PrivatePostgres | undefined> {
  const script = [
    'set -e',
    'source scripts/postgres.sh',
    '[ -n "$(find_postgres_bin)" ] || exit 3',
    'start_throwaway_postgres >&2',
    'printf "%s\\n%s\\n%s\\n" "$WAGW_TEST_POSTGRES_URL" "$WAGW_PG_DIR" "$WAGW_PG_BIN"',
  ].join('\n');
  let output: string;
  try {
    ({ stdout: output } = await run('bash', ['-c', script], { cwd: REPOSITORY_ROOT, timeout: 60_000 }));
  } catch (error) {
    if ((error as { code?: unknown }).code === 3) return undefined;
    throw error;
  }
  const [url, directory, bin] = output.trim().split('\n');
  if (url === undefined || directory === undefined || bin === undefined) throw new Error(`scripts/postgres.sh said: ${output}`);
  return {
    url,
    bin,
    directory,
    stop: async () => {
      await run('bash', ['-c', 'source scripts/postgres.sh && stop_throwaway_postgres'], {
        cwd: REPOSITORY_ROOT,
        env: { ...process.env, WAGW_PG_DIR: directory, WAGW_PG_BIN: bin },
        timeout: 60_000,
      });
    },
  };
}
