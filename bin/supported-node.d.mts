/** Types of supported-node.mjs, which stays plain JavaScript so that it runs before tsx loads. */
export declare function unsupportedNodeMessage(version: string): string | null;
