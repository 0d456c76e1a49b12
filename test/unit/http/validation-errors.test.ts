/**
 * What a schema refusal says, keyword by keyword, through Fastify with the gateway's validator
 * options and its error handling: a value out of its bounds is told its bound, and a type is
 * named only when the type was wrong.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { SCHEMA_VALIDATOR_OPTIONS } from '../../../src/http/app.ts';
import { registerErrorHandling } from '../../../src/http/plugins/errors.ts';

const probeSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    count: { type: 'integer', minimum: 1, maximum: 10 },
    ratio: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
    name: { type: 'string', minLength: 2, maxLength: 5 },
    initial: { type: 'string', maxLength: 1 },
    tags: { type: 'array', minItems: 1, maxItems: 2, items: { type: 'string', maxLength: 3 } },
    color: { type: 'string', enum: ['red', 'green'] },
    answer: { const: 42 },
    code: { type: 'string', pattern: '^[A-Z]+$' },
    nested: { type: 'object', properties: { depth: { type: ['integer', 'null'], minimum: 0 } } },
  },
} as const;

/** [body, field, problem, what the message must say] */
const OUT_OF_BOUNDS: [object, string, string, string][] = [
  [{ count: 0 }, 'count', 'too_small', 'must be at least 1'],
  [{ count: 11 }, 'count', 'too_large', 'must be at most 10'],
  [{ ratio: 0 }, 'ratio', 'too_small', 'must be more than 0'],
  [{ ratio: 1 }, 'ratio', 'too_large', 'must be less than 1'],
  [{ name: 'a' }, 'name', 'too_short', 'must be at least 2 characters long'],
  [{ name: 'abcdef' }, 'name', 'too_long', 'must be at most 5 characters long'],
  [{ initial: 'ab' }, 'initial', 'too_long', 'must be at most 1 character long'],
  [{ tags: [] }, 'tags', 'too_few', 'must hold at least 1 item'],
  [{ tags: ['a', 'b', 'c'] }, 'tags', 'too_many', 'must hold at most 2 items'],
  [{ tags: ['a', 'long'] }, 'tags[1]', 'too_long', 'must be at most 3 characters long'],
  [{ color: 'blue' }, 'color', 'not_allowed', 'must be one of "red", "green"'],
  [{ answer: 41 }, 'answer', 'not_allowed', 'must be 42'],
  [{ code: 'abc' }, 'code', 'invalid', 'must match pattern "^[A-Z]+$"'],
  [{ nested: { depth: -1 } }, 'nested.depth', 'too_small', 'must be at least 0'],
];

const WRONG_TYPE: [object, string, string][] = [
  [{ count: 'five' }, 'count', 'not_an_integer'],
  [{ ratio: 'half' }, 'ratio', 'not_a_number'],
  [{ name: 5 }, 'name', 'not_a_string'],
  [{ tags: 'a' }, 'tags', 'not_an_array'],
  [{ nested: { depth: 'deep' } }, 'nested.depth', 'not_an_integer'],
];

describe('a schema refusal says what is wrong with the value', () => {
  let app: FastifyInstance;

  before(async () => {
    app = Fastify({ ajv: SCHEMA_VALIDATOR_OPTIONS });
    registerErrorHandling(app, 1024);
    app.post(
      '/probe',
      { schema: { body: probeSchema, querystring: { type: 'object', properties: { limit: { type: 'string', maxLength: 3 } } } } },
      async () => ({ ok: true }),
    );
    await app.ready();
  });
  after(() => app.close());

  const probe = async (body: object, query = '') => {
    const response = await app.inject({ method: 'POST', url: `/probe${query}`, payload: body });
    assert.equal(response.statusCode, 400, response.body);
    assert.equal(response.json().error, 'invalid_request');
    return response.json() as { message: string; meta: { field: string; problem: string } };
  };

  for (const [body, field, problem, says] of OUT_OF_BOUNDS) {
    it(`${JSON.stringify(body)}: "${says}"`, async () => {
      const refusal = await probe(body);
      assert.deepEqual(refusal.meta, { field, problem });
      assert.equal(refusal.message, `The field ${field} ${says}.`);
    });
  }

  it('a value of the right type is never told it is of the wrong one', async () => {
    for (const [body] of OUT_OF_BOUNDS) {
      const refusal = await probe(body);
      assert.doesNotMatch(refusal.message, /must be an? (string|number|integer|array|object|boolean|null)\b/, JSON.stringify(body));
      assert.doesNotMatch(refusal.meta.problem, /^not_an?_/, JSON.stringify(body));
    }
  });

  it('a value of the wrong type is told the type', async () => {
    for (const [body, field, problem] of WRONG_TYPE) {
      const refusal = await probe(body);
      assert.deepEqual(refusal.meta, { field, problem }, JSON.stringify(body));
      assert.match(refusal.message, /must be an? (integer|number|string|array)( or null)?\.$/, JSON.stringify(body));
    }
  });

  it('a query parameter is named as one', async () => {
    const refusal = await probe({}, '?limit=abcd');
    assert.equal(refusal.message, 'The query parameter limit must be at most 3 characters long.');
    assert.deepEqual(refusal.meta, { field: 'limit', problem: 'too_long' });
  });
});
