import { AppError } from '../../domain/errors.ts';
import type { CloudSettingsView } from '../../accounts/cloud-numbers-service.ts';
import { CLOUD_SECRET_LIMITS, META_ID_PATTERN, cloudCallbackPath, presentCloudSettings } from '../../domain/cloud-settings.ts';
import type { WhatsAppNumber } from '../../domain/model.ts';
import { type OperatorScope, type TenantScope, withinAccount } from '../../domain/tenant-scope.ts';
import { type Answer, ok } from '../operations/operation.ts';
import { numberParams } from './numbers.ts';
import { defineOperatorOperation, type OperatorServices } from './operator-operation.ts';

// A Cloud API number's settings over the operator API (docs/cloud-api.md), as `wagw number cloud`
// and the console set them: Meta's ids, the access token, the app secret and the verify token.
// The token and secrets are sealed at rest and never answered back; each change is an audit row.

const metaId = (what: string) =>
  ({ type: 'string', pattern: META_ID_PATTERN, description: `Meta's id of ${what}.`, examples: ['106540352242922'] }) as const;
const secret = (what: string) =>
  ({ type: 'string', ...CLOUD_SECRET_LIMITS, description: what, examples: ['EAAG-example-secret'] }) as const;

const cloudSettingsSchema = {
  type: 'object',
  required: ['number_id', 'phone_number_id', 'business_account_id', 'access_token', 'app_secret', 'verify_token', 'callback_path'],
  additionalProperties: false,
  properties: {
    number_id: { type: 'string', description: 'num_…' },
    phone_number_id: { type: ['string', 'null'], description: "Meta's id of the phone number; null before the settings are set." },
    business_account_id: { type: ['string', 'null'], description: "Meta's id of the WhatsApp Business Account; null before." },
    access_token: { type: ['string', 'null'], description: '*** once set: the token is never answered back.' },
    app_secret: { type: ['string', 'null'], description: '*** once set.' },
    verify_token: { type: ['string', 'null'], description: '*** once set.' },
    callback_path: {
      type: 'string',
      description:
        "The path to give Meta as the callback URL, after the gateway's public address (GET for the handshake, POST for deliveries).",
    },
  },
} as const;

function settingsJson(number: WhatsAppNumber, settings: { phoneNumberId: string; businessAccountId: string } | null) {
  const path = cloudCallbackPath(number.id);
  if (settings === null)
    return {
      number_id: number.id,
      phone_number_id: null,
      business_account_id: null,
      access_token: null,
      app_secret: null,
      verify_token: null,
      callback_path: path,
    };
  return { number_id: number.id, ...presentCloudSettings(settings, path) };
}

/** The service's invalid_argument (a field it refused, or a number not on the cloud engine), as the API names it. */
function asInvalidRequest(error: unknown): never {
  if (error instanceof AppError && error.code === 'invalid_argument')
    throw new AppError('invalid_request', error.message, { field: String(error.meta?.field ?? 'engine'), problem: 'invalid' });
  throw error;
}

/**
 * One settings action on a number of the account (the account found first), answered with the
 * settings it leaves; the service's refusals are named as the API names them. Set, read and
 * clear differ only in the action.
 */
async function inAccount(
  gateway: Pick<OperatorServices, 'accounts'>,
  scope: OperatorScope,
  accountId: string,
  act: (within: TenantScope) => Promise<{ number: WhatsAppNumber; settings: CloudSettingsView | null }>,
): Promise<Answer> {
  await gateway.accounts.getAccount(accountId);
  const { number, settings } = await act(withinAccount(scope, accountId)).catch(asInvalidRequest);
  return ok(settingsJson(number, settings));
}

const setCloudSettings = defineOperatorOperation({
  params: numberParams,
  body: {
    type: 'object',
    required: ['phone_number_id', 'business_account_id', 'access_token', 'app_secret', 'verify_token'],
    additionalProperties: false,
    properties: {
      phone_number_id: metaId('the phone number (WhatsApp Manager, API Setup)'),
      business_account_id: metaId('the WhatsApp Business Account'),
      access_token: secret('A system user access token with whatsapp_business_messaging and whatsapp_business_management.'),
      app_secret: secret("The Meta app's secret, with which Meta signs its callbacks (X-Hub-Signature-256)."),
      verify_token: secret("A token of your choosing, given to Meta with the callback URL; Meta's handshake repeats it."),
    },
  },
})({
  method: 'POST',
  path: '/admin/accounts/:id/numbers/:number_id/cloud',
  operationId: 'setAccountNumberCloudSettings',
  summary: "Set a Cloud API number's settings",
  description:
    'Sets the Meta ids, access token, app secret and verify token of a number on the `cloud` engine, as `wagw number cloud` does. ' +
    'The token and secrets are sealed at rest and answered only as ***. A number whose session failed for want of them starts ' +
    "again at once. The answer's callback_path is what to give Meta as the callback URL. An audit row names the token and the ids.",
  answers: { 200: cloudSettingsSchema },
  errors: ['account_not_found', 'number_not_found'],
  handle: ({ scope, params, body, actor }, gateway) =>
    inAccount(gateway, scope, params.id, async (within) => {
      const set = await gateway.cloudNumbers.set(
        within,
        params.number_id,
        {
          phoneNumberId: body.phone_number_id,
          businessAccountId: body.business_account_id,
          accessToken: body.access_token,
          appSecret: body.app_secret,
          verifyToken: body.verify_token,
        },
        actor,
      );
      // A session that failed for want of settings starts again with them; a running one reads them on its next call.
      await gateway.numberControl.restart({ scope: within, actor }, set.number).catch(() => undefined);
      return set;
    }),
});

const getCloudSettings = defineOperatorOperation({ params: numberParams })({
  method: 'GET',
  path: '/admin/accounts/:id/numbers/:number_id/cloud',
  operationId: 'getAccountNumberCloudSettings',
  summary: "A Cloud API number's settings",
  description: "Meta's ids of a `cloud` number and its callback path; the token and secrets only as *** (null before they are set).",
  answers: { 200: cloudSettingsSchema },
  errors: ['account_not_found', 'number_not_found'],
  handle: ({ scope, params }, gateway) =>
    inAccount(gateway, scope, params.id, (within) => gateway.cloudNumbers.read(within, params.number_id)),
});

const clearCloudSettings = defineOperatorOperation({ params: numberParams })({
  method: 'DELETE',
  path: '/admin/accounts/:id/numbers/:number_id/cloud',
  operationId: 'clearAccountNumberCloudSettings',
  summary: "Clear a Cloud API number's settings",
  description: 'Forgets the ids, token and secrets; the number sends nothing until they are set again. An audit row names the token.',
  answers: { 200: cloudSettingsSchema },
  errors: ['account_not_found', 'number_not_found'],
  handle: ({ scope, params, actor }, gateway) =>
    inAccount(gateway, scope, params.id, async (within) => ({
      number: await gateway.cloudNumbers.clear(within, params.number_id, actor),
      settings: null,
    })),
});

export const numberCloudOperations = [setCloudSettings, getCloudSettings, clearCloudSettings];
