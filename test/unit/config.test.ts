import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, DEFAULT_SQLITE_PATH, describeDatabase, loadConfig } from '../../src/config.ts';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    return error.message
      .split('\n')
      .slice(1)
      .map((line) => line.replace(/^\s*- /, ''));
  }
  assert.fail(`expected ${JSON.stringify(env)} to be refused`);
}

describe('loadConfig defaults', () => {
  const config = loadConfig({});

  it('an empty environment gives SQLite at ./data/wagw.db, resolved to an absolute path', () => {
    assert.equal(DEFAULT_SQLITE_PATH, './data/wagw.db');
    assert.equal(config.database.dialect, 'sqlite');
    assert.ok(config.database.dialect === 'sqlite');
    assert.ok(path.isAbsolute(config.database.path));
    assert.equal(config.database.path, path.resolve('data/wagw.db'));
  });

  it('an empty environment listens on 127.0.0.1:3000, not on every interface', () => {
    assert.equal(config.http.host, '127.0.0.1');
    assert.equal(config.http.port, 3000);
  });

  it('an empty environment gives the documented limits and key prefix', () => {
    assert.equal(config.apiKeyPrefix, 'wagw');
    assert.equal(config.maxMessageLength, 65_536);
    assert.equal(config.http.bodyLimitBytes, 1_048_576);
    assert.equal(config.http.maxConnections, 4096);
    assert.equal(config.http.maxConnectionsPerAddress, 256);
    assert.equal(config.http.shutdownGraceMs, 10_000);
    assert.equal(config.groupCommit.maxBatchSize, 256);
    assert.equal(config.groupCommit.enabled, true);
    assert.equal(config.logLevel, 'info');
    assert.deepEqual(config.admin, { email: undefined, password: undefined });
  });

  it("the shared sandbox network's line limit has room for the largest file in base64 with its caption, and follows the media limits", () => {
    assert.equal(config.cluster.sandboxNetworkMaxLineBytes, Math.ceil((100 * 1024 * 1024) / 3) * 4 + 6 * 65_536 + 1024 * 1024);
    assert.equal(
      loadConfig({
        WAGW_MEDIA_MAX_DOCUMENT_BYTES: '3000',
        WAGW_MEDIA_MAX_IMAGE_BYTES: '3000',
        WAGW_MEDIA_MAX_VIDEO_BYTES: '3000',
        WAGW_MEDIA_MAX_AUDIO_BYTES: '3000',
        WAGW_MEDIA_MAX_STICKER_BYTES: '3000',
        WAGW_MAX_MESSAGE_LENGTH: '10',
      }).cluster.sandboxNetworkMaxLineBytes,
      4000 + 60 + 1024 * 1024,
    );
    assert.equal(loadConfig({ WAGW_SANDBOX_NETWORK_MAX_LINE_BYTES: '1048576' }).cluster.sandboxNetworkMaxLineBytes, 1_048_576);
  });

  it('empty strings count as unset and take the defaults', () => {
    const blank = loadConfig({ DATABASE_URL: '', PORT: '', HOST: '', WAGW_KEY_PREFIX: '', WAGW_MAX_MESSAGE_LENGTH: '' });
    assert.deepEqual(blank, config);
  });

  it('set values replace the defaults', () => {
    const custom = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      WAGW_KEY_PREFIX: 'acme2',
      WAGW_MAX_MESSAGE_LENGTH: '4096',
      WAGW_BODY_LIMIT_BYTES: '2048',
      WAGW_GROUP_COMMIT_MAX_BATCH: '5',
      WAGW_GROUP_COMMIT: 'false',
      WAGW_MAX_CONNECTIONS_PER_IP: '8',
    });
    assert.equal(custom.http.port, 8080);
    assert.equal(custom.http.host, '0.0.0.0');
    assert.equal(custom.apiKeyPrefix, 'acme2');
    assert.equal(custom.maxMessageLength, 4096);
    assert.equal(custom.http.bodyLimitBytes, 2048);
    assert.equal(custom.groupCommit.maxBatchSize, 5);
    assert.equal(custom.groupCommit.enabled, false);
    assert.equal(custom.http.maxConnectionsPerAddress, 8);
    assert.throws(() => loadConfig({ WAGW_GROUP_COMMIT: 'off' }), /WAGW_GROUP_COMMIT must be true or false/);
    assert.throws(() => loadConfig({ WAGW_MAX_CONNECTIONS_PER_IP: '0' }), /WAGW_MAX_CONNECTIONS_PER_IP must be a whole number from 1/);
  });

  it('reads the sandbox delivery wait, 2 s unless set, and refuses one beyond ten minutes', () => {
    assert.equal(loadConfig({}).sandbox.deliveryWaitMs, 2_000);
    assert.equal(loadConfig({ WAGW_SANDBOX_DELIVERY_WAIT_MS: '60000' }).sandbox.deliveryWaitMs, 60_000);
    assert.throws(
      () => loadConfig({ WAGW_SANDBOX_DELIVERY_WAIT_MS: '600001' }),
      /WAGW_SANDBOX_DELIVERY_WAIT_MS must be a whole number from 0/,
    );
  });
});

