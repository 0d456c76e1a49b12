import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

/** The class's surface, declared here: see below for why it is not imported by name. */
interface DeliveryMemory {
  admit(deliveryId: string, timestampSeconds: number, nowSeconds: number): 'first' | 'repeat' | 'full';
  readonly size: number;
}
// The node package is CommonJS (n8n loads nodes with require), which this repository's ESM type
// check refuses to import values from; the path is a value so that only tsx, which loads either,
// resolves it.
const modulePath = '../../../integrations/n8n-nodes-wa-gateway/src/shared/delivery-memory.ts';
const { DeliveryMemory } = (await import(modulePath)) as {
  DeliveryMemory: new (windowSeconds: number, capacity?: number) => DeliveryMemory;
};

// The n8n trigger's memory of the deliveries it accepted (docs/adr/0082-n8n-trigger-replays.md):
// a genuine delivery replayed inside the five-minute signature window starts nothing. The real
// n8n test (n8n.test.ts) sends replays to a running trigger; this one walks the memory through
// the window's edges, which a real clock cannot reach on demand.

const WINDOW_SECONDS = 300;
const NOW = 1_800_000_000;

describe("the n8n trigger's memory of accepted deliveries", () => {
  it('a delivery id starts the workflow once: its replay, and the gateway retrying it signed anew, are repeats', () => {
    const memory = new DeliveryMemory(WINDOW_SECONDS);
    assert.equal(memory.admit('dlv_a', NOW, NOW), 'first');
    assert.equal(memory.admit('dlv_a', NOW, NOW + 10), 'repeat', 'the same request again');
    assert.equal(memory.admit('dlv_a', NOW + 60, NOW + 60), 'repeat', 'the same delivery with a new timestamp');
    assert.equal(memory.admit('dlv_b', NOW, NOW + 60), 'first', 'another delivery');
  });

  it('an id is kept while any request of it could pass the timestamp check, and forgotten after', () => {
    const memory = new DeliveryMemory(WINDOW_SECONDS);
    memory.admit('dlv_a', NOW, NOW);
    // The signature check accepts a timestamp up to the window's width old, edge included.
    assert.equal(memory.admit('dlv_a', NOW, NOW + WINDOW_SECONDS), 'repeat', 'at the edge of the window');
    assert.equal(memory.admit('dlv_b', NOW, NOW + WINDOW_SECONDS + 1), 'first');
    assert.equal(memory.size, 1, 'dlv_a forgotten once its request is too old to pass the signature check');
  });

  it('a repeat signed later extends how long its id is kept', () => {
    const memory = new DeliveryMemory(WINDOW_SECONDS);
    memory.admit('dlv_a', NOW, NOW);
    memory.admit('dlv_a', NOW + 200, NOW + 200);
    // The retry signed at NOW + 200 can be replayed until NOW + 500: still a repeat at NOW + 450.
    assert.equal(memory.admit('dlv_a', NOW + 200, NOW + 450), 'repeat');
    assert.equal(memory.admit('dlv_a', NOW + 200, NOW + WINDOW_SECONDS + 201), 'first', 'forgotten only after that');
  });

  it('a delivery signed ahead of our clock is kept until its own timestamp leaves the window', () => {
    const memory = new DeliveryMemory(WINDOW_SECONDS);
    memory.admit('dlv_now', NOW, NOW);
    memory.admit('dlv_ahead', NOW + WINDOW_SECONDS, NOW);
    assert.equal(memory.admit('dlv_ahead', NOW + WINDOW_SECONDS, NOW + 2 * WINDOW_SECONDS), 'repeat', 'still within its own window');
    assert.equal(memory.size, 1, 'the one before it forgotten');
  });

  it('when full of ids that could still be replayed, a new delivery is not accepted rather than one forgotten', () => {
    const memory = new DeliveryMemory(WINDOW_SECONDS, 2);
    memory.admit('dlv_a', NOW, NOW);
    memory.admit('dlv_b', NOW, NOW);
    assert.equal(memory.admit('dlv_c', NOW, NOW + 1), 'full');
    assert.equal(memory.admit('dlv_a', NOW, NOW + 1), 'repeat', 'the ones kept are still known');
    assert.equal(memory.admit('dlv_c', NOW + WINDOW_SECONDS + 1, NOW + WINDOW_SECONDS + 1), 'first', 'room again once the old ones expire');
  });

  it('a delivery signed ahead does not keep the expired ones admitted after it from making room', () => {
    const memory = new DeliveryMemory(WINDOW_SECONDS, 2);
    memory.admit('dlv_ahead', NOW + WINDOW_SECONDS, NOW);
    memory.admit('dlv_now', NOW, NOW);
    assert.equal(memory.admit('dlv_next', NOW + WINDOW_SECONDS + 1, NOW + WINDOW_SECONDS + 1), 'first', 'dlv_now has expired');
    assert.equal(memory.admit('dlv_ahead', NOW + WINDOW_SECONDS, NOW + WINDOW_SECONDS + 1), 'repeat', 'the one ahead is still kept');
  });
});
