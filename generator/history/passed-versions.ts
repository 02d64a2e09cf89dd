// History file versions known, in this process, to pass `emi validate`'s history check (publish/validate-output.ts):
// those the check passed and those the history store wrote from rows it knew to be sound. The site build checks
// the published history before every build (site/history-check.ts) and skips the versions known here, so a
// scheduled cycle reads only what changed, and not even the day files its own run has just written. A version is
// its path in the site and its file identity (publish/file-identity.ts): a file changed in place by someone else
// has another size or time, one replaced by rename another inode, so it is checked again.

/**
 * Versions kept, least recently known dropped first. Every file of a site is looked up every build, so a site's
 * versions stay; what falls out are the superseded versions of the files a run rewrites. Room for a few sites of
 * 400 days (12 files a day each) in one process.
 */
const KEPT_VERSIONS = 50_000;
const passed = new Set<string>();

const keyOf = (file: string, identity: string): string => `${file}\0${identity}`;

/** Remembers that this version of `file` (a path in the site, e.g. `api/history/statistics/latest.json`) passed. */
export function rememberPassed(file: string, identity: string): void {
  const key = keyOf(file, identity);
  passed.delete(key);
  passed.add(key);
  if (passed.size > KEPT_VERSIONS) {
    const oldest = passed.values().next().value;
    if (oldest !== undefined) passed.delete(oldest);
  }
}

/** Whether this version of `file` is known to pass; a known one counts as recently used. */
export function knownPassed(file: string, identity: string): boolean {
  const key = keyOf(file, identity);
  if (!passed.has(key)) return false;
  passed.delete(key);
  passed.add(key);
  return true;
}
