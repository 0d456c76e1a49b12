import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { everyOperationSubject } from './every-operation-subject.ts';
import { startListeningGateway, type ListeningGateway } from '../listening-gateway.ts';

/**
 * The typed client as an integrator gets it: `npm pack`, installed from the tarball into a fresh
 * package with no network (its dependencies packed from this workspace's own copies), and the
 * every-operation program compiled against the installed declarations and run with plain `node`,
 * no TypeScript loader, on both supported Node releases (docs/adr/0025-node-releases.md).
 */

const ROOT = path.resolve('.');
const CLIENT = path.join(ROOT, 'clients/typescript');
const TSC = path.join(ROOT, 'node_modules/.bin/tsc');
const NODE_22 = '22.23.3';

function run(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): string {
  const result = spawnSync(command, args, { ...options, encoding: 'utf8', env: options.env ?? process.env });
  assert.equal(result.status, 0, `${command} ${args.join(' ')}\n${result.stdout}${result.stderr}`);
  return result.stdout;
}

/** The client's runtime dependencies and theirs, as this workspace holds them. */
function dependencyClosure(names: string[], seen = new Set<string>()): Set<string> {
  for (const name of names) {
    if (seen.has(name)) continue;
    seen.add(name);
    const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8'));
    dependencyClosure(Object.keys(manifest.dependencies ?? {}), seen);
  }
  return seen;
}

describe('the typed client installs from its tarball and runs on Node 22 and 24 without a TypeScript loader', () => {
  let work: string;
  let consumer: string;
  let live: ListeningGateway;

  before(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'wagw-client-package-'));
    const tarballs = path.join(work, 'tarballs');
    fs.mkdirSync(tarballs);
    // The client's own tarball: its prepack compiles src/ to dist/ with declarations.
    const packed = run('npm', ['pack', '--pack-destination', tarballs, '--loglevel=error'], { cwd: CLIENT }).trim().split('\n').at(-1)!;
    const manifest = JSON.parse(fs.readFileSync(path.join(CLIENT, 'package.json'), 'utf8'));
    const dependencies = [...dependencyClosure(Object.keys(manifest.dependencies))].map(
      (name) =>
        run(
          'npm',
          ['pack', path.join(ROOT, 'node_modules', name), '--pack-destination', tarballs, '--ignore-scripts', '--loglevel=error'],
          {
            cwd: work,
          },
        )
          .trim()
          .split('\n')
          .at(-1)!,
    );
    consumer = path.join(work, 'consumer');
    fs.mkdirSync(consumer);
    fs.writeFileSync(path.join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    const offline = [
      '--offline',
      '--no-audit',
      '--no-fund',
      '--ignore-scripts',
      '--loglevel=error',
      `--cache=${path.join(work, 'npm-cache')}`,
    ];
    run('npm', ['install', ...offline, ...[packed, ...dependencies].map((file) => path.join(tarballs, file))], { cwd: consumer });
    // The program as an integrator writes it: the package by its name, compiled against its declarations.
    const program = fs
      .readFileSync(path.join(CLIENT, 'examples/every-operation.ts'), 'utf8')
      .replace("from '../src/index.ts'", "from '@wa-gateway/client'");
    fs.writeFileSync(path.join(consumer, 'every-operation.ts'), program);
    run(
      TSC,
      [
        '--strict',
        '--noUncheckedIndexedAccess',
        '--target',
        'ES2022',
        '--lib',
        'ES2024',
        '--module',
        'NodeNext',
        '--moduleResolution',
        'NodeNext',
        '--types',
        'node',
        '--typeRoots',
        path.join(ROOT, 'node_modules/@types'),
        '--outDir',
        'out',
        'every-operation.ts',
      ],
      { cwd: consumer },
    );
    live = await startListeningGateway('sqlite', { WAGW_WEBHOOK_ALLOW_PRIVATE: 'true' });
    live.gateway.deliveryWorker.start();
  });
  after(async () => {
    await live?.gateway.deliveryWorker.stop();
    await live?.close();
    if (work !== undefined) fs.rmSync(work, { recursive: true, force: true });
  });

  it('the tarball holds compiled JavaScript and declarations, and no TypeScript source', () => {
    const installed = path.join(consumer, 'node_modules/@wa-gateway/client');
    const files = fs.readdirSync(path.join(installed, 'dist')).sort();
    assert.ok(files.includes('index.js') && files.includes('index.d.ts'), files.join(', '));
    assert.deepEqual(
      files.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts')),
      [],
      'no TypeScript source',
    );
    for (const file of files.filter((each) => each.endsWith('.js')))
      assert.ok(files.includes(file.replace(/\.js$/, '.d.ts')), `${file} has its declarations`);
    assert.ok(!fs.existsSync(path.join(installed, 'src')), 'no source is shipped');
  });

  for (const release of ['24', NODE_22]) {
    it(`runs the every-operation program with plain node ${release}`, async () => {
      // Each run is a new account, with its own webhook and receiver.
      const { env } = await everyOperationSubject(live);
      const program = path.join(consumer, 'out/every-operation.js');
      const child =
        release === '24'
          ? spawn(process.execPath, [program], { cwd: consumer, env, stdio: ['ignore', 'pipe', 'pipe'] })
          : spawn(path.join(ROOT, 'scripts/node.sh'), ['node', program], {
              cwd: consumer,
              env: { ...env, WAGW_NODE: release },
              stdio: ['ignore', 'pipe', 'pipe'],
            });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk));
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      assert.equal(code, 0, output);
      assert.match(output, /every operation answered in its documented shape/);
      assert.match(output, new RegExp(`on Node v${release === '24' ? '24\\.' : release.replace(/\./g, '\\.')}`));
    });
  }
});
