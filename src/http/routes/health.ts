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
    async (_request, reply) => {
      const ok = await store.ping();
      return reply.status(ok ? 200 : 503).send({ ok });
    },
  );
}
