// Node fires a timer longer than 2^31-1 ms after 1 ms (TimeoutOverflowWarning): EMI_COLLECT_DEADLINE_SECONDS=3000000
// stopped collection at once "at its deadline of 3000000 s", and EMI_HTTP_TIMEOUT_MS=3000000000 skipped every venue
// "after 2 timeouts in a row". Each has a maximum (a day; 10 minutes), and a value above it is a usage error, in one
// line naming the variable, its value and the range, before anything is written.
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { collectDeadlineFromEnv, MAX_COLLECT_DEADLINE_SECONDS } from '../generator/cycle.ts';
import { configFromEnv, loadSourcesConfig, MAX_HTTP_TIMEOUT_MS } from '../generator/sources/config.ts';
import { tempDir } from './helpers/temp-dir.ts';
import { generateArgs, runEmi } from './ops-cli.ts';

/** Node's largest timer (ms): a longer one fires after 1 ms. */
const NODE_TIMER_MAX_MS = 2 ** 31 - 1;

const stderrLines = (stderr: string): string[] =>
  stderr.split('\n').filter((l) => l && !l.includes('build/ is out of date'));

describe('EMI_COLLECT_DEADLINE_SECONDS', () => {
  const deadline = (value: string) => collectDeadlineFromEnv({ EMI_COLLECT_DEADLINE_SECONDS: value });

  it('takes up to a day, which fits a Node timer', () => {
    expect(MAX_COLLECT_DEADLINE_SECONDS).toBe(86_400);
    expect(MAX_COLLECT_DEADLINE_SECONDS * 1000).toBeLessThan(NODE_TIMER_MAX_MS);
    expect(deadline('86400')).toBe(86_400_000);
    expect(deadline('0.5')).toBe(500);
  });

  it('refuses more than a day in one line naming the variable, its value and the range', () => {
    for (const value of ['86401', '3000000']) {
      expect(() => deadline(value)).toThrow(
        `EMI_COLLECT_DEADLINE_SECONDS must be a positive number of seconds, at most 86400 (a day): "${value}"`,
      );
    }
  });

  it('emi generate refuses it with exit 2 before anything is written', async () => {
    const dir = await tempDir('emi-deadline-max-');
    const run = await runEmi(dir, generateArgs('2026-11-21T12:00:00Z'), {
      EMI_COLLECT_DEADLINE_SECONDS: '3000000',
    });
    expect(run.code, run.stderr).toBe(2);
    expect(stderrLines(run.stderr)).toEqual([
      'emi: EMI_COLLECT_DEADLINE_SECONDS must be a positive number of seconds, at most 86400 (a day): "3000000"',
      '(run with --help for usage)',
    ]);
    expect(run.stderr).not.toContain('TimeoutOverflowWarning');
    expect(existsSync(join(dir, 'site'))).toBe(false);
    expect(existsSync(join(dir, 'var'))).toBe(false);
  }, 60_000);
});

describe('EMI_HTTP_TIMEOUT_MS', () => {
  it('takes up to 10 minutes, which fits a Node timer', () => {
    expect(MAX_HTTP_TIMEOUT_MS).toBe(600_000);
    expect(MAX_HTTP_TIMEOUT_MS).toBeLessThan(NODE_TIMER_MAX_MS);
    expect(configFromEnv({ EMI_HTTP_TIMEOUT_MS: '600000' }).http?.timeoutMs).toBe(600_000);
  });

  it('refuses more than 10 minutes in one line naming the variable, its value and the range', () => {
    for (const value of ['600001', '3000000000']) {
      expect(() => configFromEnv({ EMI_HTTP_TIMEOUT_MS: value })).toThrow(
        'invalid source configuration in environment: EMI_HTTP_TIMEOUT_MS must be a positive whole number of ms, ' +
          `at most 600000 (10 minutes for one request): "${value}"`,
      );
    }
  });

  it('http.timeoutMs in the configuration file has the same maximum', async () => {
    const dir = await tempDir('emi-http-timeout-file-');
    const file = join(dir, 'emi.json');
    await writeFile(file, JSON.stringify({ sources: { http: { timeoutMs: 3_000_000_000 } } }));
    await expect(loadSourcesConfig({ file, env: {} })).rejects.toThrow(
      /^invalid source configuration in .*emi\.json \(sources\): .*at most 600000 ms \(10 minutes\)[\s\S]*http\.timeoutMs/,
    );
  });

  it('so do the waits between attempts (backoffMs, maxBackoffMs, maxRetryAfterMs), which are timers too', async () => {
    const dir = await tempDir('emi-http-backoff-file-');
    const file = join(dir, 'emi.json');
    for (const key of ['backoffMs', 'maxBackoffMs', 'maxRetryAfterMs']) {
      await writeFile(file, JSON.stringify({ sources: { http: { [key]: 3_000_000_000 } } }));
      await expect(loadSourcesConfig({ file, env: {} }), key).rejects.toThrow(
        new RegExp(`at most 600000 ms \\(10 minutes\\)[\\s\\S]*http\\.${key}`),
      );
      await writeFile(file, JSON.stringify({ sources: { http: { [key]: 600_000 } } }));
      await expect(loadSourcesConfig({ file, env: {} }), key).resolves.toBeDefined();
    }
  });

  it('emi generate --source live refuses it with exit 2 before anything is written', async () => {
    const dir = await tempDir('emi-http-timeout-max-');
    const args = ['generate', '--source', 'live', '--out', 'site', '--paid', 'paid', '--state', 'var'];
    const run = await runEmi(dir, args, { EMI_HTTP_TIMEOUT_MS: '3000000000' });
    expect(run.code, run.stderr).toBe(2);
    expect(stderrLines(run.stderr)).toEqual([
      'emi: invalid source configuration in environment: EMI_HTTP_TIMEOUT_MS must be a positive whole number of ' +
        'ms, at most 600000 (10 minutes for one request): "3000000000"',
      '(run with --help for usage)',
    ]);
    expect(existsSync(join(dir, 'site'))).toBe(false);
    expect(existsSync(join(dir, 'var'))).toBe(false);
  }, 60_000);
});
