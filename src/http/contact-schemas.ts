import type { Contact } from '../domain/identities.ts';

/** A person of a number, with both identifiers where known: the `Person` component. */
export const contactComponent = {
  $id: 'Person',
  type: 'object',
  description:
    'A person one of your numbers knows: by phone, by LID, or by both once WhatsApp has told the gateway both (docs/identity.md).',
  required: ['phone', 'lid', 'whatsapp_name', 'saved', 'identity_learned_at', 'identity_source', 'last_message_at'],
  properties: {
    phone: { type: ['string', 'null'], description: 'E.164; null while WhatsApp has named the person only by LID.' },
    lid: { type: ['string', 'null'], description: 'The person\'s LID ("<digits>@lid"); null while unknown.' },
    whatsapp_name: { type: ['string', 'null'], description: 'The name the person gave themselves on WhatsApp, as last seen on a message.' },
    saved: { type: 'boolean', description: "Saved in the number's address book, rather than only written with." },
    identity_learned_at: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'When the gateway learned that the LID and the phone are one person; null while it knows only one.',
    },
    identity_source: {
      type: ['string', 'null'],
      enum: ['message', 'mapping', 'group', 'check', 'sandbox', null],
      description: "What told it: a message carrying both, WhatsApp's LID mapping, a group's members, a number check, or the sandbox.",
    },
    last_message_at: { type: ['string', 'null'], format: 'date-time', description: 'The latest message exchanged in the direct chat.' },
  },
} as const;

export const contactSchemaComponents = [contactComponent] as const;

export function presentContact(contact: Contact) {
  return {
    phone: contact.phone,
    lid: contact.lid,
    whatsapp_name: contact.whatsappName,
    saved: contact.saved,
    identity_learned_at: contact.identityLearnedAt?.toISOString() ?? null,
    identity_source: contact.identitySource,
    last_message_at: contact.lastMessageAt?.toISOString() ?? null,
  };
}
