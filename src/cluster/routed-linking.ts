import { AppError } from '../domain/errors.ts';
import type { WhatsAppNumber } from '../domain/model.ts';
import type { LinkAttempt, LinkMethod, NumberLinkingService } from '../messaging/number-linking.ts';
import type { SessionSupervisor } from '../messaging/session-supervisor.ts';
import type { NodeAddress, NodeAnswer, NodeClient } from './node-client.ts';
import type { OwnerRouter } from './owner-router.ts';

/**
 * Linking and restarting a number from any node: the owner of the number's lease does the work
 * (its session is the one that links), and the other nodes forward the console's requests to it.
 * A linking attempt therefore lives on the node that owns the number, wherever it was started.
 */
export class RoutedLinking {
  constructor(
    private readonly linking: NumberLinkingService,
    private readonly supervisor: SessionSupervisor,
    private readonly router: OwnerRouter,
    private readonly nodes: NodeClient,
  ) {}

  start(number: WhatsAppNumber, method: LinkMethod, rehearsal = false): Promise<LinkAttempt> {
    return this.router.run(
      number,
      () => this.linking.start(number, method, rehearsal),
      async (owner, signal) =>
        reviveAttempt((await this.call(owner, signal, `/internal/numbers/${number.id}/link`, { method, rehearsal })) as RawAttempt),
    );
  }

  current(number: WhatsAppNumber): Promise<LinkAttempt | undefined> {
    return this.router.run(
      number,
      async () => this.linking.current(number.id),
      async (owner, signal) => {
        const { attempt } = (await this.call(owner, signal, `/internal/numbers/${number.id}/link/state`)) as { attempt: RawAttempt | null };
        return attempt === null ? undefined : reviveAttempt(attempt);
      },
    );
  }

  cancel(number: WhatsAppNumber): Promise<void> {
    return this.router.run(
      number,
      () => this.linking.cancel(number.id),
      async (owner, signal) => void (await this.call(owner, signal, `/internal/numbers/${number.id}/link/cancel`)),
    );
  }

  restart(number: WhatsAppNumber): Promise<void> {
    return this.router.run(
      number,
      () => this.supervisor.restart(number),
      async (owner, signal) => void (await this.call(owner, signal, `/internal/numbers/${number.id}/restart`)),
    );
  }

  logout(number: WhatsAppNumber): Promise<void> {
    return this.router.run(
      number,
      () => this.linking.logout(number),
      async (owner, signal) => void (await this.call(owner, signal, `/internal/numbers/${number.id}/logout`)),
    );
  }

  private call(owner: NodeAddress, signal: AbortSignal, path: string, body: object = {}): Promise<unknown> {
    return callOwner(this.nodes, owner, signal, path, body);
  }
}

/** A console action made on the number's owner: its answer, or its error as ours with the same code. */
export async function callOwner(
  nodes: NodeClient,
  owner: NodeAddress,
  signal: AbortSignal,
  path: string,
  body: object = {},
): Promise<unknown> {
  const answer: NodeAnswer = await nodes.call(owner, 'POST', path, body, signal);
  if (answer.status < 400) return answer.body;
  const error = answer.body as { error?: string; message?: string; meta?: Record<string, unknown> };
  throw new AppError((error.error ?? 'internal_error') as never, error.message ?? 'The owning node refused.', error.meta as never);
}

type RawAttempt = Omit<LinkAttempt, 'startedAt'> & { startedAt: string };

function reviveAttempt(raw: RawAttempt): LinkAttempt {
  return { ...raw, startedAt: new Date(raw.startedAt) };
}
