import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import helmet from '@fastify/helmet';
import { apiReferenceSecurityHeaders } from '../web/security-headers.ts';
import { callerConstraint } from './caller-constraint.ts';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { GatewayServices } from '../ports/gateway-services.ts';
import { newId } from '../domain/ids.ts';
import { answerFrameworkError, registerErrorHandling } from './plugins/errors.ts';
import { registerHttpConformance } from './plugins/http-conformance.ts';
import { registerJsonBodyParser } from './plugins/json-body.ts';
import { registerEarlyRefusals } from './plugins/early-refusals.ts';
import { registerRequestContext, requestIdFor } from './plugins/request-context.ts';
import { registerRequestMetrics } from './plugins/metrics.ts';
import { registerHealthRoute } from './routes/health.ts';
import { registerMetricsRoute } from './routes/metrics.ts';
import { MEDIA_UPLOAD_PATHS, registerMediaRoutes } from './routes/media.ts';
import { registerChatwootCallbackRoutes } from './routes/chatwoot-callbacks.ts';
import { registerCloudCallbackRoutes } from './routes/cloud-callbacks.ts';
import { registerInternalRoutes } from './routes/internal.ts';
import { cloudCallbackDelivery } from './operations/cloud-callback-delivery.ts';
import { numberControlOperations } from './operations/number-control.ts';
import { registerOperatorOperations } from './operator-api/operator-operation.ts';
import { operatorOperations } from './operator-api/catalogue.ts';
import { documentAdditions, finishDocument, registerSharedSchemas } from './openapi-components.ts';
import { validatorsByPart } from './request-validation.ts';
import { serializersWithReachedSchemas } from './response-serializers.ts';
import { publicOperations } from './operations/catalogue.ts';
import { acceptEventStreams } from './event-stream-upgrade.ts';
import { keyedPathMatcher, type OperationRegistryServices, registerOperations } from './operations/registry.ts';
import { namedScope } from '../web/named-scope.ts';

/**
 * What this module uses of the gateway's services (docs/adr/0061): what the operations' registry
 * needs, and what the app's own routes and plugins need beside it.
 */
type Services = OperationRegistryServices &
  Pick<
    GatewayServices,
    | 'accounts'
    | 'apiKeys'
    | 'audit'
    | 'authenticator'
    | 'chatReplies'
    | 'chatwootCallbacks'
    | 'cloudCallbacks'
    | 'cloudNumbers'
    | 'clusterKey'
    | 'config'
    | 'eventStreams'
    | 'keeper'
    | 'logger'
    | 'media'
    | 'mediaLinks'
    | 'metrics'
    | 'numberControl'
    | 'numbers'
    | 'operatorTokens'
    | 'pauses'
    | 'runtime'
    | 'scheduler'
    | 'store'
    | 'team'
    | 'webhooks'
    | 'writeFailures'
  >;

/**
 * Bodies are validated as sent: nothing coerced, nothing dropped, and the first fault told.
 * Errors carry their schema so that an "exactly one of" can name its fields.
 */
export const SCHEMA_VALIDATOR_OPTIONS = {
  customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false, verbose: true },
} as const;

/**
 * Builds the HTTP API from a gateway: the framework, its plugins, the operations and the
 * documents. The dashboard is not its to add: the root puts the two together (src/app.ts), so
 * that the API and the pages stand side by side and neither imports the other.
 */
