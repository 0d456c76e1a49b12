import type { Executor } from '../database.ts';

/** The newest message a person sent a number: it opened their 24-hour window (migration 0050 (0046 was reserved)). */
export interface LastInbound {
  at: Date;
  engineMessageId: string;
}

/** Keeps the person's newest incoming message; an older one arriving late (Meta retries out of order) changes nothing. */
export async function recordInbound(db: Executor, numberId: string, contactPhone: string, inbound: LastInbound): Promise<void> {
  const at = inbound.at.getTime();
  await db
    .insertInto('customer_windows')
    .values({ number_id: numberId, contact_phone: contactPhone, last_inbound_at: at, last_inbound_engine_id: inbound.engineMessageId })
    .onConflict((conflict) =>
      conflict
        .columns(['number_id', 'contact_phone'])
        .doUpdateSet({ last_inbound_at: at, last_inbound_engine_id: inbound.engineMessageId })
        .where('customer_windows.last_inbound_at', '<', at),
    )
    .execute();
}

export async function findLastInbound(db: Executor, numberId: string, contactPhone: string): Promise<LastInbound | undefined> {
  const row = await db
    .selectFrom('customer_windows')
    .select(['last_inbound_at', 'last_inbound_engine_id'])
    .where('number_id', '=', numberId)
    .where('contact_phone', '=', contactPhone)
    .executeTakeFirst();
  return row && { at: new Date(Number(row.last_inbound_at)), engineMessageId: row.last_inbound_engine_id };
}
