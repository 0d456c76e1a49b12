import { AppError, type ErrorCode, type ErrorMeta } from '../../domain/errors.ts';
import { SYSTEM_ACTOR } from '../../domain/audit.ts';
import type { WhatsAppNumber } from '../../domain/model.ts';
import { type TenantScope, withinAccount } from '../../domain/tenant-scope.ts';
import type { LinkAttempt, LinkMethod } from '../../messaging/number-linking.ts';
import { type Answer, type DispatchedOperation, ok } from './operation.ts';
import type { OwnerDispatch } from './owner-dispatch.ts';
import { pauseNumber } from './pause-number.ts';
import { resumeNumber } from './resume-number.ts';
import { clearNumberQueue } from './number-queue.ts';
import type { NumberControl } from '../../ports/number-control.ts';
import type { OperationServices } from './services.ts';

// A number's control (link, restart, log out, pause, resume, clear its queue) from the console,
// the CLI and the operator API, made by the node that serves the number through the registry's
// one owner dispatch, as every public operation on a number is (ADR 0064). Pause, resume and the
// clear are the public operations themselves; linking, restart and logout have no public path
// (an operator's, not an API key's), so they are declared here and reached only through the
// dispatch, by DispatchedNumberControl on the first node and by the dispatch route on the owner.

/** What a number-control operation is handed on the owner: the number, and the body its caller built. */
interface ControlInput<Body> {
  number: WhatsAppNumber;
  body: Body;
}

/**
 * A number-control operation: its number is the request's `id`, looked up in the number's own
 * account (the caller found it in an operator's scope), and its work runs on the number's owner.
 */
function numberControl<Body, const Uses extends keyof OperationServices>(
  operationId: string,
  uses: readonly Uses[],
  act: (input: ControlInput<Body>, services: Pick<OperationServices, Uses>) => Promise<unknown>,
): DispatchedOperation {
  return {
    operationId,
    uses: ['numbers', ...uses],
    owner: ({ scope, params }, { numbers }) => numbers.findNumber(scope, (params as { id: string }).id),
    handle: async ({ number, body }, services) => ok((await act({ number: number!, body: body as Body }, services as never)) ?? {}),
  };
}

const startLink = numberControl<{ method: LinkMethod; rehearsal: boolean }, 'linking'>(
  'controlStartLink',
  ['linking'],
  ({ number, body }, { linking }) => linking.start(number, body.method === 'pairing_code' ? 'pairing_code' : 'qr', body.rehearsal === true),
);
const linkState = numberControl<unknown, 'linking'>('controlLinkState', ['linking'], async ({ number }, { linking }) => ({
  attempt: linking.current(number.id) ?? null,
}));
const cancelLink = numberControl<unknown, 'linking'>('controlCancelLink', ['linking'], ({ number }, { linking }) =>
  linking.cancel(number.id),
);
const restart = numberControl<unknown, 'supervisor'>('controlRestart', ['supervisor'], ({ number }, { supervisor }) =>
  supervisor.restart(number),
);
const reconnect = numberControl<unknown, 'supervisor'>('controlReconnect', ['supervisor'], async ({ number }, { supervisor }) => ({
  reconnected: await supervisor.reconnect(number),
}));
const logout = numberControl<unknown, 'linking'>('controlLogout', ['linking'], ({ number }, { linking }) => linking.logout(number));

/** The operations only the dispatch reaches: the owner runs them when the dispatch route hands them over. */
export const numberControlOperations: readonly DispatchedOperation[] = [startLink, linkState, cancelLink, restart, reconnect, logout];

/**
 * The port's NumberControl (ports/number-control.ts) over the owner dispatch: each action is
 * OwnerDispatch.run with the request its caller would make in the number's account.
 */
export class DispatchedNumberControl implements NumberControl {
  constructor(private readonly dispatch: Pick<OwnerDispatch, 'run'>) {}

  async start(scope: TenantScope, number: WhatsAppNumber, method: LinkMethod, rehearsal = false): Promise<LinkAttempt> {
    return reviveAttempt((await this.run(startLink, scope, number, { method, rehearsal })) as RawAttempt);
  }

  async current(scope: TenantScope, number: WhatsAppNumber): Promise<LinkAttempt | undefined> {
    const { attempt } = (await this.run(linkState, scope, number)) as { attempt: RawAttempt | null };
    return attempt === null ? undefined : reviveAttempt(attempt);
  }

  async cancel(scope: TenantScope, number: WhatsAppNumber): Promise<void> {
    await this.run(cancelLink, scope, number);
  }

  async restart(scope: TenantScope, number: WhatsAppNumber): Promise<void> {
    await this.run(restart, scope, number);
  }

  async reconnect(scope: TenantScope, number: WhatsAppNumber): Promise<boolean> {
    return ((await this.run(reconnect, scope, number)) as { reconnected: boolean }).reconnected;
  }

  async logout(scope: TenantScope, number: WhatsAppNumber): Promise<void> {
    await this.run(logout, scope, number);
  }

  async pause(scope: TenantScope, number: WhatsAppNumber, detail: string | null): Promise<void> {
    await this.run(pauseNumber, scope, number, detail === null ? {} : { reason: detail });
  }

  async resume(scope: TenantScope, number: WhatsAppNumber): Promise<void> {
    await this.run(resumeNumber, scope, number);
  }

  async clearQueue(scope: TenantScope, number: WhatsAppNumber): Promise<{ cancelled: number; pending: number }> {
    const { cancelled, pending } = (await this.run(clearNumberQueue, scope, number)) as { cancelled: number; pending: number };
    return { cancelled, pending };
  }

  /**
   * Runs the operation on the number's owner, in the number's account within the caller's scope
   * (an operator acts in any account; a user's scope is its own account, and another account's
   * number is not found there). The audit rows of these actions are the caller's to write (the
   * operator API, the console): the owner writes none, so the actor handed over is the gateway's.
   */
  private async run(
    operation: DispatchedOperation,
    scope: TenantScope,
    number: WhatsAppNumber,
    body: object | null = null,
  ): Promise<unknown> {
    const answer = await this.dispatch.run(operation, {
      scope: scope.kind === 'operator' ? withinAccount(scope, number.accountId) : scope,
      actor: SYSTEM_ACTOR,
      params: { id: number.id },
      query: {},
      body,
      idempotencyKey: undefined,
    });
    if (answer.statusCode >= 400) throw refusal(answer);
    return answer.body;
  }
}

/** The owner's refusal, relayed as its error body, as the error it was there. */
function refusal(answer: Answer): AppError {
  const error = (answer.body ?? {}) as { error?: string; message?: string; meta?: ErrorMeta };
  return new AppError((error.error ?? 'internal_error') as ErrorCode, error.message ?? 'The owning node refused.', error.meta);
}

/** An attempt as it comes back: a Date here, its ISO text when the owner's answer was relayed as JSON. */
type RawAttempt = Omit<LinkAttempt, 'startedAt'> & { startedAt: string | Date };

function reviveAttempt(raw: RawAttempt): LinkAttempt {
  return { ...raw, startedAt: new Date(raw.startedAt) };
}
