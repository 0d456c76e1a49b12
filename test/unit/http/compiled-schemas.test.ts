/**
 * The validators and answer serializers an app compiles are kept for the process, so that an app
 * built again (a test's restart, several nodes in one process) does not compile them again. What
 * they are kept by must be everything they are built from: the schema, the shared schemas it
 * refers to and the part of the request.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SCHEMA_VALIDATOR_OPTIONS } from '../../../src/http/app.ts';
import { validatorsByPart } from '../../../src/http/request-validation.ts';
import { serializersWithReachedSchemas } from '../../../src/http/response-serializers.ts';

type Validate = ((data: unknown) => boolean) & { errors?: unknown };
type Compile = (route: { schema: object; httpPart?: string }) => Validate;

const answer = { $ref: 'Thing#' };
const withName = { Thing: { $id: 'Thing', type: 'object', properties: { name: { type: 'string' } } } };
const withSize = { Thing: { $id: 'Thing', type: 'object', properties: { size: { type: 'integer' } } } };

function validators(shared: object): Compile {
  return validatorsByPart(shared as never, SCHEMA_VALIDATOR_OPTIONS as never) as unknown as Compile;
}

describe('compiled schemas kept for the process', () => {
  it('an answer serializer built again from equal schemas is the one built before', () => {
    const first = serializersWithReachedSchemas(withName, {})({ schema: { ...answer } });
    const again = serializersWithReachedSchemas(structuredClone(withName), {})({ schema: { ...answer } });
    assert.equal(again, first);
    assert.equal(first({ name: 'a', size: 1 }), '{"name":"a"}');
  });

  it('the same answer schema over other shared schemas gets a serializer of its own', () => {
    serializersWithReachedSchemas(withName, {})({ schema: answer });
    const serialize = serializersWithReachedSchemas(withSize, {})({ schema: answer });
    assert.equal(serialize({ name: 'a', size: 1 }), '{"size":1}');
  });

  it('a validator built again from an equal schema is the one built before, and a body is not coerced where a query is', () => {
    const schema = { type: 'object', properties: { limit: { type: 'integer' } } };
    const body = validators(withName)({ schema: structuredClone(schema), httpPart: 'body' });
    assert.equal(validators(structuredClone(withName))({ schema: structuredClone(schema), httpPart: 'body' }), body);
    const query = validators(withName)({ schema: structuredClone(schema), httpPart: 'querystring' });
    assert.notEqual(query, body);
    assert.equal(body({ limit: '10' }), false, 'a body is checked as sent');
    assert.equal(query({ limit: '10' }), true, 'a query string is text read as its schema says');
  });

  it('the same schema over other shared schemas gets a validator of its own', () => {
    const byName = validators(withName)({ schema: { type: 'object', required: ['name'], allOf: [{ $ref: 'Thing#' }] }, httpPart: 'body' });
    const bySize = validators(withSize)({ schema: { type: 'object', required: ['name'], allOf: [{ $ref: 'Thing#' }] }, httpPart: 'body' });
    assert.notEqual(bySize, byName);
    assert.equal(byName({ name: 1 }), false, 'the name must be a string');
    assert.equal(bySize({ name: 1 }), true, 'the other Thing says nothing of a name');
  });
});
