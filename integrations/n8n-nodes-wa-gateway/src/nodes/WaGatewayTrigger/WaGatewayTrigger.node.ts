import {
  NodeConnectionTypes,
  NodeOperationError,
  type IDataObject,
  type IHookFunctions,
  type INodeType,
  type INodeTypeDescription,
  type IWebhookFunctions,
  type IWebhookResponseData,
} from 'n8n-workflow';
import { callGateway, describeRefusal } from '../../shared/gateway-request';
import { DeliveryMemory } from '../../shared/delivery-memory';
import { eventTypes } from '../../shared/operations';
import { TIMESTAMP_TOLERANCE_SECONDS, verifySignature, type SignedHeaders } from '../../shared/signature';

/** What the trigger keeps in the workflow's static data: its webhook at the gateway, and that webhook's signing secret. */
interface Registration extends IDataObject {
  webhookId?: string;
  webhookSecret?: string;
}

/** The deliveries each registered webhook (by its id at the gateway) has started the workflow for, in this n8n process. */
const deliveryMemories = new Map<string, DeliveryMemory>();

function memoryOf(webhookId: string): DeliveryMemory {
  let memory = deliveryMemories.get(webhookId);
  if (memory === undefined) {
    memory = new DeliveryMemory(TIMESTAMP_TOLERANCE_SECONDS);
    deliveryMemories.set(webhookId, memory);
  }
  return memory;
}

/** Answers the delivery here, starting nothing. */
function answerWithoutRun(
  context: IWebhookFunctions,
  status: number,
  body: IDataObject,
  headers: Record<string, string> = {},
): IWebhookResponseData {
  context.getResponseObject().status(status).set(headers).json(body);
  return { noWebhookResponse: true };
}

/**
 * Starts a workflow on the gateway's events. Activating the workflow registers a webhook for it
 * through the webhooks API (POST /webhooks, a key with the `webhooks` scope), deactivating it
 * removes that webhook, and every delivery's Standard Webhooks signature is verified against the
 * secret the gateway gave at registration: a forged or stale one is answered 401 and starts
 * nothing, and one whose webhook-id already started the workflow (a replay inside the timestamp
 * window, or the gateway's retry of a delivery whose answer it lost) is answered 200 and starts
 * nothing either.
 */
export class WaGatewayTrigger implements INodeType {
  description: INodeTypeDescription = {
    displayName: 'wa-gateway Trigger',
    name: 'waGatewayTrigger',
    icon: 'file:wa-gateway.svg',
    group: ['trigger'],
    version: 1,
    subtitle: '={{$parameter["events"].join(", ")}}',
    description: "Starts the workflow on wa-gateway's events: a message received, a status change, a call…",
    defaults: { name: 'wa-gateway Trigger' },
    inputs: [],
    outputs: [NodeConnectionTypes.Main],
    credentials: [{ name: 'waGatewayApi', required: true }],
    webhooks: [{ name: 'default', httpMethod: 'POST', responseMode: 'onReceived', path: 'webhook' }],
    properties: [
      {
        displayName: 'Events',
        name: 'events',
        type: 'multiOptions',
        options: eventTypes.map((event) => ({ name: event, value: event })),
        default: ['message'],
        required: true,
        description: 'The events that start the workflow (docs/webhooks.md, Event types)',
      },
      {
        displayName: 'Chats',
        name: 'messageScope',
        type: 'options',
        options: [
          { name: 'Direct Chats', value: 'direct' },
          { name: 'Groups', value: 'group' },
          { name: 'Both', value: 'all' },
        ],
        default: 'direct',
        description: "Which chats' message events start it",
      },
    ],
  };

