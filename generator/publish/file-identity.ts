// A file version's identity as the file system tells it. The generator never rewrites a file in place (a new file is
// renamed over it), so the same device, inode, size and modification time mean the same bytes; a file changed in
// place by someone else has another size or time.
import type { Stats } from 'node:fs';

export const fileIdentity = (info: Stats): string => `${info.dev}:${info.ino}:${info.size}:${info.mtimeMs}`;
