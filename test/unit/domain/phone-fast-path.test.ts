import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { getCountries, getCountryCallingCode, getExampleNumber, parsePhoneNumberFromString } from 'libphonenumber-js';
import examples from 'libphonenumber-js/mobile/examples';
import { answerByLength, UNDECIDED } from '../../../src/domain/phone-lengths.ts';
import { parseE164 } from '../../../src/domain/phone.ts';

// Runs alone: its checks run synchronously for most of a second each, which would hold other files' timers.

/**
 * The oracle: the rule of docs/adr/0002-phone-validation.md computed by the full library parse
 * alone, with no length table and no cache in front of it.
 */
function oracle(input: string): string | undefined {
  const compact = input.trim().replace(/[ ().-]/g, '');
  if (!/^\+?[0-9]+$/.test(compact)) return undefined;
  const candidate = compact.startsWith('+') ? compact : `+${compact}`;
  if (candidate.length < 4) return undefined;
  const parsed = parsePhoneNumberFromString(candidate);
  return parsed?.isPossible() ? parsed.number : undefined;
}

/** What parseE164 answers: the oracle's answer, and WhatsApp's form of a Mexican mobile besides (ADR 0050). */
function parseOracle(input: string): string | undefined {
  const compact = input.trim().replace(/[ ().-]/g, '');
  return /^\+?521[0-9]{10}$/.test(compact) ? `+${compact.replace('+', '')}` : oracle(input);
}

/** A small seeded generator (mulberry32), so that a failure names an input that reproduces. */
function seededRandom(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function digits(random: () => number, count: number): string {
  let out = '';
  for (let i = 0; i < count; i++) out += String(Math.floor(random() * 10));
  return out;
}

const CALLING_CODES = [
  ...new Set([
    ...getCountries().map((country) => getCountryCallingCode(country)),
    '800',
    '808',
    '870',
    '878',
    '881',
    '882',
    '883',
    '888',
    '979',
  ]),
];
/** Starts that national-prefix patterns strip, or nearly strip: 0, 1, 8, carrier codes, Australia's 1831. */
const TRICKY_STARTS = ['0', '00', '01', '1', '11', '15', '8', '80', '9', '180020', '1800', '1831', '1832', '0180020', '6'];

describe('the phone length table never changes an answer of the full parse', () => {
  it('every calling code, every national length up to 18 and every first digit, several numbers each', () => {
    const random = seededRandom(31);
    let decided = 0;
    let checked = 0;
    for (const code of CALLING_CODES) {
      for (let length = 0; length <= 18; length++) {
        for (let first = 0; first <= 9; first++) {
          for (let sample = 0; sample < 3; sample++) {
            const candidate = `+${code}${length === 0 ? '' : String(first) + digits(random, length - 1)}`;
            if (candidate.length < 4) continue;
            const fast = answerByLength(candidate);
            checked++;
            if (fast === UNDECIDED) continue;
            decided++;
            assert.equal(fast, oracle(candidate), candidate);
          }
        }
      }
    }
    assert.ok(decided / checked > 0.8, `the table decided only ${decided} of ${checked}`);
  });

  it("numbers that start with what a national prefix pattern strips, or nearly strips, keep the full parse's answer", () => {
    const random = seededRandom(2026);
    for (const code of CALLING_CODES) {
      for (const start of TRICKY_STARTS) {
        for (let rest = 0; rest <= 12; rest++) {
          const candidate = `+${code}${start}${digits(random, rest)}`;
          const fast = answerByLength(candidate);
          if (fast !== UNDECIDED) assert.equal(fast, oracle(candidate), candidate);
          assert.equal(parseE164(candidate), parseOracle(candidate), candidate);
        }
      }
    }
  });

  it('random digit strings, with or without a plus and separators, get the same answer as the full parse', () => {
    const random = seededRandom(7);
    const separators = [' ', '-', '.', '(', ')', ''];
    for (let i = 0; i < 40_000; i++) {
      let input = random() < 0.5 ? '+' : '';
      const length = 1 + Math.floor(random() * 19);
      for (let position = 0; position < length; position++) {
        input += String(Math.floor(random() * 10));
        if (random() < 0.15) input += separators[Math.floor(random() * separators.length)];
      }
      assert.equal(parseE164(input), parseOracle(input), JSON.stringify(input));
    }
  });

  it('the example mobile number of every country gets the same answer, and the table decides nearly all of them', () => {
    let decided = 0;
    const countries = getCountries();
    for (const country of countries) {
      const example = getExampleNumber(country, examples)?.number;
      if (example === undefined) continue;
      for (const candidate of [example, `${example}1`, example.slice(0, -1)]) {
        const fast = answerByLength(candidate);
        if (fast !== UNDECIDED) assert.equal(fast, oracle(candidate), `${country}: ${candidate}`);
        assert.equal(parseE164(candidate), parseOracle(candidate), `${country}: ${candidate}`);
      }
      if (answerByLength(example) !== UNDECIDED) decided++;
    }
    assert.ok(decided / countries.length > 0.85, `the table decided ${decided} of ${countries.length} example mobile numbers`);
  });
});
