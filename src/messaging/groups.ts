import { AppError } from '../domain/errors.ts';
import { isGroupId, MAX_GROUP_SUBJECT_LENGTH, MAX_NEW_GROUP_PARTICIPANTS, type Group } from '../domain/groups.ts';
import type { WhatsAppNumber } from '../domain/model.ts';
import { parseE164, type E164 } from '../domain/phone.ts';
import { refusedBySession } from './session-refusals.ts';
import type { SessionSupervisor } from './session-supervisor.ts';

/**
 * Groups as one of our numbers sees them, through its session on the node that serves it (the
 * routes forward there). A group the number is not in is not found, whoever else's it may be.
 */
export class GroupService {
  constructor(private readonly supervisor: SessionSupervisor) {}

  async create(number: WhatsAppNumber, rawSubject: string, rawParticipants: readonly string[]): Promise<Group> {
    const subject = rawSubject.trim();
    if (subject === '' || [...subject].length > MAX_GROUP_SUBJECT_LENGTH) {
      throw new AppError('invalid_request', `subject must be 1 to ${MAX_GROUP_SUBJECT_LENGTH} characters.`, { field: 'subject' });
    }
    const participants = parseParticipants(rawParticipants).filter((phone) => phone !== number.phone);
    if (participants.length === 0) throw new AppError('invalid_request', 'participants must name at least one phone besides from_phone.', { field: 'participants' });
    return this.supervisor.createGroup(number, subject, participants).catch((error: unknown) => refusedBySession(number, error));
  }

  async list(number: WhatsAppNumber): Promise<Group[]> {
    return this.supervisor.listGroups(number).catch((error: unknown) => refusedBySession(number, error));
  }

  async get(number: WhatsAppNumber, groupId: string): Promise<Group> {
    const group = isGroupId(groupId) ? await this.supervisor.groupInfo(number, groupId).catch((error: unknown) => refusedBySession(number, error)) : undefined;
    if (group === undefined) throw new AppError('group_not_found', `${number.phone} is not in a group "${groupId.slice(0, 64)}".`, { field: 'id' });
    return group;
  }
}

/** The phones to add, each in E.164 and once, or a 400 naming the first that is not a phone. */
function parseParticipants(raw: readonly string[]): E164[] {
  if (raw.length > MAX_NEW_GROUP_PARTICIPANTS) {
    throw new AppError('invalid_request', `participants holds at most ${MAX_NEW_GROUP_PARTICIPANTS} phones; add more once the group exists.`, { field: 'participants' });
  }
  const phones = raw.map((value, index) => {
    const phone = parseE164(value);
    if (phone === undefined) throw new AppError('invalid_phone_number', `participants[${index}] "${value}" is not a valid international phone number; include the country code.`, { field: `participants[${index}]` });
    return phone;
  });
  return [...new Set(phones)];
}
