import type { Executor } from '../database.ts';
import type { CloudNumbersTable } from '../schema-numbers.ts';

/** A Cloud API number's settings as stored: Meta's ids in clear, the token and secrets sealed (migration 0049 (0045 was reserved; 0048 landed first)). */
export type SealedCloudSettings = Omit<CloudNumbersTable, 'number_id' | 'updated_at'>;

export async function saveCloudSettings(db: Executor, numberId: string, settings: SealedCloudSettings, at: Date): Promise<void> {
  const row = { number_id: numberId, ...settings, updated_at: at.getTime() };
  await db
    .insertInto('cloud_numbers')
    .values(row)
    .onConflict((conflict) => conflict.column('number_id').doUpdateSet({ ...settings, updated_at: row.updated_at }))
    .execute();
}

export async function findCloudSettings(db: Executor, numberId: string): Promise<SealedCloudSettings | undefined> {
  return db
    .selectFrom('cloud_numbers')
    .select(['phone_number_id', 'business_account_id', 'access_token_ciphertext', 'app_secret_ciphertext', 'verify_token_ciphertext'])
    .where('number_id', '=', numberId)
    .executeTakeFirst();
}

export async function deleteCloudSettings(db: Executor, numberId: string): Promise<boolean> {
  const result = await db.deleteFrom('cloud_numbers').where('number_id', '=', numberId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
