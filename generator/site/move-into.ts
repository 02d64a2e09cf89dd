// Serves a freshly built site folder in place of `target` (dist/) in one atomic step: the build is written as a
// new generation beside the served one, and `target` (a symlink through the store's `current`) switches to it
// with one rename. A server reading `target` sees the whole old build or the whole new one, never a mix, and a
// build that fails leaves the old one served. The last few builds are kept; older ones are removed.
import { publishGeneration, realFs, storeBeside } from '../publish/generations.ts';

/** `build` fills `dir`; `previous` is the folder served now (null on a first build), to carry unchanged files over. */
export async function buildInto(
  target: string,
  build: (dir: string, previous: string | null) => Promise<void>,
): Promise<void> {
  // A build is public throughout (no paid bodies): every file of it readable by nginx, another user.
  await publishGeneration(
    storeBeside(target),
    [{ path: target, entry: '' }],
    (generation) => build(generation.dir, generation.previous),
    realFs,
    [],
  );
}
