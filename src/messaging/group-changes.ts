import type { GroupChange, GroupMember } from '../domain/groups.ts';
import type { E164 } from '../domain/phone.ts';
import { groupUpdatedPayload } from '../domain/event-payloads.ts';
import type { Store } from '../store/database.ts';
import type { GroupCommitter } from '../store/group-commit.ts';
import { forgetMembership, knownSubject, noteGroupChange } from '../store/repositories/groups.ts';
import { findNumberByPhone } from '../store/repositories/numbers.ts';
import { enqueueEvent, type DeliveryNotifier } from '../webhooks/outbox.ts';
import type { GroupService } from './groups.ts';

/**
 * Changes in our numbers' groups, as their sessions hear of them: each is remembered (the
 * subject, whether the number is still in the group and an admin) and reported to the
 * account's `group.updated` subscribers in the same commit.
 */
export class GroupChangeService {
  constructor(
    private readonly store: Store,
    private readonly committer: GroupCommitter,
    private readonly notifier: DeliveryNotifier,
    private readonly groups: GroupService,
  ) {}

  async record(event: GroupChange & { toPhone: E164 }): Promise<void> {
    const number = await findNumberByPhone(this.store.db, event.toPhone);
    if (number === undefined) throw new Error(`An engine reported a group change for ${event.toPhone}, which this gateway does not hold.`);
    const aboutNumber = event.participants.some((member) => isNumber(member, number.phone));
    const queued = await this.committer.run(async (trx) => {
      if (aboutNumber && (event.kind === 'removed' || event.kind === 'left')) await forgetMembership(trx, number, event.groupId, event.at);
      else await noteGroupChange(trx, number, event, aboutNumber);
      const subject = (await knownSubject(trx, number.id, event.groupId)) ?? event.subject ?? null;
      return enqueueEvent(
        trx,
        this.notifier,
        number.accountId,
        groupUpdatedPayload(number.phone, { id: event.groupId, subject }, event, aboutNumber),
        event.at,
      );
    });
    this.groups.forgetRemembered(number, event.groupId);
    this.notifier.deliveriesQueued(queued);
    // A number just added learns the rest (size, roles) from its session, as its phone would;
    // if WhatsApp will not say now, the next read of the group fills it in.
    if (aboutNumber && (event.kind === 'added' || event.kind === 'joined'))
      await this.groups.get(number, event.groupId).catch(() => undefined);
  }
}

function isNumber(member: GroupMember, phone: E164): boolean {
  return member.phone === phone;
}
