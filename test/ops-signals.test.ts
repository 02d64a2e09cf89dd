// An operator stops a run with Ctrl-C, SIGTERM or kill -9 while it is writing: the next run starts at once,
// and readers kept the last good generation, whole, all along.
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { validatePaidOutput, validatePublicOutput } from '../generator/publish/validate-output.ts';
import { generateArgs, runEmi, startEmi } from './ops-cli.ts';
import { tempDir } from './helpers/temp-dir.ts';

const servedAsOf = async (dir: string): Promise<string> =>
  (JSON.parse(await readFile(join(dir, 'site/api/market-regime.php'), 'utf8')) as { updated: string })
    .updated;

async function expectWholeAndValid(dir: string): Promise<void> {
  const checks = [
    ...(await validatePublicOutput(join(dir, 'site'))),
    ...(await validatePaidOutput(join(dir, 'paid'))),
  ];
  expect(checks.filter((c) => !c.ok)).toEqual([]);
}

const lockRows = (dir: string): unknown[] => {
  const db = new Database(join(dir, 'var/arena.sqlite'), { readonly: true });
  try {
    return db.prepare('SELECT owner FROM run_lock').all();
  } finally {
    db.close();
  }
};

// One folder for the three cases, run in turn: each case starts from the generation the previous one published.
// Every `emi` here is a real process (slow to start on a loaded machine), hence the long timeouts.
const dirReady = (async () => {
  const dir = await tempDir('emi-signal-');
  const first = await runEmi(dir, generateArgs('2026-11-21T12:00:00Z'));
  if (first.code !== 0) throw new Error(`the first run failed: ${first.stderr}`);
  return dir;
})();

describe.each([
  ['SIGINT', 13],
  ['SIGTERM', 15],
  ['SIGKILL', 17],
] as const)('%s at the first staged file', (signal, hour) => {
  it('keeps the last generation served, whole, and the next run succeeds at once', async () => {
    const dir = await dirReady;
    const before = await servedAsOf(dir);

    const interrupted = startEmi(dir, generateArgs(`2026-11-21T${hour}:00:00Z`), {
      EMI_TEST_HOLD_AT_FIRST_STAGED_FILE: '1',
    });
    await interrupted.waitFor('holding at the first staged file');
    interrupted.child.kill(signal);
    const ended = await interrupted.done;
    expect(ended.signal).toBe(signal);
    expect(await servedAsOf(dir)).toBe(before);
    await expectWholeAndValid(dir);
    // Ctrl-C and SIGTERM release the lock on the way out; kill -9 cannot, and leaves it to the next run.
    expect(lockRows(dir)).toHaveLength(signal === 'SIGKILL' ? 1 : 0);

    const next = await runEmi(dir, generateArgs(`2026-11-21T${hour + 1}:00:00Z`));
    expect(next.code, next.stderr).toBe(0);
    if (signal === 'SIGKILL') {
      expect(next.stderr).toMatch(/^emi: took over the run lock of pid \d+ on .+: its process \d+ is gone$/m);
    } else {
      expect(next.stderr).not.toMatch(/took over/);
    }
    expect(await servedAsOf(dir)).toBe(`2026-11-21T${hour + 1}:00:00.000Z`);
    await expectWholeAndValid(dir);
    expect((await readdir(join(dir, 'var/published'))).filter((n) => n.startsWith('tmp-'))).toEqual([]);
    expect(lockRows(dir)).toHaveLength(0);
  }, 240_000);
});
