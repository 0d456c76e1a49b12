import type { FastifyInstance } from 'fastify';
import type { GatewayMetrics } from '../../observability/metrics.ts';

/**
 * Counts and times every answered request. The hook sits on the send path, so it does no more
 * than two label lookups; it labels by route pattern, never by the path itself, and requests
 * that matched no route share one label, so random paths cannot grow the set of series.
 */
export function registerRequestMetrics(app: FastifyInstance, metrics: GatewayMetrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    metrics.observeRequest(request.method, request.routeOptions.url, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}
