import { KEYED_ERRORS, REQUEST_ERRORS } from './error-responses.ts';
import { defineOperation, ok } from './operation.ts';

const accountSettingsRequestSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    link_previews: {
      type: 'boolean',
      description:
        'Let sends with `link_preview: true` have the gateway fetch the linked page (through the same address guard as media.url) for ' +
        'its preview. Off until turned on.',
    },
  },
} as const;

const accountSettingsResponseSchema = {
  type: 'object',
  required: ['link_previews'],
  properties: { link_previews: { type: 'boolean', description: "Whether the gateway fetches link previews for this account's sends." } },
} as const;

export const updateAccountSettings = defineOperation({ body: accountSettingsRequestSchema }, ['accounts'])({
  method: 'PATCH',
  scope: 'send',
  path: '/account/settings',
  operationId: 'updateAccountSettings',
  summary: "Change (or read) your account's settings",
  description:
    'Sets what is given and answers every setting; an empty body only reads them. link_previews (off by default) lets sends ask the ' +
    'gateway to fetch a link\'s preview (docs/api.md, "Link previews"). /account/settings and /api/account/settings are the same ' +
    'operation.',
  tag: 'messages',
  answers: { 200: accountSettingsResponseSchema },
  errors: [...KEYED_ERRORS, ...REQUEST_ERRORS],
  handle: async ({ scope, body, actor }, { accounts }) => {
    const settings = await accounts.updateSettings(
      scope,
      { ...(body.link_previews !== undefined && { linkPreviews: body.link_previews }) },
      actor,
    );
    return ok({ link_previews: settings.linkPreviews });
  },
});
