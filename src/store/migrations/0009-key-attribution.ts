import { sql, type Kysely } from 'kysely';

// An API key remembers the email of the user who made it, so that its attribution survives the
// user's removal (the user id is set to null then): the team can still see whose keys to revoke.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('created_by_email', 'text').execute();
  await sql`update api_keys set created_by_email = (select email from users where users.id = api_keys.created_by_user_id) where created_by_user_id is not null`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').dropColumn('created_by_email').execute();
}
