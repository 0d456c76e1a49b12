import { AppError } from '../domain/errors.ts';
import {
  isGroupId,
  MAX_GROUP_DESCRIPTION_LENGTH,
  MAX_GROUP_SUBJECT_LENGTH,
  MAX_NEW_GROUP_PARTICIPANTS,
  MAX_PARTICIPANTS_PER_CHANGE,
  participantActions,
  roleOf,
  type Group,
  type GroupSettings,
  type ParticipantResult,
} from '../domain/groups.ts';
import { EngineSendError } from '../engines/engine.ts';
import type { WhatsAppNumber } from '../domain/model.ts';
import type { E164 } from '../domain/phone.ts';
import { parsePhoneList } from '../domain/phone-lists.ts';
import type { Store } from '../store/database.ts';
import { accountKnowsGroup, forgetMembership, listKnownGroups, rememberGroups, type KnownGroup } from '../store/repositories/groups.ts';
import type { SessionSupervisor } from './session-supervisor.ts';

/** Groups whose last remembered state is kept in memory, so that an unchanged one is not written again. */
const MAX_REMEMBERED = 10_000;

/**
 * Groups as one of our numbers sees them, through its session on the node that serves it (the
 * routes forward there). A group the number is not in is not found, whoever else's it may be;
 * one the account knows through any of its numbers (ADR 0023), which this one is not (or no
 * longer) in, is `not_group_member`.
 *
 * What a number sees of its groups is remembered in the database (subject, size, whether it is
 * an admin, whether it is still a member): the account's knowledge of a group, the dashboard's
 * list, and the subject of the group's messages come from there.
 */
export class GroupService {
  /** What was last written for each number's group, to skip writes that change nothing. */
  private readonly remembered = new Map<string, string>();

  constructor(
    private readonly store: Store,
    private readonly supervisor: Pick<SessionSupervisor, 'sessionFor'>,
  ) {}

  async create(number: WhatsAppNumber, rawSubject: string, rawParticipants: readonly string[]): Promise<Group> {
    const subject = parseSubject(rawSubject);
    const participants = parseParticipants(rawParticipants).filter((phone) => phone !== number.phone);
    if (participants.length === 0)
      throw new AppError('invalid_request', 'participants must name at least one phone besides from_phone.', { field: 'participants' });
    const group = await this.supervisor.sessionFor(number).createGroup(subject, participants);
    await this.remember(number, [group]);
    return group;
  }

  async list(number: WhatsAppNumber): Promise<Group[]> {
    const groups = await this.supervisor.sessionFor(number).listGroups();
    await this.remember(number, groups, true);
    return groups;
  }

  get(number: WhatsAppNumber, groupId: string): Promise<Group> {
    return this.asMember(number, groupId, 'id');
  }

  /**
   * The group, which the number must be a member of to send there or change it: otherwise 403
   * `not_group_member` when the account knows the group, and 404 `group_not_found` when not.
   */
  async asMember(number: WhatsAppNumber, groupId: string, field: string): Promise<Group> {
    // A malformed id names no group: not found, without asking the session.
    const group = isGroupId(groupId) ? await this.supervisor.sessionFor(number).groupInfo(groupId) : undefined;
    if (group === undefined || roleOf(group, number.phone) === undefined) throw await this.notMember(number, groupId, field);
    await this.remember(number, [group]);
    return group;
  }

  /** Adds, removes, promotes or demotes participants; the number must be an admin. One result per phone, in order. */
  async changeParticipants(
    number: WhatsAppNumber,
    groupId: string,
    rawAction: string,
    rawPhones: readonly string[],
  ): Promise<ParticipantResult[]> {
    const action = participantActions.find((known) => known === rawAction);
    if (action === undefined)
      throw new AppError('invalid_request', `action must be one of ${participantActions.join(', ')}.`, { field: 'action' });
    const phones = [...new Set(parsePhoneList(rawPhones, 'participants', { min: 1, max: MAX_PARTICIPANTS_PER_CHANGE }))];
    await this.asAdmin(number, groupId);
    const results = await this.supervisor
      .sessionFor(number)
      .updateParticipants(groupId, action, phones)
      .catch((error: unknown) => this.refused(number, groupId, error));
    this.forgetRemembered(number, groupId);
    return results;
  }

  /** Changes the subject and description (null or empty clears it); the number must be an admin. Answers the group as it is now. */
  async changeSettings(number: WhatsAppNumber, groupId: string, raw: { subject?: string; description?: string | null }): Promise<Group> {
    if (raw.subject === undefined && raw.description === undefined)
      throw new AppError('invalid_request', 'Give subject, description or both to change.', { field: 'subject', problem: 'missing' });
    const settings: GroupSettings = {};
    if (raw.subject !== undefined) settings.subject = parseSubject(raw.subject);
    if (raw.description !== undefined) {
      const description = raw.description?.trim() ?? '';
      if ([...description].length > MAX_GROUP_DESCRIPTION_LENGTH)
        throw new AppError('invalid_request', `description holds at most ${MAX_GROUP_DESCRIPTION_LENGTH} characters.`, {
          field: 'description',
        });
      settings.description = description === '' ? null : description;
    }
    await this.asAdmin(number, groupId);
    await this.supervisor
      .sessionFor(number)
      .updateGroupSettings(groupId, settings)
      .catch((error: unknown) => this.refused(number, groupId, error));
    this.forgetRemembered(number, groupId);
    return this.asMember(number, groupId, 'id');
  }