describe('DATABASE_URL chooses the dialect', () => {
  it('sqlite:PATH is SQLite at PATH resolved absolute, keeping the URL as given', () => {
    const relative = loadConfig({ DATABASE_URL: 'sqlite:./var/gateway.db' }).database;
    assert.deepEqual(relative, {
      dialect: 'sqlite',
      path: path.resolve('var/gateway.db'),
      url: 'sqlite:./var/gateway.db',
      commitSync: 'thread-pool',
    });
    const absolute = loadConfig({ DATABASE_URL: 'sqlite:/srv/wagw/data.db' }).database;
    assert.ok(absolute.dialect === 'sqlite');
    assert.equal(absolute.path, '/srv/wagw/data.db');
  });

  it('postgres:// and postgresql:// are both PostgreSQL, with the URL as the connection string', () => {
    for (const url of ['postgres://wagw:secret@db.internal:5432/wagw', 'postgresql://wagw@localhost/wagw']) {
      const database = loadConfig({ DATABASE_URL: url }).database;
      assert.ok(database.dialect === 'postgres', url);
      assert.equal(database.connectionString, url);
      assert.equal(database.url, url);
      assert.equal(database.poolSize, 10);
    }
  });

  it('WAGW_DATABASE_POOL_SIZE sizes the PostgreSQL pool', () => {
    const database = loadConfig({ DATABASE_URL: 'postgres://localhost/wagw', WAGW_DATABASE_POOL_SIZE: '3' }).database;
    assert.ok(database.dialect === 'postgres');
    assert.equal(database.poolSize, 3);
  });

  it('prepared statements are on unless WAGW_DATABASE_PREPARED_STATEMENTS=false, for poolers that move clients between connections', () => {
    const on = loadConfig({ DATABASE_URL: 'postgres://localhost/wagw' }).database;
    assert.ok(on.dialect === 'postgres');
    assert.equal(on.preparedStatements, true);
    const off = loadConfig({ DATABASE_URL: 'postgres://localhost/wagw', WAGW_DATABASE_PREPARED_STATEMENTS: 'false' }).database;
    assert.ok(off.dialect === 'postgres');
    assert.equal(off.preparedStatements, false);
    assert.throws(() => loadConfig({ WAGW_DATABASE_PREPARED_STATEMENTS: 'no' }), /WAGW_DATABASE_PREPARED_STATEMENTS must be true or false/);
  });

  it('"sqlite:" without a path is refused rather than silently using the default file', () => {
    const problems = problemsOf({ DATABASE_URL: 'sqlite:' });
    assert.equal(problems.length, 1);
    assert.match(problems[0]!, /DATABASE_URL/);
  });

  for (const url of ['mysql://localhost/wagw', 'postgres:/localhost/wagw', 'SQLITE:./x.db', './data/wagw.db', 'http://db']) {
    it(`${JSON.stringify(url)} is refused with a DATABASE_URL problem`, () => {
      const problems = problemsOf({ DATABASE_URL: url });
      assert.equal(problems.length, 1);
      assert.match(problems[0]!, /DATABASE_URL must start with sqlite:, postgres:\/\/ or postgresql:\/\//);
    });
  }
});

describe('invalid settings are refused', () => {
  for (const port of ['abc', '-1', '3000.5', '80 80']) {
    it(`PORT ${JSON.stringify(port)} is refused, naming the variable and the value`, () => {
      const problems = problemsOf({ PORT: port });
      assert.equal(problems.length, 1);
      assert.match(problems[0]!, /^PORT /);
      assert.ok(problems[0]!.includes(`"${port}"`), problems[0]);
    });
  }

  it('PORT 65535 is accepted and PORT 65536, which no socket can bind, is refused', () => {
    assert.equal(loadConfig({ PORT: '65535' }).http.port, 65_535);
    const problems = problemsOf({ PORT: '65536' });
    assert.match(problems[0]!, /^PORT /);
  });

  it('a PORT of only spaces is refused, not read as port 0 (a random port)', () => {
    const problems = problemsOf({ PORT: ' ' });
    assert.match(problems[0]!, /^PORT /);
  });

  for (const prefix of ['Bad!', 'Wagw', '1wagw', 'wa_gw', 'a'.repeat(17)]) {
    it(`WAGW_KEY_PREFIX ${JSON.stringify(prefix)} is refused`, () => {
      const problems = problemsOf({ WAGW_KEY_PREFIX: prefix });
      assert.equal(problems.length, 1);
      assert.match(problems[0]!, /^WAGW_KEY_PREFIX /);
    });
  }

  it('every problem is reported at once, not only the first', () => {
    const problems = problemsOf({
      DATABASE_URL: 'mysql://localhost/wagw',
      PORT: 'abc',
      WAGW_KEY_PREFIX: 'Bad!',
      WAGW_MAX_MESSAGE_LENGTH: '0',
      WAGW_BODY_LIMIT_BYTES: '10',
    });
    assert.equal(problems.length, 5, problems.join('\n'));
    for (const name of ['DATABASE_URL', 'PORT', 'WAGW_KEY_PREFIX', 'WAGW_MAX_MESSAGE_LENGTH', 'WAGW_BODY_LIMIT_BYTES']) {
      assert.ok(
        problems.some((problem) => problem.startsWith(name)),
        `${name} is missing from:\n${problems.join('\n')}`,
      );
    }
  });

  it('a ConfigError is an Error named ConfigError', () => {
    const error = new ConfigError(['one', 'two']);
    assert.ok(error instanceof Error);
    assert.equal(error.name, 'ConfigError');
    assert.match(error.message, /one[\s\S]*two/);
  });
});

describe('WAGW_METRICS_TOKEN', () => {
  it('is unset by default, so there are no metrics to scrape', () => {
    assert.equal(loadConfig({}).metrics.token, undefined);
    assert.equal(loadConfig({ WAGW_METRICS_TOKEN: '' }).metrics.token, undefined);
  });

  it('a token of 16 or more visible characters is kept as given', () => {
    const token = 'f3a1c0de9b7e4d21aa55';
    assert.equal(loadConfig({ WAGW_METRICS_TOKEN: token }).metrics.token, token);
  });

  for (const token of ['short-token', 'has a space in the middle', 'tab\tinside-the-token-x']) {
    it(`${JSON.stringify(token)} is refused, without echoing the token`, () => {
      const problems = problemsOf({ WAGW_METRICS_TOKEN: token });
      assert.equal(problems.length, 1);
      assert.match(problems[0]!, /^WAGW_METRICS_TOKEN /);
      assert.ok(!problems[0]!.includes(token), problems[0]);
    });
  }
});

describe('media allowances by plan', () => {
  const MIB = 1024 * 1024;

  it('default to Starter < Pro < Enterprise, and a disk floor of 1 GiB or 2 %', () => {
    const { allowances, minFreeBytes, minFreePercent } = loadConfig({}).media;
    for (const amounts of [allowances.storageBytes, allowances.uploadBytesPerWindow, allowances.fetchBytesPerWindow]) {
      assert.ok(amounts.starter < amounts.pro && amounts.pro < amounts.enterprise, JSON.stringify(amounts));
      assert.ok(amounts.starter >= 100 * MIB, 'the largest document fits every plan');
    }
    assert.deepEqual([allowances.windowMs, minFreeBytes, minFreePercent], [3_600_000, 1024 * MIB, 2]);
  });

  it("plan:MiB entries replace those plans' figures and leave the others at their defaults", () => {
    const { storageBytes } = loadConfig({ WAGW_MEDIA_STORAGE_QUOTA_MIB: 'pro:3, enterprise:7' }).media.allowances;
    assert.deepEqual(storageBytes, { starter: loadConfig({}).media.allowances.storageBytes.starter, pro: 3 * MIB, enterprise: 7 * MIB });
  });

  for (const raw of ['gold:5', 'starter:0', 'starter=5', 'starter:-1', 'starter:5MiB']) {
    it(`${JSON.stringify(raw)} is refused, naming the variable`, () => {
      const problems = problemsOf({ WAGW_MEDIA_UPLOAD_MIB_PER_WINDOW: raw });
      assert.equal(problems.length, 1);
      assert.match(problems[0]!, /^WAGW_MEDIA_UPLOAD_MIB_PER_WINDOW /);
    });
  }
});

describe('the loaded config cannot be changed', () => {
  it('the object and every nested object are frozen', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://localhost/wagw' });
    assert.ok(Object.isFrozen(config));
    for (const inner of [config.http, config.database, config.admin, config.groupCommit]) assert.ok(Object.isFrozen(inner));
  });

  it('an attempt to change a nested value throws and leaves it unchanged', () => {
    const config = loadConfig({});
    assert.throws(() => {
      (config.http as { port: number }).port = 1;
    }, TypeError);
    assert.throws(() => {
      (config as { apiKeyPrefix: string }).apiKeyPrefix = 'evil';
    }, TypeError);
    assert.equal(config.http.port, 3000);
    assert.equal(config.apiKeyPrefix, 'wagw');
  });

  it("each call returns its own config, so one caller cannot see another's values", () => {
    assert.notEqual(loadConfig({}), loadConfig({}));
    assert.equal(loadConfig({ PORT: '1234' }).http.port, 1234);
    assert.equal(loadConfig({}).http.port, 3000);
  });
});

