// For the Eleventy CLI (`npx @11ty/eleventy --input=site --output=dist`): the same configuration that
// `emi build` (generator/site/build.ts) applies, read from the environment. Eleventy 3.1.7 does not look for an
// eleventy.config.ts, so this file registers tsx and loads the TypeScript configuration.
import { register } from 'tsx/esm/api';

register();
const { configureSite } = await import('./generator/site/configure.ts');
const { baseUrlFromEnv } = await import('./generator/discovery/urls.ts');

export default async function (eleventyConfig) {
  await configureSite(eleventyConfig, {
    siteDir: eleventyConfig.directories?.input ?? 'site',
    baseUrl: baseUrlFromEnv(),
    historyFile: process.env.EMI_HISTORY_FILE || 'var/run-history.json',
  });
}

export const config = { dir: { input: 'site', output: 'dist' } };
