/**
 * A reference to a named shared schema: the models are registered once with Fastify by their $id
 * (openapi-components.ts), referenced by it from the routes, and so written once into the
 * document's components.
 */
export function ref<Name extends string>(name: Name) {
  return { $ref: `${name}#` } as const;
}
