import fs from 'node:fs/promises';
import type { SandboxGroupRecord } from '../../domain/groups.ts';
import type { SandboxGroupArchive } from './sandbox-groups.ts';

/**
 * The shared network's groups in one JSON file (`wagw sandbox-network --groups`), since that
 * network runs without a database. The file is rewritten whole on each change: into a temporary
 * file, synced, then renamed over the old one, so a crash leaves either the old file or the new,
 * never half of one. Sandbox groups change at a person's pace, so whole rewrites cost nothing.
 */
export function fileGroupArchive(file: string): SandboxGroupArchive {
  let groups: Map<string, SandboxGroupRecord> | undefined;

  const load = async (): Promise<Map<string, SandboxGroupRecord>> => {
    if (groups !== undefined) return groups;
    try {
      const records = JSON.parse(await fs.readFile(file, 'utf8')) as SandboxGroupRecord[];
      groups = new Map(records.map((record) => [record.id, record]));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
        throw new Error(`Could not read the sandbox network's groups from ${file}: ${(error as Error).message}`);
      groups = new Map();
    }
    return groups;
  };

  const write = async (all: Map<string, SandboxGroupRecord>): Promise<void> => {
    const temporary = `${file}.${process.pid}.tmp`;
    const handle = await fs.open(temporary, 'w', 0o600);
    try {
      await handle.writeFile(JSON.stringify([...all.values()]));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(temporary, file);
  };

  return {
    load: async () => [...(await load()).values()],
    async save(record) {
      const all = await load();
      all.set(record.id, record);
      await write(all);
    },
    async remove(id) {
      const all = await load();
      if (all.delete(id)) await write(all);
    },
  };
}
