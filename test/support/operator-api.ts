import assert from 'node:assert/strict';
import type { TestGateway } from './gateway.ts';

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
export interface AuditRow {
  action: string;
  target_id: string;
  account_id: string;
  actor: { kind: string; id: string };
  details: Record<string, unknown>;
}

/** One account's newest audit rows, read through the operator API itself. */
export async function auditRowsOf(call: ReturnType<typeof operatorCaller>, accountId: string, limit: number): Promise<AuditRow[]> {
  return (await call('GET', `/admin/audit_events?account_id=${accountId}&limit=${limit}`)).json().events;
}
