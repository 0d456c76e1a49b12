/**
 * The durable floor for the send benchmark: the least a durable send can cost on this machine.
 * A bare Fastify route (the echo's) that, per request, queues one message row; the queue is
 * written in batches, each one transaction with one fsync: the row inserted by a prepared
 * statement, its `sent` update and its receipt's `delivered` update. Nothing else: no
 * authentication, validation, quota, engine or webhooks. The gateway's distance from this is
 * the price of everything it does beyond durability. Started by bench/floor.ts with
 * FLOOR_DATABASE (`sqlite:<file>` or a postgres:// URL), it reports its port over IPC.
 */
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { monotonicFactory } from 'ulid';
import { handledElsewhere } from '../src/domain/promises.ts';

interface SendBody {
  from_phone: string;
  to_phone: string;
  message: string;
}

interface Pending {
  id: string;
  body: SendBody;
  done: (error?: unknown) => void;
}

type WriteBatch = (batch: Pending[]) => Promise<void>;

const MAX_BATCH = 1_000;
const nextUlid = monotonicFactory();
const target = process.env.FLOOR_DATABASE ?? '';

function sqliteWriter(file: string): { write: WriteBatch; concurrent: number } {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(
    'create table if not exists floor_messages (id text primary key, from_phone text not null, to_phone text not null, body text not null, status text not null, engine_id text, created_at integer not null, updated_at integer not null)',
  );
  const insert = db.prepare(
    'insert into floor_messages (id, from_phone, to_phone, body, status, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?)',
  );
  const markSent = db.prepare("update floor_messages set status = 'sent', engine_id = ?, updated_at = ? where id = ?");
  const receipt = db.prepare("update floor_messages set status = 'delivered', updated_at = ? where id = ? and status = 'sent'");
  const writeAll = db.transaction((batch: Pending[]) => {
    const now = Date.now();
    for (const item of batch) insert.run(item.id, item.body.from_phone, item.body.to_phone, item.body.message, 'queued', now, now);
    for (const item of batch) markSent.run(`wa-${item.id}`, now, item.id);
    for (const item of batch) receipt.run(now, item.id);
  });
  return { write: async (batch) => writeAll(batch), concurrent: 1 };
}

function postgresWriter(url: string): { write: WriteBatch; concurrent: number } {
  // As many batches at once as the gateway's default pool lets it commit side by side (10 / 2).
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  let ready: Promise<unknown> | undefined;
  const write: WriteBatch = async (batch) => {
    ready ??= pool.query(
      'create table if not exists floor_messages (id text primary key, from_phone text not null, to_phone text not null, body text not null, status text not null, engine_id text, created_at bigint not null, updated_at bigint not null)',
    );
    await ready;
    const client = await pool.connect();
    try {
      const now = Date.now();
      const ids = batch.map((item) => item.id);
      await client.query('begin');
      await client.query({
        name: 'floor-insert',
        text: "insert into floor_messages (id, from_phone, to_phone, body, status, created_at, updated_at) select id, f, t, b, 'queued', $5, $5 from unnest($1::text[], $2::text[], $3::text[], $4::text[]) as u(id, f, t, b)",
        values: [
          ids,
          batch.map((item) => item.body.from_phone),
          batch.map((item) => item.body.to_phone),
          batch.map((item) => item.body.message),
          now,
        ],
      });
      await client.query({
        name: 'floor-sent',
        text: "update floor_messages set status = 'sent', engine_id = 'wa-' || id, updated_at = $2 where id = any($1::text[])",
        values: [ids, now],
      });
      await client.query({
        name: 'floor-receipt',
        text: "update floor_messages set status = 'delivered', updated_at = $2 where id = any($1::text[]) and status = 'sent'",
        values: [ids, now],
      });
      await client.query('commit');
    } catch (error) {
      await client.query('rollback').catch(handledElsewhere);
      throw error;
    } finally {
      client.release();
    }
  };
  return { write, concurrent: 5 };
}

const writer = target.startsWith('sqlite:') ? sqliteWriter(target.slice('sqlite:'.length)) : postgresWriter(target);
const queue: Pending[] = [];
let inFlight = 0;
let scheduled = false;

function schedule(): void {
  if (scheduled || inFlight >= writer.concurrent || queue.length === 0) return;
  scheduled = true;
  setImmediate(() => {
    scheduled = false;
    const batch = queue.splice(0, MAX_BATCH);
    inFlight += 1;
    writer
      .write(batch)
      .then(
        () => {
          for (const item of batch) item.done();
        },
        (error: unknown) => {
          for (const item of batch) item.done(error);
        },
      )
      .finally(() => {
        inFlight -= 1;
        schedule();
      });
    schedule();
  });
}

const app = Fastify({ logger: false });
app.post<{ Body: SendBody }>('/send_message', async (request) => {
  const id = `msg_${nextUlid().toLowerCase()}`;
  await new Promise<void>((resolve, reject) => {
    queue.push({ id, body: request.body, done: (error) => (error === undefined ? resolve() : reject(error)) });
    schedule();
  });
  return {
    message_id: id,
    created_at: new Date().toISOString(),
    from_phone: request.body.from_phone,
    to_phone: request.body.to_phone,
    message: request.body.message,
    status: 'sent',
  };
});

await app.listen({ host: '127.0.0.1', port: 0 });
process.send!({ port: (app.server.address() as AddressInfo).port });
process.on('disconnect', () => void app.close().then(() => process.exit(0)));
