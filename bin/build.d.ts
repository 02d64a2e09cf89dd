// Types of bin/build.js for the TypeScript that calls it (the test suite's global set-up).
export declare const OUT_DIR: string;
export declare const ENTRY_POINTS: Readonly<Record<string, string>>;
/** Compiles build/ afresh and swaps it in; resolves to the milliseconds it took. */
export declare function buildAll(): Promise<number>;
/** Packages left out of the bundle: loaded from node_modules at run time. */
export declare const LEFT_IN_NODE_MODULES: ReadonlySet<string>;
/** Keeps the previous build's own chunks in the fresh one (a process running from it loads some lazily). */
export declare function keepPreviousChunks(previous: string, fresh: string): Promise<void>;
