import type { Kysely } from 'kysely';

// A number's WhatsApp connection may go through a proxy (docs/adr/0063-a-proxy-per-number.md).
// Its URL can hold the proxy's password, so the whole URL is sealed (proxy_ciphertext, opened
// only by the node that connects the number) and proxy_redacted keeps scheme, host and port with
// the credentials replaced, for the number's pages, the operator API and the audit log. Both are
// null for a number that connects directly.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('whatsapp_numbers').addColumn('proxy_ciphertext', 'text').execute();
  await db.schema.alterTable('whatsapp_numbers').addColumn('proxy_redacted', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('whatsapp_numbers').dropColumn('proxy_redacted').execute();
  await db.schema.alterTable('whatsapp_numbers').dropColumn('proxy_ciphertext').execute();
}
