import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseE164 } from '../../../src/domain/phone.ts';
import { phoneVariant, sameLine } from '../../../src/domain/phone-variants.ts';
import { sandboxRegisteredForm } from '../../../src/engines/sandbox/sandbox-registrations.ts';

describe('the two forms of one line', () => {
  it('Brazil: a mobile with and without the ninth digit are each other’s variant; a landline has none', () => {
    assert.equal(phoneVariant('+5511987654321'), '+551187654321');
    assert.equal(phoneVariant('+551187654321'), '+5511987654321');
    assert.equal(phoneVariant('+551133334444'), undefined, 'landlines begin with 2 to 5');
    assert.equal(phoneVariant('+5511933334444'), undefined, 'a ninth digit before a landline number is no mobile');
  });

  it('Mexico: +52 and +52 1; Argentina: +54 and +54 9', () => {
    assert.equal(phoneVariant('+525512345678'), '+5215512345678');
    assert.equal(phoneVariant('+5215512345678'), '+525512345678');
    assert.equal(phoneVariant('+541112345678'), '+5491112345678');
    assert.equal(phoneVariant('+5491112345678'), '+541112345678');
  });

  it('other countries have no variant, and a line is the same line in either form', () => {
    assert.equal(phoneVariant('+447700900123'), undefined);
    assert.equal(phoneVariant('+14155550100'), undefined);
    assert.ok(sameLine('+5511987654321', '+551187654321'));
    assert.ok(!sameLine('+5511987654321', '+551187654322'));
  });

  it('WhatsApp’s +52 1 form of a Mexican mobile is a phone the gateway takes', () => {
    assert.equal(parseE164('+52 1 55 1234 5678'), '+5215512345678');
    assert.equal(parseE164('5215512345678'), '+5215512345678');
  });

  it('the sandbox registers each of these lines in one fixed form', () => {
    assert.equal(sandboxRegisteredForm('+5511987654321' as never), '+5511987654321');
    assert.equal(sandboxRegisteredForm('+551187654321' as never), '+5511987654321');
    assert.equal(sandboxRegisteredForm('+5531988776655' as never), '+553188776655');
    assert.equal(sandboxRegisteredForm('+525512345678' as never), '+5215512345678');
    assert.equal(sandboxRegisteredForm('+541112345678' as never), '+5491112345678');
    assert.equal(sandboxRegisteredForm('+447700900123' as never), '+447700900123');
  });
});
