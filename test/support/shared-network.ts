import { newWhatsAppNumber, type WhatsAppNumber } from '../../src/domain/model.ts';
import type { E164 } from '../../src/domain/phone.ts';
import { RemoteSandboxNetwork } from '../../src/engines/sandbox/remote-sandbox-network.ts';
import { deriveSandboxNetworkKey } from '../../src/engines/sandbox/sandbox-network-handshake.ts';
import { serveSandboxNetwork, type SandboxNetworkServerOptions } from '../../src/engines/sandbox/sandbox-network-server.ts';

/** The WAGW_SECRET_KEY the shared-network tests give the network and its nodes. */
export const TEST_SECRET_KEY_HEX = '7e57'.repeat(16);
export const TEST_NETWORK_KEY = deriveSandboxNetworkKey(Buffer.from(TEST_SECRET_KEY_HEX, 'hex'));
/** Room for the test files that cross the network, small enough that a flood is cut short quickly. */
export const TEST_LINE_BYTES = 4 * 1024 * 1024;

/** A shared network on a free loopback port, keyed with the tests' key. */
export function serveTestNetwork(options: Partial<SandboxNetworkServerOptions> = {}): ReturnType<typeof serveSandboxNetwork> {
  return serveSandboxNetwork({ host: '127.0.0.1', port: 0, key: TEST_NETWORK_KEY, maxLineBytes: TEST_LINE_BYTES, ...options });
}

/** A node's side of that network; `key` overrides the right one, as an intruder's would. */
export function testNetworkClient(port: number, key: Buffer = TEST_NETWORK_KEY): RemoteSandboxNetwork {
  // A node reads more than it may send: the journal, answered in one line, grows with every test.
  return new RemoteSandboxNetwork({ host: '127.0.0.1', port, key, maxLineBytes: 16 * TEST_LINE_BYTES });
}

/** Closes the nodes' sides first, then the network; any of them may be missing when a `before` failed. */
export async function stopTestNetwork(
  shared: { close(): Promise<void> } | undefined,
  ...clients: (RemoteSandboxNetwork | undefined)[]
): Promise<void> {
  for (const client of clients) client?.close();
  await shared?.close();
}

/** A connected sandbox number as an engine is handed it, for engine tests without a database. */
export function sandboxNumber(id: string, phone: E164): WhatsAppNumber {
  return newWhatsAppNumber({ id, accountId: `acc_${id.slice('num_'.length)}`, phone, engine: 'sandbox', status: 'connected' });
}
