import type { EngineKind, SessionLease, SessionStatus, WhatsAppNumber } from '../domain/model.ts';
import type { Engine, EngineCapabilities, SessionLinker } from './engine.ts';

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
 * second to load, and a CLI command or a gateway with no Baileys number never needs it.
 */
export function onDemand(descriptor: EngineDescriptor, load: () => Promise<Engine>): Engine {
  return new OnDemandEngine(descriptor, load);
}

class OnDemandEngine implements Engine {
  readonly kind: EngineKind;
  readonly capabilities: EngineCapabilities;
  readonly initialStatus: SessionStatus;
  readonly linker: SessionLinker | undefined;
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
  private engine(): Promise<Engine> {
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

  async sendMessage(...args: Parameters<Engine['sendMessage']>) {
    return (await this.engine()).sendMessage(...args);
  }

  async sendAction(...args: Parameters<Engine['sendAction']>) {
    return (await this.engine()).sendAction(...args);
  }

  async markRead(...args: Parameters<Engine['markRead']>) {
    return (await this.engine()).markRead(...args);
  }

  async sendPresence(...args: Parameters<Engine['sendPresence']>) {
    return (await this.engine()).sendPresence(...args);
  }

  async checkNumbers(...args: Parameters<Engine['checkNumbers']>) {
    return (await this.engine()).checkNumbers(...args);
  }

  async createGroup(...args: Parameters<Engine['createGroup']>) {
    return (await this.engine()).createGroup(...args);
  }

  async listGroups(...args: Parameters<Engine['listGroups']>) {
    return (await this.engine()).listGroups(...args);
  }

  async groupInfo(...args: Parameters<Engine['groupInfo']>) {
    return (await this.engine()).groupInfo(...args);
  }

  async updateParticipants(...args: Parameters<Engine['updateParticipants']>) {
    return (await this.engine()).updateParticipants(...args);
  }

  async updateGroupSettings(...args: Parameters<Engine['updateGroupSettings']>) {
    return (await this.engine()).updateGroupSettings(...args);
  }

  async inviteCode(...args: Parameters<Engine['inviteCode']>) {
    return (await this.engine()).inviteCode(...args);
  }

  async leaveGroup(...args: Parameters<Engine['leaveGroup']>) {
    return (await this.engine()).leaveGroup(...args);
  }

  async downloadAgain(...args: Parameters<Engine['downloadAgain']>) {
    return (await this.engine()).downloadAgain(...args);
  }

  async modifyChat(...args: Parameters<Engine['modifyChat']>) {
    return (await this.engine()).modifyChat(...args);
  }

  async subscribePresence(...args: Parameters<Engine['subscribePresence']>) {
    return (await this.engine()).subscribePresence(...args);
  }

  async setOnline(...args: Parameters<Engine['setOnline']>) {
    return (await this.engine()).setOnline(...args);
  }

  async contactProfile(...args: Parameters<Engine['contactProfile']>) {
    return (await this.engine()).contactProfile(...args);
  }

  async updateProfile(...args: Parameters<Engine['updateProfile']>) {
    return (await this.engine()).updateProfile(...args);
  }

  async updateBlock(...args: Parameters<Engine['updateBlock']>) {
    return (await this.engine()).updateBlock(...args);
  }

  async blocklist(...args: Parameters<Engine['blocklist']>) {
    return (await this.engine()).blocklist(...args);
  }

  async rejectCall(...args: Parameters<Engine['rejectCall']>) {
    return (await this.engine()).rejectCall(...args);
  }
}

function linkerOf(engine: Engine): SessionLinker {
  if (engine.linker === undefined) throw new Error(`the ${engine.kind} engine was described as linking but has no linker`);
  return engine.linker;
}
