// The validators of the preview's static files, as the nginx recipe sends them: an ETag and a Last-Modified from the
// file's identity. Whether a request's copy is current (the 304) is the delivery policy's `isNotModified`, which the
// Worker shares. Only files carry them: errors and the paywall's paths never do.
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
