import { AppError } from '../../domain/errors.ts';
import type { WhatsAppNumber } from '../../domain/model.ts';
import { refusedIncoming } from '../../messaging/session-refusals.ts';
import { type DispatchedOperation, ok } from './operation.ts';
import type { OperationServices } from './services.ts';

/**
 * What the node Meta called hands the number's owner: the delivery's bytes as they came (base64,
 * so that not one byte changes on the way, since X-Hub-Signature-256 is over them) and the header.
 */
export interface CloudDeliveryBody {
  raw_body_base64: string;
  signature: string | null;
}

/**
 * A delivery of Meta's callback (routes/cloud-callbacks.ts), run where the number's session runs:
 * its receipts are written under the session's lease, so a node that does not serve the number
 * hands the delivery to the one that does, through the owner dispatch, as every operation on a
 * number is (ADR 0076). It has no path of its own; the dispatch route reaches it on the owner.
 */
export const cloudCallbackDelivery: DispatchedOperation = {
  operationId: 'cloudCallbackDelivery',
  uses: ['numbers', 'cloudCallbacks'],
  owner: ({ params }, { numbers }) => cloudNumber(numbers, (params as { number_id: string }).number_id),
  handle: async ({ number, body }, { cloudCallbacks }) => {
    const delivery = body as CloudDeliveryBody;
    await cloudCallbacks
      .deliver(number!, Buffer.from(delivery.raw_body_base64, 'base64'), delivery.signature ?? undefined)
      // The session gone from here between the dispatch and the delivery: 503 with Retry-After, and Meta delivers it again.
      .catch((error: unknown) => refusedIncoming(number!, error));
    return ok({ received: true });
  },
};

/** The number named by the callback's path, when it is on the cloud engine; any other is not found. */
export async function cloudNumber(numbers: Pick<OperationServices['numbers'], 'findNumberForOwner'>, id: string): Promise<WhatsAppNumber> {
  const number = await numbers.findNumberForOwner(id);
  if (number.engine !== 'cloud') throw new AppError('number_not_found', `There is no Cloud API number ${id}.`);
  return number;
}
