/** Types of supported-node.mjs, which stays plain JavaScript so that it runs before tsx loads. */
export declare const MINIMUM_NODE: readonly [number, number];
export declare const RECOMMENDED_NODE_MAJOR: number;
export declare function unsupportedNodeMessage(version: string): string | null;