  /** The group's invite link, or (with `revoke`) a new one, the old one no longer working; the number must be an admin. */
  async inviteLink(number: WhatsAppNumber, groupId: string, revoke: boolean): Promise<{ code: string; link: string }> {
    await this.asAdmin(number, groupId);
    const code = await this.supervisor
      .sessionFor(number)
      .inviteCode(groupId, revoke)
      .catch((error: unknown) => this.refused(number, groupId, error));
    return { code, link: `https://chat.whatsapp.com/${code}` };
  }

  /** The number leaves the group; the account still knows it, as one its number was in. */
  async leave(number: WhatsAppNumber, groupId: string): Promise<void> {
    await this.asMember(number, groupId, 'id');
    await this.supervisor
      .sessionFor(number)
      .leaveGroup(groupId)
      .catch((error: unknown) => this.refused(number, groupId, error));
    await forgetMembership(this.store.db, number, groupId, new Date());
    this.forgetRemembered(number, groupId);
  }

  private async asAdmin(number: WhatsAppNumber, groupId: string): Promise<Group> {
    const group = await this.asMember(number, groupId, 'id');
    if (roleOf(group, number.phone) === 'member') throw notAdmin(number, groupId);
    return group;
  }

  /** WhatsApp's refusal of a change as the API answers it (the supervisor answers a session that is down or rate-limited). */
  private async refused(number: WhatsAppNumber, groupId: string, error: unknown): Promise<never> {
    if (error instanceof EngineSendError && error.failure === 'not_group_admin') throw notAdmin(number, groupId);
    if (error instanceof EngineSendError && error.failure === 'not_group_member') throw await this.notMember(number, groupId, 'id');
    throw error;
  }

  /** The refusal for a group `number` is not in: whether it may learn that the group exists decides which. */
  async notMember(number: WhatsAppNumber, groupId: string, field: string): Promise<AppError> {
    if (isGroupId(groupId) && (await accountKnowsGroup(this.store.db, number.accountId, groupId))) {
      await forgetMembership(this.store.db, number, groupId, new Date());
      this.forgetRemembered(number, groupId);
      return new AppError(
        'not_group_member',
        `${number.phone} is not a member of group ${groupId}${field === 'to_group' ? ', so it cannot send there' : ''}.`,
        { field, group_id: groupId },
      );
    }
    return new AppError('group_not_found', `${number.phone} is not in a group "${groupId.slice(0, 64)}".`, { field });
  }

  /** The groups each number was last seen in, from the database: no session is asked. */
  async knownGroups(numbers: readonly WhatsAppNumber[]): Promise<(KnownGroup & { phone: string })[]> {
    const phones = new Map(numbers.map((number) => [number.id, number.phone]));
    return (await listKnownGroups(this.store.db, [...phones.keys()])).map((group) => ({ ...group, phone: phones.get(group.numberId)! }));
  }

  /** Drops what was last written for the number's group, after a change recorded elsewhere. */
  forgetRemembered(number: WhatsAppNumber, groupId: string): void {
    this.remembered.delete(`${number.id}/${groupId}`);
  }

  /** Writes what the number now sees of its groups, skipping those that have not changed. */
  private async remember(number: WhatsAppNumber, groups: readonly Group[], complete = false): Promise<void> {
    const changed = groups.filter((group) => {
      const key = `${number.id}/${group.id}`;
      const state = JSON.stringify([group.subject, group.participants.length, roleOf(group, number.phone) ?? null]);
      if (this.remembered.get(key) === state) return false;
      if (this.remembered.size >= MAX_REMEMBERED) this.remembered.delete(this.remembered.keys().next().value!);
      this.remembered.set(key, state);
      return true;
    });
    if (changed.length === 0 && !complete) return;
    await rememberGroups(this.store.db, number, changed, new Date(), complete ? groups.map((group) => group.id) : undefined);
  }
}

function parseSubject(raw: string): string {
  const subject = raw.trim();
  if (subject === '' || [...subject].length > MAX_GROUP_SUBJECT_LENGTH) {
    throw new AppError('invalid_request', `subject must be 1 to ${MAX_GROUP_SUBJECT_LENGTH} characters.`, { field: 'subject' });
  }
  return subject;
}

function notAdmin(number: WhatsAppNumber, groupId: string): AppError {
  return new AppError('not_group_admin', `${number.phone} is not an admin of group ${groupId}; only admins may change it.`, {
    group_id: groupId,
  });
}

/** The phones to add, each in E.164 and once, or a 400 naming the first that is not a phone. */
function parseParticipants(raw: readonly string[]): E164[] {
  const tooMany = `participants holds at most ${MAX_NEW_GROUP_PARTICIPANTS} phones; add more once the group exists.`;
  return [...new Set(parsePhoneList(raw, 'participants', { min: 0, max: MAX_NEW_GROUP_PARTICIPANTS, tooMany }))];
}