describe('describeDatabase never shows a password', () => {
  const describe_ = (url: string) => describeDatabase(loadConfig({ DATABASE_URL: url }).database);

  it('masks the password of user:password@host and keeps the rest', () => {
    assert.equal(describe_('postgres://wagw:s3cret@db.internal:5432/wagw'), 'postgres://wagw:***@db.internal:5432/wagw');
    assert.equal(describe_('postgresql://wagw:p%40ss%3Aword@localhost/wagw'), 'postgresql://wagw:***@localhost/wagw');
  });

  it('leaves a URL without a password as it is', () => {
    assert.equal(describe_('postgres://wagw@localhost:5432/wagw'), 'postgres://wagw@localhost:5432/wagw');
    assert.equal(describe_('postgres://localhost:5432/wagw'), 'postgres://localhost:5432/wagw');
  });

  it('masks a password given with an empty user name', () => {
    const described = describe_('postgres://:s3cret@localhost/wagw');
    assert.ok(!described.includes('s3cret'), described);
  });

  it('masks a password given as a query parameter, which pg also accepts', () => {
    const described = describe_('postgres://wagw@localhost/wagw?password=s3cret&sslmode=require');
    assert.ok(!described.includes('s3cret'), described);
  });

  it('shows SQLite as its absolute path', () => {
    assert.equal(describe_('sqlite:./data/x.db'), `sqlite:${path.resolve('data/x.db')}`);
  });
});

