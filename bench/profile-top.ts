/**
 * node --import tsx bench/profile-top.ts FILE.cpuprofile [COUNT]
 *
 * The frames with the most self time in a V8 CPU profile (node --cpu-prof), as a Markdown table:
 * each function (by name, file and line) with its self time and its share of the busy time (the
 * profile less `(idle)`), so that profiles of a benchmark before and after a change can be put
 * side by side in docs/benchmarks.md. Time is summed from the samples' time deltas, as DevTools
 * does, over every node of the call tree that is the same function.
 */
import fs from 'node:fs';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface Profile {
  startTime: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface Frame {
  name: string;
  where: string;
  selfMs: number;
  share: number;
}

/**
 * The `count` frames with the most self time, and the profile's busy milliseconds; with `window`,
 * only the samples taken in it (microseconds of the monotonic clock, process.hrtime's on Linux,
 * the clock V8 stamps profiles with), so that a process's start-up is left out.
 */
export function topSelfFrames(
  profile: Profile,
  count: number,
  window?: { fromMicroseconds: number; toMicroseconds: number },
): { frames: Frame[]; busyMs: number } {
  const keyOf = new Map<number, string>();
  const labels = new Map<string, { name: string; where: string }>();
  for (const node of profile.nodes) {
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url === '' ? '' : `${shortUrl(url)}:${lineNumber + 1}`;
    const key = `${functionName}\u0000${where}`;
    keyOf.set(node.id, key);
    labels.set(key, { name: functionName === '' ? '(anonymous)' : functionName, where });
  }
  const selfMicroseconds = new Map<string, number>();
  let busy = 0;
  let at = profile.startTime;
  for (let index = 0; index < profile.samples.length; index++) {
    at += profile.timeDeltas[index] ?? 0;
    if (window !== undefined && (at < window.fromMicroseconds || at > window.toMicroseconds)) continue;
    // A sample's time is the delta to the next sample (DevTools' convention).
    const delta = profile.timeDeltas[index + 1] ?? 0;
    const key = keyOf.get(profile.samples[index]!)!;
    selfMicroseconds.set(key, (selfMicroseconds.get(key) ?? 0) + delta);
    if (!key.startsWith('(idle)')) busy += delta;
  }
  const frames = [...selfMicroseconds]
    .filter(([key]) => !key.startsWith('(idle)'))
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([key, microseconds]) => ({ ...labels.get(key)!, selfMs: microseconds / 1_000, share: microseconds / busy }));
  return { frames, busyMs: busy / 1_000 };
}

/** A file's path from the checkout or from node_modules, not the machine's. */
function shortUrl(url: string): string {
  const file = url.replace(/^file:\/\//, '');
  const modules = file.lastIndexOf('/node_modules/');
  if (modules >= 0) return file.slice(modules + '/node_modules/'.length);
  return path.relative(process.cwd(), file) || file;
}

export function renderTopFrames(frames: Frame[], busyMs: number): string {
  const rows = frames.map(
    (frame, index) =>
      `| ${index + 1} | \`${frame.name}\` | ${frame.where === '' ? '–' : `\`${frame.where}\``} | ${Math.round(frame.selfMs)} ms | ${(frame.share * 100).toFixed(1)} % |`,
  );
  return `| # | function | where | self time | share of busy time (${Math.round(busyMs)} ms) |\n|---|---|---|---|---|\n${rows.join('\n')}`;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === import.meta.filename) {
  const file = process.argv[2];
  if (file === undefined) throw new Error('usage: node --import tsx bench/profile-top.ts FILE.cpuprofile [COUNT]');
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  const { frames, busyMs } = topSelfFrames(profile, Number(process.argv[3] ?? 5));
  console.log(renderTopFrames(frames, busyMs));
}
