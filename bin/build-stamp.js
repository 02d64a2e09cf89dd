// What build/ was compiled from: each of the project's own source files with its modification time, size and
// digest. bin/build.js writes it; bin/emi.js reads it and warns when the TypeScript has changed since (an edit, or a
// `git pull` without `npm ci`) rather than run older code in silence. A `stat` per file answers (a few ms for the
// whole project); only a file whose time moved is read and hashed, so a copy that kept the contents but not the
// times is still current.
import { readFileSync, statSync } from 'node:fs';

export const STAMP_FILE = 'source-stamp.json';

/**
 * A file written this close to the build may be written again within the same tick of the filesystem's clock,
 * keeping its time (and its size, if the edit is small): its time is not kept, so it is always compared by digest
 * (git's "racily clean" entries).
 */
const RACY_MS = 2000;

// Loaded only when needed: node:crypto alone would add about 3 ms to every start.
const digest = (bytes) =>
  process.getBuiltinModule('node:crypto').createHash('sha256').update(bytes).digest('hex');

/** The stamp of `files`, paths relative to `root` (a folder path ending in a separator). */
export function stampSources(root, files, now = Date.now()) {
  const entries = files.map((file) => {
    const { mtimeMs, size } = statSync(root + file);
    const kept = mtimeMs < now - RACY_MS ? mtimeMs : null;
    return [file, { mtimeMs: kept, size, sha256: digest(readFileSync(root + file)) }];
  });
  return { files: Object.fromEntries(entries) };
}

/** The files of a stamp that are no longer what was compiled (changed or gone), in the stamp's order. */
export function changedSources(root, stamp) {
  return Object.entries(stamp.files)
    .filter(([file, was]) => {
      const info = statSync(root + file, { throwIfNoEntry: false });
      if (!info || info.size !== was.size) return true;
      return info.mtimeMs !== was.mtimeMs && digest(readFileSync(root + file)) !== was.sha256;
    })
    .map(([file]) => file);
}
