// Conditional requests for the preview's static files, answered as the nginx recipe answers them: an ETag and a
// Last-Modified from the file's identity, and a 304 for a GET or HEAD whose If-None-Match names the current tag (or
// `*`) or, without If-None-Match, whose If-Modified-Since is exactly the file's Last-Modified (nginx's default
// `if_modified_since exact`). Only files are answered here: errors and the paywall's paths never carry validators.
import { createHash } from 'node:crypto';
import type { Stats } from 'node:fs';
import { fileIdentity } from '../publish/file-identity.ts';

export interface Validators {
  /** A strong entity tag, quoted. */
  etag: string;
  /** The modification time as an HTTP date (whole seconds). */
  lastModified: string;
}

/**
 * The validators of one version of a file. The tag is a digest of its identity (device, inode, size, modification
 * time to the fraction of a millisecond; see file-identity.ts): a new version renamed over the old one, as the
 * generator and the build write them, always gets a new tag, even within the same second, and no inode number is
 * published.
 */
export function validatorsOf(info: Stats): Validators {
  const digest = createHash('sha256').update(fileIdentity(info)).digest('base64url').slice(0, 22);
  return {
    etag: `"${digest}"`,
    lastModified: new Date(Math.floor(info.mtimeMs / 1000) * 1000).toUTCString(),
  };
}

/** The opaque tags of an If-None-Match list, weak ones included (`W/"x"` compares as `"x"`). */
const tagsOf = (header: string): string[] =>
  [...header.matchAll(/(?:W\/)?("[^"]*")/g)].map((m) => m[1] ?? '');

/**
 * Whether the client's copy is current (RFC 9110 13.1.2 and 13.1.3, the weak comparison of If-None-Match): then a GET
 * or HEAD is answered 304. If-None-Match, when sent, decides alone.
 */
export function isNotModified(
  request: { ifNoneMatch?: string | null; ifModifiedSince?: string | null },
  validators: Validators,
): boolean {
  const { ifNoneMatch, ifModifiedSince } = request;
  if (ifNoneMatch !== undefined && ifNoneMatch !== null) {
    return ifNoneMatch.trim() === '*' || tagsOf(ifNoneMatch).includes(validators.etag);
  }
  if (ifModifiedSince === undefined || ifModifiedSince === null) return false;
  const since = Date.parse(ifModifiedSince);
  return !Number.isNaN(since) && since === Date.parse(validators.lastModified);
}
