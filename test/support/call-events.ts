import type { WebhookReceiver } from './webhook-receiver.ts';
import type { JsonObject } from './json.ts';

const STATUS_ORDER = ['offered', 'accepted', 'rejected', 'missed', 'ended'];

/** The `call` events of one call, in the order of their statuses: deliveries may overtake one another. */
export async function callEventsOf(receiver: WebhookReceiver, callId: string, count: number): Promise<JsonObject[]> {
  const requests = await receiver.waitForRequests(count, (request) => JSON.parse(request.body).call_id === callId);
  const events = requests.map((request) => JSON.parse(request.body) as JsonObject);
  return events.sort((a, b) => STATUS_ORDER.indexOf(a.status) - STATUS_ORDER.indexOf(b.status));
}
