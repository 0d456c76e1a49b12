import { parsePhoneNumberFromString, validatePhoneNumberLength, isPossiblePhoneNumber } from 'libphonenumber-js';
import { parsePhoneNumberFromString as parseMin } from 'libphonenumber-js/min';
const inputs = Array.from({ length: 5000 }, (_, i) => `+4477009${10000 + i}`);
const us = Array.from({ length: 5000 }, (_, i) => `+1415555${String(1000 + i).slice(-4)}`);
function time(name: string, f: (s: string) => unknown, list: string[]) {
  for (const s of list) f(s);
  const t = performance.now();
  for (let r = 0; r < 3; r++) for (const s of list) f(s);
  console.log(name, ((performance.now() - t) / (3 * list.length) * 1000).toFixed(1), 'µs');
}
for (const [label, list] of [['uk', inputs], ['us', us]] as const) {
  time(`${label} parse+isPossible`, (s) => parsePhoneNumberFromString(s)?.isPossible(), list);
  time(`${label} parse only`, (s) => parsePhoneNumberFromString(s), list);
  time(`${label} validateLength`, (s) => validatePhoneNumberLength(s), list);
  time(`${label} isPossiblePhoneNumber`, (s) => isPossiblePhoneNumber(s), list);
  time(`${label} min parse+isPossible`, (s) => parseMin(s)?.isPossible(), list);
}
