import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { servedDocument } from '../../../scripts/client-generate.ts';
import {
  N8N_OPERATIONS_FILE,
  isNodeOperation,
  type Document,
  n8nOperationsFileOf,
  nodeOperationsOf,
} from '../../../scripts/n8n-generate.ts';

// The n8n node's actions are the API's operations (integrations/n8n-nodes-wa-gateway): its table is
// generated from the document the gateway serves, so an operation added to the registry (a new
// engine's, say) is an action once `npm run n8n:generate` is run, and this fails until it is.
describe("the n8n node's operations", () => {
  it('are generated from the document the gateway serves: regenerating them changes nothing (npm run n8n:generate)', async () => {
    const document = (await servedDocument()) as unknown as Document;
    assert.ok(
      n8nOperationsFileOf(document) === fs.readFileSync(N8N_OPERATIONS_FILE, 'utf8'),
      'integrations/n8n-nodes-wa-gateway/src/shared/operations.ts differs from the document; run npm run n8n:generate',
    );
    // Every operation an API key may call is an action, but the upload and the download (not JSON).
    const keyed = Object.values(document.paths)
      .flatMap((methods) => Object.values(methods))
      .filter((operation) => (operation.security ?? []).some((requirement) => 'apiKey' in requirement));
    const left = keyed.filter((operation) => !isNodeOperation(operation)).map((operation) => operation.operationId);
    assert.deepEqual([...new Set(left.map((id) => id.replace(/Api$/, '')))].sort(), ['downloadMedia', 'uploadMedia']);
    const actions = nodeOperationsOf(document).map((operation) => operation.operationId);
    assert.ok(actions.includes('sendMessage') && actions.includes('createWebhook'));
    assert.equal(new Set(actions).size, actions.length, 'each operation once, not again for its /api alias');
  });
});
