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
import { eventTypes } from '../../shared/operations';
import { verifySignature, type SignedHeaders } from '../../shared/signature';

/** What the trigger keeps in the workflow's static data: its webhook at the gateway, and that webhook's signing secret. */
interface Registration extends IDataObject {
  webhookId?: string;
  webhookSecret?: string;
}

/**
 * Starts a workflow on the gateway's events. Activating the workflow registers a webhook for it
 * through the webhooks API (POST /webhooks, a key with the `webhooks` scope), deactivating it
 * removes that webhook, and every delivery's Standard Webhooks signature is verified against the
 * secret the gateway gave at registration: a forged or replayed one is answered 401 and starts
 * nothing.
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
    const genuine =
      registration.webhookSecret !== undefined &&
      rawBody !== undefined &&
      verifySignature(registration.webhookSecret, headers, rawBody, Math.floor(Date.now() / 1000));
    if (!genuine) {
      this.getResponseObject()
        .status(401)
        .json({ error: 'invalid_signature', message: 'The delivery is not signed by the webhook this trigger registered.' });
      return { noWebhookResponse: true };
    }
    return { workflowData: [this.helpers.returnJsonArray(this.getBodyData())] };
  }
}
