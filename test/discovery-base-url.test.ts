// The base URL the discovery files carry (robots.txt, sitemap.xml, llms.txt, the OpenAPI servers, schema ids) is an
// origin: pages, bodies and robots.txt use root-absolute paths and no deploy recipe serves under a path, so a base
// URL with a path is refused, as is one with userinfo (it would be published in robots.txt and the sitemap), a
// query or a fragment: a usage error (exit code 2) naming the option, before anything is written.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { USAGE_EXIT_CODE, checkBaseUrl, isUsageError } from '../generator/cli-options.ts';
import { absoluteUrl, normaliseBaseUrl } from '../generator/discovery/urls.ts';

const REFUSED: [string, RegExp][] = [
  ['https://emi.example.org/sub/', /path/],
  ['https://emi.example.org/sub', /path/],
  ['https://emi.example.org//', /path/],
  ['https://user:pw@emi.example.org', /user name or password/],
  ['https://user@emi.example.org/', /user name or password/],
  ['https://emi.example.org/?x=1', /query/],
  ['https://emi.example.org/?', /query/],
  ['https://emi.example.org/#top', /fragment/],
  ['https://emi.example.org#', /fragment/],
];

/** The one line a refused value gets, or null when it is accepted. */
function refusal(value: string): { message: string; usage: boolean } | null {
  try {
    checkBaseUrl(value);
    return null;
  } catch (error) {
    return { message: (error as Error).message, usage: isUsageError(error) };
  }
}

describe('checkBaseUrl', () => {
  it.each(REFUSED)('refuses %s as a usage error naming the option and the problem', (value, problem) => {
    const refused = refusal(value);
    expect(refused, value).not.toBeNull();
    expect(refused?.usage).toBe(true);
    expect(refused?.message).toMatch(problem);
    expect(refused?.message).toContain('--base-url or EMI_BASE_URL');
    if (value.includes('@')) {
      // Named without its user name and password: a refusal must not copy a secret into a terminal or a log.
      expect(refused?.message).toContain('https://***@emi.example.org');
      expect(refused?.message).not.toMatch(/\/\/user|:pw@/);
    } else expect(refused?.message).toContain(value);
    expect(refused?.message).not.toContain('\n');
  });

  it('accepts an origin, with or without a trailing slash or a port, and publishes it without one', () => {
    for (const value of [
      'https://emi.example.org',
      'https://emi.example.org/',
      'http://127.0.0.1:8080',
      'http://[::1]:8080/',
    ]) {
      expect(refusal(value), value).toBeNull();
      expect(absoluteUrl(value, '/robots.txt')).toBe(`${normaliseBaseUrl(value)}/robots.txt`);
      expect(normaliseBaseUrl(value).endsWith('/')).toBe(false);
    }
  });
});

const emi = (
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> =>
  new Promise((resolve) => {
    const { EMI_BASE_URL: _unset, ...rest } = process.env;
    execFile(
      process.execPath,
      ['bin/emi.js', ...args],
      { env: { ...rest, ...env }, timeout: 60_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
    );
  });

const refusalLines = (stderr: string) =>
  stderr
    .trim()
    .split('\n')
    .filter((line) => !line.startsWith('(run with --help'));

describe('every command that builds for a base URL refuses one with a path, userinfo, query or fragment', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'emi-base-url-'));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const commands: [string, (value: string) => { args: string[]; env?: Record<string, string> }][] = [
    [
      'emi build --base-url',
      (value) => ({
        args: ['build', '--published', join(dir, 'site'), '--out', join(dir, 'dist'), '--base-url', value],
      }),
    ],
    [
      'emi build with EMI_BASE_URL',
      (value) => ({
        args: ['build', '--published', join(dir, 'site'), '--out', join(dir, 'dist')],
        env: { EMI_BASE_URL: value },
      }),
    ],
    [
      'emi generate --dist --base-url',
      (value) => ({
        args: [
          'generate',
          '--out',
          join(dir, 'site'),
          '--paid',
          join(dir, 'paid'),
          '--state',
          join(dir, 'var'),
          '--dist',
          join(dir, 'dist'),
          '--base-url',
          value,
        ],
      }),
    ],
    [
      'emi schedule --base-url',
      (value) => ({
        args: [
          'schedule',
          '--out',
          join(dir, 'site'),
          '--paid',
          join(dir, 'paid'),
          '--state',
          join(dir, 'var'),
          '--dist',
          join(dir, 'dist'),
          '--base-url',
          value,
        ],
      }),
    ],
    [
      'emi up with EMI_BASE_URL',
      (value) => ({
        args: [
          'up',
          '--port',
          '0',
          '--dev-facilitator-port',
          '0',
          '--backfill-days',
          '0',
          '--out',
          join(dir, 'site'),
          '--paid',
          join(dir, 'paid'),
          '--state',
          join(dir, 'var'),
          '--dist',
          join(dir, 'dist'),
        ],
        env: { EMI_BASE_URL: value },
      }),
    ],
    [
      'emi serve with EMI_BASE_URL',
      (value) => ({
        args: ['serve', '--port', '0', '--dev-facilitator-port', '0', '--dir', join(dir, 'dist')],
        env: { EMI_BASE_URL: value },
      }),
    ],
    [
      'emi mcp --base-url',
      (value) => ({
        args: ['mcp', '--dir', join(dir, 'dist'), '--paid', join(dir, 'paid'), '--base-url', value],
      }),
    ],
  ];

  it.each(commands)(
    '%s: exit 2, one line naming the option, nothing written',
    async (_name, command) => {
      for (const value of ['https://emi.example.org/sub/', 'https://user:pw@emi.example.org']) {
        const { args, env } = command(value);
        const run = await emi(args, env);
        expect(run.code, `${value}: ${run.stderr}`).toBe(USAGE_EXIT_CODE);
        expect(refusalLines(run.stderr), value).toEqual([
          expect.stringContaining('(--base-url or EMI_BASE_URL)'),
        ]);
        for (const folder of ['dist', 'site', 'paid', 'var'])
          expect(existsSync(join(dir, folder)), `${value}: ${folder}`).toBe(false);
      }
    },
    130_000,
  );
});
