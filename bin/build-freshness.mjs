import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * Whether dist/ was built from the sources as they are now: its build stamp (written by scripts/build.mjs) is newer than every
 * file under src/. WAGW_RUN_SOURCES=1 runs the sources whatever dist/ holds. A few milliseconds
 * of stat calls, which a CLI start can afford.
 */
export function compiledIsCurrent(root) {
  if (process.env.WAGW_RUN_SOURCES === '1') return false;
  let builtAt;
  try {
    statSync(path.join(root, 'dist', 'cli', 'main.js'));
    builtAt = statSync(path.join(root, 'dist', '.built')).mtimeMs;
  } catch {
    return false;
  }
  const sources = path.join(root, 'src');
  let names;
  try {
    names = readdirSync(sources, { recursive: true });
  } catch {
    // A package shipped with dist/ alone.
    return true;
  }
  return names.every((name) => statSync(path.join(sources, name)).mtimeMs <= builtAt);
}
