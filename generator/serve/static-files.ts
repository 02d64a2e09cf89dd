// Resolves a URL path to a file under the served root, refusing anything that would leave it.
import { stat } from 'node:fs/promises';
import { join, normalize, sep } from 'node:path';

/** Returns the absolute file for a URL path, or null when it is outside the root or not a file. */
export async function resolveStaticFile(root: string, urlPath: string): Promise<string | null> {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (decoded.includes('\0')) return null;
  const relative = normalize(decoded.endsWith('/') ? `${decoded}index.html` : decoded).replace(
    /^([/\\])+/,
    '',
  );
  if (relative.split(sep).includes('..')) return null;
  const candidate = join(root, relative);
  try {
    const info = await stat(candidate);
    if (info.isFile()) return candidate;
    if (info.isDirectory()) {
      const index = join(candidate, 'index.html');
      return (await stat(index).catch(() => null))?.isFile() ? index : null;
    }
  } catch {
    return null;
  }
  return null;
}
