import type { WhatsAppNumber } from '../domain/model.ts';
import type { NumberPauses } from '../messaging/number-pauses.ts';
import type { NodeClient } from './node-client.ts';
import type { OwnerRouter } from './owner-router.ts';
import { callOwner } from './routed-linking.ts';

/**
 * Pausing and resuming a number from the dashboard and the CLI, on any node: its owner writes
 * the pause under its lease and keeps its timer, so the other nodes forward the request there,
 * as the API's own pause and resume are (owner dispatch).
 */
export class RoutedPauses {
  constructor(
    private readonly pauses: NumberPauses,
    private readonly router: OwnerRouter,
    private readonly nodes: NodeClient,
  ) {}

  pause(number: WhatsAppNumber, detail: string | null): Promise<void> {
    return this.router.run(
      number,
      async () => void (await this.pauses.pause(number, detail)),
      async (owner, signal) => void (await callOwner(this.nodes, owner, signal, `/internal/numbers/${number.id}/pause`, { detail })),
    );
  }

  resume(number: WhatsAppNumber): Promise<void> {
    return this.router.run(
      number,
      () => this.pauses.resume(number),
      async (owner, signal) => void (await callOwner(this.nodes, owner, signal, `/internal/numbers/${number.id}/resume`)),
    );
  }
}
