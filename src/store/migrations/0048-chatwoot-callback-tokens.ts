import type { Kysely } from 'kysely';

// A Chatwoot inbox's callback token was derived from the webhook's signing secret, so rotating the
// secret changed the callback URL Chatwoot holds, and the old one stopped working when the
// previous secret expired (24 hours later). The token is now a secret of its own, sealed here and
// untouched by rotation (docs/adr/0067-chatwoot-inbox.md). An inbox made before this column keeps
// its derived token: the first rotation seals the one in use, so its callback URL stays as it was.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhooks').addColumn('chatwoot_callback_token_ciphertext', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhooks').dropColumn('chatwoot_callback_token_ciphertext').execute();
}
