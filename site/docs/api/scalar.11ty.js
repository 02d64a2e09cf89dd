// The interactive API reference's script, copied from the pinned npm package into the build: the page works
// offline and loads nothing from a CDN.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';

// The package exports no path to its browser bundle: find its entry point, then the bundle beside it. The
// templates may be copied elsewhere before a build, so the package is looked up from the project (the working
// directory `emi build` runs in), not from this file.
const require = createRequire(join(process.cwd(), 'package.json'));
const entry = require.resolve('@scalar/api-reference');
const bundle = join(dirname(entry), 'browser', 'standalone.js');

export default class {
  data() {
    return { permalink: '/docs/api/scalar.js', eleventyExcludeFromCollections: true };
  }

  render() {
    return readFileSync(bundle, 'utf8');
  }
}
