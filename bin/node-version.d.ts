// Types of bin/node-version.js for the TypeScript that calls it (the tests).
export declare const MIN_NODE: string;
/** One line saying that `version` is older than MIN_NODE, or null when it will do. */
export declare function nodeTooOld(version?: string): string | null;
