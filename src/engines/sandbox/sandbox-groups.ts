import { randomBytes, randomInt } from 'node:crypto';
import type {
  Group,
  GroupChange,
  GroupRole,
  GroupSettings,
  ParticipantAction,
  ParticipantResult,
  SandboxGroupRecord,
} from '../../domain/groups.ts';
import type { E164 } from '../../domain/phone.ts';

/** What an admin (or, to leave, any member) does to a group on the simulated network. */
export type GroupOperation =
  | { kind: 'participants'; action: ParticipantAction; phones: string[] }
  | { kind: 'settings'; settings: GroupSettings }
  | { kind: 'invite'; revoke: boolean }
  | { kind: 'leave' };

export interface GroupOperationOutcome {
  results?: ParticipantResult[];
  code?: string;
  /** What members' devices are told, and who must hear it (members, and those just removed). */
  changes: GroupChange[];
  notify: string[];
}

/** A change by a phone that is not in the group (or not an admin, where one must be). */
export class GroupRefusedError extends Error {
  constructor(
    readonly reason: 'not_member' | 'not_admin',
    message: string,
  ) {
    super(message);
    this.name = 'GroupRefusedError';
  }
}

/**
 * A sandbox phone whose number ends in 403 refuses to be added to groups, as a real person's
 * privacy setting ("only my contacts may add me") does: the way to rehearse that refusal.
 */
const PRIVACY_RESTRICTED = /403$/;

interface SandboxGroup {
  subject: string;
  description: string | null;
  members: Map<string, GroupRole>;
  inviteCode: string;
}

/**
 * Where the simulated network keeps its groups between runs (the gateway's database, for the
 * network embedded in it). Without one, groups last as long as the network's process.
 */
export interface SandboxGroupArchive {
  load(): Promise<SandboxGroupRecord[]>;
  save(record: SandboxGroupRecord): Promise<void>;
  remove(id: string): Promise<void>;
}

/**
 * The simulated network's groups: who is in each and with what role. Like WhatsApp's servers,
 * the network is the one place a group's membership is kept; each member's device learns of it
 * from there. Members are phones; the simulated network has no LIDs.
 */
export class SandboxGroups {
  private readonly groups = new Map<string, SandboxGroup>();
  /** Each group as last described, until it changes: a send to a big group reads it every time. */
  private readonly described = new Map<string, Group>();

  /** Puts back the groups kept from an earlier run; a group made meanwhile in this run wins. */
  restore(records: readonly SandboxGroupRecord[]): void {
    for (const record of records) {
      if (this.groups.has(record.id)) continue;
      this.groups.set(record.id, {
        subject: record.subject,
        description: record.description,
        members: new Map(record.members),
        inviteCode: record.inviteCode,
      });
    }
  }

  /** The group as it is kept between runs; undefined once it is gone (its last member left). */
  record(id: string): SandboxGroupRecord | undefined {
    const group = this.groups.get(id);
    if (group === undefined) return undefined;
    return {
      id,
      subject: group.subject,
      description: group.description,
      inviteCode: group.inviteCode,
      members: [...group.members.entries()],
    };
  }

  create(creator: string, subject: string, participants: readonly string[]): Group {
    let id: string;
    do id = `120363${String(randomInt(1e9)).padStart(9, '0')}${String(randomInt(1e9)).padStart(9, '0')}@g.us`;
    while (this.groups.has(id));
    const members = new Map<string, GroupRole>([[creator, 'superadmin']]);
    for (const phone of participants) if (phone !== creator && !PRIVACY_RESTRICTED.test(phone)) members.set(phone, 'member');
    this.groups.set(id, { subject, description: null, members, inviteCode: newInviteCode() });
    return this.describe(id)!;
  }

  /** The groups `phone` belongs to. */
  of(phone: string): Group[] {
    return [...this.groups.entries()].filter(([, group]) => group.members.has(phone)).map(([id]) => this.describe(id)!);
  }

