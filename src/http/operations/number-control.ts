import { type AuditAction, type AuditDetails, SYSTEM_ACTOR } from '../../domain/audit.ts';
import { recordNumberAudit } from '../../audit/audit-trail.ts';
import type { WhatsAppNumber } from '../../domain/model.ts';
import { type TenantScope, withinAccount } from '../../domain/tenant-scope.ts';
import type { LinkAttempt, LinkMethod } from '../../messaging/number-linking.ts';
import { type DispatchedOperation, ok } from './operation.ts';
import type { OwnerDispatch } from './owner-dispatch.ts';
import { pauseNumber } from './pause-number.ts';
import { resumeNumber } from './resume-number.ts';
import { clearNumberQueue } from './number-queue.ts';
import type { ControlCaller, NumberControl } from '../../ports/number-control.ts';
import type { Executor } from '../../store/database.ts';
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
  /**
   * `auditDb` takes the rows of linking, cancelling, restarting and logging out, written here once
   * the owner has done them (their change is a session's, with no transaction to join). Pause,
   * resume and the clear write theirs on the owner, in the transaction of their change, naming the
   * actor the dispatch hands over (NumberPauses, SendQueueService).
   */
  constructor(
    private readonly dispatch: Pick<OwnerDispatch, 'call'>,
    private readonly auditDb: Executor,
  ) {}

  async start(caller: ControlCaller, number: WhatsAppNumber, method: LinkMethod, rehearsal = false): Promise<LinkAttempt> {
    const attempt = reviveAttempt((await this.run(startLink, caller, number, { method, rehearsal })) as RawAttempt);
    await this.audit(caller, 'number.link_started', number, { method });
    return attempt;
  }

  async current(scope: TenantScope, number: WhatsAppNumber): Promise<LinkAttempt | undefined> {
    const { attempt } = (await this.run(linkState, { scope, actor: SYSTEM_ACTOR }, number)) as { attempt: RawAttempt | null };
    return attempt === null ? undefined : reviveAttempt(attempt);
  }

  async cancel(caller: ControlCaller, number: WhatsAppNumber): Promise<void> {
    await this.run(cancelLink, caller, number);
    await this.audit(caller, 'number.link_cancelled', number);
  }

  async restart(caller: ControlCaller, number: WhatsAppNumber): Promise<void> {
    await this.run(restart, caller, number);
    await this.audit(caller, 'number.restarted', number);
  }

  async reconnect(scope: TenantScope, number: WhatsAppNumber): Promise<boolean> {
    // Follows a proxy change, whose own row (number.proxy_set or proxy_cleared) says what changed.
    return ((await this.run(reconnect, { scope, actor: SYSTEM_ACTOR }, number)) as { reconnected: boolean }).reconnected;
  }

  async logout(caller: ControlCaller, number: WhatsAppNumber): Promise<void> {
    await this.run(logout, caller, number);
    await this.audit(caller, 'number.logged_out', number);
  }

  async pause(caller: ControlCaller, number: WhatsAppNumber, detail: string | null): Promise<void> {
    await this.run(pauseNumber, caller, number, detail === null ? {} : { reason: detail });
  }

  async resume(caller: ControlCaller, number: WhatsAppNumber): Promise<void> {
    await this.run(resumeNumber, caller, number);
  }

  async clearQueue(caller: ControlCaller, number: WhatsAppNumber): Promise<{ cancelled: number; pending: number }> {
    const { cancelled, pending } = (await this.run(clearNumberQueue, caller, number)) as { cancelled: number; pending: number };
    return { cancelled, pending };
  }

  /**
   * Runs the operation on the number's owner, in the number's account within the caller's scope
   * (an operator acts in any account; a user's scope is its own account, and another account's
   * number is not found there), as the caller's actor.
   */
  private async run(
    operation: DispatchedOperation,
    { scope, actor }: ControlCaller,
    number: WhatsAppNumber,
    body: object | null = null,
  ): Promise<unknown> {
    return this.dispatch.call(operation, {
      scope: scope.kind === 'operator' ? withinAccount(scope, number.accountId) : scope,
      actor,
      params: { id: number.id },
      query: {},
      body,
      idempotencyKey: undefined,
    });
  }

  private async audit(caller: ControlCaller, action: AuditAction, number: WhatsAppNumber, details?: AuditDetails): Promise<void> {
    await recordNumberAudit(this.auditDb, caller.actor, action, number, details);
  }
}

/** An attempt as it comes back: a Date here, its ISO text when the owner's answer was relayed as JSON. */
type RawAttempt = Omit<LinkAttempt, 'startedAt'> & { startedAt: string | Date };

function reviveAttempt(raw: RawAttempt): LinkAttempt {
  return { ...raw, startedAt: new Date(raw.startedAt) };
}
