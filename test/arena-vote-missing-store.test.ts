// `emi arena vote` and `emi arena import` with a mistyped --state (or EMI_STATE_DIR) made a new store there and
// recorded the votes in it, where no run reads them: they never reached the published consensus, and nothing said
// so. Both now refuse a store no run has made as `emi arena status` does (same line, exit 1), creating nothing.
import { existsSync } from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from './helpers/temp-dir.ts';
import { expectOk, runEmi } from './ops-cli.ts';
import type { Finished } from './ops-cli.ts';

const VOTE = ['arena', 'vote', '--asset', 'BTC', '--prediction', 'BULLISH', '--voter', 'alice'];
const IMPORT = ['arena', 'import', 'votes.jsonl'];

/** What `emi arena status` says of a store no run has made in `folder`. */
const noStoreLine = (folder: string): string =>
  `emi arena: no arena store at ${join(folder, 'arena.sqlite')}: no run has used this state folder (the first ` +
  '`emi generate` creates it); if runs keep theirs elsewhere, give their --state with --state (or set ' +
  'EMI_STATE_DIR to it) (nothing was created)';

const errorLines = (run: Finished): string[] =>
  run.stderr.split('\n').filter((l) => l && !l.includes('build/ is out of date'));

/** A folder with a votes file, nothing else. */
async function scratch(): Promise<string> {
  const dir = await tempDir('emi-vote-no-store-');
  await writeFile(join(dir, 'votes.jsonl'), '{"asset":"BTC","prediction":"BULLISH","voter":"bob"}\n');
  return dir;
}

describe('emi arena vote and import on a state folder no run has used', () => {
  it('a mistyped --state: refused as emi arena status refuses it, exit 1, no folder made', async () => {
    const dir = await scratch();
    const status = await runEmi(dir, ['arena', 'status', '--state', 'vra']);
    expect(status.code).toBe(1);
    expect(errorLines(status)).toEqual([noStoreLine(join(dir, 'vra'))]);
    for (const command of [VOTE, IMPORT]) {
      const run = await runEmi(dir, [...command, '--state', 'vra']);
      expect(run.code, `${command.join(' ')}: ${run.stdout}${run.stderr}`).toBe(1);
      expect(run.stdout).toBe('');
      expect(errorLines(run)).toEqual(errorLines(status));
    }
    expect(await readdir(dir)).toEqual(['votes.jsonl']);
  }, 60_000);

  it('a mistyped EMI_STATE_DIR: the same', async () => {
    const dir = await scratch();
    for (const command of [VOTE, IMPORT]) {
      const run = await runEmi(dir, command, { EMI_STATE_DIR: 'vra' });
      expect(run.code, run.stderr).toBe(1);
      expect(errorLines(run)).toEqual([noStoreLine(join(dir, 'vra'))]);
    }
    expect(await readdir(dir)).toEqual(['votes.jsonl']);
  }, 60_000);

  it('a folder that exists but holds no store: refused, and nothing is made in it', async () => {
    const dir = await scratch();
    await mkdir(join(dir, 'var'));
    for (const command of [VOTE, IMPORT]) {
      const run = await runEmi(dir, [...command, '--state', 'var']);
      expect(run.code, run.stderr).toBe(1);
      expect(errorLines(run)).toEqual([noStoreLine(join(dir, 'var'))]);
    }
    expect(await readdir(join(dir, 'var'))).toEqual([]);
  }, 60_000);

  it('once a run has made the store, both record votes in it', async () => {
    const dir = await scratch();
    expectOk(await runEmi(dir, ['backfill', '--days', '1', '--state', 'var', '--no-out']));
    expect(existsSync(join(dir, 'var', 'arena.sqlite'))).toBe(true);
    const vote = await runEmi(dir, [...VOTE, '--state', 'var']);
    expectOk(vote);
    expect(vote.stdout).toMatch(/^vote recorded for BTC-\d{8}T\d{2}Z\n$/);
    const imported = await runEmi(dir, [...IMPORT, '--state', 'var']);
    expectOk(imported);
    expect(imported.stdout).toBe('imported 1 votes from votes.jsonl\n');
  }, 60_000);
});
