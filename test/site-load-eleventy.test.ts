// Eleventy is loaded without its watch-mode module resolver hook (generator/site/load-eleventy.ts). This guards the
// Eleventy behaviour that relies on: ELEVENTY_SKIP_ESM_RESOLVER keeps Eleventy 3.1 from registering the hook, which
// on Node 20 (module.register) runs on a loader thread of its own.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import module from 'node:module';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadEleventy } from '../generator/site/load-eleventy.ts';

const run = promisify(execFile);

/** Threads of a fresh Node process after it imported Eleventy, with `env` added to its environment. */
async function threadsAfterImport(env: Record<string, string>): Promise<number> {
  const script = `
    import { readdirSync } from 'node:fs';
    await import('@11ty/eleventy');
    await new Promise((resolve) => setTimeout(resolve, 100));
    console.log(readdirSync('/proc/self/task').length);
  `;
  const environment = { ...process.env, ...env };
  if (!('ELEVENTY_SKIP_ESM_RESOLVER' in env)) delete environment.ELEVENTY_SKIP_ESM_RESOLVER;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { env: environment });
  return Number(stdout.trim());
}

describe('loading Eleventy', () => {
  it('turns the resolver hook off unless the environment says otherwise', async () => {
    const before = process.env.ELEVENTY_SKIP_ESM_RESOLVER;
    delete process.env.ELEVENTY_SKIP_ESM_RESOLVER;
    try {
      const Eleventy = await loadEleventy();
      expect(typeof Eleventy).toBe('function');
      expect(process.env.ELEVENTY_SKIP_ESM_RESOLVER).toBe('true');
      process.env.ELEVENTY_SKIP_ESM_RESOLVER = '';
      await loadEleventy();
      expect(process.env.ELEVENTY_SKIP_ESM_RESOLVER).toBe('');
    } finally {
      if (before === undefined) delete process.env.ELEVENTY_SKIP_ESM_RESOLVER;
      else process.env.ELEVENTY_SKIP_ESM_RESOLVER = before;
    }
  });

  // Node 22.15+ runs registered hooks in the importing thread (module.registerHooks): no thread to count there.
  it.skipIf(!existsSync('/proc/self/task') || 'registerHooks' in module)(
    'Eleventy starts no loader thread when the switch is set (and does without it)',
    async () => {
      const withHook = await threadsAfterImport({});
      const withoutHook = await threadsAfterImport({ ELEVENTY_SKIP_ESM_RESOLVER: 'true' });
      expect(withoutHook).toBeLessThan(withHook);
    },
    30_000,
  );
});
