// For the Eleventy CLI (`npx @11ty/eleventy --input=site --output=dist`): the same configuration that
// `emi build` (generator/site/build.ts) applies, read from the environment. Eleventy 3.1.7 does not look for an
// eleventy.config.ts, so this file loads the compiled configuration from build/ (made by `npm run build`).
import { existsSync } from 'node:fs';

const compiled = (name) => new URL(`./build/${name}.js`, import.meta.url);
if (!existsSync(compiled('site-configure'))) {
  throw new Error(
    'the compiled site configuration (build/site-configure.js) is missing: run `npm run build` first',
  );
}
const { configureSite } = await import(compiled('site-configure').href);
const { baseUrlFromEnv } = await import(compiled('discovery-urls').href);

export default async function (eleventyConfig) {
  await configureSite(eleventyConfig, {
    siteDir: eleventyConfig.directories?.input ?? 'site',
    baseUrl: baseUrlFromEnv(),
  });
}

export const config = { dir: { input: 'site', output: 'dist' } };
