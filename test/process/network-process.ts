import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { JournalEntry } from '../../src/engines/sandbox/sandbox-network.ts';
import { TEST_SECRET_KEY_HEX } from '../support/shared-network.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * `wagw sandbox-network` as an operator runs it, for the cluster tests: its journal goes to a file
 * (appended to by each of its runs), which is what the tests count sends on.
 */
export interface NetworkProcess {
  port: number;
  journalFile: string;
  /** Starts (or starts again, after `child` was killed) the network on `port`. */
  start(): Promise<ChildProcess>;
  /** Every entry of every run of the network, in order. */
  journal(): JournalEntry[];
}

export function networkProcess(port: number): NetworkProcess {
  const journalFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'wagw-network-')), 'journal.ndjson');
  return {
    port,
    journalFile,
    async start() {
      const child = spawn(
        process.execPath,
        [path.join(ROOT, 'bin/wagw'), 'sandbox-network', '--port', String(port), '--journal', journalFile],
        {
          stdio: ['ignore', 'pipe', 'inherit'],
          env: { ...process.env, WAGW_SECRET_KEY: TEST_SECRET_KEY_HEX },
        },
      );
      await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
      return child;
    },
    journal: () =>
      fs
        .readFileSync(journalFile, 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as JournalEntry),
  };
}

/** Which node holds each phone's live connection, replaying the network's journal in order. */
export function liveConnections(journal: JournalEntry[]): Map<string, string> {
  const live = new Map<string, string>();
  for (const entry of journal) {
    if (entry.kind === 'connect') live.set(entry.phone, entry.node);
    else if ((entry.kind === 'disconnect' || entry.kind === 'replace') && live.get(entry.phone) === entry.node) live.delete(entry.phone);
  }
  return live;
}

/** How many times each text reached the network as a send from one of the gateway's numbers. */
export function sentTextCounts(journal: JournalEntry[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const entry of journal)
    if (entry.kind === 'send' && entry.node !== 'simulator' && entry.text !== undefined)
      counts.set(entry.text, (counts.get(entry.text) ?? 0) + 1);
  return counts;
}
