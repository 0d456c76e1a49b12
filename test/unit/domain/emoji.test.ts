import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { isOneEmoji } from '../../../src/domain/emoji.ts';

const SEED = 25;
const KEYCAP = '\u20E3';
const SELECTOR = '\uFE0F';
const SKIN_TONES = ['\u{1F3FB}', '\u{1F3FC}', '\u{1F3FD}', '\u{1F3FE}', '\u{1F3FF}'];

const ACCEPTED: [string, string][] = [
  ['👍', 'a plain emoji'],
  ['❤️', 'a text-style pictograph with its emoji selector'],
  ['❤', 'the same pictograph typed without the selector'],
  ['👍🏽', 'a skin tone'],
  ['👩🏽‍❤️‍💋‍👨🏿', 'a ZWJ sequence with skin tones'],
  ['👨‍👩‍👧‍👦', 'a family of four'],
  ['🐻‍❄', 'a ZWJ sequence missing its selector'],
  ['🏳️‍🌈', 'a flag made by ZWJ'],
  ['🇺🇸', 'a country flag'],
  ['🏴󠁧󠁢󠁳󠁣󠁴󠁿', 'a subdivision flag'],
  ['1️⃣', 'a keycap'],
  ['#⃣', 'a keycap without its selector'],
  ['*️⃣', 'the star keycap'],
  ['©', 'a pictograph of the Latin-1 range'],
  ['\u{1FAE9}', 'an emoji of a recent Unicode version'],
];

const REFUSED: [string, string][] = [
  [`a${KEYCAP}`, 'a keycap on a letter'],
  [`a${SELECTOR}${KEYCAP}`, 'a keycap with selector on a letter'],
  [`👍${KEYCAP}`, 'a keycap on an emoji'],
  [KEYCAP, 'a bare keycap mark'],
  ['\u0301', 'a bare combining accent'],
  ['\u0301\u0302\u0303', 'combining marks alone'],
  [`👍${'\u0301'.repeat(40)}`, 'an emoji trailed by forty combining marks'],
  [`👍${SELECTOR}${SELECTOR}`, 'two selectors'],
  ['🇦🇦', 'regional indicators that name no country'],
  ['🇺', 'a lone regional indicator'],
  ['👍👍', 'two emoji'],
  ['🐻‍', 'a dangling joiner'],
  ['😀‍😀‍😀‍😀‍😀', 'five pictographs joined, longer than any sequence Unicode recommends'],
  ['1', 'a digit'],
  ['#', 'a number sign'],
  ['ok', 'letters'],
  [`${SKIN_TONES[0]!}x`, 'a skin tone followed by a letter'],
];

/** Every code point of the ranges given, as strings. */
function codePoints(...ranges: [number, number][]): string[] {
  return ranges.flatMap(([first, last]) => Array.from({ length: last - first + 1 }, (_, index) => String.fromCodePoint(first + index)));
}

const COMBINING_MARKS = codePoints([0x0300, 0x036f], [0x1ab0, 0x1aff], [0x20d0, 0x20ff], [0xfe20, 0xfe2f]).filter((mark) =>
  /^\p{M}$/u.test(mark),
);
const MODIFIER_BASES = codePoints([0x261d, 0x270d], [0x1f385, 0x1faff]).filter((base) => /^\p{Emoji_Modifier_Base}$/u.test(base));
const anEmoji = fc.constantFrom(...ACCEPTED.map(([emoji]) => emoji));
const aMark = fc.constantFrom(...COMBINING_MARKS);

describe('a reaction is exactly one emoji', () => {
  for (const [emoji, what] of ACCEPTED) {
    it(`takes ${what}: ${JSON.stringify(emoji)}`, () => assert.equal(isOneEmoji(emoji), true));
  }
  for (const [text, what] of REFUSED) {
    it(`refuses ${what}: ${JSON.stringify(text).slice(0, 40)}`, () => assert.equal(isOneEmoji(text), false));
  }

  it('takes a keycap of each digit, # and *, with or without its selector', () => {
    for (const key of '0123456789#*') {
      assert.equal(isOneEmoji(key + SELECTOR + KEYCAP), true, key);
      assert.equal(isOneEmoji(key + KEYCAP), true, key);
    }
  });

  it('refuses a keycap on any other character', () => {
    const anyCharacter = fc
      .integer({ min: 0, max: 0x10ffff })
      .filter((codePoint) => codePoint < 0xd800 || codePoint > 0xdfff)
      .map((codePoint) => String.fromCodePoint(codePoint));
    const notAKey = fc
      .oneof(anyCharacter, fc.constantFrom('a', 'Z', '!', '👍', '❤', '©', '\u{1F1FA}', KEYCAP))
      .filter((character) => !/^[0-9#*]$/.test(character));
    fc.assert(
      fc.property(notAKey, fc.boolean(), (character, selected) => !isOneEmoji(character + (selected ? SELECTOR : '') + KEYCAP)),
      { seed: SEED },
    );
  });

  it('takes every skin tone on every emoji that can wear one', () => {
    assert.ok(MODIFIER_BASES.length > 100, 'the bases were found');
    for (const base of MODIFIER_BASES) for (const tone of SKIN_TONES) assert.equal(isOneEmoji(base + tone), true, `${base}${tone}`);
  });

  it('refuses an emoji followed by any combining marks', () => {
    fc.assert(
      fc.property(anEmoji, fc.array(aMark, { minLength: 1, maxLength: 40 }), (emoji, marks) => !isOneEmoji(emoji + marks.join(''))),
      { seed: SEED },
    );
  });

  it('refuses combining marks on their own', () => {
    fc.assert(
      fc.property(fc.array(aMark, { minLength: 1, maxLength: 8 }), (marks) => !isOneEmoji(marks.join(''))),
      { seed: SEED },
    );
  });

  it('refuses two emoji, or an emoji with any text beside it', () => {
    const text = fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 4 });
    fc.assert(
      fc.property(anEmoji, anEmoji, (first, second) => !isOneEmoji(first + second)),
      { seed: SEED },
    );
    fc.assert(
      fc.property(anEmoji, text, (emoji, beside) => !isOneEmoji(emoji + beside) && !isOneEmoji(beside + emoji)),
      { seed: SEED },
    );
  });
});
