import type { FastifyInstance } from 'fastify';
import type { Store } from '../../store/database.ts';

export function registerHealthRoute(app: FastifyInstance, store: Store): void {
  app.get(
    '/health',
    {
      schema: {
        operationId: 'checkHealth',
        summary: 'Liveness and database reachability',
        description: 'For load balancers and monitors: 200 while the database answers, 503 when it does not. Needs no key.',
        tags: ['operations'],
        security: [],
        response: {
          200: { description: 'The gateway and its database answer.', type: 'object', required: ['ok'], properties: { ok: { type: 'boolean', enum: [true] } } },
          503: { description: 'The database does not answer; the log says why.', type: 'object', required: ['ok'], properties: { ok: { type: 'boolean', enum: [false] } } },
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
