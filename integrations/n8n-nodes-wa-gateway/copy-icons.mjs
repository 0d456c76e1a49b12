// tsc compiles the TypeScript; the nodes' icons are copied beside the compiled nodes, where n8n looks for them.
import { cpSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const here = new URL('.', import.meta.url).pathname;
for (const node of readdirSync(join(here, 'src/nodes'))) {
  for (const file of readdirSync(join(here, 'src/nodes', node)).filter((name) => name.endsWith('.svg'))) {
    cpSync(join(here, 'src/nodes', node, file), join(here, 'dist/nodes', node, file));
  }
}
