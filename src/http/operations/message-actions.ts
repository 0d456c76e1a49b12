import { AppError } from '../../domain/errors.ts';
import type { Message, WhatsAppNumber } from '../../domain/model.ts';
import type { AccountScope } from '../../domain/tenant-scope.ts';
import { KEYED_ERRORS, REQUEST_ERRORS } from './error-responses.ts';
import { presentPage } from './message-presenting.ts';
import type { OperationServices } from './services.ts';

/** What acting on a stored message can answer besides the key's and the request's errors. */
export const MESSAGE_ACTION_ERRORS = [
  ...KEYED_ERRORS,
  ...REQUEST_ERRORS,
  'message_not_found',
  'message_not_in_chat',
  'message_not_editable',
  'number_not_connected',
  'rate_limited',
  // A Cloud API number: edits and revocations are not Meta's; a reaction outside the 24-hour window is refused.
  'capability_not_supported',
  'window_closed',
  'cloud_api_refused',
] as const;

export const messageIdParams = { type: 'object', required: ['id'], properties: { id: { type: 'string' } } } as const;

/** The number whose session acts on the message named in the path: its own; undefined when it left the gateway (answered here). */
export async function messageOwner(
  services: Pick<OperationServices, 'messageActions'>,
  scope: AccountScope,
  messageId: string,
): Promise<WhatsAppNumber | undefined> {
  return (await services.messageActions.locate(scope, messageId, 'id')).number;
}

/** The message and the number it belongs to, which must still be on the gateway. */
export async function locateOnItsNumber(
  services: Pick<OperationServices, 'messageActions'>,
  scope: AccountScope,
  messageId: string,
): Promise<{ message: Message; number: WhatsAppNumber }> {
  const { message, number } = await services.messageActions.locate(scope, messageId, 'id');
  if (number === undefined)
    throw new AppError('message_not_in_chat', `Message ${message.id} belongs to a number that is no longer on this gateway.`, {
      field: 'id',
    });
  return { message, number };
}

/** A changed message as GET /messages/{id} shows it in a page. */
export async function presentChanged(
  services: Pick<OperationServices, 'history' | 'media' | 'mediaLinks'>,
  scope: AccountScope,
  changed: Message,
) {
  const [presented] = await presentPage(services, scope, [await services.history.find(scope, changed.id)]);
  return presented;
}
