import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { samples } from '../../support/media-samples.ts';
import type { Json } from '../../support/json.ts';

// Profiles on the sandbox: a number sets its own, and another reads it as its contact, with the
// picture stored in the reader's media store and the answer kept for WAGW_PROFILE_CACHE_SECONDS.
for (const dialect of dialects) {
  describe(`profiles on sandbox numbers (${dialect})`, () => {
    let test: TestGateway;
    let account: SeededAccount;
    let other: SeededAccount;

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_PROFILE_CACHE_SECONDS: '1' });
      account = await seedAccount(test.gateway, { numbers: 2 });
      other = await seedAccount(test.gateway);
    });
    after(() => test?.close());

    const as = (apiKey = account.apiKey) => ({ authorization: `Bearer ${apiKey}` });
    const upload = async (bytes: Buffer, type: string) =>
      (await test.inject({ method: 'POST', url: '/media', headers: { ...as(), 'content-type': type }, payload: bytes })).json()
        .media_id as string;
    const setProfile = (id: string, body: object, apiKey = account.apiKey) =>
      test.inject({ method: 'PATCH', url: `/numbers/${encodeURIComponent(id)}/profile`, payload: body, headers: as(apiKey) });
    const readProfile = (phone: string, fromPhone: string, prefix = '') =>
      test.inject({
        method: 'GET',
        url: `${prefix}/contacts/${encodeURIComponent(phone)}/profile?from_phone=${encodeURIComponent(fromPhone)}`,
        headers: as(),
      });

    it('a contact with no profile shows none', async () => {
      const response = await readProfile('+14155550144', account.phones[0]!);
      assert.equal(response.statusCode, 200, response.body);
      assert.deepEqual(
        { ...(response.json() as object), fetched_at: undefined },
        {
          phone: '+14155550144',
          from_phone: account.phones[0],
          about: null,
          about_set_at: null,
          picture: null,
          business: null,
          fetched_at: undefined,
        },
      );
    });

    it('a number sets its name, about and picture; another reads them, the picture stored once and kept while the cache lasts', async () => {
      const [ours, reader] = account.phones;
      const pictureId = await upload(samples.png, 'image/png');
      const set = await setProfile(ours!, { name: 'Acme Support', about: 'Replies within the hour', picture_media_id: pictureId });
      assert.deepEqual([set.statusCode, set.json().changed], [200, ['name', 'about', 'picture']], set.body);

      const first = await readProfile(ours!, reader!, '/api');
      assert.equal(first.statusCode, 200, first.body);
      const profile = first.json();
      assert.deepEqual(
        [profile.about, profile.picture.mime_type, profile.picture.size, profile.business],
        ['Replies within the hour', 'image/png', samples.png.length, null],
      );
      const download = await test.inject({ method: 'GET', url: profile.picture.url, headers: as() });
      assert.deepEqual([download.statusCode, download.rawPayload.equals(samples.png)], [200, true]);

      await setProfile(ours!, { about: 'Back on Monday' });
      assert.deepEqual((await readProfile(ours!, reader!)).json(), profile, 'answered from memory while the cache lasts');
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      const later = (await readProfile(ours!, reader!)).json();
      assert.equal(later.about, 'Back on Monday');
      assert.equal(later.picture.media_id, profile.picture.media_id, 'an unchanged picture is not stored again');
    });

    it("refuses bad requests, another account's numbers, a missing or non-image picture and a session that is down", async () => {
      const [ours] = account.phones;
      const pdf = await upload(samples.pdf(), 'application/pdf');
      const cases: [Promise<{ statusCode: number; json(): Json }>, number, string][] = [
        [setProfile(ours!, {}), 400, 'invalid_request'],
        [setProfile(ours!, { name: 'x'.repeat(26) }), 400, 'invalid_request'],
        [setProfile(ours!, { nickname: 'Ace' }), 400, 'invalid_request'],
        [setProfile(ours!, { picture_media_id: pdf }), 400, 'media_kind_mismatch'],
        [setProfile(ours!, { picture_media_id: 'med_01jd0k6x9g8p1b6m3v7t2q4w5e' }), 404, 'media_not_found'],
        [setProfile(other.phones[0]!, { about: 'hijacked' }), 404, 'number_not_found'],
        [readProfile('nope', ours!), 400, 'invalid_phone_number'],
        [readProfile('+14155550144', other.phones[0]!), 403, 'phone_not_owned'],
        [test.inject({ method: 'GET', url: '/contacts/%2B14155550144/profile', headers: as() }), 400, 'invalid_request'],
      ];
      for (const [request, status, error] of cases) {
        const response = await request;
        assert.deepEqual([response.statusCode, response.json().error], [status, error]);
      }
      await test.gateway.numbers.setSimulatedStatus(operatorScope(), ours!, 'disconnected');
      try {
        const down = await setProfile(ours!, { about: 'away' });
        assert.deepEqual([down.statusCode, down.json().error], [503, 'number_not_connected']);
        const read = await readProfile('+14155550155', ours!);
        assert.deepEqual([read.statusCode, read.json().error], [503, 'number_not_connected']);
      } finally {
        await test.gateway.numbers.setSimulatedStatus(operatorScope(), ours!, 'connected');
      }
    });
  });
}
