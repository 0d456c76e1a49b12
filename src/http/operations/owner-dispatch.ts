import type { GatewayServices } from '../../ports/gateway-services.ts';
import { NodeUnreachableError, type NodeAddress } from '../../cluster/node-client.ts';
import { AppError, type ErrorCode, type ErrorMeta, phoneNotOwned, httpStatusFor } from '../../domain/errors.ts';
import { accountScope } from '../../domain/tenant-scope.ts';
import { SYSTEM_ACTOR, type AuditActor } from '../../domain/audit.ts';
import type { Answer, DispatchedOperation, OperationInput, RequestSchemas } from './operation.ts';
import { pickServices, type OperationServices } from './services.ts';

/** The one internal route every operation is handed to its number's owner through. */
export const DISPATCH_PATH = '/internal/operations/:operationId';

/** What the first node sends the owner: the request as it read it, and the account its key grants. */
export interface ForwardedOperation {
  account_id: string;
  params: unknown;
  query: unknown;
  body: unknown;
  idempotency_key: string | null;
  prefer_wait_seconds?: number | null;
  /** The caller as the first node saw it, for audit rows the owner writes. */
  actor?: AuditActor;
}

/** Headers of an owner's answer that the client must see as the owner gave them. */
const RELAYED_HEADERS = ['retry-after', 'idempotent-replayed'] as const;

/**
 * Runs operations where their number's session runs: here when this node serves it, else on the
 * node that does, through the signed dispatch route; the owner's answer, error or not, is the
 * client's (cluster/owner-router.ts waits out a takeover).
 */
export class OwnerDispatch {
  constructor(
    private readonly gateway: Pick<GatewayServices, 'supervisor' | 'numbers' | 'router' | 'nodeClient'>,
    private readonly services: OperationServices,
  ) {}

  async run(operation: DispatchedOperation, request: OperationInput<RequestSchemas>): Promise<Answer> {
    const services = pickServices(this.services, operation.uses);
    const input = { ...request, command: operation.command?.(request, services) };
    await operation.check?.(input, services);
    const owner = await operation.owner?.(input, services);
    if (owner === undefined) return operation.handle(input, services);
    // The request's number, resolved once: the handler is handed it with its session.
    const number = typeof owner === 'string' ? await this.gateway.numbers.ownedNumber(input.scope, owner) : owner;
    const here = () => operation.handle({ ...input, number, session: this.gateway.supervisor.sessionFor(number) }, services);
    const admitted = this.gateway.supervisor.admit(number.id);
    if (admitted !== undefined) return runAdmitted(here, admitted);
    const known = await operation.answerWithoutOwner?.({ ...input, number }, services);
    if (known !== undefined) return known;
    // With an Idempotency-Key (a send), the claim in the shared database lets one attempt through
    // whichever node makes it, so a call the owner stopped answering may be made again on the
    // owner that took over (docs/cluster.md).
    const repeatable = typeof input.idempotencyKey === 'string';
    return this.gateway.router.run(number, here, (node, signal) => this.forward(node, operation.operationId, request, signal), {
      repeatable,
    });
  }

  /**
   * Runs the operation as `run` does, for a caller inside the gateway (the console, the dashboard's
   * replies, Chatwoot's callback) rather than an HTTP client: its answer's body, or its refusal
   * thrown as the error it was, whether it ran here (where it threw) or on the owner (whose answer
   * carries the error's body).
   */
  async call(operation: DispatchedOperation, request: OperationInput<RequestSchemas>): Promise<unknown> {
    return (await this.callReplayable(operation, request)).body;
  }

