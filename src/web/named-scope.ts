import type { FastifyPluginAsync } from 'fastify';

const DISPLAY_NAME = Symbol.for('fastify.display-name');

/**
 * Names a plugin that opens a scope of routes. Fastify names a plugin without one by searching
 * the CommonJS module cache for it and then by printing its source: one pass over every loaded
 * module for each scope, each time an app is built (about 3 ms an app where that cache is large,
 * as under the test runner, which builds hundreds). The name is also what Fastify shows for the
 * scope in its plugin tree and in its errors.
 */
export function namedScope(name: string, plugin: FastifyPluginAsync): FastifyPluginAsync {
  return Object.assign(plugin, { [DISPLAY_NAME]: name });
}
