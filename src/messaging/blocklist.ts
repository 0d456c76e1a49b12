import type { GroupMember as Contact } from '../domain/groups.ts';
import type { WhatsAppNumber } from '../domain/model.ts';
import type { E164 } from '../domain/phone.ts';
import type { SessionSupervisor } from './session-supervisor.ts';

/**
 * A number's blocklist, which WhatsApp keeps (ADR 0033): the gateway holds no copy, so what it
 * answers is always what WhatsApp has, changes made from the phone included.
 */
export class BlocklistService {
  constructor(private readonly supervisor: Pick<SessionSupervisor, 'sessionFor'>) {}

  async setBlocked(number: WhatsAppNumber, phone: E164, blocked: boolean): Promise<void> {
    await this.supervisor.sessionFor(number).updateBlock(phone, blocked);
  }

  list(number: WhatsAppNumber): Promise<Contact[]> {
    return this.supervisor.sessionFor(number).blocklist();
  }
}
