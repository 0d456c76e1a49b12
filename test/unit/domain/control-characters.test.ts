import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { safeNextPath } from '../../../src/dashboard/forms.ts';
import { cleanFileName } from '../../../src/domain/media.ts';

// Every Unicode control character (general category Cc): C0, DEL and the C1 range after it.
const CONTROLS = ['\u0000', '\u0009', '\u000a', '\u001b', '\u001f', '\u007f', '\u0080', '\u0085', '\u009b', '\u009f'];

describe('control characters in names and paths', () => {
  it('a stored file name keeps none of them, C1 included', () => {
    for (const control of CONTROLS) {
      assert.equal(cleanFileName(`in${control}voice.pdf`), 'invoice.pdf', `U+${control.codePointAt(0)!.toString(16).padStart(4, '0')}`);
    }
  });

  it('a path to follow sign-in that holds one is refused, C1 included', () => {
    for (const control of CONTROLS) {
      assert.equal(safeNextPath(`/messages${control}x`), '/', `U+${control.codePointAt(0)!.toString(16).padStart(4, '0')}`);
    }
    assert.equal(safeNextPath('/messages?direction=inbound'), '/messages?direction=inbound', 'an ordinary path is kept');
    assert.equal(cleanFileName('Résumé – 2026.pdf'), 'Résumé – 2026.pdf', 'letters and punctuation beyond ASCII are kept');
  });
});
