import type { GatewayServices } from '../../ports/gateway-services.ts';

/** The gateway's parts operations may reach, named once: the type and the picking both come from this list. */
const GATEWAY_SERVICES = [
  'numbers',
  'sender',
  'governor',
  'sendQueues',
  'idempotentSender',
  'media',
  'mediaLinks',
  'typing',
  'numberChecks',
  'messageActions',
  'history',
  'groups',
  'sandboxInbox',
  'pauses',
  'contacts',
  'chats',
  'identities',
  'presence',
  'profiles',
  'sendBacklog',
  'polls',
  'accounts',
  'linkPreviews',
  'webhooks',
  'linking',
  'supervisor',
  'cloudCallbacks',
] as const satisfies readonly (keyof GatewayServices)[];

type GatewayService = (typeof GATEWAY_SERVICES)[number];

/**
 * The services operations reach. A declaration names the ones it uses, and its handler is given
 * only those: an operation cannot grow a dependency on the whole gateway unseen.
 */
export type OperationServices = Pick<GatewayServices, GatewayService> & {
  /** The longest text a message may carry (WAGW_MAX_MESSAGE_LENGTH). */
  maxMessageLength: number;
  /** How long a signed media link works unless asked otherwise (WAGW_MEDIA_LINK_TTL_HOURS). */
  mediaLinkTtlMs: number;
};

/** The operation services of a gateway. */
export function operationServices(gateway: Pick<GatewayServices, GatewayService | 'config'>): OperationServices {
  const parts = Object.fromEntries(GATEWAY_SERVICES.map((name) => [name, gateway[name]])) as Pick<GatewayServices, GatewayService>;
  return { ...parts, maxMessageLength: gateway.config.maxMessageLength, mediaLinkTtlMs: gateway.config.media.linkTtlMs };
}

/** Only the services `uses` names. */
export function pickServices<Uses extends keyof OperationServices>(
  services: OperationServices,
  uses: readonly Uses[],
): Pick<OperationServices, Uses> {
  return Object.fromEntries(uses.map((name) => [name, services[name]])) as Pick<OperationServices, Uses>;
}
