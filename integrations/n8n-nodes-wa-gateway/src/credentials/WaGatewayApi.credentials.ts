import type { IAuthenticateGeneric, ICredentialTestRequest, ICredentialType, INodeProperties } from 'n8n-workflow';

/**
 * A wa-gateway API key and the gateway's address. The key's scopes decide what the nodes may do:
 * `read` and `send` for the actions, `webhooks` for the trigger, which registers its own webhook.
 */
export class WaGatewayApi implements ICredentialType {
  name = 'waGatewayApi';
  displayName = 'wa-gateway API';
  documentationUrl = 'https://github.com/wa-gateway/wa-gateway/blob/main/docs/integrations.md#n8n';
  properties: INodeProperties[] = [
    {
      displayName: 'Base URL',
      name: 'baseUrl',
      type: 'string',
      default: '',
      placeholder: 'https://gateway.example.com',
      description: "The gateway's address, as your API clients reach it (any node of a cluster)",
      required: true,
    },
    {
      displayName: 'API Key',
      name: 'apiKey',
      type: 'string',
      typeOptions: { password: true },
      default: '',
      description: 'A key of your account with the scopes read and send (actions) and webhooks (the trigger)',
      required: true,
    },
  ];

  authenticate: IAuthenticateGeneric = {
    type: 'generic',
    properties: { headers: { Authorization: '=Bearer {{$credentials.apiKey}}' } },
  };

  test: ICredentialTestRequest = {
    request: { baseURL: '={{$credentials.baseUrl.replace(/\\/+$/, "")}}', url: '/api/numbers', method: 'GET' },
  };
}
