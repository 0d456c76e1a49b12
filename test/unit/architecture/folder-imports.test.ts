import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';

/**
 * The shape ADR 0061 holds the code to: the composition root (src/main.ts, src/wiring/) stands on
 * top, routes and pages reach services through narrow interfaces, and no two folders of src/
 * import each other, directly or round a longer loop. Read from the source text, so a type-only
 * import counts as much as a value import: a cycle of types is still a cycle of meaning.
 */
const SRC = path.resolve(import.meta.dirname, '../../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

/** Every relative module a file names: static imports, re-exports and dynamic import(). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [
    ...text.matchAll(/^\s*(?:import|export)\s[^'"]*?\sfrom\s+['"]([^'"]+)['"]/gms),
    ...text.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm),
    ...text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((match) => match[1] as string);
  return specifiers.filter((specifier) => specifier.startsWith('.')).map((specifier) => path.resolve(path.dirname(file), specifier));
}

/**
 * A file's node in the graph: its first folder under src/, or, for the files at src/'s top, the
 * file itself (main.ts, the root, sits on top; config.ts sits below nearly everything).
 */
function folderOf(file: string): string {
  const parts = path.relative(SRC, file).split(path.sep);
  return parts[0] as string;
}

export interface FileImport {
  from: string;
  to: string;
}

function fileImports(): FileImport[] {
  return sourceFiles(SRC).flatMap((file) =>
    importsOf(file)
      .filter((target) => !path.relative(SRC, target).startsWith('..'))
      .map((target) => ({ from: path.relative(SRC, file), to: path.relative(SRC, target) })),
  );
}

/** The folder-level graph: an edge for each pair of different folders with an import between them. */
function folderGraph(imports: FileImport[]): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const { from, to } of imports) {
    const a = folderOf(path.join(SRC, from));
    const b = folderOf(path.join(SRC, to));
    if (!graph.has(a)) graph.set(a, new Set());
    if (!graph.has(b)) graph.set(b, new Set());
    if (a !== b) graph.get(a)?.add(b);
  }
  return graph;
}

/** The graph's strongly connected components of more than one folder (Tarjan): each is a cycle. */
export function cyclesOf(graph: Map<string, Set<string>>): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const lows = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (node: string): void => {
    indices.set(node, index);
    lows.set(node, index);
    index += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indices.has(next)) {
        visit(next);
        lows.set(node, Math.min(lows.get(node) as number, lows.get(next) as number));
      } else if (onStack.has(next)) {
        lows.set(node, Math.min(lows.get(node) as number, indices.get(next) as number));
      }
    }
    if (lows.get(node) === indices.get(node)) {
      const component: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!indices.has(node)) visit(node);
  return cycles;
}

/** For a cycle, the file imports that make its edges, so a failure names the lines to change. */
function witnesses(cycle: string[], imports: FileImport[]): string[] {
  const members = new Set(cycle);
  return imports
    .filter(({ from, to }) => {
      const a = folderOf(path.join(SRC, from));
      const b = folderOf(path.join(SRC, to));
      return a !== b && members.has(a) && members.has(b);
    })
    .map(({ from, to }) => `${from} -> ${to}`);
}

describe('folder imports of src/ (ADR 0061)', () => {
  const imports = fileImports();

  it('finds a cycle when there is one (the check can fail)', () => {
    const graph = new Map([
      ['http', new Set(['dashboard', 'domain'])],
      ['dashboard', new Set(['http'])],
      ['domain', new Set<string>()],
    ]);
    assert.deepEqual(cyclesOf(graph), [['dashboard', 'http']]);
    assert.deepEqual(
      cyclesOf(
        new Map([
          ['a', new Set(['b'])],
          ['b', new Set(['c'])],
          ['c', new Set(['a'])],
        ]),
      ),
      [['a', 'b', 'c']],
    );
    assert.deepEqual(
      cyclesOf(
        new Map([
          ['a', new Set(['b'])],
          ['b', new Set<string>()],
        ]),
      ),
      [],
    );
  });

  it('reads the imports of the tree (not an empty graph)', () => {
    assert.ok(imports.length > 500, `only ${imports.length} imports read`);
    assert.ok(imports.some(({ from, to }) => from === 'main.ts' && to.startsWith('wiring/')));
  });

  it('has no import cycle between folders', () => {
    const cycles = cyclesOf(folderGraph(imports));
    const report = cycles.map((cycle) => `${cycle.join(' <-> ')}:\n    ${witnesses(cycle, imports).join('\n    ')}`);
    assert.deepEqual(report, []);
  });

  it('no file under src/http/ or src/dashboard/ imports src/main.ts (the root stands on top)', () => {
    const offenders = imports.filter(({ from, to }) => /^(http|dashboard)\//.test(from) && to === 'main.ts').map(({ from }) => from);
    assert.deepEqual(offenders, []);
  });

  it('src/http/ and src/dashboard/ do not import each other', () => {
    const offenders = imports
      .filter(
        ({ from, to }) =>
          (from.startsWith('http/') && to.startsWith('dashboard/')) || (from.startsWith('dashboard/') && to.startsWith('http/')),
      )
      .map(({ from, to }) => `${from} -> ${to}`);
    assert.deepEqual(offenders, []);
  });
});
