// Types of bin/build-stamp.js for the TypeScript that calls it (the tests).
export interface SourceStamp {
  /** `mtimeMs` is null for a file written within two seconds of the build: it is then compared by digest. */
  files: Record<string, { mtimeMs: number | null; size: number; sha256: string }>;
}
export declare const STAMP_FILE: string;
/** The stamp of `files`, paths relative to `root` (a folder path ending in a separator). */
export declare function stampSources(root: string, files: readonly string[], now?: number): SourceStamp;
/** The files of a stamp that are no longer what was compiled (changed or gone), in the stamp's order. */
export declare function changedSources(root: string, stamp: SourceStamp): string[];
