import { sql, type Kysely } from 'kysely';

// One expiry per node instead of one per number (docs/adr/0041-node-leases-and-pulled-handovers.md).
// A number's lease is live while its node's `lease_expires_at` is ahead, so renewing all of a
// node's leases writes one row, whatever their count. `wanted_by` is a node's request for a
// number another node holds, which that node hands over at its next tick.
//
// Nodes of the previous version renewed each lease's own expiry, which this drops: beside a
// node of this version they stand down (their renewal fails and they fence themselves), and
// their numbers move once the expiry copied here from their leases runs out.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('cluster_nodes')
    .addColumn('lease_expires_at', 'bigint', (column) => column.notNull().defaultTo(0))
    .execute();
  await sql`update cluster_nodes set lease_expires_at = coalesce(
    (select max(expires_at) from number_leases where number_leases.node_id = cluster_nodes.id), 0)`.execute(db);
  await db.schema.alterTable('number_leases').addColumn('wanted_by', 'text').execute();
  await db.schema.dropIndex('number_leases_node_idx').execute();
  await db.schema.alterTable('number_leases').dropColumn('expires_at').execute();
  await db.schema.createIndex('number_leases_node_idx').on('number_leases').columns(['node_id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('number_leases_node_idx').execute();
  await db.schema
    .alterTable('number_leases')
    .addColumn('expires_at', 'bigint', (column) => column.notNull().defaultTo(0))
    .execute();
  await sql`update number_leases set expires_at = coalesce(
    (select lease_expires_at from cluster_nodes where cluster_nodes.id = number_leases.node_id), 0)`.execute(db);
  await db.schema.alterTable('number_leases').dropColumn('wanted_by').execute();
  await db.schema.createIndex('number_leases_node_idx').on('number_leases').columns(['node_id', 'expires_at']).execute();
  await db.schema.alterTable('cluster_nodes').dropColumn('lease_expires_at').execute();
}
