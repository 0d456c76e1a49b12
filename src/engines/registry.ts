import type { EngineKind } from '../domain/model.ts';
import type { Engine } from './engine.ts';

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
