// The Cloudflare Workers entry must bundle for a web-standard runtime: no Node built-ins, no filesystem.
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

describe('paywall worker edge bundle', () => {
  it('bundles paywall-worker/worker.ts for a browser-like platform without any Node built-in', async () => {
    const result = await build({
      entryPoints: [fileURLToPath(new URL('../paywall-worker/worker.ts', import.meta.url))],
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'browser',
      conditions: ['workerd', 'worker', 'browser'],
      logLevel: 'silent',
      metafile: true,
    });
    expect(result.errors).toEqual([]);
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.some((input) => input.includes('storage-fs'))).toBe(false);
    const code = result.outputFiles[0]!.text;
    expect(code).not.toMatch(/from\s*["']node:|require\(["']node:/);
    expect(code.length).toBeGreaterThan(10_000);
  }, 60_000);
});
