import assert from 'node:assert/strict';
import type { User, UserRole } from '../../src/domain/model.ts';
import type { TestGateway } from './gateway.ts';
import { DashboardClient } from './dashboard-client.ts';
import { createTestUser } from './users.ts';

/** Teams and signed-in clients for the team and invite tests. */
export const PASSWORD = 'correct horse battery';

export interface Team {
  accountId: string;
  owner: User;
  admin: User;
  member: User;
}

let teamCounter = 0;

/** A fresh account with one user of each role, so that no test depends on another's changes. */
export async function createTeam(test: TestGateway, name: string): Promise<Team> {
  teamCounter += 1;
  const accountId = (await test.gateway.accounts.createAccount({ name })).id;
  const make = async (role: UserRole) =>
    (
      await createTestUser(test.gateway, {
        accountId,
        email: `${role}${teamCounter}@${name.toLowerCase()}.test`,
        password: PASSWORD,
        role,
      })
    ).user;
  return { accountId, owner: await make('owner'), admin: await make('admin'), member: await make('member') };
}

export async function signedIn(test: TestGateway, user: User): Promise<DashboardClient> {
  const client = new DashboardClient(test);
  const response = await client.signIn(user.email, PASSWORD);
  assert.equal(response.statusCode, 303, `${user.email} signs in`);
  return client;
}

/** The value of a SecretReveal input, as a browser would show it. */
function revealed(body: string, id: string): string | undefined {
  return new RegExp(`id="${id}"[^>]*value="([^"]*)"`).exec(body)?.[1];
}

export async function createInviteLink(client: DashboardClient, role: string): Promise<string> {
  const response = await client.submit('/team', '/team/invites', { role });
  assert.equal(response.statusCode, 201);
  const link = revealed(response.body, 'invite-link');
  assert.ok(link, 'the page shows the invite link');
  return link;
}
