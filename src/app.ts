import type { FastifyInstance } from 'fastify';
import { registerDashboard } from './dashboard/plugin.ts';
import { buildApi } from './http/app.ts';
import type { Gateway } from './main.ts';

/**
 * The web app the gateway serves: the HTTP API (src/http/) with the dashboard (src/dashboard/)
 * mounted on it, last, so that its routes see the API's. The composition root puts them
 * together here, above both, so that neither imports the other (docs/adr/0061). It never
 * listens: src/server.ts does, and tests call `inject` on what this returns.
 */
export async function buildApp(gateway: Gateway): Promise<FastifyInstance> {
  const app = await buildApi(gateway);
  await registerDashboard(app, gateway);
  return app;
}
