import type { EngineDescriptor } from '../registry.ts';

/**
 * What the gateway knows of the Baileys engine without loading Baileys (which the composition
 * root imports only when a session needs it).
 */
export const BAILEYS_ENGINE = {
  kind: 'baileys',
  capabilities: {
    simulatedInbound: false,
    simulatedSessionStatus: false,
    linking: true,
    staggeredStart: true,
    uncarried: ['template', 'interactive'],
  },
  initialStatus: 'connecting',
} as const satisfies EngineDescriptor;
