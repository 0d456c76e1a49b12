import type { KeyObject } from 'node:crypto';
import { createHmac } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { deriveClusterKey } from '../cluster/node-client.ts';
import { deriveSandboxNetworkKey } from '../engines/sandbox/sandbox-network-handshake.ts';
import { MediaLinks } from '../media/media-links.ts';
import { loadSecretKey, SecretBox } from '../secrets/secret-box.ts';

/** Every key the gateway uses, each derived from the one secret key for its own purpose. */
export interface GatewayKeys {
  /** Seals stored secrets (webhook secrets, Baileys' credentials). */
  secretBox: SecretBox;
  /** Signs and checks the calls nodes make to each other. */
  clusterKey: KeyObject;
  /** Keys the dashboard's CSRF tokens, so they survive restarts. */
  dashboardSigningKey: Buffer;
  /** Keys the sign-in throttle's counters. */
  signInThrottleKey: Buffer;
  /** Signs media download links. */
  mediaLinksKey: Buffer;
  /** Authenticates the handshake with a shared sandbox network. */
  sandboxNetworkKey: Buffer;
}

export function deriveKeys(config: Config, logger: Logger): GatewayKeys {
  const secretKey = loadSecretKey(config.secretKey, config.dataDirectory, logger);
  return {
    secretBox: new SecretBox(secretKey),
    clusterKey: deriveClusterKey(secretKey),
    dashboardSigningKey: createHmac('sha256', secretKey).update('wa-gateway dashboard csrf').digest(),
    signInThrottleKey: createHmac('sha256', secretKey).update('wa-gateway sign-in throttle').digest(),
    mediaLinksKey: MediaLinks.deriveKey(secretKey),
    sandboxNetworkKey: deriveSandboxNetworkKey(secretKey),
  };
}
