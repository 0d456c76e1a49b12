import type { FastifyInstance } from 'fastify';
import type { NodeRuntime } from '../../cluster/node-runtime.ts';
import type { Store } from '../../store/database.ts';
import { UNWRITABLE_FOR_MS, type WriteFailures } from '../../store/write-failures.ts';
import { errorResponsesFor } from '../operations/error-responses.ts';
import { API_PREFIXES } from '../operations/registry.ts';

const unhealthy = {
  type: 'object',
  required: ['ok'],
  properties: {
    ok: { type: 'boolean', enum: [false] },
    stopping: {
      type: 'boolean',
      enum: [true],
      description: 'Present while the node stops (SIGTERM): it still answers what it is sent, but a load balancer should send no more.',
    },
    storage: {
      type: 'string',
      enum: ['unwritable'],
      description:
        'Present when the database answers but failed to take a write in the last 30 s (a full disk, a server refusing writes); the log ' +
        'has the cause.',
    },
  },
} as const;

/** At both of the API's prefixes, as every endpoint is. */
export function registerHealthRoute(
  app: FastifyInstance,
  store: Store,
  writeFailures: WriteFailures,
  runtime: Pick<NodeRuntime, 'stopping'>,
): void {
  for (const prefix of API_PREFIXES) registerHealthRouteAt(app, prefix, store, writeFailures, runtime);
}

/** Seconds a monitor waits before it asks again after a 503. */
const RECHECK_AFTER_SECONDS = '5';

function registerHealthRouteAt(
  app: FastifyInstance,
  prefix: string,
  store: Store,
  writeFailures: WriteFailures,
  runtime: Pick<NodeRuntime, 'stopping'>,
): void {
  app.get(
    `${prefix}/health`,
    {
      schema: {
        operationId: prefix === '' ? 'checkHealth' : 'checkHealthApi',
        summary: 'Liveness, database reachability and writability',
        description:
          `For load balancers and monitors: 200 while the database answers and takes writes; 503 when it does not answer, or ` +
          `when it failed to take a write in the last ${UNWRITABLE_FOR_MS / 1000} s (then with storage "unwritable"); 503 with ` +
          `stopping true from the moment the node begins to stop (it keeps answering while it hands its numbers over), so that a load ` +
          `balancer takes it out of rotation. Every 503 carries Retry-After. Needs no key.`,
        tags: ['operations'],
        security: [],
        response: {
          200: {
            description: 'The gateway and its database answer.',
            type: 'object',
            required: ['ok'],
            properties: { ok: { type: 'boolean', enum: [true] } },
          },
          // Only a URL it cannot read (a broken %-escape in its query); it reads no other input.
          ...errorResponsesFor(['invalid_request']),
          503: { description: 'The node stops, or the database does not answer or cannot write; the log says why.', ...unhealthy },
        },
      },
    },
    async (request, reply) => {
      if (runtime.stopping) return reply.status(503).header('retry-after', RECHECK_AFTER_SECONDS).send({ ok: false, stopping: true });
      const failure = await store.ping();
      // A 503 alone tells the operator's monitor that something is wrong, the log says what.
      if (failure !== undefined) {
        request.log.error({ err: failure }, 'the database did not answer the health check');
        return reply.status(503).header('retry-after', RECHECK_AFTER_SECONDS).send({ ok: false });
      }
      const writeFailure = writeFailures.recent();
      if (writeFailure !== undefined) {
        request.log.error({ err: writeFailure }, 'the database failed to take a write recently');
        return reply.status(503).header('retry-after', RECHECK_AFTER_SECONDS).send({ ok: false, storage: 'unwritable' });
      }
      return reply.status(200).send({ ok: true });
    },
  );
}
