// Compiles src/ to dist/ (tsconfig.build.json) and copies the dashboard's static assets beside
// the compiled views. `npm install` runs it (the `prepare` script), so `npm start` runs compiled
// JavaScript on a fresh checkout; bin/wagw runs the sources instead while dist/ is older than
// them (docs/adr/0034-compiled-build.md).
//   node scripts/build.mjs
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);

let tsc;
try {
  tsc = require.resolve('typescript/bin/tsc');
} catch {
  // An install without the development dependencies (npm ci --omit=dev) keeps the dist/ it was given.
  if (existsSync(`${root}dist/cli/main.js`)) process.exit(0);
  process.stderr.write(
    'Building wa-gateway needs the development dependencies (typescript): run `npm install` without --omit=dev, or ship dist/.\n',
  );
  process.exit(1);
}

const compiled = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
if (compiled.status !== 0) process.exit(compiled.status ?? 1);
// Copied whole each time, so that an asset removed from src/ does not linger in dist/.
rmSync(`${root}dist/dashboard/assets`, { recursive: true, force: true });
cpSync(`${root}src/dashboard/assets`, `${root}dist/dashboard/assets`, { recursive: true });
// The build's time, which bin/wagw compares with the sources' (tsc leaves its own record alone when nothing changed).
writeFileSync(`${root}dist/.built`, `${new Date().toISOString()}\n`);
