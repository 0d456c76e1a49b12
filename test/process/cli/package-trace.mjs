// Loaded with --import into a CLI process under test: appends the name of each package the
// process loads, once, to the file named by WAGW_TEST_PACKAGE_TRACE.
import { appendFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const traceFile = process.env.WAGW_TEST_PACKAGE_TRACE;
const seen = new Set();
registerHooks({
  resolve(specifier, context, nextResolve) {
    const resolved = nextResolve(specifier, context);
    const name = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(resolved.url)?.[1];
    if (traceFile !== undefined && name !== undefined && !seen.has(name)) {
      seen.add(name);
      appendFileSync(traceFile, `${name}\n`);
    }
    return resolved;
  },
});
