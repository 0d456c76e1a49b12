/** Types of build-freshness.mjs, which stays plain JavaScript so that bin/wagw can run it before choosing how to load the CLI. */
export declare function compiledIsCurrent(root: string): boolean;
