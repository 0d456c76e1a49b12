import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../../src/domain/errors.ts';
import { assertSendableText, codePointLength } from '../../../src/domain/message-text.ts';

const GRINNING = '\u{1F600}'; // one astral code point, two UTF-16 units
const FAMILY = '\u{1F468}\u200D\u{1F469}\u200D\u{1F467}'; // man ZWJ woman ZWJ girl: five code points
const HIGH_SURROGATE = '\uD83D';
const LOW_SURROGATE = '\uDE00';

function refusal(text: string, maxLength: number): AppError {
  try {
    assertSendableText(text, maxLength);
  } catch (error) {
    assert.ok(error instanceof AppError, `expected an AppError, got ${String(error)}`);
    return error;
  }
  assert.fail(`expected ${JSON.stringify(text)} to be refused at max ${maxLength}`);
}

describe('codePointLength counts what a person counts as characters', () => {
  it('ASCII counts one per character', () => {
    assert.equal(codePointLength(''), 0);
    assert.equal(codePointLength('hello, world'), 12);
  });

  it('a character of the Basic Multilingual Plane counts once', () => {
    assert.equal(codePointLength('héllo'), 5);
    assert.equal(codePointLength('日本語'), 3);
    assert.equal(codePointLength('\uFFFF'), 1);
  });

  it('an astral emoji counts once, not twice as its UTF-16 length would', () => {
    assert.equal(GRINNING.length, 2);
    assert.equal(codePointLength(GRINNING), 1);
    assert.equal(codePointLength(`a${GRINNING}b${GRINNING}`), 4);
    assert.equal(codePointLength('\u{10FFFF}'), 1);
  });

  it('a ZWJ sequence counts each of its code points', () => {
    assert.equal(codePointLength(FAMILY), 5);
    assert.equal(codePointLength(FAMILY), [...FAMILY].length);
  });

  it('a lone surrogate counts one, wherever it stands', () => {
    assert.equal(codePointLength(HIGH_SURROGATE), 1);
    assert.equal(codePointLength(LOW_SURROGATE), 1);
    assert.equal(codePointLength(`a${HIGH_SURROGATE}`), 2);
    assert.equal(codePointLength(`${LOW_SURROGATE}a`), 2);
    // Reversed order is two lone surrogates, not a pair.
    assert.equal(codePointLength(LOW_SURROGATE + HIGH_SURROGATE), 2);
    // Two highs then a low: the first is alone, the second pairs with the low.
    assert.equal(codePointLength(HIGH_SURROGATE + HIGH_SURROGATE + LOW_SURROGATE), 2);
  });

  it('agrees with the string iterator on mixed text', () => {
    const text = `Hi ${FAMILY}! ${GRINNING}${HIGH_SURROGATE}x${LOW_SURROGATE}日本`;
    assert.equal(codePointLength(text), [...text].length);
  });
});

describe('assertSendableText', () => {
  it('ordinary text within the limit is accepted', () => {
    assert.doesNotThrow(() => assertSendableText('hello', 100));
    assert.doesNotThrow(() => assertSendableText(`  padded ${GRINNING}  `, 100));
  });

  describe('an empty message is refused as empty_message', () => {
    for (const [what, text] of [
      ['the empty string', ''],
      ['spaces', '   '],
      ['tabs and newlines', '\t\r\n'],
      ['no-break and ideographic spaces', '\u00A0\u3000'],
    ] as const) {
      it(`${what} is empty_message`, () => {
        const error = refusal(text, 100);
        assert.equal(error.code, 'empty_message');
      });
    }
  });

  it('a message over the limit in code points is message_too_long, and its meta gives the limit', () => {
    const error = refusal('x'.repeat(11), 10);
    assert.equal(error.code, 'message_too_long');
    assert.deepEqual(error.meta, { field: 'message', limit: 10 });
  });

  it('astral characters past the limit are message_too_long', () => {
    const error = refusal(GRINNING.repeat(11), 10);
    assert.equal(error.code, 'message_too_long');
  });

  it('exactly the limit in astral characters is accepted, though twice as many UTF-16 units', () => {
    const text = GRINNING.repeat(10);
    assert.equal(text.length, 20);
    assert.doesNotThrow(() => assertSendableText(text, 10));
  });

  it('exactly the limit in ASCII is accepted and one more is refused', () => {
    assert.doesNotThrow(() => assertSendableText('x'.repeat(65_536), 65_536));
    assert.equal(refusal('x'.repeat(65_537), 65_536).code, 'message_too_long');
  });

  describe('text that cannot be stored unchanged is invalid_request naming the message', () => {
    for (const [what, text] of [
      ['U+0000', 'before\u0000after'],
      ['U+0000 alone', '\u0000'],
      ['a lone high surrogate', `text${HIGH_SURROGATE}`],
      ['a lone low surrogate', `${LOW_SURROGATE}text`],
      ['surrogates in reversed order', LOW_SURROGATE + HIGH_SURROGATE],
    ] as const) {
      it(`${what} is invalid_request with meta.field "message"`, () => {
        const error = refusal(text, 100);
        assert.equal(error.code, 'invalid_request');
        assert.deepEqual(error.meta, { field: 'message' });
      });
    }
  });

  it('U+0000 among whitespace is reported as unsendable, not as empty', () => {
    const error = refusal(' \u0000 ', 100);
    assert.equal(error.code, 'invalid_request');
  });
});
