import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseE164, phoneProblem } from '../../../src/domain/phone.ts';

// The rule (docs/adr/0002-phone-validation.md): after spaces, dashes, dots and parentheses are
// stripped, an optional "+" and digits, with a known country code and a length that country
// uses (libphonenumber-js isPossible), never whether the range is allocated.
describe('parseE164', () => {
  describe('the ways people write one number all become the same E.164', () => {
    const spellings: [string, string][] = [
      ['+447700900123', '+447700900123'],
      ['447700900123', '+447700900123'],
      ['+44 (7700) 900-123', '+447700900123'],
      ['(+44) 7700 900123', '+447700900123'],
      ['+44 7700 900123', '+447700900123'],
      ['+1.415.555.0100', '+14155550100'],
      ['+1-(415)-555-0100', '+14155550100'],
      [' +14155550100 ', '+14155550100'],
      ['\t14155550100\n', '+14155550100'],
    ];
    for (const [input, expected] of spellings) {
      it(`${JSON.stringify(input)} is ${expected}`, () => {
        assert.equal(parseE164(input), expected);
      });
    }
  });

  it("WhatsApp's chat id of a person is that person's phone, as WAHA (@c.us) and Baileys or Evolution (@s.whatsapp.net) write it", () => {
    assert.equal(parseE164('447700900123@c.us'), '+447700900123');
    assert.equal(parseE164(' 14155550100@s.whatsapp.net '), '+14155550100');
    assert.equal(parseE164('+447700900123@C.US'), '+447700900123');
    // Only digits before the suffix, and a number that is one: a chat id is not a way around the rule.
    for (const refused of ['4477 0090 0123@c.us', '999123@c.us', '447700900123@g.us', '447700900123@lid', '447700900123:12@s.whatsapp.net'])
      assert.equal(parseE164(refused), undefined, refused);
  });

  it('a value that is not a phone is told what it is: only a plain number is told to include its country code', () => {
    assert.match(phoneProblem('to_phone', '120363000000000000@g.us'), /is a group id/);
    assert.match(phoneProblem('to_phone', '12345@lid'), /is a LID/);
    assert.match(phoneProblem('to_phone', '999123@c.us'), /the digits before @c\.us must be the number with its country code/);
    assert.match(phoneProblem('to_phone', 'someone@example.org'), /not a phone or a chat id WhatsApp uses/);
    assert.match(phoneProblem('to_phone', '7700900123'), /include the country code/);
    for (const chatId of ['120363000000000000@g.us', '12345@lid', '999123@c.us', '999123@s.whatsapp.net'])
      assert.doesNotMatch(phoneProblem('to_phone', chatId), /include the country code/, chatId);
  });

  it('numbers in ranges reserved for fiction are accepted, since allocation is not checked', () => {
    // +44 7700 900xxx is Ofcom's drama range and +1 415 555 01xx is reserved for fiction:
    // isValid() would refuse both, and sandbox users test with exactly these.
    assert.equal(parseE164('+447700900000'), '+447700900000');
    assert.equal(parseE164('+447700900999'), '+447700900999');
    assert.equal(parseE164('+14155550199'), '+14155550199');
  });

  it('numbers of other countries are accepted at the lengths those countries use', () => {
    assert.equal(parseE164('+33 6 12 34 56 78'), '+33612345678');
    assert.equal(parseE164('+86 138 0013 8000'), '+8613800138000');
    assert.equal(parseE164('+49 30 123456'), '+4930123456');
  });

  describe('anything that is not a plus and digits between separators is refused', () => {
    const refused: [string, string][] = [
      ['a letter among the digits', '+44770090012a'],
      ['a spelled-out number', '+1-800-FLOWERS'],
      ['an "ext" extension', '+447700900123 ext 5'],
      ['an "x" extension', '+44 7700 900123 x5'],
      ['a "#" extension', '+447700900123#5'],
      ['a double plus', '++447700900123'],
      ['a plus after the country code', '44+7700900123'],
      ['a plus alone', '+'],
      ['the empty string', ''],
      ['only whitespace', '   '],
      ['only separators', '+ ( ) - .'],
      ['full-width digits', '+１４１５５５５０１００'],
      ['a slash', '+44/7700900123'],
    ];
    for (const [what, input] of refused) {
      it(`${what} (${JSON.stringify(input)}) is refused`, () => {
        assert.equal(parseE164(input), undefined);
      });
    }
  });

  describe('a length the country does not use is refused', () => {
    it('a United States number one digit short or one digit long is refused', () => {
      assert.equal(parseE164('+1415555010'), undefined);
      assert.equal(parseE164('+141555501000'), undefined);
    });

    it('a United Kingdom mobile one digit too long is refused', () => {
      assert.equal(parseE164('+4477009001234'), undefined);
    });

    it('a French mobile one digit short is refused', () => {
      assert.equal(parseE164('+3361234567'), undefined);
    });

    it('a country code with almost no national number is refused', () => {
      assert.equal(parseE164('+44'), undefined);
      assert.equal(parseE164('+4477009'), undefined);
    });

    it('more digits than E.164 allows is refused', () => {
      assert.equal(parseE164('+4477009001234567'), undefined);
      assert.equal(parseE164('+1234567890123456'), undefined);
    });
  });

  describe('a missing or unknown country code is refused', () => {
    it('an unassigned country code such as +999 is refused', () => {
      assert.equal(parseE164('+9991234567890'), undefined);
      assert.equal(parseE164('+999 1234567'), undefined);
    });

    it('the international dialling prefix 00 is not taken for a plus', () => {
      // "0044…" is how one dials out of many countries, not part of the number: read as
      // digits it gives country code 0, which does not exist, so it is refused, not guessed at.
      assert.equal(parseE164('00447700900123'), undefined);
      assert.equal(parseE164('0044 7700 900123'), undefined);
    });

    it('a national number without its country code is refused', () => {
      assert.equal(parseE164('07700900123'), undefined);
      assert.equal(parseE164('(415) 555-0100'), undefined);
    });
  });

  it('what it returns is plain E.164: a plus and digits only', () => {
    for (const input of ['+44 (7700) 900-123', '1.415.555.0100', ' 33 6 12 34 56 78 ']) {
      const parsed = parseE164(input);
      assert.ok(parsed !== undefined, `${input} should parse`);
      assert.match(parsed, /^\+[1-9][0-9]{1,14}$/);
    }
  });

  it('parsing its own output gives the same number back', () => {
    for (const input of ['+44 (7700) 900-123', '14155550100', '+86 138 0013 8000']) {
      const once = parseE164(input);
      assert.ok(once !== undefined);
      assert.equal(parseE164(once), once);
    }
  });
});
