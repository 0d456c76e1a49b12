/**
 * For a promise whose failure reaches someone by another path (its caller holds it, or it was
 * already answered as a time-out): `p.catch(handledElsewhere)` keeps that failure from being
 * reported a second time as an unhandled rejection. Anything else logs its failures.
 */
export const handledElsewhere = (): void => undefined;
