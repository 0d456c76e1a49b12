import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { CLIENT_SCHEMA_FILE, CLIENT_SCOPES_FILE, clientScopesOf, clientTypesOf, servedDocument } from '../../../scripts/client-generate.ts';
import { dialects } from '../../support/databases.ts';
import { documentChecker, type RecordedAnswer } from '../../support/documented-answers.ts';
import { GraphApiStandIn } from '../../support/graph-api-stand-in.ts';
import { everyOperationCloudSubject, everyOperationSubject } from './every-operation-subject.ts';
import { startListeningGateway, type ListeningGateway } from '../listening-gateway.ts';

const CLIENT = path.resolve('clients/typescript');
const EXAMPLE = path.join(CLIENT, 'examples/every-operation.ts');
const TSC = path.resolve('node_modules/.bin/tsc');

describe('the typed TypeScript client', () => {
  it('is generated from the document the gateway serves: regenerating it changes nothing (npm run client:generate)', async () => {
    const document = await servedDocument();
    const fresh = await clientTypesOf(document);
    assert.ok(
      fresh === fs.readFileSync(CLIENT_SCHEMA_FILE, 'utf8'),
      'clients/typescript/src/schema.ts differs from the document; run npm run client:generate',
    );
    assert.ok(
      clientScopesOf(document) === fs.readFileSync(CLIENT_SCOPES_FILE, 'utf8'),
      'clients/typescript/src/scopes.ts differs from the document; run npm run client:generate',
    );
    assert.match(fresh, /export type Message = components\['schemas'\]\['Message'\];/);
    assert.match(fresh, /export type GroupUpdatedEvent = components\['schemas'\]\['GroupUpdatedEvent'\];/);
  });

  it('its every-operation program and the client itself pass tsc --strict, with no cast', () => {
    const compiled = spawnSync(TSC, ['--strict', '--noEmit', '-p', path.join(CLIENT, 'tsconfig.json')], { encoding: 'utf8' });
    assert.equal(compiled.status, 0, compiled.stdout + compiled.stderr);
    for (const file of [EXAMPLE, path.join(CLIENT, 'src/index.ts')]) {
      const casts = fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => / as (?!const\b)/.test(line.replace(/\/\*.*?\*\/|\/\/.*$|'[^']*'|`[^`]*`/g, '')) && !line.trim().startsWith('*'));
      assert.deepEqual(casts, [], `${path.basename(file)} casts nothing`);
    }
  });
});

/** Runs the every-operation program with `env`, its answers recorded into `answersFile`; resolves to its exit code and output. */
async function runProgram(env: Record<string, string>, answersFile: string): Promise<{ code: number | null; output: string }> {
  const run = spawn(process.execPath, ['--import', 'tsx', EXAMPLE], {
    env: { ...env, WAGW_RECORD_ANSWERS: answersFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  run.stdout.on('data', (chunk: Buffer) => (output += chunk));
  run.stderr.on('data', (chunk: Buffer) => (output += chunk));
  const code = await new Promise<number | null>((resolve) => run.on('exit', resolve));
  return { code, output };
}

/** The operations the program was told its sender's engine lacks, from its last line. */
function lackingOf(output: string): string[] {
  const line = /^lacking: (.*)$/m.exec(output);
  assert.ok(line !== null, `the program names what its engine lacks: ${output}`);
  return JSON.parse(line[1]!) as string[];
}

for (const dialect of dialects) {
  describe(`the typed client's program uses every public operation against a live gateway (${dialect})`, () => {
    let live: ListeningGateway;
    let subject: Awaited<ReturnType<typeof everyOperationSubject>>;
    const answersFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'wagw-answers-')), 'answers.json');

    before(async () => {
      live = await startListeningGateway(dialect, { WAGW_WEBHOOK_ALLOW_PRIVATE: 'true' });
      subject = await everyOperationSubject(live);
      live.gateway.deliveryWorker.start();
    });
    after(async () => {
      await live?.gateway.deliveryWorker.stop();
      await live?.close();
    });

    it('runs green: every answer as typed, the error envelope, and a signed delivery verified into a typed event', async () => {
      const { code, output } = await runProgram(subject.env, answersFile);
      assert.equal(code, 0, output);
      assert.match(output, /every operation answered in its documented shape/);
      // A sandbox number rehearses Meta's templates too, so every check of the program ran.
      assert.deepEqual(lackingOf(output), []);
    });

    it('every answer the program got, refusals included, matches the document (Ajv 2020), and it reached every operation', async () => {
      const document = (await (await fetch(`http://127.0.0.1:${live.port}/openapi.json`)).json()) as {
        paths: Record<string, Record<string, unknown>>;
      };
      const answers = JSON.parse(fs.readFileSync(answersFile, 'utf8')) as RecordedAnswer[];
      const check = documentChecker(document);
      assert.deepEqual(
        answers.map(check).filter((fault) => fault !== undefined),
        [],
      );
      assert.ok(
        answers.some((answer) => answer.status >= 400),
        'refusals are among them',
      );
      const reached = new Set(answers.map((answer) => `${answer.method} ${answer.path}`));
      const operations = Object.entries(document.paths)
        .filter(([pathName]) => !pathName.startsWith('/api/'))
        .flatMap(([pathName, byMethod]) => Object.keys(byMethod).map((method) => `${method.toUpperCase()} ${pathName}`));
      assert.deepEqual(
        operations.filter((operation) => !reached.has(operation)),
        [],
        'every operation of the document was called',
      );
    });

    it('the delivery it verified matches the webhooks section of the document (Ajv 2020)', async () => {
      const document = (await (await fetch(`http://127.0.0.1:${live.port}/openapi.json`)).json()) as object;
      const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
      addFormats.default(ajv);
      ajv.addSchema(document, 'openapi.json');
      const events = await live.gateway.store.db.selectFrom('webhook_events').select('payload').execute();
      assert.ok(events.length > 0, 'the program caused deliveries');
      for (const { payload } of events) {
        const event = { ...JSON.parse(payload), webhook_id: 'wh_example' };
        const validate = ajv.compile({
          $ref: `openapi.json#/webhooks/${event.event.replace(/\//g, '~1')}/post/requestBody/content/application~1json/schema`,
        });
        assert.ok(validate(event), `${event.event}: ${ajv.errorsText(validate.errors)} in ${payload}`);
      }
    });
  });
}

for (const dialect of dialects) {
  describe(`the same program, unchanged, with a number on Meta's Cloud API as its sender (${dialect})`, () => {
    let standIn: GraphApiStandIn;
    let live: ListeningGateway;
    let subject: Awaited<ReturnType<typeof everyOperationCloudSubject>>;
    const answersFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'wagw-answers-')), 'answers.json');

    before(async () => {
      standIn = await GraphApiStandIn.start();
      live = await startListeningGateway(dialect, { WAGW_WEBHOOK_ALLOW_PRIVATE: 'true', WAGW_CLOUD_API_URL: standIn.url });
      subject = await everyOperationCloudSubject(live, standIn);
      live.gateway.deliveryWorker.start();
    });
    after(async () => {
      await live?.gateway.deliveryWorker.stop();
      await live?.close();
      await standIn?.close();
    });

    it('runs green: what the Cloud API has goes to Meta in its shapes, and what it lacks answers the documented 422 naming the engine', async () => {
      const { code, output } = await runProgram(subject.env, answersFile);
      assert.equal(code, 0, output);
      assert.match(output, /every operation answered in its documented shape/);
      // What the Cloud API lacks, each declined before anything reached Meta (docs/cloud-api.md's
      // table); a poll for later among them, refused as a poll now is rather than queued to fail.
      assert.deepEqual(lackingOf(output), [
        'POST /send_message a poll with send_at (cloud)',
        'POST /check_numbers (cloud)',
        'POST /sandbox/receive (cloud)',
        'POST /send_message a poll (cloud)',
        'POST /messages/{id}/edit (cloud)',
        'POST /messages/{id}/revoke (cloud)',
        'POST /groups (cloud)',
        'GET /groups (cloud)',
        'POST /chats/{chat}/archive (cloud)',
        'POST /chats/{chat}/unarchive (cloud)',
        'POST /chats/{chat}/pin (cloud)',
        'POST /chats/{chat}/unpin (cloud)',
        'POST /chats/{chat}/mute (cloud)',
        'POST /chats/{chat}/unmute (cloud)',
        'POST /chats/{chat}/mark_unread (cloud)',
        'POST /chats/{chat}/mark_read (cloud)',
        'POST /presence/subscribe (cloud)',
        'GET /contacts/{phone}/profile (cloud)',
        'PATCH /numbers/{id}/profile (cloud)',
        'POST /blocklist (cloud)',
        'GET /blocklist (cloud)',
        'GET /new_chat_quota (cloud)',
        'DELETE /blocklist/{phone} (cloud)',
        'POST /sandbox/call (cloud)',
      ]);
      const queued = await live.gateway.store.db.selectFrom('messages').select('content_kind').where('content_kind', '=', 'poll').execute();
      assert.deepEqual(queued, [], 'no poll was stored for the cloud number, queued or not');
      assert.deepEqual(standIn.violations, [], 'every request to the Graph API had the shape of its reference');
      const sent = standIn.messagesOf(subject.phone.phoneNumberId);
      const kinds = new Set(sent.map((message) => String(message.type ?? (message.status === 'read' ? 'read' : 'other'))));
      for (const kind of ['text', 'document', 'reaction', 'read'])
        assert.ok(kinds.has(kind), `a ${kind} reached Meta (${[...kinds].join(', ')})`);
      const answers = JSON.parse(fs.readFileSync(answersFile, 'utf8')) as RecordedAnswer[];
      const lacking = answers.filter((answer) => answer.status === 422 && JSON.parse(answer.body).error === 'capability_not_supported');
      assert.ok(lacking.length > 0, 'some operations are ones the Cloud API lacks');
      for (const answer of lacking)
        assert.equal(JSON.parse(answer.body).meta?.engine, 'cloud', `${answer.method} ${answer.path} names the engine that lacks it`);
      const document = (await (await fetch(`http://127.0.0.1:${live.port}/openapi.json`)).json()) as {
        paths: Record<string, Record<string, unknown>>;
      };
      const check = documentChecker(document);
      assert.deepEqual(
        answers.map(check).filter((fault) => fault !== undefined),
        [],
      );
    });
  });
}
