import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RecentSends, type RecordedSend } from '../../../src/messaging/recent-sends.ts';

const PHONE = '+447700900123';
const send = (id: string): RecordedSend => ({
  id,
  accountId: 'acc_1',
  fromPhone: PHONE as RecordedSend['fromPhone'],
  toPhone: '+14155550100' as RecordedSend['toPhone'],
  direction: 'outbound',
  group: null,
  createdAt: new Date(),
});

describe("a receipt waits behind its own send's record instead of retrying on a timer", () => {
  it('a receipt that overtakes the record of its send is answered the moment the record commits', async () => {
    const sends = new RecentSends();
    sends.began(PHONE, 'msg_1');
    let answered: RecordedSend | undefined | 'pending' = 'pending';
    const finding = sends.find(PHONE, 'wa-1').then((found) => (answered = found));
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(answered, 'pending', 'the receipt waits while the send is in flight');
    sends.committed(send('msg_1'), 'wa-1');
    sends.ended(PHONE, 'msg_1');
    await finding;
    assert.equal((answered as unknown as RecordedSend).id, 'msg_1');
  });

  it('a receipt for a send this node did not record, with nothing in flight on its number, is not held', async () => {
    const sends = new RecentSends();
    const startedAt = Date.now();
    assert.equal(await sends.find(PHONE, 'wa-elsewhere'), undefined);
    assert.ok(Date.now() - startedAt < 50);
  });

  it('a send whose record failed releases the receipts waiting on it, which then take the slow path', async () => {
    const sends = new RecentSends();
    sends.began(PHONE, 'msg_2');
    const finding = sends.find(PHONE, 'wa-2');
    sends.ended(PHONE, 'msg_2');
    assert.equal(await finding, undefined);
  });

  it('a receipt does not wait for sends of its number that began after it came', async () => {
    const sends = new RecentSends();
    sends.began(PHONE, 'msg_3');
    const finding = sends.find(PHONE, 'wa-3');
    sends.began(PHONE, 'msg_4');
    sends.committed(send('msg_3'), 'wa-3');
    sends.ended(PHONE, 'msg_3');
    assert.equal((await finding)?.id, 'msg_3');
    sends.ended(PHONE, 'msg_4');
  });
});
