import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../domain/errors.ts';
import type { GatewayMetrics } from '../../observability/metrics.ts';

/**
 * GET /metrics in Prometheus' text format, behind a bearer token of its own. Without a configured
 * token the route does not exist, so a fresh install exposes nothing and answers 404 like any
 * unknown path.
 */
export function registerMetricsRoute(app: FastifyInstance, metrics: GatewayMetrics, token: string | undefined): void {
  if (token === undefined) return;
  const expectedDigest = sha256(token);
  app.get(
    '/metrics',
    {
      // For the monitoring system, not for API clients: kept out of the OpenAPI document.
      schema: { hide: true },
      onRequest: async (request) => assertMetricsToken(request, expectedDigest),
    },
    async (_request, reply) => {
      const body = await metrics.render();
      return reply.type(metrics.contentType).send(body);
    },
  );
}

function assertMetricsToken(request: FastifyRequest, expectedDigest: Buffer): void {
  const match = /^Bearer +(\S+)\s*$/i.exec(request.headers.authorization ?? '');
  if (match === null) {
    throw new AppError('invalid_metrics_token', 'GET /metrics needs the metrics token: send Authorization: Bearer <WAGW_METRICS_TOKEN>.');
  }
  // Comparing digests of equal length keeps both the token's content and its length out of the timing.
  if (!timingSafeEqual(sha256(match[1]!), expectedDigest)) {
    throw new AppError('invalid_metrics_token', 'The metrics token is not the configured one.');
  }
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
