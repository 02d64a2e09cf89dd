// Imports Eleventy for a build that never watches files. On import, Eleventy 3.1 registers a module resolver hook
// (src/Util/EsmResolverPortAdapter.js) whose one job is to bust the import cache of files its watch mode saw
// change; on Node 20 that hook runs on a loader thread of its own, which every later import then waits for (about
// a tenth of a one-off `emi build`). Nothing here watches, and the warm builder keeps its templates for the life
// of the process (warm-build.ts), so the hook is turned off with the switch Eleventy provides for it
// (ELEVENTY_SKIP_ESM_RESOLVER, 11ty/eleventy#3371), unless the environment already says otherwise.
// test/site-load-eleventy.test.ts checks that the switch still does that.
import type Eleventy from '@11ty/eleventy';

export async function loadEleventy(): Promise<typeof Eleventy> {
  process.env.ELEVENTY_SKIP_ESM_RESOLVER ??= 'true';
  const { default: loaded } = await import('@11ty/eleventy');
  return loaded;
}
