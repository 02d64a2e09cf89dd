// `npm run render:nginx` as an operator types it: each mistake is one line and exit code 2 (never a stack trace,
// never a configuration that nginx accepts and then serves wrongly), and what nginx accepts is rendered as it takes it.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderNginxSite } from '../deploy/nginx/render.ts';

const ROOT = join(import.meta.dirname, '..');

function render(...args: string[]) {
  const run = spawnSync(process.execPath, ['bin/run-ts.js', 'scripts/render-nginx.ts', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

const ROOT_OPTION = ['--root', '/srv/emi/dist'];

/** One line on stderr naming the problem, exit code 2, nothing on stdout. */
function expectUsageError(result: ReturnType<typeof render>, pattern: RegExp) {
  expect(result.stdout).toBe('');
  expect(result.stderr.trim().split('\n'), result.stderr).toHaveLength(1);
  expect(result.stderr).toMatch(/^render:nginx: /);
  expect(result.stderr).toMatch(pattern);
  expect(result.stderr).not.toMatch(/\n\s+at /);
  expect(result.status).toBe(2);
}

describe('npm run render:nginx', () => {
  it('writes an internationalised server name as nginx matches it (punycode)', () => {
    const result = render(...ROOT_OPTION, '--server-name', 'bücher.example');
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^\s*server_name xn--bcher-kva\.example;$/m);
  });

  it('accepts several server names, as nginx does', () => {
    const result = render(...ROOT_OPTION, '--server-name', 'emi.example.org www.emi.example.org');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^\s*server_name emi\.example\.org www\.emi\.example\.org;$/m);
  });

  it('refuses a URL given as the server name', () => {
    expectUsageError(render(...ROOT_OPTION, '--server-name', 'https://emi.example.org/'), /host name/);
  });

  it('refuses a relative root, which nginx would read from its own prefix (every file a 404)', () => {
    expectUsageError(render('--root', 'dist'), /absolute/);
  });

  it('refuses a paywall upstream without a port (port 80 may be nginx itself)', () => {
    expectUsageError(render(...ROOT_OPTION, '--paywall', '127.0.0.1'), /host:port/);
    expectUsageError(render(...ROOT_OPTION, '--paywall', '127.0.0.1:99999'), /host:port/);
  });

  it('refuses an unknown option in one line', () => {
    expectUsageError(render(...ROOT_OPTION, '--server_name', 'emi.example.org'), /--server_name/);
  });

  it('refuses a missing --root in one line', () => {
    expectUsageError(render(), /--root/);
  });

  it('the library refuses the same values (a relative root, a port-less upstream)', async () => {
    await expect(
      renderNginxSite({ root: 'dist', listen: '80', paywallUpstream: '127.0.0.1:8402' }),
    ).rejects.toThrow(/absolute/);
    await expect(
      renderNginxSite({ root: '/srv/emi/dist', listen: '80', paywallUpstream: '127.0.0.1' }),
    ).rejects.toThrow(/host:port/);
  });
});
