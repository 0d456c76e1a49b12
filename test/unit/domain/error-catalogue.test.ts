import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { currentErrorTable, ERROR_TABLE_DOCUMENTS, renderErrorTable } from '../../../scripts/error-tables.ts';
import { errorCatalogue } from '../../../src/domain/errors.ts';

describe('the error catalogue is the single source', () => {
  it('every code has a status, a one-line meaning, and meta described key by key', () => {
    for (const [code, entry] of Object.entries(errorCatalogue)) {
      assert.ok(entry.status >= 400 && entry.status < 600, code);
      assert.match(entry.meaning, /^[A-Z`].*[.)]$/, `${code}: a sentence`);
      assert.ok(!entry.meaning.includes('\n'), `${code}: one line`);
      assert.ok(!('details' in entry), `${code}: the facts are declared as meta; details is derived from them`);
      if ('meta' in entry) {
        for (const [key, description] of Object.entries(entry.meta)) {
          assert.match(key, /^[a-z][a-z_]*$/, `${code}.${key} is snake_case`);
          assert.ok(description.length > 0, `${code}.${key} is described`);
        }
      }
    }
  });

  for (const document of ERROR_TABLE_DOCUMENTS) {
    it(`${document.file}'s error table is the catalogue's (run scripts/error-tables.ts after changing it)`, () => {
      assert.equal(currentErrorTable(document.file), renderErrorTable(document.publicApiOnly));
    });
  }
});
