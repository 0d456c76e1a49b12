import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decideMediaType, isMediaType } from '../../../src/domain/media.ts';

describe('media types', () => {
  it('type/subtype with token characters and parameters of tokens or quoted strings are media types', () => {
    for (const type of [
      'text/csv',
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      'text/plain; charset=utf-8',
      'text/plain;charset="a \\"b\\""',
      'image/svg+xml',
    ]) {
      assert.ok(isMediaType(type), type);
    }
  });

  it('anything that could not go out again as a header, or is no type/subtype, is not', () => {
    for (const type of [
      'text/plain\r\nX-Injected: 1',
      'text/plain\n',
      'text/plain\u20ac',
      'text/pl\u00e4in',
      'text',
      'text/',
      '/csv',
      ' text/csv',
      'text/csv;',
      'text/csv; charset',
      'text/csv; a=b c',
      `${'a'.repeat(128)}/b`,
      '',
    ]) {
      assert.ok(!isMediaType(type), JSON.stringify(type));
    }
  });

  it("a fallback that is not a media type (an upstream's Content-Type, a form part's) leaves bytes without a signature generic", () => {
    const noSignature = (fallbackMimeType: string) => decideMediaType(undefined, { fallbackMimeType }, () => false).mimeType;
    assert.equal(noSignature('text/csv'), 'text/csv');
    assert.equal(noSignature('text/pl\u00e4in'), 'application/octet-stream');
    assert.equal(noSignature('text/csv\u20ac'), 'application/octet-stream');
  });
});
