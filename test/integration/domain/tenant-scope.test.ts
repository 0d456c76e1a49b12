import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import {
  accountScope,
  operatorScope,
  scopeCovers,
  scopedAccountId,
  withinAccount,
  type AccountScope,
  type OperatorScope,
} from '../../../src/domain/tenant-scope.ts';

const SOURCE_ROOT = path.resolve(import.meta.dirname, '../../../src');

function sourceFiles(directory: string): string[] {
  return fs.readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.tsx?$/.test(entry.name) ? [full] : [];
  });
}

function filesCalling(functionName: string): string[] {
  const call = new RegExp(`\\b${functionName}\\(`);
  return sourceFiles(SOURCE_ROOT)
    .filter((file) => !file.endsWith(path.join('domain', 'tenant-scope.ts')))
    .filter((file) => call.test(fs.readFileSync(file, 'utf8')))
    .map((file) => path.relative(SOURCE_ROOT, file))
    .sort();
}

describe('tenant scope', () => {
  it('an account scope covers its own account only; the operator scope covers every account', () => {
    const scope = accountScope('acc_one');
    assert.equal(scopeCovers(scope, 'acc_one'), true);
    assert.equal(scopeCovers(scope, 'acc_two'), false);
    assert.equal(scopedAccountId(scope), 'acc_one');
    assert.equal(scopeCovers(operatorScope(), 'acc_two'), true);
    assert.equal(scopedAccountId(operatorScope()), undefined);
    assert.equal(withinAccount(operatorScope(), 'acc_two').accountId, 'acc_two');
  });

  it('a scope is frozen, so a handler cannot widen the one it was given', () => {
    const scope = accountScope('acc_one') as { accountId: string };
    assert.throws(() => {
      scope.accountId = 'acc_two';
    }, TypeError);
  });

  it('a scope cannot be written as a literal: only the minting functions make one (checked by tsc)', () => {
    // @ts-expect-error the brand is a private symbol, so an object literal is not a scope
    const forgedAccount: AccountScope = { kind: 'account', accountId: 'acc_other' };
    // @ts-expect-error likewise for the operator's scope
    const forgedOperator: OperatorScope = { kind: 'operator' };
    // The lines above fail `npm run typecheck` the day the brand stops guarding them.
    assert.equal(forgedAccount.kind, 'account');
    assert.equal(forgedOperator.kind, 'operator');
  });

  it('an account scope is minted only from an API key, a dashboard session, or a node call signed by the cluster key', () => {
    // owner-dispatch.ts: an operation another node forwards, through the signed dispatch route only,
    // names the account of the key that node authenticated. event-stream-upgrade.ts: a WebSocket
    // Upgrade, which never reaches Fastify's hooks, names the account of the key it authenticated.
    // chatwoot-callbacks.ts: a Chatwoot inbox's callback names the account of the inbox whose token it checked.
    // routes/cloud-callbacks.ts: Meta's callback names the account of the number whose app secret signed it.
    assert.deepEqual(filesCalling('accountScope'), [
      'dashboard/context.ts',
      'http/event-stream-upgrade.ts',
      'http/operations/owner-dispatch.ts',
      'http/plugins/api-key-auth.ts',
      'http/routes/cloud-callbacks.ts',
      'webhooks/chatwoot-callbacks.ts',
    ]);
  });

  it('the operator scope is minted only from an operator sign-in, an operator token, or the CLI', () => {
    assert.deepEqual(filesCalling('operatorScope'), ['cli/context.ts', 'dashboard/context.ts', 'http/operator-api/operator-auth.ts']);
  });

  it('routes, pages and commands reach tenant data through services, never through a repository', () => {
    const offenders = ['http', 'dashboard', 'cli']
      .flatMap((folder) => sourceFiles(path.join(SOURCE_ROOT, folder)))
      .filter((file) => /from '[./]*\/store\/repositories\//.test(fs.readFileSync(file, 'utf8')))
      .map((file) => path.relative(SOURCE_ROOT, file));
    assert.deepEqual(offenders, []);
  });
});
