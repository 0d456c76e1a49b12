import { sql, type QueryCreator, type Selectable } from 'kysely';
import { compiledStatement, runsOnPostgres } from '../compiled-statement.ts';
import type { Message } from '../../domain/model.ts';
import type { Contact, IdentitySource, PersonIdentity } from '../../domain/identities.ts';
import { newId } from '../../domain/ids.ts';
import type { E164 } from '../../domain/phone.ts';
import type { Executor } from '../database.ts';
import type { Database } from '../schema.ts';
import type { ContactsTable } from '../schema-identities.ts';

// Each number's people and its LID-to-phone map: one row per person (migration 0021, ADR 0032).

type ContactRow = Selectable<ContactsTable>;

/** Our number, as the rows of its people name it. */
export interface NumberRef {
  numberId: string;
  accountId: string;
}

/**
 * Records that `lid` is `phone`'s. The person may be known already by either identifier, in one
 * row or in two; afterwards they are one row with both. Answers whether the LID's phone is news
 * (a LID that gets its phone, or a different one), which is when a `contact.identity` event is due.
 */
export async function learnIdentity(
  db: Executor,
  number: NumberRef,
  identity: { lid: string; phone: E164 },
  source: IdentitySource,
  at: Date,
): Promise<boolean> {
  const rows = await db
    .selectFrom('contacts')
    .selectAll()
    .where('number_id', '=', number.numberId)
    .where((eb) => eb.or([eb('lid', '=', identity.lid), eb('phone', '=', identity.phone)]))
    .execute();
  const byLid = rows.find((row) => row.lid === identity.lid);
  if (byLid?.phone === identity.phone) return false;
  const byPhone = rows.find((row) => row.phone === identity.phone && row !== byLid);
  const kept = byLid ?? byPhone;
  if (kept === undefined) {
    await db
      .insertInto('contacts')
      .values({
        id: newId('contact'),
        number_id: number.numberId,
        account_id: number.accountId,
        lid: identity.lid,
        phone: identity.phone,
        whatsapp_name: null,
        identity_source: source,
        identity_learned_at: at.getTime(),
        last_message_at: null,
        created_at: at.getTime(),
        updated_at: at.getTime(),
      })
      .execute();
    return true;
  }
  // The other row goes first, so that neither unique index sees the identifier twice.
  const other = byLid !== undefined && byPhone !== undefined ? byPhone : undefined;
  if (other !== undefined) await db.deleteFrom('contacts').where('id', '=', other.id).execute();
  await db
    .updateTable('contacts')
    .where('id', '=', kept.id)
    .set({
      lid: identity.lid,
      phone: identity.phone,
      whatsapp_name: kept.whatsapp_name ?? other?.whatsapp_name ?? null,
      saved: Math.max(kept.saved, other?.saved ?? 0),
      last_message_at: latest(kept.last_message_at, other?.last_message_at ?? null),
      identity_source: source,
      identity_learned_at: at.getTime(),
      updated_at: at.getTime(),
    })
    .execute();
  return true;
}

/**
 * Fills in the sender's phone on the messages that came from `lid` before its phone was known,
 * so that every read (and every filter by phone) sees one person.
 */
