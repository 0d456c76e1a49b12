import { sql } from 'kysely';
import { newId } from '../../domain/ids.ts';
import type { DeliveredEventType } from '../../domain/webhooks.ts';
import type { Executor } from '../database.ts';

// An event stream's deliveries (docs/adr/0068-event-streams.md): written by the outbox like any
// destination's, held from every worker's claim, and sent by the connection holding the stream.

/** A delivery of the stream waiting to be sent, with its event as the outbox stored it. */
export interface StreamDelivery {
  id: string;
  eventId: string;
  eventType: DeliveredEventType;
  payload: string;
}

/** The connection `holder` takes the stream; whichever held it before sees that it no longer does. */
export async function takeStream(db: Executor, webhookId: string, holder: string): Promise<void> {
  await db.updateTable('webhooks').set({ stream_holder: holder }).where('id', '=', webhookId).execute();
}

/** The connection holding the stream now (null: none), or undefined when the stream is gone. */
export async function streamHolder(db: Executor, webhookId: string): Promise<string | null | undefined> {
  const row = await db.selectFrom('webhooks').select('stream_holder').where('id', '=', webhookId).executeTakeFirst();
  return row?.stream_holder;
}

/**
 * The stream's oldest deliveries not yet sent, in the order their events happened. They are read
 * through the (state, webhook_id, next_attempt_at) index: a stream's delivery is due when its
 * event happened, and stays so until it is sent, so the read costs the same whatever the
 * stream has sent before.
 */
export async function unsentStreamDeliveries(db: Executor, webhookId: string, limit: number): Promise<StreamDelivery[]> {
  const rows = await db
    .selectFrom('webhook_deliveries')
    .innerJoin('webhook_events', 'webhook_events.id', 'webhook_deliveries.event_id')
    .select(['webhook_deliveries.id', 'webhook_deliveries.event_id', 'webhook_events.event_type', 'webhook_events.payload'])
    .where('webhook_deliveries.state', '=', 'pending')
    .where('webhook_deliveries.webhook_id', '=', webhookId)
    .orderBy('webhook_deliveries.next_attempt_at')
    .orderBy('webhook_deliveries.created_at')
    .orderBy('webhook_deliveries.id')
    .limit(limit)
    .execute();
  return rows.map((row) => ({ id: row.id, eventId: row.event_id, eventType: row.event_type as DeliveredEventType, payload: row.payload }));
}

/**
 * Records deliveries as sent by the stream, in the order given: each takes the next place in the
 * stream's count, and an attempt row for the delivery log. One transaction, so a client's resume
 * point always names a place that was recorded with everything before it. Only while `holder`
 * still holds the stream: a connection taken over is not the client the stream answers for, so
 * what it sent stays unsent, for the connection that took over. Answers whether it recorded.
 */
export async function recordStreamed(
  db: Executor,
  webhookId: string,
  holder: string,
  deliveryIds: readonly string[],
  at: Date,
): Promise<boolean> {
  if (deliveryIds.length === 0) return true;
  const time = at.getTime();
  return db.transaction().execute(async (trx) => {
    const counted = await trx
      .updateTable('webhooks')
      .set({ stream_sent: sql<number>`coalesce(stream_sent, 0) + ${deliveryIds.length}` })
      .where('id', '=', webhookId)
      .where('stream_holder', '=', holder)
      .returning('stream_sent')
      .executeTakeFirst();
    // Taken over, or deleted (its deliveries went with it).
    if (counted === undefined) return false;
    const first = Number(counted.stream_sent) - deliveryIds.length + 1;
    for (const [index, id] of deliveryIds.entries()) {
      await trx
        .updateTable('webhook_deliveries')
        .set((eb) => ({
          state: 'delivered',
          stream_position: first + index,
          attempt_count: eb('attempt_count', '+', 1),
          last_attempt_at: time,
          last_error: null,
          updated_at: time,
        }))
        .where('id', '=', id)
        .where('webhook_id', '=', webhookId)
        .execute();
    }
    await trx
      .insertInto('webhook_attempts')
      .values(
        deliveryIds.map((deliveryId) => ({
          id: newId('attempt'),
          delivery_id: deliveryId,
          webhook_id: webhookId,
          attempted_at: time,
          duration_ms: 0,
          status_code: null,
          response_excerpt: null,
          error: null,
        })),
      )
      .execute();
    return true;
  });
}

/**
 * A client reconnecting after the event `eventId`: everything the stream sent after it is to be
 * sent again, and nothing before it. Answers false when the stream has no sent delivery of that
 * event (an id never sent here, or one older than the delivery log keeps).
 */
export async function resumeStreamAfter(db: Executor, webhookId: string, eventId: string, at: Date): Promise<boolean> {
  const seen = await db
    .selectFrom('webhook_deliveries')
    .select('stream_position')
    .where('webhook_id', '=', webhookId)
    .where('event_id', '=', eventId)
    .executeTakeFirst();
  if (seen?.stream_position == null) return false;
  await db
    .updateTable('webhook_deliveries')
    .set({ state: 'pending', stream_position: null, updated_at: at.getTime() })
    .where('webhook_id', '=', webhookId)
    .where('stream_position', '>', seen.stream_position)
    .execute();
  return true;
}

/** How far the stream has got: how many events it has sent, and how many wait to be. */
export async function streamProgress(db: Executor, webhookId: string): Promise<{ sent: number; waiting: number }> {
  const [counted, waiting] = await Promise.all([
    db.selectFrom('webhooks').select('stream_sent').where('id', '=', webhookId).executeTakeFirst(),
    db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.countAll<number | string>().as('count'))
      .where('state', '=', 'pending')
      .where('webhook_id', '=', webhookId)
      .executeTakeFirstOrThrow(),
  ]);
  return { sent: Number(counted?.stream_sent ?? 0), waiting: Number(waiting.count) };
}
