// The interactive API reference's script, copied from the pinned npm package into the build: the page works
// offline and loads nothing from a CDN.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';

// The package exports no path to its browser bundle: find its entry point, then the bundle beside it. It is
// looked up from this template's project first (emi runs from any folder), then from the working directory (for
// templates copied elsewhere before a build).
function scalarEntry() {
  for (const base of [import.meta.url, join(process.cwd(), 'package.json')]) {
    try {
      return createRequire(base).resolve('@scalar/api-reference');
    } catch {
      // try the next place
    }
  }
  throw new Error('@scalar/api-reference is not installed: run npm ci in the project');
}
const bundle = join(dirname(scalarEntry()), 'browser', 'standalone.js');
// Read once per import: a long-running process (emi schedule) renders it every cycle from the same package.
let script;

export default class {
  data() {
    return { permalink: '/docs/api/scalar.js', eleventyExcludeFromCollections: true };
  }

  render() {
    script ??= readFileSync(bundle, 'utf8');
    return script;
  }
}
