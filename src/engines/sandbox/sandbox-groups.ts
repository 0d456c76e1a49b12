import { randomInt } from 'node:crypto';
import type { Group, GroupRole } from '../../domain/groups.ts';
import type { E164 } from '../../domain/phone.ts';

/**
 * The simulated network's groups: who is in each and with what role. Like WhatsApp's servers,
 * the network is the one place a group's membership is kept; each member's device learns of it
 * from there. Members are phones; the simulated network has no LIDs.
 */
export class SandboxGroups {
  private readonly groups = new Map<string, { subject: string; description: string | null; members: Map<string, GroupRole> }>();

  create(creator: string, subject: string, participants: readonly string[]): Group {
    let id: string;
    do id = `120363${String(randomInt(1e9)).padStart(9, '0')}${String(randomInt(1e9)).padStart(9, '0')}@g.us`;
    while (this.groups.has(id));
    const members = new Map<string, GroupRole>([[creator, 'superadmin']]);
    for (const phone of participants) if (phone !== creator) members.set(phone, 'member');
    this.groups.set(id, { subject, description: null, members });
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

  private describe(id: string): Group | undefined {
    const group = this.groups.get(id);
    if (group === undefined) return undefined;
    return {
      id,
      subject: group.subject,
      description: group.description,
      participants: [...group.members.entries()].map(([phone, role]) => ({ phone: phone as E164, lid: null, role })),
    };
  }
}
