import { getCountries, getCountryCallingCode, Metadata } from 'libphonenumber-js';

/** What the library's numbering plans are read through; its typings name only part of it. */
interface NumberingPlan {
  possibleLengths(): number[] | undefined;
  nationalPrefixForParsing(): string | undefined;
}

/** What a calling code's national-number lengths decide. */
interface LengthRule {
  /** Lengths every country of the code uses: possible whichever country the parse picks. */
  everywhere: ReadonlySet<number>;
  /** Lengths some country of the code uses; any other is impossible in all of them. */
  somewhere: ReadonlySet<number>;
  /** The national prefix the full parse would strip; a number starting with it is left to the parse. */
  strippedPrefix: RegExp | undefined;
}

/**
 * The per-country length table behind parseE164's fast path, read from the same metadata the
 * full parse uses. For an international number the parse strips the calling code, strips a
 * national prefix only where the main country's prefix pattern matches, then accepts exactly
 * the lengths of the country it picks among those of the code. So, for a number that does not
 * start with a strippable prefix, a length all of them use is possible and a length none of
 * them uses is not; only a length some use and some do not needs the full parse to pick the
 * country. Codes outside the table (non-geographic plans, and prefix patterns that match even
 * nothing, which would strip from every number) always take the full parse.
 */
function buildLengthTable(): { rules: Map<string, LengthRule>; callingCodes: Set<string> } {
  const byCallingCode = new Map<string, string[]>();
  for (const country of getCountries()) {
    const code = getCountryCallingCode(country);
    byCallingCode.set(code, [...(byCallingCode.get(code) ?? []), country]);
  }
  const rules = new Map<string, LengthRule>();
  for (const [code, countries] of byCallingCode) {
    const lengthLists = countries.map((country) => planOf(country).possibleLengths());
    if (lengthLists.some((lengths) => lengths === undefined)) continue;
    const somewhere = new Set(lengthLists.flatMap((lengths) => lengths!));
    const everywhere = new Set([...somewhere].filter((length) => lengthLists.every((lengths) => lengths!.includes(length))));
    const prefix = planOf(code).nationalPrefixForParsing();
    const strippedPrefix = prefix === undefined ? undefined : new RegExp(`^(?:${prefix})`);
    if (strippedPrefix?.test('') === true) continue;
    rules.set(code, { everywhere, somewhere, strippedPrefix });
  }
  return { rules, callingCodes: new Set(byCallingCode.keys()) };
}

function planOf(countryOrCallingCode: string): NumberingPlan {
  const metadata = new Metadata();
  metadata.selectNumberingPlan(countryOrCallingCode as never);
  return metadata.numberingPlan as unknown as NumberingPlan;
}

const TABLE = buildLengthTable();
/** Calling codes of non-geographic plans (+800, +882…): known to the parse, but not per country. */
const NON_GEOGRAPHIC_CALLING_CODES = new Set(
  Object.keys((new Metadata() as unknown as { metadata: { nonGeographic?: Record<string, unknown> } }).metadata.nonGeographic ?? {}),
);

export const UNDECIDED = Symbol('undecided');

/**
 * The fast path's answer for `+digits`: the number itself when its length is one its country
 * uses, undefined when the full parse would refuse it, UNDECIDED when only the full parse can say.
 * Calling codes are prefix-free, so the first known one of one to three digits is the only one.
 */
export function answerByLength(candidate: string): string | undefined | typeof UNDECIDED {
  for (let codeLength = 1; codeLength <= 3; codeLength++) {
    const code = candidate.slice(1, 1 + codeLength);
    if (NON_GEOGRAPHIC_CALLING_CODES.has(code)) return UNDECIDED;
    if (!TABLE.callingCodes.has(code)) continue;
    const rule = TABLE.rules.get(code);
    if (rule === undefined) return UNDECIDED;
    const national = candidate.slice(1 + codeLength);
    if (rule.strippedPrefix?.test(national) === true) return UNDECIDED;
    if (rule.everywhere.has(national.length)) return candidate;
    return rule.somewhere.has(national.length) ? UNDECIDED : undefined;
  }
  return UNDECIDED;
}
