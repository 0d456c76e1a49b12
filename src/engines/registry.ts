import type { EngineKind, SessionLease, SessionStatus, WhatsAppNumber } from '../domain/model.ts';
import type { Engine, EngineCapabilities, SessionCapability, SessionLinker } from './engine.ts';
import { forwardingObject } from './session-binding.ts';

/** The engines this gateway runs, by kind. Built once in the composition root. */
export class EngineRegistry {
  private readonly engines = new Map<EngineKind, Engine>();

  constructor(engines: Engine[]) {
    for (const engine of engines) this.engines.set(engine.kind, engine);
  }

  get(kind: EngineKind): Engine | undefined {
    return this.engines.get(kind);
  }

  kinds(): EngineKind[] {
    return [...this.engines.keys()];
  }
}

/** What is known of an engine before its code is loaded. */
export interface EngineDescriptor {
  readonly kind: EngineKind;
  readonly capabilities: EngineCapabilities;
  readonly initialStatus: SessionStatus;
}

/**
 * An engine whose code is imported the first time a session needs it. Baileys takes most of a
 * second to load, and a CLI command or a gateway with no Baileys number never needs it. Its
 * lifecycle is written out below; every capability of the session port is forwarded to the loaded
 * engine by one forwarder (session-binding.ts), so a new capability adds nothing here.
 */
export function onDemand(descriptor: EngineDescriptor, load: () => Promise<Engine>): Engine {
  const lifecycle = new OnDemandLifecycle(descriptor, load);
  return forwardingObject<Engine>(async (name, args) => {
    const engine = await lifecycle.engine();
    return (engine[name] as (...args: unknown[]) => unknown).apply(engine, args);
  }, lifecycle);
}

/** The members of an engine that are not capabilities, each written out, for the engine not yet loaded. */
class OnDemandLifecycle implements Omit<Engine, SessionCapability> {
  readonly kind: EngineKind;
  readonly capabilities: EngineCapabilities;
  readonly initialStatus: SessionStatus;
  readonly linker: SessionLinker | undefined;
  /** Declared, so that the forwarder answers it as undefined rather than as a capability: an engine loaded on demand simulates nothing. */
  readonly simulator: undefined = undefined;
  private loaded: Engine | undefined;
  private loading: Promise<Engine> | undefined;

  constructor(
    descriptor: EngineDescriptor,
    private readonly load: () => Promise<Engine>,
  ) {
    this.kind = descriptor.kind;
    this.capabilities = descriptor.capabilities;
    this.initialStatus = descriptor.initialStatus;
    this.linker = descriptor.capabilities.linking
      ? {
          link: async (number, lease) => linkerOf(await this.engine()).link(number, lease),
          logout: async (number, lease) => linkerOf(await this.engine()).logout(number, lease),
        }
      : undefined;
  }

  /** The loaded engine; concurrent first calls share one import. */
  engine(): Promise<Engine> {
    if (this.loaded !== undefined) return Promise.resolve(this.loaded);
    this.loading ??= this.load().then(
      (engine) => (this.loaded = engine),
      (error: unknown) => {
        // A failed import is tried again by the next call rather than remembered.
        this.loading = undefined;
        throw error;
      },
    );
    return this.loading;
  }

  async start(number: WhatsAppNumber, lease: SessionLease): Promise<void> {
    await (await this.engine()).start(number, lease);
  }

  async stop(number: WhatsAppNumber): Promise<void> {
    // An engine never loaded has no session to stop, so it is not loaded for this.
    const engine = this.loaded ?? (await this.loading);
    await engine?.stop(number);
  }

  sessionStatus(number: WhatsAppNumber): SessionStatus {
    // Not loaded yet: no session of this engine runs here.
    return this.loaded?.sessionStatus(number) ?? 'disconnected';
  }
}

function linkerOf(engine: Engine): SessionLinker {
  if (engine.linker === undefined) throw new Error(`the ${engine.kind} engine was described as linking but has no linker`);
  return engine.linker;
}