export async function fillSenderPhone(db: Executor, numberId: string, identity: { lid: string; phone: E164 }): Promise<number> {
  const result = await db
    .updateTable('messages')
    .set({ from_phone: identity.phone })
    .where('number_id', '=', numberId)
    .where('from_phone', 'is', null)
    .where('from_lid', '=', identity.lid)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * Notes a person the number exchanged a message with (or found in its address book), by the
 * identifier it has: the LID when known, else the phone. Call `learnIdentity` first when both
 * are known, so that this finds the one row.
 */
export async function noteContact(
  db: Executor,
  number: NumberRef,
  person: PersonIdentity & { whatsappName?: string | null; saved?: boolean; messageAt?: Date },
  at: Date,
): Promise<void> {
  const key = person.lid !== null ? 'lid' : 'phone';
  if (person[key] === null) return;
  const values: ContactNoteValues = {
    id: newId('contact'),
    numberId: number.numberId,
    accountId: number.accountId,
    lid: person.lid,
    phone: person.phone,
    name: person.whatsappName ?? null,
    saved: person.saved === true ? 1 : 0,
    messageAt: person.messageAt?.getTime() ?? null,
    at: at.getTime(),
  };
  await (key === 'lid' ? noteContactByLid : noteContactByPhone)(db, values);
}

type ContactNoteValues = {
  id: string;
  numberId: string;
  accountId: string;
  lid: string | null;
  phone: string | null;
  name: string | null;
  saved: 0 | 1;
  messageAt: number | null;
  at: number;
};

/**
 * Every incoming direct message notes its sender: compiled once per key the person is known by.
 * What the note does not know (a null name or time, not saved) leaves the stored value as it is.
 */
function contactNote(db: QueryCreator<Database>, key: 'lid' | 'phone', v: ContactNoteValues) {
  return db
    .insertInto('contacts')
    .values({
      id: v.id,
      number_id: v.numberId,
      account_id: v.accountId,
      lid: v.lid,
      phone: v.phone,
      whatsapp_name: v.name,
      saved: v.saved,
      identity_source: null,
      identity_learned_at: null,
      last_message_at: v.messageAt,
      created_at: v.at,
      updated_at: v.at,
    })
    .onConflict((conflict) =>
      conflict.columns(['number_id', key]).where(key, 'is not', null).doUpdateSet({
        whatsapp_name: sql`coalesce(excluded.whatsapp_name, contacts.whatsapp_name)`,
        saved: sql`case when excluded.saved = 1 then 1 else contacts.saved end`,
        last_message_at: sql`coalesce(excluded.last_message_at, contacts.last_message_at)`,
        updated_at: sql`excluded.updated_at`,
      }),
    );
}

const noteContactByLid = compiledStatement((db, v: ContactNoteValues) => contactNote(db, 'lid', v));
const noteContactByPhone = compiledStatement((db, v: ContactNoteValues) => contactNote(db, 'phone', v));

/** Notes the recipients of direct messages we sent as people of their numbers, in one statement. */
export async function noteRecipients(db: Executor, messages: readonly Message[]): Promise<void> {
  const people = new Map<string, Message>();
  for (const message of messages) {
    if (message.group == null && message.numberId !== null) people.set(`${message.numberId} ${message.toPhone}`, message);
  }
  if (people.size === 0) return;
  const recipients = [...people.values()];
  if (runsOnPostgres(db)) {
    await noteRecipientsPostgres(db, {
      ids: recipients.map(() => newId('contact')),
      numberIds: recipients.map((message) => message.numberId!),
      accountIds: recipients.map((message) => message.accountId),
      phones: recipients.map((message) => message.toPhone),
      ats: recipients.map((message) => message.createdAt.getTime()),
    });
    return;
  }
  const rows = recipients.map((message) => ({
    i: newId('contact'),
    n: message.numberId!,
    a: message.accountId,
    p: message.toPhone,
    t: message.createdAt.getTime(),
  }));
  await noteRecipientsSqlite(db, { rows: JSON.stringify(rows) });
}

// Every batch of sends notes its recipients, so, as the chats' upsert, this one is compiled once
// with the rows as one parameter: built by Kysely for each batch it cost a send about 1.9 % of
// its CPU (issue 41).
type NotedRecipients = Database & {
  noted: { id: string; number_id: string; account_id: string; phone: string; at: number };
};

const noteRecipientsPostgres = compiledStatement(
  (db, v: { ids: string[]; numberIds: string[]; accountIds: string[]; phones: string[]; ats: number[] }) =>
    upsertRecipientsFrom(
      db.with('noted', (cte) =>
        cte.selectNoFrom([
          sql<string>`unnest(cast(${v.ids} as text[]))`.as('id'),
          sql<string>`unnest(cast(${v.numberIds} as text[]))`.as('number_id'),
          sql<string>`unnest(cast(${v.accountIds} as text[]))`.as('account_id'),
          sql<string>`unnest(cast(${v.phones} as text[]))`.as('phone'),
          sql<number>`unnest(cast(${v.ats} as bigint[]))`.as('at'),
        ]),
      ),
    ),
);

const noteRecipientsSqlite = compiledStatement((db, v: { rows: string }) =>
  upsertRecipientsFrom(
    db.with('noted', (cte) =>
      cte
        .selectFrom(sql`json_each(${v.rows})`.as('r'))
        .select([
          sql<string>`r.value ->> 'i'`.as('id'),
          sql<string>`r.value ->> 'n'`.as('number_id'),
          sql<string>`r.value ->> 'a'`.as('account_id'),
          sql<string>`r.value ->> 'p'`.as('phone'),
          sql<number>`r.value ->> 't'`.as('at'),
        ]),
    ),
  ),
);

/** The one upsert of both dialects: a recipient we wrote to is a contact of the number, its last message now. */
function upsertRecipientsFrom(withNoted: QueryCreator<NotedRecipients>) {
  return (
    withNoted
      .insertInto('contacts')
      .columns([
        'id',
        'number_id',
        'account_id',
        'lid',
        'phone',
        'whatsapp_name',
        'identity_source',
        'identity_learned_at',
        'last_message_at',
        'created_at',
        'updated_at',
      ])
      // `where true` tells SQLite's parser that the upsert's ON CONFLICT is not a join's ON.
      .expression((eb) =>
        eb
          .selectFrom('noted')
          .select([
            'id',
            'number_id',
            'account_id',
            // Typed, since PostgreSQL takes a bare null in a select list for text.
            sql<null>`cast(null as text)`.as('lid'),
            'phone',
            sql<null>`cast(null as text)`.as('whatsapp_name'),
            sql<null>`cast(null as text)`.as('identity_source'),
            sql<null>`cast(null as bigint)`.as('identity_learned_at'),
            'at as last_message_at',
            'at as created_at',
            'at as updated_at',
          ])
          .where(sql<boolean>`true`)
          // One key order for every batch, as the chats' upsert: concurrent batches then wait, never deadlock.
          .orderBy('number_id')
          .orderBy('phone'),
      )
      .onConflict((conflict) =>
        conflict.columns(['number_id', 'phone']).where('phone', 'is not', null).doUpdateSet({
          last_message_at: sql`excluded.last_message_at`,
        }),
      )
  );
}

/** The phone a number's map knows for `lid`. */
export async function phoneOfLid(db: Executor, numberId: string, lid: string): Promise<E164 | undefined> {
  const row = await db.selectFrom('contacts').select('phone').where('number_id', '=', numberId).where('lid', '=', lid).executeTakeFirst();
  return (row?.phone ?? undefined) as E164 | undefined;
}

/** The phone any of the account's numbers (or only `numberId`) knows for `lid`. */
export async function phoneOfLidInAccount(db: Executor, accountId: string, lid: string, numberId?: string): Promise<E164 | undefined> {
  let query = db
    .selectFrom('contacts')
    .select('phone')
    .where('account_id', '=', accountId)
    .where('lid', '=', lid)
    .where('phone', 'is not', null);
  if (numberId !== undefined) query = query.where('number_id', '=', numberId);
  const row = await query.limit(1).executeTakeFirst();
  return (row?.phone ?? undefined) as E164 | undefined;
}

/** Which of `phones` (one line's two forms) the number's map knows a person by; the first wins. */
export async function knownPhoneAmong(db: Executor, numberId: string, phones: readonly E164[]): Promise<E164 | undefined> {
  const rows = await db
    .selectFrom('contacts')
    .select('phone')
    .where('number_id', '=', numberId)
    .where('phone', 'in', [...phones])
    .execute();
  const known = new Set(rows.map((row) => row.phone));
  return phones.find((phone) => known.has(phone));
}

/** The LID a number's map knows for `phone`. */
export async function lidOfPhone(db: Executor, numberId: string, phone: E164): Promise<string | undefined> {
  const { rows } = await lidOfPhoneStatement(db, { numberId, phone });
  return rows[0]?.lid ?? undefined;
}

// Read for every incoming message whose sender is known by phone: compiled once.
const lidOfPhoneStatement = compiledStatement((db, v: { numberId: string; phone: string }) =>
  db.selectFrom('contacts').select('lid').where('number_id', '=', v.numberId).where('phone', '=', v.phone),
);

/** The people among `ids` (phones or LIDs) the number knows, each with both identifiers where known. */
export async function identitiesOf(db: Executor, numberId: string, ids: readonly string[]): Promise<PersonIdentity[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('contacts')
    .select(['lid', 'phone'])
    .where('number_id', '=', numberId)
    .where((eb) => eb.or([eb('phone', 'in', ids), eb('lid', 'in', ids)]))
    .execute();
  return rows.map((row) => ({ lid: row.lid, phone: row.phone as E164 | null }));
}

/** One person of the number, named either way. */
export async function findContact(db: Executor, numberId: string, ref: { lid: string } | { phone: E164 }): Promise<Contact | undefined> {
  const query = db.selectFrom('contacts').selectAll().where('number_id', '=', numberId);
  const row = await ('lid' in ref ? query.where('lid', '=', ref.lid) : query.where('phone', '=', ref.phone)).executeTakeFirst();
  return row === undefined ? undefined : toContact(row);
}

/**
 * The people the number exchanged direct messages with or saved, in the order it met them, a
 * page at a time after `afterId`. People the map knows only from groups or checks are left out
 * of the list (a lookup still finds them).
 */
export async function listContacts(
  db: Executor,
  numberId: string,
  afterId: string | undefined,
  limit: number,
  offset = 0,
): Promise<{ id: string; contact: Contact }[]> {
  let query = db
    .selectFrom('contacts')
    .selectAll()
    .where('number_id', '=', numberId)
    .where((eb) => eb.or([eb('last_message_at', 'is not', null), eb('saved', '=', 1)]));
  if (afterId !== undefined) query = query.where('id', '>', afterId);
  const rows = await query.orderBy('id').limit(limit).offset(offset).execute();
  return rows.map((row) => ({ id: row.id, contact: toContact(row) }));
}

function toContact(row: ContactRow): Contact {
  return {
    numberId: row.number_id,
    lid: row.lid,
    phone: row.phone as E164 | null,
    whatsappName: row.whatsapp_name,
    saved: row.saved === 1,
    identityLearnedAt: row.identity_learned_at === null ? null : new Date(Number(row.identity_learned_at)),
    identitySource: row.identity_source as IdentitySource | null,
    lastMessageAt: row.last_message_at === null ? null : new Date(Number(row.last_message_at)),
    createdAt: new Date(Number(row.created_at)),
  };
}

function latest(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  return b === null ? a : Math.max(Number(a), Number(b));
}
