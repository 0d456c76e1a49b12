import type { Executor } from '../database.ts';
import type { Database } from '../schema.ts';

export type CountedTable = 'accounts' | 'users' | 'whatsapp_numbers' | 'api_keys' | 'messages' | 'webhooks';

export async function countRows(db: Executor, table: CountedTable): Promise<number> {
  const row = await db
    .selectFrom(table as keyof Database)
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
