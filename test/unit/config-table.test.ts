import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { currentConfigTable, renderConfigTable } from '../../scripts/config-table.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { VARIABLES } from '../../src/config-variables.ts';

describe('the declared variables are the single source of the configuration', () => {
  it("the README's configuration table is the declarations' (run `npm run docs:config` after changing them)", () => {
    assert.equal(currentConfigTable(), renderConfigTable());
  });

  it('every variable has a one-line meaning and a default, and .env.example names it', () => {
    const example = fs.readFileSync(new URL('../../.env.example', import.meta.url), 'utf8');
    for (const [name, variable] of Object.entries(VARIABLES)) {
      assert.ok(variable.meaning.length > 0 && !variable.meaning.includes('\n'), `${name}: one line of meaning`);
      assert.ok(variable.shown.length > 0, `${name}: a default to show`);
      assert.match(example, new RegExp(`^#? ?${name}=`, 'm'), `.env.example lists ${name}`);
    }
  });

  it('a malformed value of any variable is refused with a problem that names it', () => {
    // Each kind refuses something: a word where a number, flag, URL or list is wanted.
    const malformed: Record<string, string> = { WAGW_KEY_PREFIX: 'Bad!', WAGW_MEDIA_S3_PREFIX: '../up' };
    const free = new Set([
      'HOST',
      'WAGW_TRUST_PROXY',
      'WAGW_ADMIN_EMAIL',
      'WAGW_ADMIN_PASSWORD',
      'WAGW_DATA_DIR',
      'WAGW_NODE_NAME',
      'WAGW_MEDIA_DIR',
    ]);
    for (const name of Object.keys(VARIABLES)) {
      if (free.has(name) || name.startsWith('WAGW_MEDIA_S3_') || name === 'AWS_REGION') continue;
      const raw = malformed[name] ?? 'not valid!';
      assert.throws(
        () => loadConfig({ [name]: raw }),
        (error: unknown) => error instanceof ConfigError && error.message.includes(name),
        `${name}=${raw} is refused by name`,
      );
    }
  });

  it('every declared variable reaches the config: some valid value of it changes what loadConfig returns', () => {
    // A declaration that loadConfig never arranges into the Config would be documented and ignored.
    const s3 = {
      WAGW_MEDIA_STORE: 's3',
      WAGW_MEDIA_S3_BUCKET: 'b',
      WAGW_MEDIA_S3_ACCESS_KEY_ID: 'a',
      WAGW_MEDIA_S3_SECRET_ACCESS_KEY: 's',
    };
    const postgres = { DATABASE_URL: 'postgres://localhost/wagw' };
    const candidates = ['2', '7', '100', '65536', '1000000', 'true', 'false', 'x1', 'debug', 'event-loop', 'standard', 's3', 'gw/'];
    candidates.push(
      'http://10.0.0.5:3000',
      'tcp://h:1',
      '127.0.0.1:4000',
      'pro:3',
      '2.3000.1',
      '5,10',
      'f'.repeat(64),
      'sqlite:./x.db',
      'v24.0',
    );
    for (const name of Object.keys(VARIABLES)) {
      // Some variables mean something only beside another: the S3 settings with s3, the pool with PostgreSQL.
      const base =
        name.startsWith('WAGW_MEDIA_S3_') || name === 'AWS_REGION'
          ? s3
          : name.startsWith('WAGW_DATABASE_')
            ? postgres
            : name === 'WAGW_MEDIA_STORE'
              ? { WAGW_MEDIA_S3_BUCKET: 'b' }
              : {};
      const before = loadConfig(base);
      const reaches = candidates.some((raw) => {
        try {
          return !isDeepStrictEqual(loadConfig({ ...base, [name]: raw }), before);
        } catch {
          return false;
        }
      });
      assert.ok(reaches, `no value of ${name} changes the config`);
    }
  });

  it('the S3 settings are read only while WAGW_MEDIA_STORE is s3, so left-over ones never stop a start', () => {
    assert.equal(loadConfig({ WAGW_MEDIA_S3_PREFIX: '../up', WAGW_MEDIA_S3_ENDPOINT: 'ftp://x' }).media.s3, null);
    assert.throws(
      () => loadConfig({ WAGW_MEDIA_STORE: 's3', WAGW_MEDIA_S3_BUCKET: 'b', WAGW_MEDIA_S3_PREFIX: '../up' }),
      /WAGW_MEDIA_S3_PREFIX must be path segments/,
    );
  });
});