export async function buildApi(gateway: Services): Promise<FastifyInstance> {
  const { config } = gateway;
  const app = Fastify({
    loggerInstance: gateway.logger as FastifyBaseLogger,
    // request-context.ts writes the one log line per request.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.http.bodyLimitBytes,
    trustProxy: trustProxyOption(config.http.trustProxy),
    genReqId: requestIdFor,
    // In-flight and keep-alive requests finish normally during shutdown instead of getting a
    // framework 503 outside our envelope.
    return503OnClosing: false,
    // "/send_message/" is a common slip; answering it costs nothing and saves a confusing 404.
    // Paths the dashboard shares with the API choose their route by caller (caller-constraint.ts).
    routerOptions: { ignoreTrailingSlash: true, constraints: { caller: callerConstraint } },
    // Requests too malformed to reach a route still get the documented envelope.
    clientErrorHandler: answerMalformedRequest,
    frameworkErrors: answerFrameworkError,
    // plugins/http-conformance.ts refuses a missing Host in the envelope instead of Node.
    // Node enforces the header deadline (set in server.ts) on a periodic sweep of connections;
    // sweeping at a quarter of the deadline closes a stalled client within 1.25 times of it.
    http: {
      requireHostHeader: false,
      connectionsCheckingInterval: Math.max(50, Math.min(30_000, Math.floor(config.http.headersTimeoutMs / 4))),
    },
    ajv: SCHEMA_VALIDATOR_OPTIONS,
    // A query string, path or header is text: `limit=10` is read as the integer its schema says.
    // An answer's serializer is given only the shared schemas it refers to (response-serializers.ts).
    schemaController: { compilersFactory: { buildValidator: validatorsByPart, buildSerializer: serializersWithReachedSchemas } },
  });
  app.decorateRequest('apiKey', null);

  registerRequestContext(app);
  registerHttpConformance(app);
  registerRequestMetrics(app, gateway.metrics);
  registerErrorHandling(app, config.http.bodyLimitBytes);
  registerJsonBodyParser(app);
  // An upload's body is the file, up to the largest media limit, which is checked as it streams.
  const largestFile = Math.max(...Object.values(config.media.limits));
  const uploadLimits = new Map(MEDIA_UPLOAD_PATHS.map((path) => [path, largestFile]));
  const isOperationPath = keyedPathMatcher(publicOperations);
  const isKeyedPath = (path: string) => isOperationPath(path) || MEDIA_UPLOAD_PATHS.includes(path);
  registerEarlyRefusals(app, { bodyLimitBytes: config.http.bodyLimitBytes, bodyLimitByPath: uploadLimits, isKeyedPath });

  registerSharedSchemas(app);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'wa-gateway',
        version: config.version,
        description:
          'Send WhatsApp messages with one HTTP call; receive them on your webhook. Every error answers in one envelope, {error, ' +
          'message, details?, request_id, meta?}, with the codes of docs/api.md; details is a string, meta holds the machine-readable ' +
          'facts.',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      servers: [{ url: '/', description: 'This gateway' }],
      tags: [
        { name: 'messages', description: 'Sending WhatsApp messages, and reading back what was sent and received.' },
        { name: 'numbers', description: 'Your WhatsApp numbers and their sessions.' },
        { name: 'groups', description: 'WhatsApp groups your numbers belong to.' },
        {
          name: 'contacts',
          description: 'The people your numbers know, by phone and by LID as one person: their profiles and presence, and the blocklist.',
        },
        { name: 'chats', description: "Your numbers' chats, latest first, with their state." },
        { name: 'media', description: 'Files to send, and files sent and received.' },
        { name: 'sandbox', description: 'The simulated network of sandbox numbers.' },
        { name: 'operations', description: 'Probes for load balancers and monitors.' },
        {
          name: 'operator',
          description:
            "The gateway's operator's API, at /admin, with an operator token rather than an API key: accounts and the audit log (docs/operator-api.md).",
        },
        {
          name: 'webhooks',
          description:
            'Your webhooks, managed with a key of the `webhooks` scope, and what the gateway POSTs to them, signed as Standard Webhooks ' +
            '(docs/webhooks.md).',
        },
      ],
      webhooks: documentAdditions.webhooks,
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'An API key: <prefix>_live_sk_<64 hex>.' },
          operatorToken: {
            type: 'http',
            scheme: 'bearer',
            description: 'An operator token, wagw_op_<64 hex>, made with `wagw operator-token create` (docs/operator-api.md).',
          },
          webhookSignature: {
            type: 'apiKey',
            in: 'header',
            name: 'webhook-signature',
            description:
              "How a receiver knows a delivery is the gateway's: the Standard Webhooks signature under the webhook's secret " +
              '(docs/webhooks.md).',
          },
        },
      },
    },
    // Shared schemas keep their $id as their component name: #/components/schemas/Message.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, index) => String(json.$id ?? `schema${index}`) },
    transformObject: (built) => ('openapiObject' in built ? finishDocument(built.openapiObject) : built.swaggerObject),
  });
  // The reference page is HTML like the dashboard, and gets the same headers, in a plugin of its
  // own so that the JSON API keeps none of them.
  await app.register(
    namedScope('API reference', async (docs) => {
      await docs.register(helmet, apiReferenceSecurityHeaders);
      await docs.register(swaggerUi, { routePrefix: '/docs', uiConfig: { validatorUrl: null } });
    }),
  );

  registerHealthRoute(app, gateway.store, gateway.writeFailures, gateway.runtime);
  registerMetricsRoute(app, gateway.metrics, config.metrics.token);
  await registerOperations(app, gateway, publicOperations);
  await registerOperatorOperations(app, gateway, operatorOperations);
  await registerMediaRoutes(app, gateway);
  registerChatwootCallbackRoutes(app, gateway);
  await registerCloudCallbackRoutes(app, gateway);
  registerInternalRoutes(app, gateway, [...publicOperations, ...numberControlOperations, cloudCallbackDelivery]);
  acceptEventStreams(app.server, gateway);
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  return app;
}

/** Fastify's form of WAGW_TRUST_PROXY: a hop count becomes "believe the nearest n hops". */
function trustProxyOption(trustProxy: false | number | string): boolean | string | ((address: string, hop: number) => boolean) {
  if (typeof trustProxy === 'number') return (_address, hop) => hop < trustProxy;
  return trustProxy;
}

function answerMalformedRequest(error: NodeJS.ErrnoException, socket: import('node:net').Socket): void {
  if (!socket.writable) return;
  // Node reports a client that did not finish its headers in time as a client error too.
  const timedOut = error.code === 'ERR_HTTP_REQUEST_TIMEOUT';
  const requestId = newId('request');
  const body = JSON.stringify({
    ...(timedOut
      ? {
          error: 'headers_timeout',
          message: 'The request headers did not arrive in time; the body may take as long as it needs, the headers may not.',
        }
      : {
          error: 'invalid_request',
          message: error.code === 'HPE_HEADER_OVERFLOW' ? 'The request headers are too large.' : 'The request is not valid HTTP.',
        }),
    request_id: requestId,
  });
  const statusLine = timedOut ? '408 Request Timeout' : '400 Bad Request';
  socket.end(
    `HTTP/1.1 ${statusLine}\r\nX-Request-Id: ${requestId}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ` +
      `${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
