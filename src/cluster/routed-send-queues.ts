import type { WhatsAppNumber } from '../domain/model.ts';
import type { SendQueueService } from '../messaging/governor/send-queue-service.ts';
import type { NodeClient } from './node-client.ts';
import type { OwnerRouter } from './owner-router.ts';
import { callOwner } from './routed-linking.ts';

/**
 * Clearing a number's queue from the dashboard, on any node: each cancellation is
 * fenced by the owner's lease, so the other nodes forward the request there, as the API's
 * DELETE /numbers/{id}/queue is (owner dispatch).
 */
export class RoutedSendQueues {
  constructor(
    private readonly sendQueues: Pick<SendQueueService, 'clear'>,
    private readonly router: OwnerRouter,
    private readonly nodes: NodeClient,
  ) {}

  /** Cancels every waiting message of the number; returns how many, and how many are still being settled. */
  clear(number: WhatsAppNumber): Promise<{ cancelled: number; pending: number }> {
    return this.router.run(
      number,
      () => this.sendQueues.clear(number),
      async (owner, signal) =>
        (await callOwner(this.nodes, owner, signal, `/internal/numbers/${number.id}/queue/clear`)) as {
          cancelled: number;
          pending: number;
        },
    );
  }
}