  /** As `call`, and whether the answer replays an earlier request's with the same Idempotency-Key. */
  async callReplayable(
    operation: DispatchedOperation,
    request: OperationInput<RequestSchemas>,
  ): Promise<{ body: unknown; replayed: boolean }> {
    const answer = await this.run(operation, request);
    if (answer.statusCode < 400) {
      // Set by the send here, or relayed (in lower case) from the owner's answer.
      const replayed = Object.entries(answer.headers ?? {}).some(
        ([name, value]) => name.toLowerCase() === 'idempotent-replayed' && value === 'true',
      );
      return { body: answer.body, replayed };
    }
    const error = (answer.body ?? {}) as { error?: string; message?: string; meta?: ErrorMeta };
    throw new AppError((error.error ?? 'internal_error') as ErrorCode, error.message ?? 'The owning node refused.', error.meta);
  }

  /**
   * Runs a forwarded operation here, as its owner: the first node has checked and routed it. It
   * reads the request into its command and resolves the number once more, here, as the node that
   * runs it. A node that no longer serves the number (it is handing it over, or has) runs nothing
   * and answers `number_moved`, on which the first node looks for the owner again.
   */
  async runForwarded(operation: DispatchedOperation, forwarded: ForwardedOperation): Promise<Answer> {
    const request: OperationInput<RequestSchemas> = {
      scope: accountScope(forwarded.account_id),
      actor: forwarded.actor ?? SYSTEM_ACTOR,
      params: forwarded.params,
      query: forwarded.query,
      body: forwarded.body,
      idempotencyKey: forwarded.idempotency_key ?? undefined,
      preferWaitSeconds: forwarded.prefer_wait_seconds ?? undefined,
    };
    const services = pickServices(this.services, operation.uses);
    const input = { ...request, command: operation.command?.(request, services) };
    // The first node found the number; should it have left the account since, the refusal is the answer.
    const owner = await operation.owner?.(input, services);
    if (owner === undefined) return operation.handle(input, services);
    const number = typeof owner === 'string' ? await this.gateway.numbers.ownedNumber(input.scope, owner) : owner;
    const admitted = this.gateway.supervisor.admit(number.id);
    if (admitted === undefined) throw new AppError('number_moved', `This node does not serve ${number.phone} (any more).`);
    return runAdmitted(
      () => operation.handle({ ...input, number, session: this.gateway.supervisor.sessionFor(number) }, services),
      admitted,
    );
  }

  private async forward(
    node: NodeAddress,
    operationId: string,
    input: OperationInput<RequestSchemas>,
    signal: AbortSignal,
  ): Promise<Answer> {
    const forwarded: ForwardedOperation = {
      account_id: input.scope.accountId,
      params: input.params ?? {},
      query: input.query ?? {},
      body: input.body ?? null,
      idempotency_key: typeof input.idempotencyKey === 'string' ? input.idempotencyKey : null,
      prefer_wait_seconds: input.preferWaitSeconds ?? null,
      actor: input.actor,
    };
    const answer = await this.gateway.nodeClient.call(node, 'POST', DISPATCH_PATH.replace(':operationId', operationId), forwarded, signal);
    // Nothing was run there: the router looks for the owner again, as after a refused connection.
    if (answer.status === httpStatusFor('number_moved') && (answer.body as { error?: unknown } | null)?.error === 'number_moved')
      throw new NodeUnreachableError(false, new Error(`node ${node.nodeId} no longer serves the number`));
    const headers = Object.fromEntries(
      RELAYED_HEADERS.flatMap((name) => {
        const value = answer.headers.get(name);
        return value === null ? [] : [[name, value]];
      }),
    );
    return { statusCode: answer.status, body: answer.body, headers };
  }
}

/** Runs work let in on a number (SessionSupervisor.admit), ending it however it ends. */
async function runAdmitted<T>(work: () => Promise<T>, admitted: () => void): Promise<T> {
  try {
    return await work();
  } finally {
    admitted();
  }
}

/** number_not_found as the public API says it of a from_phone. */
export function notOwned(error: unknown): never {
  if (error instanceof AppError && error.code === 'number_not_found') throw phoneNotOwned();
  throw error;
}
