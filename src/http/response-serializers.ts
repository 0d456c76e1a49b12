import fastJsonStringify, { type Options } from 'fast-json-stringify';

type Schemas = Record<string, unknown>;

type Serializer = (data: unknown) => string;

/** The serializers compiled so far, by the shared schemas and options they were built with. */
const serializersByShared = new Map<string, Map<string, Serializer>>();

/**
 * Builds each route's answer serializer with only the shared schemas its answer reaches through
 * `$ref`. Fastify's default hands every serializer all the shared schemas (the document's
 * components, the webhook events among them), and fast-json-stringify checks and copies each one
 * for every route and status: that tripled the time an app took to start, and held the event
 * loop long enough at start to break transactions running beside it.
 *
 * A serializer is a pure function of its schema, the shared schemas and the options, so an app
 * built again in the same process (a restart in a test, several nodes in one process) reuses the
 * ones built before; schemas are keyed by content, since the routes build some of theirs afresh.
 */
export function serializersWithReachedSchemas(externalSchemas: unknown, options: unknown) {
  const shared = (externalSchemas ?? {}) as Schemas;
  const sharedKey = JSON.stringify([shared, options]);
  let built = serializersByShared.get(sharedKey);
  if (built === undefined) {
    built = new Map();
    serializersByShared.set(sharedKey, built);
  }
  const known = built;
  return ({ schema }: { schema?: unknown }): Serializer => {
    const key = JSON.stringify(schema) ?? '';
    let serialize = known.get(key);
    if (serialize === undefined) {
      serialize = fastJsonStringify(schema as object, {
        ...(options as Options),
        schema: reachedSchemas(schema, shared) as Options['schema'],
      });
      known.set(key, serialize);
    }
    return serialize;
  };
}

/** The shared schemas `schema` refers to, directly or through one another, by id. */
function reachedSchemas(schema: unknown, shared: Schemas): Schemas {
  const reached: Schemas = {};
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item);
      return;
    }
    if (value === null || typeof value !== 'object') return;
    for (const [key, inner] of Object.entries(value)) {
      if (key === '$ref' && typeof inner === 'string') {
        const id = inner.split('#')[0]!;
        if (id !== '' && id in shared && !(id in reached)) {
          reached[id] = shared[id];
          visit(shared[id]);
        }
      } else {
        visit(inner);
      }
    }
  };
  visit(schema);
  // A shared schema that is itself the answer needs no copy of itself (as Fastify's own compiler does).
  const own = (schema as { $id?: unknown }).$id;
  if (typeof own === 'string') delete reached[own];
  return reached;
}
