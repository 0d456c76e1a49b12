import type { IDataObject, IExecuteFunctions, IHookFunctions, IHttpRequestMethods, IHttpRequestOptions } from 'n8n-workflow';

export const CREDENTIALS = 'waGatewayApi';

/** What a request of ours answered: its status and its JSON body. */
export interface GatewayAnswer {
  statusCode: number;
  body: IDataObject;
}

/**
 * A call of the gateway's API under the credentials' key. Every path is called under /api, which
 * the gateway answers as the API whatever the path (its unprefixed paths are also the dashboard's).
 */
export async function callGateway(
  context: IExecuteFunctions | IHookFunctions,
  method: IHttpRequestMethods,
  path: string,
  options: { qs?: IDataObject; headers?: IDataObject; body?: IDataObject } = {},
): Promise<GatewayAnswer> {
  const credentials = await context.getCredentials(CREDENTIALS);
  const baseUrl = String(credentials.baseUrl).replace(/\/+$/, '');
  const request: IHttpRequestOptions = {
    method,
    url: `${baseUrl}/api${path}`,
    json: true,
    returnFullResponse: true,
    ignoreHttpStatusErrors: true,
    ...(options.qs !== undefined && { qs: options.qs }),
    ...(options.headers !== undefined && { headers: options.headers }),
    ...(options.body !== undefined && { body: options.body }),
  };
  const answer = (await context.helpers.httpRequestWithAuthentication.call(context, CREDENTIALS, request)) as {
    statusCode: number;
    body: unknown;
  };
  const body = typeof answer.body === 'object' && answer.body !== null ? (answer.body as IDataObject) : { body: answer.body as string };
  return { statusCode: answer.statusCode, body };
}

/** The gateway's error answer in a sentence: its code and message (docs/api.md, Errors). */
export function describeRefusal(answer: GatewayAnswer): string {
  const { error, message } = answer.body;
  return `wa-gateway answered ${answer.statusCode}${error === undefined ? '' : ` ${String(error)}`}${message === undefined ? '' : `: ${String(message)}`}`;
}
