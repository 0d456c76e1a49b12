import type { WhatsAppNumber } from '../../../domain/model.ts';
import type { E164 } from '../../../domain/phone.ts';
import type { AccountScope } from '../../../domain/tenant-scope.ts';
import { parsePhoneField } from '../../message-input.ts';
import { notOwned } from '../owner-dispatch.ts';
import type { OperationServices } from '../services.ts';

/** A group operation runs on the node that serves from_phone. */
export function fromPhone(raw: string): E164 {
  return parsePhoneField(raw, 'from_phone');
}

/** from_phone as a number of the key's account, on its owner. */
export function groupNumber(services: Pick<OperationServices, 'numbers'>, scope: AccountScope, raw: string): Promise<WhatsAppNumber> {
  return services.numbers.findNumber(scope, fromPhone(raw)).catch(notOwned);
}

/** The group's invite link as from_phone (an admin) gets it, made anew when `revoke`. */
export async function inviteLinkAnswer(
  services: Pick<OperationServices, 'groups'>,
  number: WhatsAppNumber,
  groupId: string,
  revoke: boolean,
) {
  const { code, link } = await services.groups.inviteLink(number, groupId, revoke);
  return { group_id: groupId, code, link };
}
