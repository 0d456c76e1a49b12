import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { CLI_ACTOR } from '../../src/domain/audit.ts';
import type { Dialect } from './databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from './gateway.ts';

/** The error envelope of v0.1.0, with the code and, for a field, the field. */
interface Envelope {
  error?: string;
  message?: unknown;
  details?: unknown;
  request_id?: string;
  meta?: { field?: string };
}

/** Asserts a refusal in the documented envelope: its status, its code and, when given, the field at fault. */
export function assertRefused(response: { statusCode: number; json(): unknown }, status: number, error: string, field?: string): void {
  const body = response.json() as Envelope;
  assert.equal(response.statusCode, status, JSON.stringify(body));
  assert.equal(body.error, error);
  assert.equal(typeof body.message, 'string');
  assert.ok(body.details === undefined || typeof body.details === 'string');
  assert.match(body.request_id ?? '', /^req_/);
  if (field !== undefined) assert.equal(body.meta?.field, field);
}

/** Calls the operator API with a token, a JSON body when one is given. */
export function operatorCaller(test: () => TestGateway, token: () => string) {
  return (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown, bearer = token()) =>
    test().inject({
      method,
      url,
      headers: { authorization: `Bearer ${bearer}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { payload: JSON.stringify(body) }),
    });
}

/** An audit event as GET /admin/audit_events answers it, as far as the tests read it. */
interface AuditRow {
  action: string;
  target_id: string;
  account_id: string;
  actor: { kind: string; id: string; label: string | null; address: string | null };
  details: Record<string, unknown>;
}

/** One account's newest audit rows, read through the operator API itself. */
async function auditRowsOf(call: ReturnType<typeof operatorCaller>, accountId: string, limit: number): Promise<AuditRow[]> {
  return (await call('GET', `/admin/audit_events?account_id=${accountId}&limit=${limit}`)).json().events;
}

/**
 * The set-up of an operator API test on one database: a gateway, two seeded accounts (the one
 * acted on, and another whose objects must stay out of reach), an operator token, and calls made
 * with it. Registers its own before and after hooks; read the fields in tests, once they have run.
 */
export function operatorApiWorld(dialect: Dialect): OperatorApiWorld {
  const world: OperatorApiWorld = {
    test: undefined as unknown as TestGateway,
    account: undefined as unknown as SeededAccount,
    other: undefined as unknown as SeededAccount,
    token: '',
    tokenId: '',
    call: operatorCaller(
      () => world.test,
      () => world.token,
    ),
    auditOf: (accountId, limit) => auditRowsOf(world.call, accountId, limit),
  };
  before(async () => {
    world.test = await startTestGateway(dialect);
    world.account = await seedAccount(world.test.gateway);
    world.other = await seedAccount(world.test.gateway);
    const made = await world.test.gateway.operatorTokens.create('onboarding', CLI_ACTOR);
    world.token = made.plaintext;
    world.tokenId = made.token.id;
  });
  after(() => world.test?.close());
  return world;
}

interface OperatorApiWorld {
  test: TestGateway;
  account: SeededAccount;
  other: SeededAccount;
  token: string;
  tokenId: string;
  call: ReturnType<typeof operatorCaller>;
  auditOf(accountId: string, limit: number): Promise<AuditRow[]>;
}