  /** The group, if `phone` belongs to it: a non-member learns nothing, not even that it exists. */
  seenBy(phone: string, id: string): Group | undefined {
    return this.groups.get(id)?.members.has(phone) ? this.describe(id) : undefined;
  }

  apply(actor: string, id: string, operation: GroupOperation): GroupOperationOutcome {
    const group = this.groups.get(id);
    const role = group?.members.get(actor);
    if (group === undefined || role === undefined) throw new GroupRefusedError('not_member', `${actor} is not a member of group ${id}.`);
    this.described.delete(id);
    const before = [...group.members.keys()];
    const change = (kind: GroupChange['kind'], phones: string[], extra: Partial<GroupChange> = {}): GroupChange => ({
      groupId: id,
      kind,
      participants: phones.map((phone) => ({ phone: phone as E164, lid: null })),
      actor: { phone: actor as E164, lid: null },
      at: new Date(),
      ...extra,
    });
    if (operation.kind === 'leave') {
      group.members.delete(actor);
      // A group its last admin leaves gets one, as WhatsApp promotes someone.
      const [heir] = group.members.keys();
      if (heir !== undefined && ![...group.members.values()].some((each) => each !== 'member')) group.members.set(heir, 'admin');
      if (group.members.size === 0) this.groups.delete(id);
      return { changes: [change('left', [actor])], notify: before };
    }
    if (role === 'member') throw new GroupRefusedError('not_admin', `${actor} is not an admin of group ${id}.`);
    if (operation.kind === 'invite') {
      if (operation.revoke) group.inviteCode = newInviteCode();
      return { code: group.inviteCode, changes: [], notify: [] };
    }
    if (operation.kind === 'settings') {
      const changes: GroupChange[] = [];
      if (operation.settings.subject !== undefined) {
        group.subject = operation.settings.subject;
        changes.push(change('subject', [], { subject: group.subject }));
      }
      if (operation.settings.description !== undefined) {
        group.description = operation.settings.description;
        changes.push(change('description', [], { description: group.description }));
      }
      return { changes, notify: before };
    }
    const results = operation.phones.map((phone) => ({
      phone: phone as E164,
      outcome: this.participantOutcome(group, operation.action, phone),
    }));
    const done = results.filter((result) => result.outcome === 'done').map((result) => result.phone);
    for (const phone of done) {
      if (operation.action === 'add') group.members.set(phone, 'member');
      else if (operation.action === 'remove') group.members.delete(phone);
      else group.members.set(phone, operation.action === 'promote' ? 'admin' : 'member');
    }
    const kind = ({ add: 'added', remove: 'removed', promote: 'promoted', demote: 'demoted' } as const)[operation.action];
    // An added number learns the group's subject with the news, as a device does.
    return {
      results,
      changes: done.length === 0 ? [] : [change(kind, done, { subject: group.subject })],
      notify: [...new Set([...before, ...done])],
    };
  }

  private participantOutcome(group: SandboxGroup, action: ParticipantAction, phone: string): ParticipantResult['outcome'] {
    const role = group.members.get(phone);
    if (action === 'add') return role !== undefined ? 'already_member' : PRIVACY_RESTRICTED.test(phone) ? 'privacy_restricted' : 'done';
    if (role === undefined) return 'not_member';
    // The group's creator cannot be removed or demoted by another admin.
    if (role === 'superadmin' && action !== 'promote') return 'refused';
    return 'done';
  }

  private describe(id: string): Group | undefined {
    const known = this.described.get(id);
    if (known !== undefined) return known;
    const group = this.groups.get(id);
    if (group === undefined) return undefined;
    const described: Group = {
      id,
      subject: group.subject,
      description: group.description,
      participants: [...group.members.entries()].map(([phone, role]) => ({ phone: phone as E164, lid: null, role })),
    };
    this.described.set(id, described);
    return described;
  }
}

function newInviteCode(): string {
  return randomBytes(16).toString('base64url').slice(0, 22);
}
