import type { Kysely } from 'kysely';

// WhatsApp's customer-service window (docs/adr/0072-customer-service-window.md): a business may
// send free-form messages to a person for 24 hours after the person last wrote. Per number and
// person, the newest incoming message's time and its WhatsApp id (which Meta's typing indicator
// names); kept by the Cloud API engine, which alone is bound by the window.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('customer_windows')
    .addColumn('number_id', 'text', (column) => column.notNull().references('whatsapp_numbers.id').onDelete('cascade'))
    .addColumn('contact_phone', 'text', (column) => column.notNull())
    .addColumn('last_inbound_at', 'bigint', (column) => column.notNull())
    .addColumn('last_inbound_engine_id', 'text', (column) => column.notNull())
    .addPrimaryKeyConstraint('customer_windows_pk', ['number_id', 'contact_phone'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('customer_windows').execute();
}