describe('WAGW_MEDIA_STORE chooses where media bytes go', () => {
  it('the filesystem is the default; s3 takes its bucket, endpoint and credentials', () => {
    assert.equal(loadConfig({}).media.s3, null);
    assert.deepEqual(
      loadConfig({
        WAGW_MEDIA_STORE: 's3',
        WAGW_MEDIA_S3_BUCKET: 'media',
        WAGW_MEDIA_S3_ENDPOINT: 'http://127.0.0.1:9000/',
        WAGW_MEDIA_S3_ACCESS_KEY_ID: 'id',
        WAGW_MEDIA_S3_SECRET_ACCESS_KEY: 'secret',
        WAGW_MEDIA_S3_PREFIX: 'gw/media/',
      }).media.s3,
      {
        bucket: 'media',
        region: 'us-east-1',
        endpoint: 'http://127.0.0.1:9000',
        forcePathStyle: true,
        prefix: 'gw/media/',
        accessKeyId: 'id',
        secretAccessKey: 'secret',
      },
    );
    const aws = loadConfig({ WAGW_MEDIA_STORE: 's3', WAGW_MEDIA_S3_BUCKET: 'media', AWS_REGION: 'eu-west-2' }).media.s3;
    assert.deepEqual(
      [aws?.region, aws?.endpoint, aws?.forcePathStyle, aws?.accessKeyId],
      ['eu-west-2', null, false, null],
      "AWS itself: virtual-host buckets and the SDK's credential chain",
    );
  });

  it('a wrong store, a missing bucket, half the credentials, a bad endpoint or prefix are each named', () => {
    assert.deepEqual(problemsOf({ WAGW_MEDIA_STORE: 'ftp' }), ['WAGW_MEDIA_STORE must be filesystem or s3, not "ftp".']);
    const problems = problemsOf({
      WAGW_MEDIA_STORE: 's3',
      WAGW_MEDIA_S3_ENDPOINT: 'ftp://files',
      WAGW_MEDIA_S3_ACCESS_KEY_ID: 'id',
      WAGW_MEDIA_S3_PREFIX: '../up',
    });
    assert.equal(problems.length, 4, problems.join('\n'));
    for (const variable of ['WAGW_MEDIA_S3_BUCKET', 'WAGW_MEDIA_S3_ENDPOINT', 'WAGW_MEDIA_S3_SECRET_ACCESS_KEY', 'WAGW_MEDIA_S3_PREFIX']) {
      assert.ok(
        problems.some((problem) => problem.includes(variable)),
        `${variable} is named`,
      );
    }
  });
});
