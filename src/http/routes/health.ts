import type { FastifyInstance } from 'fastify';
import type { Store } from '../../store/database.ts';

export function registerHealthRoute(app: FastifyInstance, store: Store): void {
  app.get(
    '/health',
    {
      schema: {
        summary: 'Liveness and database reachability',
        tags: ['operations'],
        response: {
          200: { type: 'object', properties: { ok: { type: 'boolean', enum: [true] } } },
          503: { type: 'object', properties: { ok: { type: 'boolean', enum: [false] } } },
        },
      },
    },
    async (request, reply) => {
      const failure = await store.ping();
      // A 503 alone tells the operator's monitor that something is wrong, the log says what.
      if (failure !== undefined) request.log.error({ err: failure }, 'the database did not answer the health check');
      return reply.status(failure === undefined ? 200 : 503).send({ ok: failure === undefined });
    },
  );
}