  webhookMethods = {
    default: {
      /** Whether the webhook this node registered is still at the gateway, for this URL and these events. */
      async checkExists(this: IHookFunctions): Promise<boolean> {
        const registration = this.getWorkflowStaticData('node') as Registration;
        if (registration.webhookId === undefined || registration.webhookSecret === undefined) return false;
        const answer = await callGateway(this, 'GET', `/webhooks/${encodeURIComponent(registration.webhookId)}`);
        const wanted = [...(this.getNodeParameter('events') as string[])].sort().join(',');
        const registered = answer.body as { url?: string; events?: string[]; message_scope?: string; enabled?: boolean };
        if (
          answer.statusCode === 200 &&
          registered.url === this.getNodeWebhookUrl('default') &&
          [...(registered.events ?? [])].sort().join(',') === wanted &&
          registered.message_scope === this.getNodeParameter('messageScope') &&
          registered.enabled === true
        ) {
          return true;
        }
        // Gone, or no longer what the node asks for: it is made again.
        if (answer.statusCode === 200) await callGateway(this, 'DELETE', `/webhooks/${encodeURIComponent(registration.webhookId)}`);
        deliveryMemories.delete(registration.webhookId);
        delete registration.webhookId;
        delete registration.webhookSecret;
        return false;
      },

      async create(this: IHookFunctions): Promise<boolean> {
        const workflow = this.getWorkflow();
        const answer = await callGateway(this, 'POST', '/webhooks', {
          body: {
            url: this.getNodeWebhookUrl('default'),
            events: this.getNodeParameter('events') as string[],
            message_scope: this.getNodeParameter('messageScope') as string,
            description: `n8n: ${workflow.name ?? workflow.id} / ${this.getNode().name}`.slice(0, 200),
          },
        });
        if (answer.statusCode !== 201) throw new NodeOperationError(this.getNode(), describeRefusal(answer));
        const registration = this.getWorkflowStaticData('node') as Registration;
        registration.webhookId = String(answer.body.id);
        registration.webhookSecret = String(answer.body.secret);
        return true;
      },

      async delete(this: IHookFunctions): Promise<boolean> {
        const registration = this.getWorkflowStaticData('node') as Registration;
        if (registration.webhookId !== undefined) {
          const answer = await callGateway(this, 'DELETE', `/webhooks/${encodeURIComponent(registration.webhookId)}`);
          // Already gone (removed by hand) is as good as removed.
          if (answer.statusCode !== 200 && answer.statusCode !== 404) return false;
          deliveryMemories.delete(registration.webhookId);
        }
        delete registration.webhookId;
        delete registration.webhookSecret;
        return true;
      },
    },
  };

  async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
    const registration = this.getWorkflowStaticData('node') as Registration;
    const rawBody = (this.getRequestObject() as unknown as { rawBody?: Buffer }).rawBody;
    const headers = this.getHeaderData() as SignedHeaders;
    const nowSeconds = Math.floor(Date.now() / 1000);
    const genuine =
      registration.webhookId !== undefined &&
      registration.webhookSecret !== undefined &&
      rawBody !== undefined &&
      verifySignature(registration.webhookSecret, headers, rawBody, nowSeconds);
    if (!genuine) {
      return answerWithoutRun(this, 401, {
        error: 'invalid_signature',
        message: 'The delivery is not signed by the webhook this trigger registered.',
      });
    }
    // verifySignature has checked both headers are there and the timestamp is digits.
    const admission = memoryOf(registration.webhookId!).admit(headers['webhook-id']!, Number(headers['webhook-timestamp']), nowSeconds);
    // 200, not a refusal: the gateway retries anything else, and a retry of a delivery that did
    // start the workflow must end as delivered rather than be retried until it is given up.
    if (admission === 'repeat') {
      return answerWithoutRun(this, 200, { message: 'Already received: this delivery started the workflow before.' });
    }
    if (admission === 'full') {
      return answerWithoutRun(
        this,
        503,
        { error: 'busy', message: 'The trigger cannot remember more deliveries now; the gateway retries.' },
        { 'Retry-After': '60' },
      );
    }
    return { workflowData: [this.helpers.returnJsonArray(this.getBodyData())] };
  }
}
